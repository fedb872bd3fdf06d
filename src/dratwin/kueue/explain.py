"""Why a Workload is (or is not) admitted, as a value: Kueue's condition, then the quota view.

What ``kubectl describe workload`` shows is one condition and one message (``QuotaReserved=False``,
``WaitingForQuota``, "couldn't assign flavors to pod set main: insufficient unused quota ..."). The view
here keeps those words first and then breaks them down, per PodSet, per flavor of the ClusterQueue in its
order and per resource: what the PodSet needs (with what the PodSets before it already took of the
flavor, as Kueue counts it), what is free of the ClusterQueue's nominal quota, what its cohort can lend
(after the borrowingLimit), the lendingLimit, and how much is short. A flavor whose taints the pods do not
tolerate, or whose labels contradict their nodeSelector or affinity, is shown as skipped with Kueue's
reason (Kueue only says so when no flavor fits: kubernetes-sigs/kueue#7137 and #3158 ask for more).

Every decision is the flavor assigner's (:mod:`.flavors`: the flavor checks and ``fitsResourceQuota``),
read again per flavor; this module adds only the arithmetic a reader needs to see where the numbers come
from. No I/O: the caller gives the snapshot the cycle left and the cycle's last word on the Workload.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.core import PodSpec
from dratwin.api.kueue import PODS_RESOURCE, ResourceGroup
from dratwin.kueue.cycle import Admitted, Entry, Pending, Snapshot, preemption_oracle
from dratwin.kueue.flavors import (  # the assigner's own rules, reused
    FIT,
    NO_CANDIDATES,
    NO_FIT,
    PREEMPT,
    RECLAIM,
    Assignment,
    FlavorContext,
    assign_flavors,
    fits_quota,
    flavor_mismatch,
)
from dratwin.kueue.flavors import shown_amount as shown
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key
from dratwin.kueue.tas.admission import TOPOLOGY_PLACEMENT_FAILED
from dratwin.kueue.usage import Inadmissible, WorkloadUsage

QUOTA_RESERVED = "QuotaReserved"


@dataclass(frozen=True)
class ResourceLine:
    """One resource of one flavor: the numbers behind Kueue's verdict."""

    resource: str
    flavor: str
    needs: int  # this PodSet's request plus what earlier PodSets took of the same flavor
    nominal: int
    used: int  # the ClusterQueue's admitted usage of the flavor and resource
    unused_nominal: int
    available: int  # what the ClusterQueue can admit now, borrowing included
    most: int  # what it could admit with the whole cohort idle
    cohort: str
    borrowing_limit: int | None
    lending_limit: int | None
    mode: str  # the assigner's mode (MODE_TEXT)
    kueue_message: str  # Kueue's clause for this resource ("insufficient unused quota ..."), "" when it fits

    @property
    def cohort_can_lend(self) -> int:
        return max(0, self.available - self.unused_nominal)

    @property
    def lent_away(self) -> int:
        """Unused nominal quota that others in the cohort borrowed: this ClusterQueue can only reclaim it."""
        return max(0, self.unused_nominal - self.available)

    @property
    def short(self) -> int:
        return max(0, self.needs - self.available)

    @property
    def borrows(self) -> int:
        return max(0, min(self.needs, self.available) - self.unused_nominal) if self.short == 0 else 0

    def text(self) -> str:
        amount = _amount(self.resource)
        parts = [f"{amount(self.unused_nominal)} free of nominal {amount(self.nominal)}"]
        if self.lent_away:
            parts[0] += f" ({amount(self.lent_away)} of it borrowed by others in cohort {self.cohort})"
        if self.cohort:
            parts.append(f"cohort {self.cohort} can lend {amount(self.cohort_can_lend)}")
        else:
            parts.append("no cohort to borrow from")
        if self.borrowing_limit is not None:
            parts.append(f"borrowingLimit {amount(self.borrowing_limit)}")
        if self.lending_limit is not None:
            parts.append(f"lendingLimit {amount(self.lending_limit)}")
        head = f"needs {amount(self.needs)} {self.resource} in flavor {self.flavor}: {', '.join(parts)}"
        if self.needs > self.most:
            return f"{head}: {amount(self.needs - self.available)} short, more than the {amount(self.most)} it " \
                   "could get with the whole cohort idle (never fits as written)"
        if self.short:
            return f"{head}: {amount(self.short)} short"
        if self.borrows:
            return f"{head}: fits, borrowing {amount(self.borrows)} from cohort {self.cohort}"
        return f"{head}: fits"

    def to_dict(self) -> dict[str, Any]:
        return {"resource": self.resource, "flavor": self.flavor, "needs": self.needs, "nominal": self.nominal,
                "used": self.used, "unusedNominal": self.unused_nominal, "available": self.available,
                "cohort": self.cohort or None, "cohortCanLend": self.cohort_can_lend, "lentAway": self.lent_away,
                "borrowingLimit": self.borrowing_limit, "lendingLimit": self.lending_limit,
                "maximum": self.most, "short": self.short, "borrows": self.borrows, "mode": self.mode,
                "kueueMessage": self.kueue_message or None, "text": self.text()}


@dataclass(frozen=True)
class FlavorView:
    """One flavor of a resource group, for one PodSet: skipped (and why), or its resources' numbers."""

    name: str
    skipped: str = ""  # Kueue's reason the pods cannot use the flavor (taints, labels)
    resources: list[ResourceLine] = field(default_factory=list)
    chosen: bool = False
    topology: str = ""  # the quota fits but topology-aware scheduling found no placement: Kueue's reason

    @property
    def quota_mode(self) -> str:
        """The mode by quota alone (what the resource lines say)."""
        if self.skipped:
            return "NoFit"
        worst = min((_MODE_ORDER[r.mode] for r in self.resources), default=_MODE_ORDER["Fit"])
        return next(name for name, order in _MODE_ORDER.items() if order == worst)

    @property
    def mode(self) -> str:
        """The flavor's mode as Kueue's assigner ends it: a topology that cannot place the pods makes it NoFit."""
        return "NoFit" if self.topology else self.quota_mode

    def lines(self) -> list[str]:
        mark = " (chosen)" if self.chosen else ""
        if self.skipped:
            return [f"flavor {self.name}: skipped: {self.skipped}"]
        if self.topology:
            head = f"flavor {self.name}: NoFit: the quota fits, its topology cannot place the pods ({self.topology})"
            return [head, *(f"  {r.text()}" for r in self.resources)]
        return [f"flavor {self.name}: {self.mode}{mark}", *(f"  {r.text()}" for r in self.resources)]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mode": self.mode, "quotaMode": self.quota_mode, "chosen": self.chosen,
                "skipped": self.skipped or None, "topology": self.topology or None,
                "resources": [r.to_dict() for r in self.resources]}


# The assigner's modes as a reader needs them: Kueue calls a flavor that fits only by preemption "Preempt"
# whether or not its preemption simulation found workloads to preempt.
MODE_TEXT = {NO_FIT: "NoFit", NO_CANDIDATES: "Preempt (no candidates: waits for quota)",
             PREEMPT: "Preempt", RECLAIM: "Preempt (reclaim)", FIT: "Fit"}
_MODE_ORDER = {text: order for order, text in MODE_TEXT.items()}


@dataclass(frozen=True)
class PodSetView:
    name: str
    count: int
    flavors: list[FlavorView] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)  # resources no resource group of the ClusterQueue covers
    assigned: dict[str, str] = field(default_factory=dict)  # resource → flavor (admitted, or would be)

    @property
    def fits(self) -> bool:
        return not self.uncovered and bool(self.assigned or not self.flavors)

    def lines(self) -> list[str]:
        out = [f"pod set {self.name} ({self.count} pod{'s' if self.count != 1 else ''}):"]
        out += [f"  resource {r} unavailable in ClusterQueue (no resource group covers it)" for r in self.uncovered]
        for flavor in self.flavors:
            out += [f"  {line}" for line in flavor.lines()]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "assigned": self.assigned, "uncovered": self.uncovered,
                "flavors": [f.to_dict() for f in self.flavors]}


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str

    def text(self) -> str:
        return f"{self.type}={self.status} {self.reason}: {self.message}" if self.message else \
            f"{self.type}={self.status} {self.reason}"

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}


@dataclass(frozen=True)
class QuotaView:
    """The Workload's standing with Kueue: admitted where, or why not, and the numbers per flavor."""

    workload: str  # namespace/name
    local_queue: str
    cluster_queue: str
    condition: Condition | None  # None: never tried (behind a StrictFIFO head that blocks)
    admitted: bool
    borrows: bool = False
    pod_sets: list[PodSetView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def would_fit(self) -> bool:
        """Admitted, or every PodSet has a flavor that fits the quota now (it waits for another reason)."""
        return self.admitted or (bool(self.pod_sets) and all(p.fits for p in self.pod_sets))

    @property
    def quota_blocks(self) -> bool:
        """Not admitted because of quota or flavors (not because the Workload is refused as written)."""
        return not self.admitted and self.condition is not None and self.condition.reason in QUOTA_REASONS

    def flavors_for(self, pod_set: str) -> list[str]:
        """The flavors Kueue injects into the PodSet's pods on admission (or would, if quota allowed)."""
        view = next((p for p in self.pod_sets if p.name == pod_set), None)
        if view is None:
            return []
        if view.assigned:
            return sorted(set(view.assigned.values()))
        return [next(f.name for f in view.flavors if not f.skipped)] if any(not f.skipped for f in view.flavors) \
            else []

    def headline(self) -> str:
        where = f"LocalQueue {self.local_queue} -> ClusterQueue {self.cluster_queue or '?'}"
        if self.admitted:
            how = "borrowing from its cohort" if self.borrows else "within its nominal quota"
            return f"admitted in ClusterQueue {self.cluster_queue}, {how} ({where})"
        return f"not admitted ({where})"

    def lines(self) -> list[str]:
        out = [self.headline()]
        if self.condition is not None:
            out.append(self.condition.text())
        for pod_set in self.pod_sets:
            out += pod_set.lines()
        out += [f"note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "localQueue": self.local_queue, "clusterQueue": self.cluster_queue or None,
                "admitted": self.admitted, "borrows": self.borrows,
                "condition": self.condition.to_dict() if self.condition else None,
                "podSets": [p.to_dict() for p in self.pod_sets], "notes": self.notes}


QUOTA_REASONS = frozenset({"WaitingForQuota", "NoMatchingFlavor", "ExceedsMaxQuota"})


def quota_view(snapshot: Snapshot, entry: Entry, verdict: Admitted | Pending | None) -> QuotaView:
    """The view of ``entry`` in ``snapshot`` (the tree as the cycles left it) given the last word on it:
    admitted, pending with Kueue's reason, or ``None`` when no cycle tried it."""
    workload = entry.workload
    key = entry.key
    local = workload.spec.queue_name
    if isinstance(verdict, Admitted):
        condition = Condition(QUOTA_RESERVED, "True", "QuotaReserved",
                              f"Quota reserved in ClusterQueue {entry.cluster_queue}")
        tree = snapshot.tree.copy()  # the numbers it was admitted against: without its own usage
        tree.remove_usage(cq_key(entry.cluster_queue), verdict.assignment.usage)
        pod_sets = _pod_set_views(snapshot, tree, entry, verdict.assignment)
        return QuotaView(key, local, entry.cluster_queue, condition, True, verdict.borrowing, pod_sets)
    waiting = Condition(QUOTA_RESERVED, "False", verdict.reason, verdict.message) if verdict else None
    cq = snapshot.cluster_queues.get(entry.cluster_queue)
    if cq is None or isinstance(entry.usage, Inadmissible) or snapshot.inactive_reason(cq):
        return QuotaView(key, local, entry.cluster_queue, waiting, False)
    ctx = FlavorContext(cq, snapshot.tree, snapshot.flavors, preemption_oracle(snapshot, entry))
    assignment = assign_flavors(ctx, workload, entry.usage)
    notes = [] if verdict else ["no scheduling cycle tried it: a StrictFIFO ClusterQueue keeps it behind a head "
                                "that does not fit, so Kueue has written no QuotaReserved condition yet"]
    topology = verdict.message if verdict is not None and verdict.reason == TOPOLOGY_PLACEMENT_FAILED else ""
    return QuotaView(key, local, entry.cluster_queue, waiting, False, False,
                     _pod_set_views(snapshot, snapshot.tree, entry, assignment, pending=True, topology=topology),
                     notes)


def _topology_failed(message: str, pod_sets: Sequence[str], name: str) -> bool:
    """Whether Kueue's TopologyPlacementFailed ``message`` is about PodSet ``name`` (it names the PodSet it
    failed on; a message naming none is taken for all)."""
    if not message:
        return False
    named = [p for p in pod_sets if f"pod set {p}:" in message]
    return not named or name in named


def _pod_set_views(snapshot: Snapshot, tree: QuotaTree, entry: Entry, assignment: Assignment,
                   pending: bool = False, topology: str = "") -> list[PodSetView]:
    """``topology``: Kueue's message when topology-aware scheduling found no placement for the flavors the
    quota gives (the quota-only assignment is then not what Kueue chose: nothing is)."""
    cq = snapshot.cluster_queues[entry.cluster_queue]
    assert isinstance(entry.usage, WorkloadUsage)
    ctx = FlavorContext(cq, tree, snapshot.flavors, preemption_oracle(snapshot, entry))
    covers_pods = any(PODS_RESOURCE in g.covered_resources for g in cq.spec.resource_groups)
    taken: dict[FlavorResource, int] = {}  # what earlier PodSets were assigned, as the assigner counts it
    views = []
    names = [p.name for p in entry.workload.spec.pod_sets]
    for index, (pod_set, used) in enumerate(zip(entry.workload.spec.pod_sets, entry.usage.pod_sets, strict=True)):
        requests = {r: a for r, a in used.total.items() if a > 0}
        if covers_pods:
            requests[PODS_RESOURCE] = used.count
        chosen = assignment.pod_sets[index] if index < len(assignment.pod_sets) else None
        assigned = dict(chosen.flavors) if chosen is not None and chosen.mode.preemption == FIT else {}
        if pending and chosen is not None and chosen.mode.preemption != FIT:
            assigned = {}
        groups: list[ResourceGroup] = []
        uncovered = []
        for resource in sorted(requests):
            group = next((g for g in cq.spec.resource_groups if resource in g.covered_resources), None)
            if group is None:
                uncovered.append(resource)
            elif group not in groups:
                groups.append(group)
        flavors = []
        for group in groups:
            wanted = {r: requests[r] for r in sorted(requests) if r in group.covered_resources}
            flavors += _flavor_views(ctx, entry, pod_set.template.spec, group, wanted, taken, assigned)
        if _topology_failed(topology, names, used.name):
            flavors = [dataclasses.replace(f, chosen=False, topology=TOPOLOGY_PLACEMENT_FAILED) if f.chosen else f
                       for f in flavors]
            assigned = {}
        views.append(PodSetView(used.name, used.count, flavors, uncovered, assigned))
        for resource, flavor in assigned.items():
            taken[(flavor, resource)] = taken.get((flavor, resource), 0) + requests.get(resource, 0)
    return views


def _flavor_views(ctx: FlavorContext, entry: Entry, pod: PodSpec, group: ResourceGroup, wanted: Mapping[str, int],
                  taken: Mapping[FlavorResource, int], assigned: Mapping[str, str]) -> list[FlavorView]:
    key = cq_key(ctx.cq.metadata.name)
    node = ctx.tree.nodes[key]
    cohort = ctx.tree.nodes[node.parent].name if node.parent is not None else ""
    views = []
    for flavor_quotas in group.flavors:
        name = flavor_quotas.name
        mismatch = flavor_mismatch(ctx.flavors.get(name), name, pod)
        if mismatch:
            views.append(FlavorView(name, skipped=mismatch))
            continue
        lines = []
        for resource, amount in wanted.items():
            fr = (name, resource)
            before = taken.get(fr, 0)
            mode, why, _ = fits_quota(ctx, entry.workload, fr, before, amount)
            quota = ctx.tree.quota(key, fr)
            used = node.usage.get(fr, 0)
            lines.append(ResourceLine(
                resource, name, before + amount, quota.nominal, used, max(0, quota.nominal - used),
                ctx.tree.available(key, fr), ctx.tree.potential_available(key, fr), cohort, quota.borrowing_limit,
                quota.lending_limit, MODE_TEXT[mode.preemption], why))
        chosen = bool(assigned) and all(assigned.get(r) == name for r in wanted)
        views.append(FlavorView(name, resources=lines, chosen=chosen))
    return views


def _amount(resource: str) -> Callable[[int], str]:
    return lambda value: shown(resource, value)


def shortfalls(view: QuotaView) -> Sequence[ResourceLine]:
    """The resources short in the first flavor each PodSet could use (the lines a reader acts on)."""
    out: list[ResourceLine] = []
    for pod_set in view.pod_sets:
        usable = [f for f in pod_set.flavors if not f.skipped]
        if usable and not pod_set.assigned:
            out += [r for r in usable[0].resources if r.short]
    return out

"""Flavor assignment: which ResourceFlavor each PodSet's resources get in a ClusterQueue, and how.

The twin of Kueue's flavor assigner (``pkg/scheduler/flavorassigner/flavorassigner.go`` at ``ff69552``).
For each PodSet, resource by resource (in name order), the resource group that covers it is searched:

1. its flavors in order; a flavor whose ``nodeTaints`` (NoSchedule/NoExecute) the pod and the flavor's own
   tolerations do not tolerate, or whose ``nodeLabels`` contradict the pod's nodeSelector or required node
   affinity (only the flavor's label keys are compared), is skipped with Kueue's reason;
2. each resource of the group is classified against the quota tree (:mod:`.quota`), counting what the
   earlier PodSets of the same Workload were assigned: **Fit** within what the ClusterQueue can use now
   (borrowing at some height of the cohort tree, 0 within nominal), **Preempt** when only preempting could
   make room, **NoFit** beyond the most the ClusterQueue could ever get (``ExceedsMaxQuota``) or when
   preemption cannot help (``WaitingForQuota``); the flavor's mode is its resources' worst;
3. ``flavorFungibility`` decides: a flavor that fits without borrowing is always taken; one that borrows
   stops the search under ``whenCanBorrow: MayStopSearch`` (the default); one that needs preemption stops
   it only under ``whenCanPreempt: MayStopSearch``; otherwise the best flavor seen wins
   (``preference``: BorrowingOverPreemption, the default, or PreemptionOverBorrowing).

Whether preempting could make room is asked of a :class:`PreemptionOracle`: the scheduling cycle passes
:class:`dratwin.kueue.preemption.Oracle`, which runs Kueue's preemption on the admitted Workloads;
:class:`NoCandidates` finds none, so a Preempt flavor leaves the Workload waiting for quota, as Kueue does
when its simulation finds no candidates. The messages are Kueue's, joined and sorted as its Status prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from dratwin.allocator.nodes import selector_matches
from dratwin.api.core import Node, NodeSelector, NodeSelectorTerm, PodSpec
from dratwin.api.kueue import (
    DEFAULT_WHEN_CAN_BORROW,
    DEFAULT_WHEN_CAN_PREEMPT,
    PODS_RESOURCE,
    ClusterQueue,
    PodSet,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from dratwin.api.meta import ObjectMeta
from dratwin.api.quantity import Quantity
from dratwin.errors import AllocationError
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key
from dratwin.kueue.usage import WorkloadUsage
from dratwin.scheduler.plugins.taint_toleration import tolerations_tolerate_taint

if TYPE_CHECKING:
    from dratwin.kueue.tas.assign import TopologyAssignment

# Modes, worst first (flavorassigner's preemptionMode order).
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
MODE_NAMES = {NO_FIT: "NoFit", NO_CANDIDATES: "Preempt", PREEMPT: "Preempt", RECLAIM: "Preempt", FIT: "Fit"}
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
WAITING_FOR_QUOTA = "WaitingForQuota"
_SEVERITY = {"": 0, "TopologyPlacementFailed": 1, WAITING_FOR_QUOTA: 2, EXCEEDS_MAX_QUOTA: 3, NO_MATCHING_FLAVOR: 4}


class PreemptionOracle(Protocol):
    """Whether preempting could admit ``amount`` of ``fr`` in the ClusterQueue (:mod:`.preemption` answers)."""

    def simulate(self, cq: ClusterQueue, workload: Workload, fr: FlavorResource, amount: int) -> tuple[int, int]:
        """(mode: PREEMPT, RECLAIM or NO_CANDIDATES, borrowing height after preemption)."""
        ...


class TopologySeam(Protocol):
    """Topology-aware scheduling in flavor assignment (:mod:`dratwin.kueue.tas.admission` fills this)."""

    def mismatch(self, cq: ClusterQueue, pod_set: PodSet, flavor: ResourceFlavor, group: ResourceGroup) -> str:
        """Why a flavor cannot take the PodSet for topology reasons ("" when it can)."""
        ...

    def place(self, ctx: FlavorContext, workload: Workload, assignment: Assignment) -> None:
        """Give every TAS PodSet its topology assignment, or lower its mode when none fits."""
        ...

    def fits(self, workload: Workload, assignment: Assignment) -> bool:
        """Whether the assignment's pods still fit their domains (after earlier admissions of the cycle)."""
        ...

    def book(self, workload: Workload, assignment: Assignment) -> None:
        """Book an admitted Workload's pods on their domains."""
        ...


class NoCandidates:
    """The oracle of a cluster where no preemption happens: nothing can be preempted."""

    def simulate(self, cq: ClusterQueue, workload: Workload, fr: FlavorResource, amount: int) -> tuple[int, int]:
        return NO_CANDIDATES, 0


@dataclass(frozen=True)
class Mode:
    preemption: int
    borrowing: int  # 0: within the ClusterQueue; higher: borrowed from further up the cohort tree

    @property
    def name(self) -> str:
        return MODE_NAMES[self.preemption]


BEST = Mode(FIT, 0)
WORST = Mode(NO_FIT, 1 << 30)


@dataclass
class PodSetAssignment:
    name: str
    count: int
    flavors: dict[str, str] = field(default_factory=dict)  # resource → flavor
    modes: dict[str, Mode] = field(default_factory=dict)  # resource → mode
    usage: dict[str, int] = field(default_factory=dict)  # resource → amount (× count)
    reasons: list[str] = field(default_factory=list)
    no_fit_reason: str = ""
    topology: TopologyAssignment | None = None  # where the pods go, for a PodSet placed by TAS

    @property
    def fits(self) -> bool:
        return not self.reasons and bool(self.flavors or not self.usage)

    @property
    def mode(self) -> Mode:
        if self.usage and not self.flavors:
            return WORST
        return min(self.modes.values(), key=lambda m: (m.preemption, -m.borrowing), default=BEST)


@dataclass
class Assignment:
    """The flavors of every PodSet of a Workload, its representative mode and, when it fails, why."""

    pod_sets: list[PodSetAssignment] = field(default_factory=list)
    usage: dict[FlavorResource, int] = field(default_factory=dict)

    @property
    def mode(self) -> Mode:
        return min((p.mode for p in self.pod_sets), key=lambda m: (m.preemption, -m.borrowing), default=BEST)

    @property
    def borrows(self) -> int:
        return max((m.borrowing for p in self.pod_sets for m in p.modes.values()), default=0)

    @property
    def message(self) -> str:
        """``Assignment.Message``: one clause per PodSet that did not fit."""
        parts = []
        for pod_set in self.pod_sets:
            if pod_set.mode.preemption == FIT:
                continue
            parts.append(f"couldn't assign flavors to pod set {pod_set.name}: {', '.join(sorted(pod_set.reasons))}")
        return "; ".join(parts)

    @property
    def no_fit_reason(self) -> str:
        return max((p.no_fit_reason for p in self.pod_sets if p.mode.preemption == NO_FIT),
                   key=lambda r: _SEVERITY.get(r, 0), default="")


@dataclass(frozen=True)
class FlavorContext:
    cq: ClusterQueue
    tree: QuotaTree
    flavors: Mapping[str, ResourceFlavor]
    oracle: PreemptionOracle = field(default_factory=NoCandidates)
    fair_sharing: bool = False
    topology: TopologySeam | None = None  # None: no flavor of the cluster has a topology


def assign_flavors(ctx: FlavorContext, workload: Workload, usage: WorkloadUsage) -> Assignment:
    assignment = Assignment()
    covers_pods = _group_of(ctx.cq, PODS_RESOURCE) is not None
    for pod_set, used in zip(workload.spec.pod_sets, usage.pod_sets, strict=True):
        requests = dict(used.total)
        if covers_pods:
            requests[PODS_RESOURCE] = used.count
        result = PodSetAssignment(used.name, used.count, usage=requests)
        assignment.pod_sets.append(result)
        for resource in sorted(requests):
            if resource in result.flavors:
                continue  # assigned with its resource group
            group = _group_of(ctx.cq, resource)
            if group is None:
                if requests[resource] == 0:
                    continue
                result.reasons.append(f"resource {resource} unavailable in ClusterQueue")
                result.flavors, result.no_fit_reason = {}, NO_MATCHING_FLAVOR
                break
            found = _flavor_for_group(ctx, workload, pod_set, group, requests, assignment.usage, result)
            if not found:
                result.flavors = {}
                break
        if not result.flavors and requests:
            return assignment
        for resource, flavor in result.flavors.items():
            fr = (flavor, resource)
            assignment.usage[fr] = assignment.usage.get(fr, 0) + requests[resource]
    if ctx.topology is not None and assignment.mode.preemption != NO_FIT:
        ctx.topology.place(ctx, workload, assignment)
    return assignment


def _group_of(cq: ClusterQueue, resource: str) -> ResourceGroup | None:
    return next((g for g in cq.spec.resource_groups if resource in g.covered_resources), None)


def _flavor_for_group(ctx: FlavorContext, workload: Workload, pod_set: PodSet, group: ResourceGroup,
                      requests: Mapping[str, int], assumed: Mapping[FlavorResource, int],
                      result: PodSetAssignment) -> bool:
    wanted = {r: requests[r] for r in sorted(requests) if r in group.covered_resources}
    fungibility = ctx.cq.spec.flavor_fungibility
    when_borrow = (fungibility.when_can_borrow if fungibility else None) or DEFAULT_WHEN_CAN_BORROW
    when_preempt = (fungibility.when_can_preempt if fungibility else None) or DEFAULT_WHEN_CAN_PREEMPT
    preference = (fungibility.preference if fungibility else None) or "BorrowingOverPreemption"
    best: tuple[Mode, dict[str, Mode], str] | None = None
    reasons: list[str] = []
    no_fit = ""
    for flavor_quotas in group.flavors:
        name = flavor_quotas.name
        found = ctx.flavors.get(name)
        mismatch = flavor_mismatch(found, name, pod_set.template.spec)
        if found is not None and ctx.topology is not None:  # Kueue checks topology first, then taints
            mismatch = ctx.topology.mismatch(ctx.cq, pod_set, found, group) or mismatch
        if mismatch:
            reasons.append(mismatch)
            no_fit = _worse(no_fit, NO_MATCHING_FLAVOR)
            continue
        modes: dict[str, Mode] = {}
        representative = BEST
        for resource, amount in wanted.items():
            mode, why, reason = fits_quota(ctx, workload, (name, resource), assumed.get((name, resource), 0), amount)
            if why:
                reasons.append(why)
                no_fit = _worse(no_fit, reason)
            if _preferred(representative, mode, preference):
                representative = mode
            if representative.preemption == NO_FIT:
                break
            modes[resource] = mode
        if representative.preemption == NO_FIT:
            continue
        candidate = (representative, modes, name)
        if not _try_next(representative, when_borrow, when_preempt):
            best = candidate
            break
        if best is None or _preferred(representative, best[0], preference):
            best = candidate
    if best is None:
        result.reasons.extend(reasons)
        result.no_fit_reason = no_fit or NO_MATCHING_FLAVOR
        return False
    mode, modes, flavor = best
    for resource in wanted:
        result.flavors[resource] = flavor
        result.modes[resource] = modes[resource]
    if mode.preemption != FIT:
        result.reasons.extend(reasons)
    return True


def fits_quota(ctx: FlavorContext, workload: Workload, fr: FlavorResource, assumed: int,
                amount: int) -> tuple[Mode, str, str]:
    """``fitsResourceQuota``: the mode of ``amount`` more of ``fr``, and when it does not fit, why."""
    key = cq_key(ctx.cq.metadata.name)
    flavor, resource = fr
    value = assumed + amount
    most = ctx.tree.potential_available(key, fr)
    if value > most:
        return WORST, (f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets "
                       f"requests ({shown_amount(resource, assumed)}) + current podset request "
                       f"({shown_amount(resource, amount)}) > maximum capacity ({shown_amount(resource, most)})"
                       ), EXCEEDS_MAX_QUOTA
    height, may_reclaim = ctx.tree.borrowing_height(key, fr, value)
    available = ctx.tree.available(key, fr)
    if value <= available:
        return Mode(FIT, height), "", ""
    why = (f"insufficient unused quota for {resource} in flavor {flavor}, {shown_amount(resource, value - available)} "
           "more needed")
    if ctx.tree.quota(key, fr).nominal >= value or may_reclaim or _can_preempt_while_borrowing(ctx):
        mode, borrowing = ctx.oracle.simulate(ctx.cq, workload, fr, value)
        return Mode(mode, borrowing), why, "" if mode != NO_FIT else WAITING_FOR_QUOTA
    return Mode(NO_FIT, height), why, WAITING_FOR_QUOTA


def _can_preempt_while_borrowing(ctx: FlavorContext) -> bool:
    preemption = ctx.cq.spec.preemption
    if preemption is None:
        return False
    borrow = preemption.borrow_within_cohort
    if borrow is not None and (borrow.policy or "Never") != "Never":
        return True
    return ctx.fair_sharing and (preemption.reclaim_within_cohort or "Never") != "Never"


def _preferred(a: Mode, b: Mode, preference: str) -> bool:
    """``isPreferred``: is mode ``a`` better than ``b`` under the ClusterQueue's preference?"""
    if a.preemption == NO_FIT:
        return False
    if b.preemption == NO_FIT:
        return True
    if (a.preemption == NO_CANDIDATES) != (b.preemption == NO_CANDIDATES):
        return a.preemption != NO_CANDIDATES
    if preference == "PreemptionOverBorrowing":
        if a.borrowing != b.borrowing:
            return a.borrowing < b.borrowing
        return a.preemption > b.preemption
    if a.preemption != b.preemption:
        return a.preemption > b.preemption
    return a.borrowing < b.borrowing


def _try_next(mode: Mode, when_borrow: str, when_preempt: str) -> bool:
    """``shouldTryNextFlavor``."""
    if mode.preemption in (NO_FIT, NO_CANDIDATES):
        return True
    if mode.preemption in (PREEMPT, RECLAIM) and when_preempt == "TryNextFlavor":
        return True
    return mode.borrowing != 0 and when_borrow == "TryNextFlavor"


def flavor_mismatch(flavor: ResourceFlavor | None, name: str, pod: PodSpec) -> str:
    """``checkFlavorForPodSets``: why the flavor cannot take the pod ("" when it can)."""
    if flavor is None:
        return f"flavor {name} not found"
    tolerations = [*pod.tolerations, *flavor.spec.tolerations]
    for taint in flavor.spec.node_taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerations_tolerate_taint(tolerations, taint):
            shown = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
            return f"untolerated taint {shown} in flavor {name}"
    if not _affinity_matches(flavor, pod):
        return f"flavor {name} doesn't match node affinity"
    return ""


def _affinity_matches(flavor: ResourceFlavor, pod: PodSpec) -> bool:
    labels = flavor.spec.node_labels
    for key, value in pod.node_selector.items():
        if key in labels and labels[key] != value:
            return False
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity is not None else None
    if required is None:
        return True
    terms: list[NodeSelectorTerm] = []
    for term in required.node_selector_terms:
        kept = [e for e in term.match_expressions if e.key in labels]
        if not kept:
            return True  # a term with none of the flavor's keys matches any flavor (terms are ORed)
        terms.append(NodeSelectorTerm(match_expressions=kept))
    try:
        return selector_matches(Node(metadata=ObjectMeta(labels=dict(labels))), NodeSelector(node_selector_terms=terms))
    except AllocationError:
        return False


def _worse(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


def shown_amount(resource: str, amount: int) -> str:
    """An amount as Kueue's resource formatter prints it: cpu from millicores, the rest as is."""
    if resource == "cpu":
        return str(Quantity.parse(f"{amount}m"))
    return str(amount)


def flavor_names(assignment: Assignment) -> Sequence[str]:
    return sorted({f for p in assignment.pod_sets for f in p.flavors.values()})

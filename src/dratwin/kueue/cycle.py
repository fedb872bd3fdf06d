"""Kueue's scheduling cycle, pure: the heads of the ClusterQueues in, admissions and reasons out.

The twin of ``pkg/scheduler/scheduler.go`` (``schedule``, ``nominate``, the classical iterator,
``processEntry``) and of the queue manager's heads (``pkg/cache/queue``) at Kueue ``ff69552``:

- :class:`Queues` keeps each ClusterQueue's pending Workloads ordered as Kueue orders them (higher priority
  first, then the older timestamp); a cycle takes the **head** of every ClusterQueue. Under
  ``BestEffortFIFO`` (the default) a head that cannot be admitted is set aside as inadmissible and the next
  one becomes head, until something frees quota (:meth:`Queues.requeue_inadmissible`); under ``StrictFIFO``
  it stays at the front and blocks the ones behind it;
- :func:`scheduling_cycle` nominates every head (flavor assignment, :mod:`.flavors`, on a copy of the quota
  tree), orders the nominated ones (within nominal quota before borrowing, lower borrowing height first,
  higher priority, then FIFO), and admits them one by one, each time re-checking that its usage still fits
  the tree after the admissions before it ("Workload no longer fits after processing another workload");
- a "no" is a :class:`Pending` value with Kueue's ``QuotaReserved=False`` reason and message.

Upstream's comment still speaks of at most one borrowing admission per cohort per cycle; since the fit
re-check replaced that rule, it is an option here (``CycleOptions.one_borrowing_per_cohort``), off by default.
No clock and no I/O: timestamps are numbers the caller gives.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.api.kueue import ClusterQueue, LocalQueue, ResourceFlavor, Workload
from dratwin.api.quantity import Quantity
from dratwin.kueue.flavors import (
    FIT,
    NO_FIT,
    Assignment,
    FlavorContext,
    NoCandidates,
    PreemptionOracle,
    assign_flavors,
)
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.usage import Inadmissible, WorkloadUsage

WAITING_FOR_QUOTA = "WaitingForQuota"
INADMISSIBLE = "Inadmissible"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
BORROWED_IN_COHORT = "other workload in the cohort was admitted with borrowing in this cycle"


@dataclass(frozen=True)
class Entry:
    """A Workload waiting in a ClusterQueue, with what Kueue computed for it on creation."""

    workload: Workload
    cluster_queue: str
    usage: WorkloadUsage | Inadmissible
    timestamp: float  # creation (or last eviction) time, in the caller's seconds

    @property
    def key(self) -> str:
        return f"{self.workload.metadata.namespace or 'default'}/{self.workload.metadata.name}"

    @property
    def priority(self) -> int:
        return self.workload.spec.priority or 0


@dataclass(frozen=True)
class Admitted:
    entry: Entry
    assignment: Assignment

    @property
    def borrowing(self) -> bool:
        return self.assignment.borrows > 0

    def admission_status(self) -> dict[str, object]:
        """``status.admission`` as Kueue stores it."""
        return {"clusterQueue": self.entry.cluster_queue, "podSetAssignments": [
            {"name": p.name, "flavors": dict(sorted(p.flavors.items())), "count": p.count,
             "resourceUsage": {r: _quantity(r, a) for r, a in sorted(p.usage.items())}}
            for p in self.assignment.pod_sets]}

    def conditions(self, now: str) -> list[dict[str, str]]:
        """``QuotaReserved`` and, with no admission checks, ``Admitted`` (workload.go SetQuotaReservation,
        admissionchecks.go SyncAdmittedCondition); ``now`` is the RFC 3339 time to stamp them with."""
        cq = self.entry.cluster_queue
        return [_condition("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", now),
                _condition("Admitted", "True", "Admitted", "The workload is admitted", now)]


@dataclass(frozen=True)
class Pending:
    """``QuotaReserved=False``: the reason and message Kueue writes on the Workload."""

    entry: Entry
    reason: str
    message: str
    retry_now: bool = False  # failed after nomination: back to the queue at once, never set aside

    def conditions(self, now: str) -> list[dict[str, str]]:
        """``QuotaReserved=False`` with Kueue's reason and message (its 32,768-character cap applied)."""
        return [_condition("QuotaReserved", "False", self.reason, self.message, now)]


@dataclass(frozen=True)
class CycleOptions:
    one_borrowing_per_cohort: bool = False  # the rule of older releases (see the module note)
    fair_sharing: bool = False


@dataclass(frozen=True)
class Snapshot:
    """What a cycle reads: the ClusterQueues, the flavors and the quota tree with the admitted usage."""

    cluster_queues: Mapping[str, ClusterQueue]
    flavors: Mapping[str, ResourceFlavor]
    tree: QuotaTree
    oracle: PreemptionOracle = field(default_factory=NoCandidates)

    def inactive_reason(self, cq: ClusterQueue) -> str:
        missing = sorted({f.name for g in cq.spec.resource_groups for f in g.flavors} - set(self.flavors))
        return f"ClusterQueue {cq.metadata.name} is inactive" if missing else ""


@dataclass
class CycleResult:
    admitted: list[Admitted] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


def scheduling_cycle(snapshot: Snapshot, heads: Sequence[Entry],
                     options: CycleOptions = CycleOptions()) -> CycleResult:
    """One cycle over ``heads`` (at most one per ClusterQueue); ``snapshot.tree`` gets the admitted usage."""
    result = CycleResult()
    nominated: list[tuple[Entry, Assignment]] = []
    for entry in heads:
        cq = snapshot.cluster_queues.get(entry.cluster_queue)
        if cq is None:
            result.pending.append(Pending(entry, INADMISSIBLE, f"ClusterQueue {entry.cluster_queue} doesn't exist"))
            continue
        inactive = snapshot.inactive_reason(cq)
        if inactive:
            result.pending.append(Pending(entry, INADMISSIBLE, inactive))
            continue
        if isinstance(entry.usage, Inadmissible):
            result.pending.append(Pending(entry, entry.usage.reason, entry.usage.message))
            continue
        ctx = FlavorContext(cq, snapshot.tree, snapshot.flavors, snapshot.oracle, options.fair_sharing)
        nominated.append((entry, assign_flavors(ctx, entry.workload, entry.usage)))
    nominated.sort(key=lambda n: (n[1].borrows, -n[0].priority, n[0].timestamp))
    borrowed_in: set[str] = set()
    for entry, assignment in nominated:
        _process(snapshot, entry, assignment, options, borrowed_in, result)
    return result


def _process(snapshot: Snapshot, entry: Entry, assignment: Assignment, options: CycleOptions,
             borrowed_in: set[str], result: CycleResult) -> None:
    mode = assignment.mode
    if mode.preemption == NO_FIT:
        result.pending.append(Pending(entry, assignment.no_fit_reason or WAITING_FOR_QUOTA, assignment.message))
        return
    if mode.preemption != FIT:  # preemption is a later step: no targets, so the Workload waits for quota
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, assignment.message))
        return
    key = cq_key(entry.cluster_queue)
    root = snapshot.tree.root(key)
    if options.one_borrowing_per_cohort and assignment.borrows > 0 and root in borrowed_in:
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, BORROWED_IN_COHORT, retry_now=True))
        return
    if not snapshot.tree.fits(key, assignment.usage):
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, NO_LONGER_FITS, retry_now=True))
        return
    snapshot.tree.add_usage(key, assignment.usage)
    if assignment.borrows > 0 and root != key:
        borrowed_in.add(root)
    result.admitted.append(Admitted(entry, assignment))


# ---- the queues ----------------------------------------------------------------------------------


@dataclass
class Queues:
    """Each ClusterQueue's pending Workloads in Kueue's order, and those set aside as inadmissible."""

    strategies: dict[str, str]  # ClusterQueue → queueing strategy
    pending: dict[str, list[Entry]] = field(default_factory=dict)
    inadmissible: dict[str, list[Entry]] = field(default_factory=dict)

    @classmethod
    def of(cls, cluster_queues: Iterable[ClusterQueue]) -> Queues:
        return cls({cq.metadata.name: cq.queueing_strategy for cq in cluster_queues})

    def push(self, entry: Entry) -> None:
        bisect.insort(self.pending.setdefault(entry.cluster_queue, []), entry, key=queue_order)

    def heads(self) -> list[Entry]:
        return [queue[0] for _, queue in sorted(self.pending.items()) if queue]

    def settle(self, result: CycleResult) -> None:
        """After a cycle: admitted heads leave; a failed head stays (StrictFIFO) or is set aside."""
        for admitted in result.admitted:
            self.pending[admitted.entry.cluster_queue].remove(admitted.entry)
        for pending in result.pending:
            queue = self.pending.get(pending.entry.cluster_queue, [])
            strict = self.strategies.get(pending.entry.cluster_queue) == "StrictFIFO"
            if not strict and not pending.retry_now and pending.entry in queue:
                queue.remove(pending.entry)
                self.inadmissible.setdefault(pending.entry.cluster_queue, []).append(pending.entry)

    def requeue_inadmissible(self) -> None:
        """Quota was freed (a Workload finished or was evicted): every set-aside Workload is tried again."""
        for entries in self.inadmissible.values():
            for entry in entries:
                self.push(entry)
        self.inadmissible.clear()


def run_until_settled(snapshot: Snapshot, queues: Queues, options: CycleOptions = CycleOptions(),
                      max_cycles: int = 10_000) -> tuple[list[Admitted], dict[str, Pending]]:
    """Cycles until no head is left to try: what was admitted, and the last word on every other Workload."""
    admitted: list[Admitted] = []
    last: dict[str, Pending] = {}
    for _ in range(max_cycles):
        heads = queues.heads()
        if not heads:
            break
        result = scheduling_cycle(snapshot, heads, options)
        admitted += result.admitted
        for pending in result.pending:
            last[pending.entry.key] = pending
        for done in result.admitted:
            last.pop(done.entry.key, None)
        queues.settle(result)
        if not result.admitted and all(queues.strategies.get(h.cluster_queue) == "StrictFIFO" for h in heads):
            break  # every head blocks its queue: nothing changes until quota is freed
    return admitted, last


def resolve_local_queue(workload: Workload, local_queues: Mapping[tuple[str, str], LocalQueue]) -> str | Pending:
    """The ClusterQueue a Workload's LocalQueue points at, or why it cannot be queued."""
    namespace = workload.metadata.namespace or "default"
    queue = local_queues.get((namespace, workload.spec.queue_name))
    if queue is None:
        entry = Entry(workload, "", WorkloadUsage(), 0.0)
        return Pending(entry, INADMISSIBLE, f"LocalQueue {workload.spec.queue_name} doesn't exist")
    return queue.spec.cluster_queue


def queue_order(entry: Entry) -> tuple[int, float]:
    """Kueue's order of a ClusterQueue's pending Workloads: higher priority first, then the older."""
    return -entry.priority, entry.timestamp


MAX_CONDITION_MESSAGE = 32 * 1024  # metav1.Condition's maxLength; Kueue truncates to it


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message[:MAX_CONDITION_MESSAGE],
            "lastTransitionTime": now}


def _quantity(resource: str, amount: int) -> str:
    return str(Quantity.parse(f"{amount}m")) if resource == "cpu" else str(amount)

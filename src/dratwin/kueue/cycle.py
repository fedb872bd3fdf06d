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
  higher priority, then FIFO; with fair sharing, the DRS tournament of :mod:`.fair_sharing` instead), and
  admits them one by one, each time re-checking that its usage still fits
  the tree after the admissions before it ("Workload no longer fits after processing another workload");
- a head whose namespace the ClusterQueue's ``namespaceSelector`` does not select, or whose requests pass
  its limits or its namespace's LimitRange bounds, is refused before nomination (:mod:`.admissibility`);
- a "no" is a :class:`Pending` value with Kueue's ``QuotaReserved=False`` reason and message;
- a head whose flavors need preemption (:mod:`.preemption` over ``Snapshot.admitted``: classical, or by the
  dominant resource shares with fair sharing on) yields a
  :class:`Preemption`: the Workloads to evict, each with the ``Preempted`` reason and message Kueue writes.
  The head stays pending (``WaitingForPreemptedWorkloads``, "... Pending the preemption of N workload(s)")
  and is retried next cycle, until the caller has evicted them. Targets another head claimed earlier in the
  cycle are not claimed twice: the head's flavors are assigned again as if those victims were gone
  (Kueue's RecomputeAssignmentUponPreemptionTargetsOverlap, on by default) and it waits for them, takes
  other targets, or is skipped. Every fit check of the cycle counts the claimed victims as gone, and a
  preemptor with no candidates holds its quota for the rest of the cycle unless ``reclaimWithinCohort``
  is ``Any``.

Upstream's comment still speaks of at most one borrowing admission per cohort per cycle; since the fit
re-check replaced that rule, it is an option here (``CycleOptions.one_borrowing_per_cohort``), off by default.
No clock and no I/O: timestamps are numbers the caller gives.
"""

from __future__ import annotations

import bisect
import functools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.api.core import LimitRange
from dratwin.api.kueue import ClusterQueue, Configuration, LocalQueue, ResourceFlavor, Workload
from dratwin.api.quantity import Quantity
from dratwin.kueue.admissibility import MISCONFIGURED, NamespaceLabels, admissibility_refusal
from dratwin.kueue.fair_sharing import Nominee, tournament_order
from dratwin.kueue.flavors import (
    FIT,
    NO_FIT,
    Assignment,
    FlavorContext,
    PreemptionOracle,
    TopologySeam,
    assign_flavors,
)
from dratwin.kueue.preemption import (
    AdmittedWorkload,
    Oracle,
    Preemptor,
    State,
    Target,
    Workloads,
    can_always_reclaim,
    reserved_while_waiting,
)
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.tas.encoding import encode
from dratwin.kueue.usage import Inadmissible, WorkloadUsage

WAITING_FOR_QUOTA = "WaitingForQuota"
INADMISSIBLE = "Inadmissible"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
BORROWED_IN_COHORT = "other workload in the cohort was admitted with borrowing in this cycle"
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
DEFERRED_FIT = f"{OVERLAPPING_TARGETS}, but will fit after these preemptions complete"


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

    @functools.cached_property
    def order(self) -> tuple[int, float]:
        """Its place in its ClusterQueue (:func:`queue_order`), kept: queues sort and insert by it often."""
        return -self.priority, self.timestamp

    @property
    def preemptor(self) -> Preemptor:
        return Preemptor(self.workload, self.cluster_queue, self.timestamp)


@dataclass(frozen=True)
class Admitted:
    entry: Entry
    assignment: Assignment

    @property
    def borrowing(self) -> bool:
        return self.assignment.borrows > 0

    def holding(self, reserved_at: float, evicted: bool = False) -> AdmittedWorkload:
        """The admitted Workload as later cycles see it (a preemption candidate), reserved at ``reserved_at``."""
        return AdmittedWorkload(self.entry.workload, self.entry.cluster_queue, dict(self.assignment.usage),
                                reserved_at, self.entry.timestamp, evicted)

    def admission_status(self) -> dict[str, object]:
        """``status.admission`` as Kueue stores it."""
        return {"clusterQueue": self.entry.cluster_queue, "podSetAssignments": [
            {"name": p.name, "flavors": dict(sorted(p.flavors.items())), "count": p.count,
             "resourceUsage": {r: _quantity(r, a) for r, a in sorted(p.usage.items())},
             **({"topologyAssignment": encode(p.topology)} if p.topology is not None else {})}
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
    fair_sharing_prioritize_non_borrowing: bool = True  # Kueue's FairSharingPrioritizeNonBorrowing gate (beta)
    preemption_strategies: tuple[str, ...] = ()  # fairSharing.preemptionStrategies; () is Kueue's default pair

    @classmethod
    def from_configuration(cls, config: Configuration) -> CycleOptions:
        """Fair sharing is on when the Configuration has a ``fairSharing`` stanza (v1beta2)."""
        gate = config.feature_gates.get("FairSharingPrioritizeNonBorrowing", True)
        strategies = tuple(config.fair_sharing.preemption_strategies) if config.fair_sharing is not None else ()
        return cls(fair_sharing=config.fair_sharing is not None, fair_sharing_prioritize_non_borrowing=gate,
                   preemption_strategies=strategies)


@dataclass(frozen=True)
class Snapshot:
    """What a cycle reads: the ClusterQueues, the flavors and the quota tree with the admitted usage."""

    cluster_queues: Mapping[str, ClusterQueue]
    flavors: Mapping[str, ResourceFlavor]
    tree: QuotaTree
    admitted: Sequence[AdmittedWorkload] = ()  # whose usage ``tree`` holds: the preemption candidates
    oracle: PreemptionOracle | None = None  # None: Kueue's preemption over ``admitted``
    namespaces: NamespaceLabels | None = None  # namespace → labels, for namespaceSelector (:mod:`.admissibility`)
    limit_ranges: Sequence[LimitRange] = ()  # the cluster's LimitRanges (:mod:`.admissibility`)
    topology: TopologySeam | None = None  # TAS (dratwin.kueue.tas.admission.TasContext); None: no TAS flavor

    def inactive_reason(self, cq: ClusterQueue) -> str:
        missing = sorted({f.name for g in cq.spec.resource_groups for f in g.flavors} - set(self.flavors))
        return f"ClusterQueue {cq.metadata.name} is inactive" if missing else ""


@dataclass(frozen=True)
class Preemption:
    """A head that preempts: the Workloads the caller evicts (``Target.conditions`` on each; those already
    ``ongoing`` are only waited for). The head itself is in ``CycleResult.pending``, waiting for them."""

    entry: Entry
    targets: list[Target]


@dataclass
class CycleResult:
    admitted: list[Admitted] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    preemptions: list[Preemption] = field(default_factory=list)  # the evictions this cycle issues


@dataclass
class _Claims:
    """The victims claimed so far in a cycle (``PreemptedWorkloads``), and the simulation state they are in.

    ``by_root`` sums the claimed victims' usage per ClusterQueue, by the root of its cohort tree, as they are
    claimed: taking them out of the tree one removal per queue leaves it as one removal per victim would
    (a node's usage is what its children use beyond their local quota, whatever the order of changes), and
    only the head's own cohort tree bears on what it can admit. A cycle over large cohorts claims thousands
    of victims, which every later fit check of the cycle takes out again."""

    state: State
    victims: dict[str, AdmittedWorkload] = field(default_factory=dict)
    held: list[tuple[str, dict[tuple[str, str], int]]] = field(default_factory=list)  # usage of heads not admitted
    by_root: dict[str, dict[str, dict[tuple[str, str], int]]] = field(default_factory=dict)  # root → queue → usage

    def hold(self, key: str, usage: dict[tuple[str, str], int]) -> None:
        """Count ``usage`` for the rest of the cycle only (Kueue's per-cycle snapshot forgets it)."""
        self.state.tree.add_usage(key, usage)
        self.held.append((key, usage))

    def release(self) -> None:
        for key, usage in reversed(self.held):
            self.state.tree.remove_usage(key, usage)
        self.held.clear()

    def claim(self, found: Sequence[Target]) -> None:
        tree = self.state.tree
        for target in found:
            victim = target.victim
            if victim.key not in self.victims:
                self.victims[victim.key] = victim
                queue = cq_key(victim.cluster_queue)
                _sum_into(self.by_root.setdefault(tree.root(queue), {}).setdefault(queue, {}), victim.usage)

    def overlap(self, found: Sequence[Target]) -> bool:
        return any(t.victim.key in self.victims for t in found)

    def take_out(self, key: str) -> None:
        """The claimed victims out of the simulation state, as :meth:`State.remove` of each would take them
        as far as ``key``'s cohort tree is concerned, until :meth:`put_back`."""
        tree = self.state.tree
        for queue, usage in self.by_root.get(tree.root(key), {}).items():
            tree.remove_usage(queue, usage)
        self.state.workloads.removed.update(self.victims)

    def put_back(self, key: str) -> None:
        tree = self.state.tree
        for queue, usage in self.by_root.get(tree.root(key), {}).items():
            tree.add_usage(queue, usage)
        self.state.workloads.removed.difference_update(self.victims)

    def fits(self, key: str, usage: dict[tuple[str, str], int], found: Sequence[Target]) -> bool:
        """Does ``usage`` fit with every claimed victim and ``found`` gone?"""
        tree = self.state.tree
        root = tree.root(key)
        extra: dict[str, dict[tuple[str, str], int]] = {}
        for target in found:
            victim = target.victim
            queue = cq_key(victim.cluster_queue)
            if victim.key not in self.victims and tree.root(queue) == root:
                _sum_into(extra.setdefault(queue, {}), victim.usage)
        gone = (self.by_root.get(root, {}), extra)
        if not gone[0] and not extra:
            return tree.fits(key, usage)
        for by_queue in gone:
            for queue, held in by_queue.items():
                tree.remove_usage(queue, held)
        try:
            return tree.fits(key, usage)
        finally:
            for by_queue in gone:
                for queue, held in by_queue.items():
                    tree.add_usage(queue, held)


def _sum_into(total: dict[tuple[str, str], int], usage: Mapping[tuple[str, str], int]) -> None:
    for fr, amount in usage.items():
        total[fr] = total.get(fr, 0) + amount


def preemption_oracle(snapshot: Snapshot, entry: Entry, options: CycleOptions = CycleOptions()) -> PreemptionOracle:
    """What the flavor assigner asks about preemption for ``entry``, as the cycle asks it (outside a cycle:
    over the snapshot's admitted Workloads, with no victims claimed by other heads)."""
    if snapshot.oracle is not None:
        return snapshot.oracle
    return Oracle(_preemption_state(snapshot, options), entry.preemptor)


def _preemption_state(snapshot: Snapshot, options: CycleOptions) -> State:
    """What preemption reads: the tree and the Workloads holding quota, with the fair-sharing strategies."""
    fair = options.preemption_strategies if options.fair_sharing else None
    return State(snapshot.cluster_queues, snapshot.tree, Workloads.of(snapshot.admitted), fair)


def scheduling_cycle(snapshot: Snapshot, heads: Sequence[Entry],
                     options: CycleOptions = CycleOptions()) -> CycleResult:
    """One cycle over ``heads`` (at most one per ClusterQueue); ``snapshot.tree`` gets the admitted usage (and
    only that: what preemptors and waiting heads hold counts within the cycle only)."""
    result = CycleResult()
    claims = _Claims(_preemption_state(snapshot, options))
    nominated: list[Nominated] = []
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
        refused = admissibility_refusal(cq, entry.workload, snapshot.namespaces, snapshot.limit_ranges)
        if refused:
            result.pending.append(Pending(entry, MISCONFIGURED, refused))
            continue
        nominated.append((entry, *_nominate(snapshot, claims.state, cq, entry, options)))
    borrowed_in: set[str] = set()
    for entry, assignment, found in _ordered(snapshot, nominated, options):
        _process(snapshot, entry, assignment, found, options, borrowed_in, claims, result)
    claims.release()
    return result


Nominated = tuple[Entry, Assignment, list[Target]]


def _ordered(snapshot: Snapshot, nominated: list[Nominated], options: CycleOptions) -> Iterator[Nominated]:
    """The classical order, or the fair-sharing tournament, which reads the tree as each admission leaves it."""
    if not options.fair_sharing:
        yield from sorted(nominated, key=lambda n: (n[1].borrows, -n[0].priority, n[0].timestamp))
        return
    nominees = [Nominee(n, n[0].cluster_queue, n[1].usage, n[0].priority, n[0].timestamp) for n in nominated]
    yield from tournament_order(snapshot.tree, nominees, options.fair_sharing_prioritize_non_borrowing)


def _nominate(snapshot: Snapshot, state: State, cq: ClusterQueue, entry: Entry,
              options: CycleOptions) -> tuple[Assignment, list[Target]]:
    """``getAssignments``: the flavors, and the preemption targets when they need preemption."""
    assert isinstance(entry.usage, WorkloadUsage)
    if snapshot.oracle is not None:
        ctx = FlavorContext(cq, snapshot.tree, snapshot.flavors, snapshot.oracle, options.fair_sharing,
                            snapshot.topology)
        return assign_flavors(ctx, entry.workload, entry.usage), []
    oracle = Oracle(state, entry.preemptor)
    ctx = FlavorContext(cq, snapshot.tree, snapshot.flavors, oracle, options.fair_sharing, snapshot.topology)
    assignment = assign_flavors(ctx, entry.workload, entry.usage)
    if assignment.mode.preemption in (FIT, NO_FIT):
        return assignment, []
    return assignment, oracle.targets(assignment)  # the oracle's simulations already found most of them


def _process(snapshot: Snapshot, entry: Entry, assignment: Assignment, found: list[Target], options: CycleOptions,
             borrowed_in: set[str], claims: _Claims, result: CycleResult) -> None:
    """``processEntry``, in Kueue's order of checks."""
    key = cq_key(entry.cluster_queue)
    deferred = False
    if claims.overlap(found):  # assign again as if the victims claimed before this head were gone
        claims.take_out(key)
        try:
            cq = snapshot.cluster_queues[entry.cluster_queue]
            assignment, found = _nominate(snapshot, claims.state, cq, entry, options)
        finally:
            claims.put_back(key)
        deferred = assignment.mode.preemption == FIT
    mode = assignment.mode
    if mode.preemption == NO_FIT:
        result.pending.append(Pending(entry, assignment.no_fit_reason or WAITING_FOR_QUOTA, assignment.message))
        return
    preempting = mode.preemption != FIT
    if preempting and not found:  # no candidates: wait for quota, holding it unless reclaim is guaranteed
        if not can_always_reclaim(snapshot.cluster_queues[entry.cluster_queue]):
            claims.hold(key, reserved_while_waiting(snapshot.tree, entry.cluster_queue, assignment))
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, assignment.message))
        return
    if deferred:
        claims.hold(key, assignment.usage)
        result.pending.append(Pending(entry, WAITING_FOR_PREEMPTED, DEFERRED_FIT, retry_now=True))
        return
    if claims.overlap(found):
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, OVERLAPPING_TARGETS, retry_now=True))
        return
    root = snapshot.tree.root(key)
    if options.one_borrowing_per_cohort and assignment.borrows > 0 and root in borrowed_in:
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, BORROWED_IN_COHORT, retry_now=True))
        return
    if not claims.fits(key, assignment.usage, found):
        result.pending.append(Pending(entry, WAITING_FOR_QUOTA, NO_LONGER_FITS, retry_now=True))
        return
    topology = snapshot.topology
    if topology is not None and not preempting and not topology.fits(entry.workload, assignment):
        # TASRecomputeAssignmentWithinSchedulingCycle (on): the flavors again, as earlier admissions left the tree
        cq = snapshot.cluster_queues[entry.cluster_queue]
        assignment, _ = _nominate(snapshot, claims.state, cq, entry, options)
        if (assignment.mode.preemption != FIT or not claims.fits(key, assignment.usage, [])
                or not topology.fits(entry.workload, assignment)):
            result.pending.append(Pending(entry, WAITING_FOR_QUOTA, NO_LONGER_FITS, retry_now=True))
            return
    claims.claim(found)
    if assignment.borrows > 0 and root != key:
        borrowed_in.add(root)
    if preempting:
        claims.hold(key, assignment.usage)
        message = f"{assignment.message}. Pending the preemption of {len(found)} workload(s)"
        result.pending.append(Pending(entry, WAITING_FOR_PREEMPTED, message, retry_now=True))
        result.preemptions.append(Preemption(entry, found))
        return
    snapshot.tree.add_usage(key, assignment.usage)
    if topology is not None:
        topology.book(entry.workload, assignment)
    result.admitted.append(Admitted(entry, assignment))


# ---- the queues ----------------------------------------------------------------------------------


@dataclass
class Queues:
    """Each ClusterQueue's pending Workloads in Kueue's order, and those set aside as inadmissible.

    Under ``BestEffortFIFO`` a head waiting for its preemptions stays the head (Kueue's sticky preemptor
    workload, ``pkg/cache/queue`` preemptorWorkload) until it leaves the queue, so that a Workload that
    arrives meanwhile does not take the room being made for it."""

    strategies: dict[str, str]  # ClusterQueue → queueing strategy
    pending: dict[str, list[Entry]] = field(default_factory=dict)
    inadmissible: dict[str, list[Entry]] = field(default_factory=dict)
    preempting: dict[str, Entry] = field(default_factory=dict)  # ClusterQueue → its sticky preemptor

    @classmethod
    def of(cls, cluster_queues: Iterable[ClusterQueue]) -> Queues:
        return cls({cq.metadata.name: cq.queueing_strategy for cq in cluster_queues})

    def push(self, entry: Entry) -> None:
        bisect.insort(self.pending.setdefault(entry.cluster_queue, []), entry, key=ORDER)

    def heads(self) -> list[Entry]:
        return [self._head(name, queue) for name, queue in sorted(self.pending.items()) if queue]

    def _head(self, name: str, queue: list[Entry]) -> Entry:
        sticky = self.preempting.get(name)
        return sticky if sticky is not None and sticky in queue else queue[0]

    def settle(self, result: CycleResult) -> None:
        """After a cycle: admitted heads leave; a failed head stays (StrictFIFO) or is set aside."""
        for admitted in result.admitted:
            self.pending[admitted.entry.cluster_queue].remove(admitted.entry)
            if self.preempting.get(admitted.entry.cluster_queue) == admitted.entry:
                del self.preempting[admitted.entry.cluster_queue]
        for pending in result.pending:
            queue = self.pending.get(pending.entry.cluster_queue, [])
            strict = self.strategies.get(pending.entry.cluster_queue) == "StrictFIFO"
            if pending.reason == WAITING_FOR_PREEMPTED and not strict:
                self.preempting[pending.entry.cluster_queue] = pending.entry
            if not strict and not pending.retry_now and pending.entry in queue:
                queue.remove(pending.entry)
                self.inadmissible.setdefault(pending.entry.cluster_queue, []).append(pending.entry)

    def discard(self, cluster_queue: str, key: str) -> None:
        """The Workload ``key`` leaves ``cluster_queue``'s queues (it finished while it waited)."""
        for queues in (self.pending, self.inadmissible):
            if cluster_queue in queues:
                queues[cluster_queue] = [e for e in queues[cluster_queue] if e.key != key]
        if cluster_queue in self.preempting and self.preempting[cluster_queue].key == key:
            del self.preempting[cluster_queue]

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
        if not result.admitted and all(p.retry_now or queues.strategies.get(p.entry.cluster_queue) == "StrictFIFO"
                                       for p in result.pending):
            break  # every head stays where it is (blocking, or waiting for its preemptions): the next cycle is this one
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
    return entry.order


ORDER = operator.attrgetter("order")  # queue_order, without a Python call per entry


MAX_CONDITION_MESSAGE = 32 * 1024  # metav1.Condition's maxLength; Kueue truncates to it


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message[:MAX_CONDITION_MESSAGE],
            "lastTransitionTime": now}


def _quantity(resource: str, amount: int) -> str:
    return str(Quantity.parse(f"{amount}m")) if resource == "cpu" else str(amount)

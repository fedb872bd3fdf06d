"""What classical and fair-sharing preemption share: the values, the policies, the tree as preemption reads
it, the minimal-set pass and the messages (``pkg/scheduler/preemption`` preemption.go and ``common/`` at
Kueue ``ff69552``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.api.kueue import JOB_UID_LABEL, ClusterQueue, Workload
from dratwin.kueue.flavors import NO_CANDIDATES, PREEMPT, RECLAIM, Assignment
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
EVICTED_BY_PREEMPTION = "Preempted"  # the Evicted condition's reason
HUMAN_REASONS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}
MAX_CONDITION_MESSAGE = 32 * 1024


@dataclass(frozen=True)
class AdmittedWorkload:
    """A Workload holding quota in a ClusterQueue: what preemption may take back.

    ``usage`` is its ``status.admission`` usage per (flavor, resource), as added to the quota tree;
    ``reserved_at`` the time of its ``QuotaReserved=True`` condition (the newest is preempted first);
    ``queued_at`` its queue-order timestamp (creation, or the last eviction), which
    ``LowerOrNewerEqualPriority`` compares; ``evicted`` whether an ``Evicted=True`` condition is already on it
    (an ongoing preemption: such Workloads are taken first and not evicted again).
    """

    workload: Workload
    cluster_queue: str
    usage: Mapping[FlavorResource, int]
    reserved_at: float
    queued_at: float = 0.0
    evicted: bool = False

    @property
    def key(self) -> str:
        return f"{self.workload.metadata.namespace or 'default'}/{self.workload.metadata.name}"

    @property
    def priority(self) -> int:
        return self.workload.spec.priority or 0

    def uses(self, frs: frozenset[FlavorResource]) -> bool:
        """``WorkloadUsesResources``: is any of ``frs`` among the flavor-resources it was assigned?"""
        return any(fr in frs for fr in self.usage)


@dataclass(frozen=True)
class Preemptor:
    """The pending Workload that needs room: its ClusterQueue, priority and queue-order timestamp."""

    workload: Workload
    cluster_queue: str
    timestamp: float

    @property
    def priority(self) -> int:
        return self.workload.spec.priority or 0


@dataclass(frozen=True)
class Target:
    """A Workload to evict, why (the ``Preempted`` condition's reason) and Kueue's message for it."""

    victim: AdmittedWorkload
    reason: str
    message: str

    def conditions(self, now: str) -> list[dict[str, str]]:
        """What Kueue sets on the victim: ``Evicted`` (reason ``Preempted``) and ``Preempted`` (the reason),
        both with the same message (``workload/evict`` prepareForEviction, ``SetPreemptedCondition``)."""
        text = self.message[:MAX_CONDITION_MESSAGE]
        return [{"type": "Evicted", "status": "True", "reason": EVICTED_BY_PREEMPTION, "message": text,
                 "lastTransitionTime": now},
                {"type": "Preempted", "status": "True", "reason": self.reason, "message": text,
                 "lastTransitionTime": now}]

    @property
    def ongoing(self) -> bool:
        """Already evicted: Kueue counts it as preempted and issues nothing new."""
        return self.victim.evicted


@dataclass
class Workloads:
    """The admitted Workloads by ClusterQueue; those removed during a simulation are left out."""

    by_queue: dict[str, list[AdmittedWorkload]] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, admitted: Sequence[AdmittedWorkload]) -> Workloads:
        out = cls()
        for item in admitted:
            out.by_queue.setdefault(item.cluster_queue, []).append(item)
        return out

    def in_queue(self, name: str) -> Iterator[AdmittedWorkload]:
        return (w for w in self.by_queue.get(name, ()) if w.key not in self.removed)


@dataclass
class State:
    """What a preemption simulation reads and (temporarily) changes: the tree and the admitted Workloads."""

    cluster_queues: Mapping[str, ClusterQueue]
    tree: QuotaTree
    workloads: Workloads
    fair_sharing: tuple[str, ...] | None = None  # the preemption strategies with fair sharing on; None: classical

    def remove(self, victim: AdmittedWorkload) -> None:
        self.tree.remove_usage(cq_key(victim.cluster_queue), victim.usage)
        self.workloads.removed.add(victim.key)

    def add(self, victim: AdmittedWorkload) -> None:
        self.tree.add_usage(cq_key(victim.cluster_queue), victim.usage)
        self.workloads.removed.discard(victim.key)


# ---- policies --------------------------------------------------------------------------------------


def satisfies_policy(preemptor: Preemptor, candidate: AdmittedWorkload, policy: str) -> bool:
    """``SatisfiesPreemptionPolicy``: ``Never`` (or unset) allows nothing."""
    lower = preemptor.priority > candidate.priority
    if policy == "LowerPriority":
        return lower
    if policy == "LowerOrNewerEqualPriority":
        return lower or (preemptor.priority == candidate.priority and preemptor.timestamp < candidate.queued_at)
    return policy == "Any"


def policies(cq: ClusterQueue) -> tuple[str, str, str, int | None]:
    """(withinClusterQueue, reclaimWithinCohort, borrowWithinCohort policy, its maxPriorityThreshold)."""
    spec = cq.spec.preemption
    if spec is None:
        return "Never", "Never", "Never", None
    borrow = spec.borrow_within_cohort
    return (spec.within_cluster_queue or "Never", spec.reclaim_within_cohort or "Never",
            (borrow.policy if borrow else None) or "Never", borrow.max_priority_threshold if borrow else None)


def can_always_reclaim(cq: ClusterQueue) -> bool:
    """``CanAlwaysReclaim``: ``reclaimWithinCohort: Any`` gets back whatever others borrow of its quota."""
    return policies(cq)[1] == "Any"


# ---- the tree, as preemption reads it --------------------------------------------------------------


def within_nominal(tree: QuotaTree, key: str, frs: frozenset[FlavorResource]) -> bool:
    """``IsWithinNominalInResources``: the node's usage is within its subtree quota in every one of ``frs``."""
    node = tree.nodes[key]
    usage, quota = node.usage, node.subtree
    return all(usage.get(fr, 0) <= quota.get(fr, 0) for fr in frs)


def fit_in_quota(tree: QuotaTree, key: str,
                 requests: Mapping[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
    """``QuantitiesFitInQuota``: do ``requests`` fit the node's own subtree quota, and what is left over for
    its parent (beyond what the node keeps locally)."""
    node = tree.nodes[key]
    fits = all(node.usage.get(fr, 0) + amount <= node.subtree.get(fr, 0) for fr, amount in requests.items())
    return fits, {fr: max(0, amount - tree.local_available(key, fr)) for fr, amount in requests.items()}


def borrowing(tree: QuotaTree, name: str, fr: FlavorResource, amount: int = 0) -> bool:
    return tree.borrowing_with(cq_key(name), fr, amount)


def workload_fits(tree: QuotaTree, cq: str, requests: Mapping[FlavorResource, int], allow_borrowing: bool) -> bool:
    """``workloadFits``: the requests within what the ClusterQueue can use now (and its nominal quota when
    borrowing is not allowed)."""
    key = cq_key(cq)
    for fr, amount in requests.items():
        if not allow_borrowing and borrowing(tree, cq, fr, amount):
            return False
        if amount > tree.available(key, fr):
            return False
    return True


# ---- the minimal set ---------------------------------------------------------------------------


def ordering_key(candidate: AdmittedWorkload, preemptor_cq: str) -> tuple[bool, bool, int, float, str]:
    """``CandidatesOrdering``: evicted first, other ClusterQueues first, lower priority, newest reservation,
    then the uid (Kueue's deterministic tie-break)."""
    return (not candidate.evicted, candidate.cluster_queue == preemptor_cq, candidate.priority,
            -candidate.reserved_at, candidate.workload.metadata.uid)


def needs_preemption(assignment: Assignment) -> frozenset[FlavorResource]:
    """``flavorResourcesNeedPreemption``: the flavor-resources whose mode is Preempt."""
    return frozenset((flavor, resource) for pod_set in assignment.pod_sets
                     for resource, flavor in pod_set.flavors.items()
                     if pod_set.modes.get(resource) is not None
                     and pod_set.modes[resource].preemption in (NO_CANDIDATES, PREEMPT, RECLAIM))


def fill_back(state: State, cq: str, requests: Mapping[FlavorResource, int],
              taken: list[tuple[AdmittedWorkload, str]], borrowing: bool) -> list[tuple[AdmittedWorkload, str]]:
    """``fillBackWorkloads``: from the one before the last, give each target back while the preemptor still
    fits (Kueue's O(1) removal moves the last target into the freed place, which its order keeps).
    ``taken`` stays removed from the state, as the caller restores it."""
    kept = list(taken)
    for i in range(len(kept) - 2, -1, -1):
        state.add(kept[i][0])
        if workload_fits(state.tree, cq, requests, borrowing):
            kept[i] = kept[-1]
            kept.pop()
        else:
            state.remove(kept[i][0])
    still_taken = {id(victim) for victim, _ in kept}
    for victim, _ in taken:  # given back above: removed again, as the caller restores every one it took
        if id(victim) not in still_taken:
            state.remove(victim)
    return kept


# ---- messages --------------------------------------------------------------------------------------


def queue_path(tree: QuotaTree, cq: str) -> str:
    """``buildCQPath``: ``/root/.../parent/cq``."""
    return "/" + "/".join(reversed([tree.nodes[k].name for k in tree.path_to_root(cq_key(cq))]))


def preemption_message(preemptor: Preemptor, reason: str, preemptor_path: str, preemptee_path: str) -> str:
    """``preemptionMessage``: what the victim's ``Evicted`` and ``Preempted`` conditions say."""
    meta = preemptor.workload.metadata
    return (f"Preempted to accommodate a workload (UID: {meta.uid or 'UNKNOWN'}, JobUID: "
            f"{meta.labels.get(JOB_UID_LABEL) or 'UNKNOWN'}) due to {HUMAN_REASONS.get(reason, 'UNKNOWN')}; "
            f"preemptor path: {preemptor_path or 'UNKNOWN'}; preemptee path: {preemptee_path or 'UNKNOWN'}")


def as_targets(state: State, preemptor: Preemptor, chosen: Sequence[tuple[AdmittedWorkload, str]]) -> list[Target]:
    path = queue_path(state.tree, preemptor.cluster_queue)
    return [Target(victim, reason,
                   preemption_message(preemptor, reason, path, queue_path(state.tree, victim.cluster_queue)))
            for victim, reason in chosen]

"""Kueue's classical preemption, pure: which admitted Workloads to evict so that a pending one fits.

The twin of ``pkg/scheduler/preemption`` at Kueue ``ff69552`` (``preemption.go`` classicalPreemptions,
``classical/`` candidate iterator and hierarchical reclaim, ``common/`` ordering and policies,
``preemption_oracle.go``); concepts: ``site/content/en/docs/concepts/preemption.md``.

- **Candidates** (:func:`candidates`): admitted Workloads that use a flavor-resource the preemptor needs
  preemption in. From the preemptor's own ClusterQueue per ``withinClusterQueue`` (``LowerPriority``,
  ``LowerOrNewerEqualPriority``); from the other ClusterQueues of the cohort tree per
  ``reclaimWithinCohort`` (``LowerPriority``, ``Any``), only from ClusterQueues (and Cohorts on the way)
  above their nominal quota in those flavor-resources. A candidate of another ClusterQueue is a
  *hierarchical reclaim* when the preemptor's side of the tree owns the quota it uses (any priority the
  policy allows), else it is preemptible only if the preemptor ends within nominal quota
  (``InCohortReclamation``), unless ``borrowWithinCohort: LowerPriority`` lets a lower-priority one go
  while the preemptor borrows (``InCohortReclaimWhileBorrowing``; ``maxPriorityThreshold`` caps the
  candidates' priority).
- **Order** (``CandidatesOrdering``): Workloads already evicted first, then other ClusterQueues' before the
  preemptor's own, lower priority first, the most recently reserved first, then the uid. The groups
  (hierarchical, other ClusterQueues, own) are each sorted so, evicted ones of all groups first.
- **Targets** (:func:`targets`): greedily remove candidates (skipping those a removal made invalid) until the
  preemptor fits, trying "may borrow" and "may not borrow" in Kueue's order, then give back, in reverse,
  every target the preemptor fits without.
- **Oracle** (:class:`Oracle`): what the flavor assigner asks per flavor-resource: could preemption make
  room (``Preempt`` when a target is in the same ClusterQueue, ``Reclaim`` when all are elsewhere), and the
  borrowing height after it.

The quota tree is changed during a simulation and restored before returning, as Kueue does with its
snapshot. Fair-sharing preemption (the DRS strategies) is not modelled here: with fair sharing on, the
candidates are the same (:func:`fair_candidates`) but the targets need the Dominant Resource Share.
"""

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

# preemptionVariant (classical/hierarchical_preemption.go)
WITHIN_CQ, HIERARCHICAL_RECLAIM, RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = range(1, 5)
_VARIANT_REASON = {WITHIN_CQ: IN_CLUSTER_QUEUE, HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
                   RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
                   RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}
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


@dataclass(frozen=True)
class Candidate:
    victim: AdmittedWorkload
    variant: int
    lca: str | None  # the Cohort up to which the victim's side of the tree must be over quota


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


def _policies(cq: ClusterQueue) -> tuple[str, str, str, int | None]:
    """(withinClusterQueue, reclaimWithinCohort, borrowWithinCohort policy, its maxPriorityThreshold)."""
    spec = cq.spec.preemption
    if spec is None:
        return "Never", "Never", "Never", None
    borrow = spec.borrow_within_cohort
    return (spec.within_cluster_queue or "Never", spec.reclaim_within_cohort or "Never",
            (borrow.policy if borrow else None) or "Never", borrow.max_priority_threshold if borrow else None)


def can_always_reclaim(cq: ClusterQueue) -> bool:
    """``CanAlwaysReclaim``: ``reclaimWithinCohort: Any`` gets back whatever others borrow of its quota."""
    return _policies(cq)[1] == "Any"


def _variant(preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource], candidate: AdmittedWorkload,
             advantage: bool) -> int:
    """``classifyPreemptionVariant`` (0: cannot be preempted)."""
    if not candidate.uses(frs):
        return 0
    within, reclaim, borrow, threshold = _policies(cq)
    same = candidate.cluster_queue == preemptor.cluster_queue
    if not satisfies_policy(preemptor, candidate, within if same else reclaim):
        return 0
    if same:
        return WITHIN_CQ
    if advantage:
        return HIERARCHICAL_RECLAIM
    if borrow == "Never":
        return RECLAIM_WITHOUT_BORROWING
    if candidate.priority >= preemptor.priority or (threshold is not None and candidate.priority > threshold):
        return RECLAIM_WITHOUT_BORROWING
    return RECLAIM_WHILE_BORROWING


# ---- the tree, as preemption reads it --------------------------------------------------------------


def within_nominal(tree: QuotaTree, key: str, frs: frozenset[FlavorResource]) -> bool:
    """``IsWithinNominalInResources``: the node's usage is within its subtree quota in every one of ``frs``."""
    node = tree.nodes[key]
    return all(node.usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in frs)


def _fit_in_quota(tree: QuotaTree, key: str,
                  requests: Mapping[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
    """``QuantitiesFitInQuota``: do ``requests`` fit the node's own subtree quota, and what is left over for
    its parent (beyond what the node keeps locally)."""
    node = tree.nodes[key]
    fits = all(node.usage.get(fr, 0) + amount <= node.subtree.get(fr, 0) for fr, amount in requests.items())
    return fits, {fr: max(0, amount - tree.local_available(key, fr)) for fr, amount in requests.items()}


def _borrowing(tree: QuotaTree, name: str, fr: FlavorResource, amount: int = 0) -> bool:
    return tree.borrowing_with(cq_key(name), fr, amount)


def workload_fits(tree: QuotaTree, cq: str, requests: Mapping[FlavorResource, int], allow_borrowing: bool) -> bool:
    """``workloadFits``: the requests within what the ClusterQueue can use now (and its nominal quota when
    borrowing is not allowed)."""
    key = cq_key(cq)
    for fr, amount in requests.items():
        if not allow_borrowing and _borrowing(tree, cq, fr, amount):
            return False
        if amount > tree.available(key, fr):
            return False
    return True


# ---- candidates ------------------------------------------------------------------------------------


def ordering_key(candidate: AdmittedWorkload, preemptor_cq: str) -> tuple[bool, bool, int, float, str]:
    """``CandidatesOrdering``: evicted first, other ClusterQueues first, lower priority, newest reservation,
    then the uid (Kueue's deterministic tie-break)."""
    return (not candidate.evicted, candidate.cluster_queue == preemptor_cq, candidate.priority,
            -candidate.reserved_at, candidate.workload.metadata.uid)


@dataclass(frozen=True)
class Candidates:
    """The ordered candidates of one preemptor, and what the attempts need to know about them."""

    ordered: list[Candidate]
    none_from_other_queues: bool
    none_for_hierarchical_reclaim: bool


def candidates(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
               requests: Mapping[FlavorResource, int]) -> Candidates:
    """``NewCandidateIterator``: same-queue, hierarchical-reclaim and priority candidates, each sorted, the
    evicted ones of every group first."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    within, _, _, _ = _policies(cq)
    same: list[Candidate] = []
    if within != "Never":
        same = _from_queue(state, preemptor, cq, frs, preemptor.cluster_queue, None, False)
    hierarchy, by_priority = _hierarchical(state, preemptor, cq, frs, requests)
    groups = [sorted(g, key=lambda c: ordering_key(c.victim, preemptor.cluster_queue))
              for g in (hierarchy, by_priority, same)]
    flat = [c for g in groups for c in g]
    ordered = [c for c in flat if c.victim.evicted] + [c for c in flat if not c.victim.evicted]
    return Candidates(ordered, not hierarchy and not by_priority, not hierarchy)


def _from_queue(state: State, preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource], name: str,
                lca: str | None, advantage: bool) -> list[Candidate]:
    out = []
    for victim in state.workloads.in_queue(name):
        variant = _variant(preemptor, cq, frs, victim, advantage)
        if variant:
            out.append(Candidate(victim, variant, lca))
    return out


def _hierarchical(state: State, preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource],
                  requests: Mapping[FlavorResource, int]) -> tuple[list[Candidate], list[Candidate]]:
    """``collectCandidatesForHierarchicalReclaim``: walking up from the preemptor's Cohort, the candidates of
    every subtree not yet visited; once a subtree on the way fits the requests in its own quota, the
    preemptor has the hierarchical advantage over everything that uses that quota."""
    tree = state.tree
    key = cq_key(preemptor.cluster_queue)
    parent = tree.nodes[key].parent
    hierarchy: list[Candidate] = []
    by_priority: list[Candidate] = []
    if parent is None or _policies(cq)[1] == "Never":
        return hierarchy, by_priority
    advantage, remaining = _fit_in_quota(tree, key, requests)
    previous: str | None = None
    for subtree_root in tree.path_to_root(parent):
        into = hierarchy if advantage else by_priority
        _in_subtree(state, preemptor, cq, frs, subtree_root, subtree_root, previous, advantage, into)
        fits, remaining = _fit_in_quota(tree, subtree_root, remaining)
        advantage = advantage or fits
        previous = subtree_root
    return hierarchy, by_priority


def _in_subtree(state: State, preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource], current: str,
                subtree_root: str, skip: str | None, advantage: bool, into: list[Candidate]) -> None:
    """``collectCandidatesInSubtree``: only subtrees and ClusterQueues over their quota hold candidates."""
    tree = state.tree
    children = tree.nodes[current].children
    for child in children:
        if tree.nodes[child].is_cohort and child != skip and not within_nominal(tree, child, frs):
            _in_subtree(state, preemptor, cq, frs, child, subtree_root, skip, advantage, into)
    for child in children:
        node = tree.nodes[child]
        if node.is_cohort or child == cq_key(preemptor.cluster_queue) or within_nominal(tree, child, frs):
            continue
        into.extend(_from_queue(state, preemptor, cq, frs, node.name, subtree_root, advantage))


def _valid(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource], candidate: Candidate,
           borrowing: bool) -> bool:
    """``candidateIsValid``: a candidate of another ClusterQueue stays one only while its ClusterQueue, and
    every Cohort below the common ancestor, is still over its quota (earlier removals may have fixed that)."""
    if candidate.victim.cluster_queue == preemptor.cluster_queue:
        return True
    if borrowing and candidate.variant == RECLAIM_WITHOUT_BORROWING:
        return False
    tree = state.tree
    key = cq_key(candidate.victim.cluster_queue)
    if within_nominal(tree, key, frs):
        return False
    parent = tree.nodes[key].parent
    for node in tree.path_to_root(parent) if parent is not None else ():
        if node == candidate.lca:
            break
        if within_nominal(tree, node, frs):
            return False
    return True


# ---- targets ---------------------------------------------------------------------------------------


def needs_preemption(assignment: Assignment) -> frozenset[FlavorResource]:
    """``flavorResourcesNeedPreemption``: the flavor-resources whose mode is Preempt."""
    return frozenset((flavor, resource) for pod_set in assignment.pod_sets
                     for resource, flavor in pod_set.flavors.items()
                     if pod_set.modes.get(resource) is not None
                     and pod_set.modes[resource].preemption in (NO_CANDIDATES, PREEMPT, RECLAIM))


def classical_targets(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
                      requests: Mapping[FlavorResource, int]) -> list[tuple[AdmittedWorkload, str]]:
    """``classicalPreemptions``: the minimal set found by the greedy fill and the reverse pass, with each
    victim's reason; empty when no set makes the preemptor fit. The state is as before on return."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    found = candidates(state, preemptor, frs, requests)
    borrow_forbidden = _policies(cq)[2] == "Never"
    if found.none_from_other_queues or (borrow_forbidden and not _under_nominal(state.tree, preemptor, frs)):
        attempts = [True]
    elif borrow_forbidden and found.none_for_hierarchical_reclaim:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for borrowing in attempts:
        taken: list[tuple[AdmittedWorkload, str]] = []
        try:
            for candidate in found.ordered:
                if not _valid(state, preemptor, frs, candidate, borrowing):
                    continue
                state.remove(candidate.victim)
                taken.append((candidate.victim, _VARIANT_REASON[candidate.variant]))
                if workload_fits(state.tree, preemptor.cluster_queue, requests, borrowing):
                    return fill_back(state, preemptor.cluster_queue, requests, taken, borrowing)
        finally:
            for victim, _ in taken:
                state.add(victim)
    return []


def _under_nominal(tree: QuotaTree, preemptor: Preemptor, frs: frozenset[FlavorResource]) -> bool:
    """``queueUnderNominalInResourcesNeedingPreemption``: usage strictly below nominal in every one of ``frs``."""
    key = cq_key(preemptor.cluster_queue)
    usage = tree.nodes[key].usage
    return all(tree.quota(key, fr).nominal > usage.get(fr, 0) for fr in frs)


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


def targets(state: State, preemptor: Preemptor, assignment: Assignment) -> list[Target]:
    """``GetTargets``: the Workloads to evict so that ``assignment`` fits (empty: preemption cannot help)."""
    frs = needs_preemption(assignment)
    return as_targets(state, preemptor, classical_targets(state, preemptor, frs, assignment.usage))


def fair_candidates(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource]) -> list[AdmittedWorkload]:
    """``findCandidates`` (fair sharing): the preemptor's own ClusterQueue per ``withinClusterQueue``, and every
    other ClusterQueue of the tree that borrows in ``frs`` per ``reclaimWithinCohort``, in Kueue's order."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    within, reclaim, _, _ = _policies(cq)
    out = [w for w in state.workloads.in_queue(preemptor.cluster_queue)
           if within != "Never" and satisfies_policy(preemptor, w, within) and w.uses(frs)]
    key = cq_key(preemptor.cluster_queue)
    if state.tree.nodes[key].parent is not None and reclaim != "Never":
        for other in _queues_under(state.tree, state.tree.root(key)):
            if other == preemptor.cluster_queue or not any(_borrowing(state.tree, other, fr) for fr in frs):
                continue
            out.extend(w for w in state.workloads.in_queue(other)
                       if satisfies_policy(preemptor, w, reclaim) and w.uses(frs))
    return sorted(out, key=lambda w: ordering_key(w, preemptor.cluster_queue))


def _queues_under(tree: QuotaTree, key: str) -> Iterator[str]:
    node = tree.nodes[key]
    if not node.is_cohort:
        yield node.name
        return
    for child in node.children:
        yield from _queues_under(tree, child)


# ---- the oracle the flavor assigner asks -----------------------------------------------------------


@dataclass(frozen=True)
class Oracle:
    """``PreemptionOracle.SimulatePreemption`` for one preemptor: could preempting make room for ``amount``
    of ``fr``, and how high would the ClusterQueue borrow after it."""

    state: State
    preemptor: Preemptor

    def simulate(self, cq: ClusterQueue, workload: Workload, fr: FlavorResource, amount: int) -> tuple[int, int]:
        key = cq_key(cq.metadata.name)
        chosen = classical_targets(self.state, self.preemptor, frozenset([fr]), {fr: amount})
        if not chosen:
            return NO_CANDIDATES, self.state.tree.borrowing_height(key, fr, amount)[0]
        for victim, _ in chosen:
            self.state.remove(victim)
        try:
            height = self.state.tree.borrowing_height(key, fr, amount)[0]
        finally:
            for victim, _ in chosen:
                self.state.add(victim)
        if any(victim.cluster_queue == cq.metadata.name for victim, _ in chosen):
            return PREEMPT, height
        return RECLAIM, height


def reserved_while_waiting(tree: QuotaTree, cq: str, assignment: Assignment) -> dict[FlavorResource, int]:
    """``quotaResourcesToReserve``: what a preemptor with no candidates holds for the rest of the cycle when
    its ClusterQueue cannot always reclaim (so that lower-priority work of others does not take it): up to
    nominal + borrowingLimit when it borrows, else up to its unused nominal quota."""
    key = cq_key(cq)
    usage = tree.nodes[key].usage
    out: dict[FlavorResource, int] = {}
    for fr, amount in assignment.usage.items():
        quota = tree.quota(key, fr)
        if assignment.borrows > 0:
            out[fr] = amount if quota.borrowing_limit is None else max(0, min(
                amount, quota.nominal + quota.borrowing_limit - usage.get(fr, 0)))
        else:
            out[fr] = max(0, min(amount, quota.nominal - usage.get(fr, 0)))
    return out


"""Classical preemption: candidates by the cohort tree and the policies, the greedy fill and its attempts
(``pkg/scheduler/preemption/preemption.go`` classicalPreemptions and ``classical/`` at Kueue ``ff69552``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dratwin.api.kueue import ClusterQueue
from dratwin.kueue.preemption.common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    AdmittedWorkload,
    Preemptor,
    State,
    fill_back,
    fit_in_quota,
    ordering_key,
    policies,
    satisfies_policy,
    within_nominal,
    workload_fits,
)
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key

# preemptionVariant (classical/hierarchical_preemption.go)
WITHIN_CQ, HIERARCHICAL_RECLAIM, RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = range(1, 5)
_VARIANT_REASON = {WITHIN_CQ: IN_CLUSTER_QUEUE, HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
                   RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
                   RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}


@dataclass(frozen=True)
class Candidate:
    victim: AdmittedWorkload
    variant: int
    lca: str | None  # the Cohort up to which the victim's side of the tree must be over quota


def _variant(preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource], candidate: AdmittedWorkload,
             advantage: bool) -> int:
    """``classifyPreemptionVariant`` (0: cannot be preempted)."""
    if not candidate.uses(frs):
        return 0
    within, reclaim, borrow, threshold = policies(cq)
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


@dataclass(frozen=True)
class Candidates:
    """The ordered candidates of one preemptor, and what the attempts need to know about them."""

    ordered: list[Candidate]
    none_from_other_queues: bool
    none_for_hierarchical_reclaim: bool


def candidates(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
               requests: Mapping[FlavorResource, int], while_borrowing_only: bool = False) -> Candidates:
    """``NewCandidateIterator``: same-queue, hierarchical-reclaim and priority candidates, each sorted, the
    evicted ones of every group first.

    ``while_borrowing_only``: the caller tries only the attempt that lets the preemptor borrow, where a
    ``RECLAIM_WITHOUT_BORROWING`` candidate is never valid; under ``borrowWithinCohort: Never`` every
    candidate outside the hierarchical advantage is one, so those subtrees are not searched (the others
    keep their order, and the flags then do not count them)."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    within, _, borrow, _ = policies(cq)
    same: list[Candidate] = []
    if within != "Never":
        same = _from_queue(state, preemptor, cq, frs, preemptor.cluster_queue, None, False)
    skip_priority = while_borrowing_only and borrow == "Never"
    hierarchy, by_priority = _hierarchical(state, preemptor, cq, frs, requests, skip_priority)
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
                  requests: Mapping[FlavorResource, int],
                  skip_priority: bool = False) -> tuple[list[Candidate], list[Candidate]]:
    """``collectCandidatesForHierarchicalReclaim``: walking up from the preemptor's Cohort, the candidates of
    every subtree not yet visited; once a subtree on the way fits the requests in its own quota, the
    preemptor has the hierarchical advantage over everything that uses that quota. ``skip_priority``: the
    subtrees without the advantage are not searched (:func:`candidates`)."""
    tree = state.tree
    key = cq_key(preemptor.cluster_queue)
    parent = tree.nodes[key].parent
    hierarchy: list[Candidate] = []
    by_priority: list[Candidate] = []
    if parent is None or policies(cq)[1] == "Never":
        return hierarchy, by_priority
    advantage, remaining = fit_in_quota(tree, key, requests)
    previous: str | None = None
    for subtree_root in tree.path_to_root(parent):
        if advantage or not skip_priority:
            into = hierarchy if advantage else by_priority
            _in_subtree(state, preemptor, cq, frs, subtree_root, subtree_root, previous, advantage, into)
        fits, remaining = fit_in_quota(tree, subtree_root, remaining)
        advantage = advantage or fits
        previous = subtree_root
    return hierarchy, by_priority


def _in_subtree(state: State, preemptor: Preemptor, cq: ClusterQueue, frs: frozenset[FlavorResource], current: str,
                subtree_root: str, skip: str | None, advantage: bool, into: list[Candidate]) -> None:
    """``collectCandidatesInSubtree``: only subtrees and ClusterQueues over their quota hold candidates."""
    tree = state.tree
    nodes = tree.nodes
    children = nodes[current].children
    for child in children:
        if nodes[child].is_cohort and child != skip and not within_nominal(tree, child, frs):
            _in_subtree(state, preemptor, cq, frs, child, subtree_root, skip, advantage, into)
    own = cq_key(preemptor.cluster_queue)
    for child in children:
        node = nodes[child]
        if node.is_cohort or child == own or within_nominal(tree, child, frs):
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


def classical_targets(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
                      requests: Mapping[FlavorResource, int]) -> list[tuple[AdmittedWorkload, str]]:
    """``classicalPreemptions``: the minimal set found by the greedy fill and the reverse pass, with each
    victim's reason; empty when no set makes the preemptor fit. The state is as before on return."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    borrow_forbidden = policies(cq)[2] == "Never"
    borrowing_only = borrow_forbidden and not _under_nominal(state.tree, preemptor, frs)
    found = candidates(state, preemptor, frs, requests, borrowing_only)
    if borrowing_only or found.none_from_other_queues:
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

"""Fair-sharing preemption: targets taken from the ClusterQueues with the highest dominant resource share
(``pkg/scheduler/preemption/preemption.go`` fairPreemptions, runFirstFsStrategy, runSecondFsStrategy and
``fairsharing/`` at Kueue ``ff69552``; concept: ``preemption.md`` "Fair Sharing").

- Candidates (:func:`fair_candidates`): the preemptor's ClusterQueue per ``withinClusterQueue``, and every
  ClusterQueue of the tree that borrows in the flavor-resources needing preemption per
  ``reclaimWithinCohort`` (``borrowWithinCohort`` plays no part), in Kueue's candidate order.
- The preemptor's usage is added to the tree first, so that shares are those after its admission.
- ClusterQueues are visited from the root Cohort down, always into the child with the highest share that
  still has candidates (:class:`TargetOrdering`); the shares compared are those of the two *almost least
  common ancestors* (the children of the lowest Cohort holding both queues, on each side).
- The preemptor's own Workloads go as ``InClusterQueue``; while its ClusterQueue stays within nominal quota
  (``FairSharingPreemptWithinNominal``, beta, on) others' go as ``InCohortReclamation`` whatever the
  shares; otherwise a Workload goes (``InCohortFairSharing``) when the strategy holds:
  ``LessThanOrEqualToFinalShare`` (the preemptor's share after admission <= the target's after the
  removal) or ``LessThanInitialShare`` (< the target's before it). With both configured (the default), the
  Workloads the first refused get one more chance under the second, one per ClusterQueue.
- Then the minimal-set pass of classical preemption, allowing borrowing.

The dominant resource share is :mod:`dratwin.kueue.fair_sharing`'s, the one place it is computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence

from dratwin.kueue.fair_sharing import DRS, compare_drs, dominant_resource_share
from dratwin.kueue.preemption.common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    AdmittedWorkload,
    Preemptor,
    State,
    borrowing,
    fill_back,
    ordering_key,
    policies,
    satisfies_policy,
    workload_fits,
)
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
NEGATIVE = DRS(unweighted_ratio=-1.0)  # ``NegativeDRS``: below every share, where comparisons start

Strategy = Callable[[DRS, DRS, DRS], bool]  # (preemptor's new share, target's old share, target's new share)


def less_than_or_equal_to_final_share(preemptor_new: DRS, _target_old: DRS, target_new: DRS) -> bool:
    """Rule S2-a: the preemptor, admitted, would not have more than the target, preempted."""
    return compare_drs(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, _target_new: DRS) -> bool:
    """Rule S2-b: the preemptor, admitted, would have less than the target has now."""
    return compare_drs(preemptor_new, target_old) < 0


STRATEGIES: Mapping[str, Strategy] = {LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: less_than_or_equal_to_final_share,
                                      LESS_THAN_INITIAL_SHARE: less_than_initial_share}


def fair_candidates(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource]) -> list[AdmittedWorkload]:
    """``findCandidates``: the preemptor's own ClusterQueue per ``withinClusterQueue``, and every other
    ClusterQueue of the tree that borrows in ``frs`` per ``reclaimWithinCohort``, in Kueue's order."""
    cq = state.cluster_queues[preemptor.cluster_queue]
    within, reclaim, _, _ = policies(cq)
    out = [w for w in state.workloads.in_queue(preemptor.cluster_queue)
           if within != "Never" and satisfies_policy(preemptor, w, within) and w.uses(frs)]
    key = cq_key(preemptor.cluster_queue)
    if state.tree.nodes[key].parent is not None and reclaim != "Never":
        for other in _queues_under(state.tree, state.tree.root(key)):
            if other == preemptor.cluster_queue or not any(borrowing(state.tree, other, fr) for fr in frs):
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


class TargetOrdering:
    """``TargetClusterQueueOrdering``: the ClusterQueues to take candidates from, the one under the highest
    share first, read afresh at every step (the same ClusterQueue may come back while it stays highest).
    Between two steps the caller pops a candidate of the ClusterQueue it got, or drops that ClusterQueue."""

    def __init__(self, tree: QuotaTree, preemptor: Preemptor, candidates: Sequence[AdmittedWorkload]) -> None:
        self.tree = tree
        self.preemptor = preemptor
        self.preemptor_key = cq_key(preemptor.cluster_queue)
        parent = tree.nodes[self.preemptor_key].parent
        self.ancestors = set(tree.path_to_root(parent)) if parent is not None else set()
        self.targets: dict[str, list[AdmittedWorkload]] = {}
        for candidate in candidates:
            self.targets.setdefault(cq_key(candidate.cluster_queue), []).append(candidate)
        self.pruned: set[str] = set()

    def __iter__(self) -> Iterator[str]:
        if not self.ancestors:
            while self.preemptor_key not in self.pruned and self.has(self.preemptor_key):
                yield self.preemptor_key
            return
        root = self.tree.root(self.preemptor_key)
        while root not in self.pruned:
            found = self._next(root)
            if found is not None:
                yield found

    def has(self, key: str) -> bool:
        return bool(self.targets.get(key))

    def pop(self, key: str) -> AdmittedWorkload:
        return self.targets[key].pop(0)

    def drop(self, key: str) -> None:
        self.pruned.add(key)

    def _next(self, cohort: str) -> str | None:
        """``nextTarget``: the child ClusterQueue or Cohort with the highest share, pruning those that can
        yield no more candidates (a node not borrowing, off the preemptor's path; a queue without any)."""
        best_cq, best_cq_share = None, NEGATIVE
        best_cohort, best_cohort_share = None, NEGATIVE
        for child in self.tree.nodes[cohort].children:
            if child in self.pruned:
                continue
            share = dominant_resource_share(self.tree, child)
            if self.tree.nodes[child].is_cohort:
                if not share.borrowing and child not in self.ancestors:
                    self.pruned.add(child)
                elif compare_drs(share, best_cohort_share) >= 0:
                    best_cohort, best_cohort_share = child, share
                continue
            if (not share.borrowing and child != self.preemptor_key) or not self.has(child):
                self.pruned.add(child)
            elif best_cq is not None and compare_drs(share, best_cq_share) == 0:
                if self._first_candidate_before(child, best_cq):
                    best_cq = child
            elif compare_drs(share, best_cq_share) > 0:
                best_cq, best_cq_share = child, share
        if best_cohort is None and best_cq is None:
            self.pruned.add(cohort)
            return None
        if best_cohort is not None and compare_drs(best_cohort_share, best_cq_share) >= 0:
            return self._next(best_cohort)
        return best_cq

    def _first_candidate_before(self, a: str, b: str) -> bool:
        name = self.preemptor.cluster_queue
        return ordering_key(self.targets[a][0], name) < ordering_key(self.targets[b][0], name)

    def shares(self, key: str) -> tuple[DRS, DRS]:
        """``ComputeShares``: (the preemptor's share, the target's share), each of its almost-LCA."""
        preemptor_side, target_side = self._almost_lcas(key)
        return dominant_resource_share(self.tree, preemptor_side), dominant_resource_share(self.tree, target_side)

    def target_share_without(self, key: str, victim: AdmittedWorkload) -> DRS:
        """``ComputeTargetShareAfterRemoval``: the target's almost-LCA share with ``victim``'s usage gone."""
        self.tree.remove_usage(key, victim.usage)
        try:
            return dominant_resource_share(self.tree, self._almost_lcas(key)[1])
        finally:
            self.tree.add_usage(key, victim.usage)

    def _almost_lcas(self, key: str) -> tuple[str, str]:
        parent = self.tree.nodes[key].parent
        lca = next(a for a in self.tree.path_to_root(parent) if a in self.ancestors) if parent else None
        return self._almost_lca(self.preemptor_key, lca), self._almost_lca(key, lca)

    def _almost_lca(self, key: str, lca: str | None) -> str:
        below = key
        for ancestor in self.tree.path_to_root(key):
            if ancestor == lca:
                return below
            below = ancestor
        return below


Chosen = list[tuple[AdmittedWorkload, str]]


def fair_targets(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
                 requests: Mapping[FlavorResource, int], strategies: Sequence[str]) -> Chosen:
    """``fairPreemptions``: the targets with their reasons, empty when the strategies cannot make the
    preemptor fit. The state is as before on return."""
    candidates = fair_candidates(state, preemptor, frs)
    if not candidates:
        return []
    rules = [STRATEGIES[s] for s in strategies if s in STRATEGIES] or [STRATEGIES[s] for s in DEFAULT_STRATEGIES]
    key = cq_key(preemptor.cluster_queue)
    taken: Chosen = []
    state.tree.add_usage(key, requests)  # the shares are those after the preemptor's admission
    try:
        fits, retry = _first_strategy(state, preemptor, frs, requests, candidates, rules[0], taken)
        if not fits and len(rules) > 1:
            fits = _second_strategy(state, preemptor, requests, retry, taken)
    finally:
        state.tree.remove_usage(key, requests)
    try:
        return fill_back(state, preemptor.cluster_queue, requests, taken, True) if fits else []
    finally:
        for victim, _ in taken:
            state.add(victim)


def _fits(state: State, preemptor: Preemptor, requests: Mapping[FlavorResource, int]) -> bool:
    """``workloadFitsForFairSharing``: the fit check, with the preemptor's own simulated usage taken out."""
    key = cq_key(preemptor.cluster_queue)
    state.tree.remove_usage(key, requests)
    try:
        return workload_fits(state.tree, preemptor.cluster_queue, requests, True)
    finally:
        state.tree.add_usage(key, requests)


def _take(state: State, victim: AdmittedWorkload, reason: str, taken: Chosen) -> None:
    state.remove(victim)
    taken.append((victim, reason))


def _first_strategy(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
                    requests: Mapping[FlavorResource, int], candidates: Sequence[AdmittedWorkload],
                    rule: Strategy, taken: Chosen) -> tuple[bool, list[AdmittedWorkload]]:
    """``runFirstFsStrategy``: whether the preemptor fits, and the candidates the rule refused."""
    ordering = TargetOrdering(state.tree, preemptor, candidates)
    within_nominal = not any(borrowing(state.tree, preemptor.cluster_queue, fr) for fr in frs)
    retry: list[AdmittedWorkload] = []
    for key in ordering:
        if key == ordering.preemptor_key or within_nominal:
            _take(state, ordering.pop(key), IN_CLUSTER_QUEUE if key == ordering.preemptor_key
                  else IN_COHORT_RECLAMATION, taken)
            if _fits(state, preemptor, requests):
                return True, []
            continue
        preemptor_new, target_old = ordering.shares(key)
        if math.isinf(preemptor_new.precise_weighted_share()) and not math.isinf(target_old.precise_weighted_share()):
            while ordering.has(key):  # no Workload of this queue can pass: all kept for the second rule
                retry.append(ordering.pop(key))
            continue
        while ordering.has(key):
            victim = ordering.pop(key)
            if rule(preemptor_new, target_old, ordering.target_share_without(key, victim)):
                _take(state, victim, IN_COHORT_FAIR_SHARING, taken)
                if _fits(state, preemptor, requests):
                    return True, []
                break  # the shares changed: the next target queue may be another
            retry.append(victim)
    return False, retry


def _second_strategy(state: State, preemptor: Preemptor, requests: Mapping[FlavorResource, int],
                     retry: Sequence[AdmittedWorkload], taken: Chosen) -> bool:
    """``runSecondFsStrategy`` (rule S2-b): one more Workload per ClusterQueue, if the preemptor's share
    after admission is below that queue's side now."""
    ordering = TargetOrdering(state.tree, preemptor, retry)
    for key in ordering:
        preemptor_new, target_old = ordering.shares(key)
        victim = ordering.pop(key)
        if less_than_initial_share(preemptor_new, target_old, NEGATIVE):
            _take(state, victim, IN_COHORT_FAIR_SHARING, taken)
            if _fits(state, preemptor, requests):
                return True
        ordering.drop(key)
    return False

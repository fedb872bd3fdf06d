"""Kueue's fair sharing: the dominant resource share (DRS) of every quota node, and the admission tournament.

The twin of ``pkg/cache/scheduler/fair_sharing.go`` and ``pkg/scheduler/fair_sharing_iterator.go`` at Kueue
``ff69552`` (concept: ``site/content/en/docs/concepts/fair_sharing.md``). Fair sharing is on when Kueue's
Configuration has a ``fairSharing`` stanza.

**DRS** (:func:`dominant_resource_share`), for a ClusterQueue or Cohort of the quota tree (:mod:`.quota`):

- a node without a parent (a root Cohort, a ClusterQueue in no Cohort) borrows from nobody: its DRS is 0;
- otherwise, per resource *name*, what it borrows: the sum over flavors of ``usage + request - subtree
  quota`` where positive (a ClusterQueue's subtree quota is its nominal quota);
- each borrowed amount × 1000 over what the parent's side of the tree could lend of that resource name:
  the sum over the root's flavors of the parent's ``potential_available`` (resources with nothing lendable
  are left out); the largest ratio is the *dominant* one (ties to the lower resource name);
- divided by the node's ``fairSharing.weight`` (default 1). A weight of 0 makes a borrowing node's share
  infinite (it loses every comparison, and among such nodes the lower unweighted ratio wins).

``status.fairSharing.weightedShare`` of a ClusterQueue or Cohort is that share rounded up, or
9223372036854775807 (``math.MaxInt64``) when infinite (:meth:`DRS.weighted_share`).

The **tournament** (:func:`tournament_order`) orders a cycle's nominated Workloads when fair sharing is on:
each time the next one is asked for, the tree of its root Cohort is walked bottom up and at every Cohort the
child (ClusterQueue or Cohort) whose DRS is the lowest *after* admitting its nominee wins (tie-breaks in
:func:`tournament_order`); the winner climbs until one Workload is left at the root. The shares are read
from the tree as the cycle's earlier admissions left it.

This module is the one place the DRS is computed; admission and preemption read it from here. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key

MAX_WEIGHTED_SHARE = 2**63 - 1  # what Kueue stores for an infinite share (math.MaxInt64)


@dataclass(frozen=True)
class DRS:
    """A node's dominant resource share, with what comparisons and preemption need of it."""

    weight: float = 1.0
    unweighted_ratio: float = 0.0  # borrowed × 1000 / lendable of the dominant resource
    dominant_resource: str = ""
    borrowed: tuple[FlavorResource, ...] = ()  # the (flavor, resource) pairs beyond the node's subtree quota

    @property
    def borrowing(self) -> bool:
        """Is the node's usage beyond its quota in any (flavor, resource)? (``IsBorrowing``)"""
        return bool(self.borrowed)

    @property
    def is_zero(self) -> bool:
        return self.unweighted_ratio == 0

    def borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        """``IsBorrowingOn``: does the node borrow any (flavor, resource) that ``requested`` asks for?"""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)

    @property
    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero

    def precise_weighted_share(self) -> float:
        """``PreciseWeightedShare``: 0 when not borrowing, +inf with weight 0, else ratio / weight."""
        if self.is_zero:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.unweighted_ratio / self.weight

    def weighted_share(self) -> int:
        """``status.fairSharing.weightedShare`` as Kueue writes it (``core.WeightedShare``)."""
        share = self.precise_weighted_share()
        return MAX_WEIGHTED_SHARE if share == math.inf else math.ceil(share)

    def sort_key(self) -> tuple[int, float]:
        """Orders shares as ``CompareDRS`` does: lower first (admitted first, preempted last)."""
        if self.zero_weight_borrows:
            return 1, self.unweighted_ratio
        return 0, self.precise_weighted_share()


def compare_drs(a: DRS, b: DRS) -> int:
    """``CompareDRS``: -1 when ``a`` is the lower share (preferred for admission), 0 equal, 1 higher."""
    ka, kb = a.sort_key(), b.sort_key()
    return (ka > kb) - (ka < kb)


def dominant_resource_share(tree: QuotaTree, key: str, request: Mapping[FlavorResource, int] | None = None) -> DRS:
    """The DRS of node ``key`` (``cq:NAME`` or ``cohort:NAME``) with its current usage in ``tree``, plus
    ``request`` added to that node's own usage only (``dominantResourceShare(node, wlReq)``; to see a
    Workload's admission through the whole tree, add its usage to a copy of the tree instead)."""
    node = tree.nodes[key]
    if node.parent is None:
        return DRS(weight=node.weight)
    request = request or {}
    borrowed_by_name: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, subtree_quota in node.subtree.items():
        amount = request.get(fr, 0) + node.usage.get(fr, 0) - subtree_quota
        if amount > 0:
            borrowed_by_name[fr[1]] = borrowed_by_name.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowed:
        return DRS(weight=node.weight)
    lendable = _lendable(tree, node.parent)
    ratio, dominant = 0.0, ""
    for name, amount in borrowed_by_name.items():
        room = lendable.get(name, 0)
        if room <= 0:
            continue
        share = float(amount) * 1000.0 / float(room)
        if share > ratio or (share == ratio and name < dominant):
            ratio, dominant = share, name
    return DRS(node.weight, ratio, dominant, tuple(borrowed))


def weighted_share(tree: QuotaTree, key: str) -> int:
    """``status.fairSharing.weightedShare`` of a ClusterQueue or Cohort with the tree's current usage."""
    return dominant_resource_share(tree, key).weighted_share()


def _lendable(tree: QuotaTree, parent: str) -> dict[str, int]:
    """``calculateLendable``: per resource name, what ``parent`` could get of it with the tree idle."""
    root = tree.nodes[tree.root(parent)]
    out: dict[str, int] = {}
    for fr in root.subtree:
        out[fr[1]] = out.get(fr[1], 0) + tree.potential_available(parent, fr)
    return out


# ---- the tournament ------------------------------------------------------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class Nominee(Generic[T]):
    """A nominated Workload as the tournament sees it; ``item`` is what :func:`tournament_order` yields."""

    item: T
    cluster_queue: str
    usage: Mapping[FlavorResource, int]  # the flavor assignment's usage
    priority: int
    timestamp: float


def tournament_order(tree: QuotaTree, nominees: Sequence[Nominee[T]],
                     prioritize_non_borrowing: bool = True) -> Iterator[T]:
    """``fairSharingIterator``: the nominees in the order fair sharing considers them, one at a time.

    Each step takes the ClusterQueue of the first nominee left (Kueue takes any: queues of different root
    Cohorts share no quota, so their relative order does not change what is admitted); one in no Cohort is
    returned as is. Otherwise a tournament is run over its root Cohort: at each Cohort, child Cohorts' winners
    first, then its ClusterQueues' nominees, the lower one wins (``entryComparer.less``):

    1. with ``FairSharingPrioritizeNonBorrowing`` (beta, on by default: ``prioritize_non_borrowing``), the one
       whose child node would not borrow, after its admission, any (flavor, resource) it asks for;
    2. the lower DRS of that child node after admission (:func:`compare_drs`);
    3. the higher priority (``PrioritySortingWithinCohort``, on by default);
    4. the earlier timestamp; on a full tie the one met first stays.

    The DRS are computed each step on ``tree`` as it is then (the caller admits between steps), adding each
    nominee's usage to its ClusterQueue and taking it away again.
    """
    waiting: dict[str, list[Nominee[T]]] = {}
    for nominee in nominees:
        waiting.setdefault(cq_key(nominee.cluster_queue), []).append(nominee)
    while waiting:
        key = next(iter(waiting))
        if key not in tree.nodes or tree.nodes[key].parent is None:
            yield _take(waiting, key).item
            continue
        root = tree.root(key)
        heads = {k: queue[0] for k, queue in waiting.items() if k in tree.nodes and tree.root(k) == root}
        shares = _shares_after_admission(tree, heads)
        winner = _tournament(tree, root, heads, shares, prioritize_non_borrowing)
        assert winner is not None  # the root holds the queue the step started from
        yield _take(waiting, cq_key(winner.cluster_queue)).item


def _take(waiting: dict[str, list[Nominee[T]]], key: str) -> Nominee[T]:
    queue = waiting[key]
    nominee = queue.pop(0)
    if not queue:
        del waiting[key]
    return nominee


def _shares_after_admission(tree: QuotaTree, heads: Mapping[str, Nominee[T]]) -> dict[tuple[str, str], DRS]:
    """``computeDRS``: per (Cohort, ClusterQueue of a nominee), the DRS of the Cohort's child on the way up from
    that ClusterQueue, with the nominee admitted."""
    shares: dict[tuple[str, str], DRS] = {}
    for key, nominee in heads.items():
        tree.add_usage(key, nominee.usage)
        try:
            share = dominant_resource_share(tree, key)
            for ancestor in list(tree.path_to_root(key))[1:]:
                shares[(ancestor, key)] = share
                share = dominant_resource_share(tree, ancestor)
        finally:
            tree.remove_usage(key, nominee.usage)
    return shares


def _tournament(tree: QuotaTree, cohort: str, heads: Mapping[str, Nominee[T]],
                shares: Mapping[tuple[str, str], DRS], prioritize_non_borrowing: bool) -> Nominee[T] | None:
    """``runTournament``: the nominee that wins at ``cohort``, or None when its subtree has none left."""
    children = tree.nodes[cohort].children
    candidates = [winner for child in children if tree.nodes[child].is_cohort
                  if (winner := _tournament(tree, child, heads, shares, prioritize_non_borrowing)) is not None]
    candidates += [heads[child] for child in children if not tree.nodes[child].is_cohort and child in heads]
    best: Nominee[T] | None = None
    for candidate in candidates:
        if best is None or _less(candidate, best, cohort, shares, prioritize_non_borrowing):
            best = candidate
    return best


def _less(a: Nominee[T], b: Nominee[T], cohort: str, shares: Mapping[tuple[str, str], DRS],
          prioritize_non_borrowing: bool) -> bool:
    a_share, b_share = shares[(cohort, cq_key(a.cluster_queue))], shares[(cohort, cq_key(b.cluster_queue))]
    if prioritize_non_borrowing:
        a_borrows, b_borrows = a_share.borrowing_on(a.usage), b_share.borrowing_on(b.usage)
        if a_borrows != b_borrows:
            return not a_borrows
    order = compare_drs(a_share, b_share)
    if order != 0:
        return order < 0
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.timestamp < b.timestamp

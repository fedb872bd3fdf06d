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
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    return _drs(tree, key, request or {}, lambda parent: _lendable(tree, parent))


def _drs(tree: QuotaTree, key: str, request: Mapping[FlavorResource, int],
         lendable_of: Callable[[str], Mapping[str, int]]) -> DRS:
    node = tree.nodes[key]
    if node.parent is None:
        return DRS(weight=node.weight)
    borrowed_by_name: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, subtree_quota in node.subtree.items():
        amount = request.get(fr, 0) + node.usage.get(fr, 0) - subtree_quota
        if amount > 0:
            borrowed_by_name[fr[1]] = borrowed_by_name.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowed:
        return DRS(weight=node.weight)
    lendable = lendable_of(node.parent)
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
Rank = tuple[bool, tuple[int, float], int, float]


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
    nominee's usage to its ClusterQueue and taking it away again; a nominee's shares are computed again only
    when the usage on its way up the tree has changed since (the quotas never change).
    """
    shares = _Shares(tree, prioritize_non_borrowing)
    waiting: dict[str, list[Nominee[T]]] = {}
    for nominee in nominees:
        waiting.setdefault(cq_key(nominee.cluster_queue), []).append(nominee)
    while waiting:
        key = next(iter(waiting))
        if key not in tree.nodes or tree.nodes[key].parent is None:
            yield _take(waiting, key).item
            continue
        root = shares.path(key)[-1]
        heads = {k: queue[0] for k, queue in waiting.items() if k in tree.nodes and shares.path(k)[-1] == root}
        winner = _tournament(tree, root, heads, shares.ranks_after_admission(heads))
        assert winner is not None  # the root holds the queue the step started from
        yield _take(waiting, cq_key(winner.cluster_queue)).item


def _take(waiting: dict[str, list[Nominee[T]]], key: str) -> Nominee[T]:
    queue = waiting[key]
    nominee = queue.pop(0)
    if not queue:
        del waiting[key]
    return nominee


class _Shares:
    """``computeDRS`` for one tournament order: per (Cohort, ClusterQueue of a nominee), the DRS of the
    Cohort's child on the way up from that ClusterQueue with the nominee admitted, as the nominee's rank.
    What the tree's quotas fix (paths, what each Cohort could lend) is kept; a nominee's ranks are kept while
    the usage of the nodes on its path below the root is what it was."""

    def __init__(self, tree: QuotaTree, prioritize_non_borrowing: bool) -> None:
        self.tree = tree
        self.prioritize_non_borrowing = prioritize_non_borrowing
        self._paths: dict[str, list[str]] = {}
        self._lendable: dict[str, dict[str, int]] = {}
        self._seen: dict[str, tuple[object, list[tuple[tuple[str, str], Rank]]]] = {}

    def path(self, key: str) -> list[str]:
        if key not in self._paths:
            self._paths[key] = list(self.tree.path_to_root(key))
        return self._paths[key]

    def lendable(self, parent: str) -> dict[str, int]:
        if parent not in self._lendable:
            self._lendable[parent] = _lendable(self.tree, parent)
        return self._lendable[parent]

    def ranks_after_admission(self, heads: Mapping[str, Nominee[T]]) -> dict[tuple[str, str], Rank]:
        """Per (Cohort, ClusterQueue of a nominee), the nominee's rank there (:func:`_rank`)."""
        out: dict[tuple[str, str], Rank] = {}
        for key, nominee in heads.items():
            # the root's usage is left out: no share reads it (a root borrows from nobody)
            # id: the nominees live as long as the order does, so an id names one nominee throughout
            state = (id(nominee), [dict(self.tree.nodes[n].usage) for n in self.path(key)[:-1]])
            seen = self._seen.get(key)
            if seen is None or seen[0] != state:
                seen = state, self._compute(key, nominee)
                self._seen[key] = seen
            out.update(seen[1])
        return out

    def _compute(self, key: str, nominee: Nominee[T]) -> list[tuple[tuple[str, str], Rank]]:
        found: list[tuple[tuple[str, str], Rank]] = []
        self.tree.add_usage(key, nominee.usage)
        try:
            share = _drs(self.tree, key, {}, self.lendable)
            for ancestor in self.path(key)[1:]:
                found.append(((ancestor, key), _rank(share, nominee, self.prioritize_non_borrowing)))
                share = _drs(self.tree, ancestor, {}, self.lendable)
        finally:
            self.tree.remove_usage(key, nominee.usage)
        return found


def _tournament(tree: QuotaTree, cohort: str, heads: Mapping[str, Nominee[T]],
                ranks: Mapping[tuple[str, str], Rank]) -> Nominee[T] | None:
    """``runTournament``: the nominee that wins at ``cohort``, or None when its subtree has none left; the
    lowest rank wins, the first met on a tie (``less`` is never true between equals)."""
    children = tree.nodes[cohort].children
    candidates = [winner for child in children if tree.nodes[child].is_cohort
                  if (winner := _tournament(tree, child, heads, ranks)) is not None]
    candidates += [heads[child] for child in children if not tree.nodes[child].is_cohort and child in heads]
    if not candidates:
        return None
    return min(candidates, key=lambda c: ranks[(cohort, cq_key(c.cluster_queue))])


def _rank(share: DRS, nominee: Nominee[T], prioritize_non_borrowing: bool) -> Rank:
    """``entryComparer.less`` as a sort key: borrowing on what it asks for (with the gate), the share, the
    priority (higher first), the timestamp."""
    borrows = prioritize_non_borrowing and share.borrowing_on(nominee.usage)
    return borrows, share.sort_key(), -nominee.priority, nominee.timestamp

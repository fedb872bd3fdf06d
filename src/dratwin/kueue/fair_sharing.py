"""Kueue's fair sharing: the dominant resource share (DRS) of every quota node.

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

This module is the one place the DRS is computed; admission and preemption read it from here. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from dratwin.kueue.quota import FlavorResource, QuotaTree

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

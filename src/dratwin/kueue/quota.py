"""The quota tree of ClusterQueues and Cohorts, and what each node can still admit.

The twin of Kueue's scheduler cache (``pkg/cache/scheduler/resource_node.go`` at ``ff69552``). Every
ClusterQueue and Cohort is a node with, per (flavor, resource):

- its **quotas** (nominal, borrowingLimit, lendingLimit); a Cohort's own ``resourceGroups`` are extra
  quota on top of its members';
- its **subtree quota**: a ClusterQueue's nominal; a Cohort's own nominal plus, per child, what the child
  lends (its subtree quota minus the part its lendingLimit keeps for itself, the child's *local quota*);
- its **usage**: a ClusterQueue's admitted workloads; a Cohort's, per child, the part of the child's usage
  beyond its local quota;
- its fair-sharing **weight** (``spec.fairSharing.weight``, 1 when unset), read by :mod:`.fair_sharing`.

``available`` is what a node can admit now (its local quota left, plus what its parent has, capped by its
borrowingLimit); ``potential_available`` what it could admit with the whole tree idle. A Cohort named by
a ClusterQueue but not defined is an implicit Cohort with no quota of its own, as in Kueue. The tree is a
plain value: the scheduling cycle copies it (:meth:`QuotaTree.copy`) and adds the usage of what it admits.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from dratwin.api.kueue import DEFAULT_FAIR_SHARING_WEIGHT, ClusterQueue, Cohort, FairSharing, ResourceGroup
from dratwin.api.quantity import Quantity
from dratwin.kueue.usage import resource_value

FlavorResource = tuple[str, str]  # (flavor, resource)


@dataclass(frozen=True)
class Quota:
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


_NO_QUOTA = Quota()


@dataclass
class Node:
    name: str
    is_cohort: bool
    quotas: dict[FlavorResource, Quota] = field(default_factory=dict)
    subtree: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    parent: str | None = None
    children: list[str] = field(default_factory=list)
    weight: float = 1.0
    # per (flavor, resource) with a lendingLimit, what the node keeps for itself (``local_quota``): set with
    # the subtree quota, as fixed as the quotas; every usage change reads it at each step up the tree
    local: dict[FlavorResource, int] = field(default_factory=dict)


class QuotaTree:
    """Every ClusterQueue and Cohort of the cluster as quota nodes (``cq:NAME`` / ``cohort:NAME``)."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self.nodes = nodes

    # ---- building -------------------------------------------------------------------------------

    @classmethod
    def build(cls, cluster_queues: Iterable[ClusterQueue], cohorts: Iterable[Cohort] = ()) -> QuotaTree:
        nodes: dict[str, Node] = {}
        for cohort in cohorts:
            key = cohort_key(cohort.metadata.name)
            nodes[key] = Node(cohort.metadata.name, True, _quotas(cohort.spec.resource_groups),
                              weight=fair_weight(cohort.spec.fair_sharing))
        for cohort in cohorts:
            if cohort.spec.parent_name and not _closes_cycle(nodes, cohort.metadata.name, cohort.spec.parent_name):
                _link(nodes, cohort_key(cohort.metadata.name), cohort.spec.parent_name)
        for cq in cluster_queues:
            key = cq_key(cq.metadata.name)
            nodes[key] = Node(cq.metadata.name, False, _quotas(cq.spec.resource_groups),
                              weight=fair_weight(cq.spec.fair_sharing))
            if cq.spec.cohort_name:
                _link(nodes, key, cq.spec.cohort_name)
        tree = cls(nodes)
        for root in [k for k, n in nodes.items() if n.parent is None]:
            tree._settle_subtree(root)
        return tree

    def _settle_subtree(self, key: str) -> None:
        node = self.nodes[key]
        node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
        for child_key in node.children:
            self._settle_subtree(child_key)
            child = self.nodes[child_key]
            for fr, amount in child.subtree.items():
                node.subtree[fr] = node.subtree.get(fr, 0) + amount - self.local_quota(child_key, fr)
        node.local = {fr: max(0, node.subtree.get(fr, 0) - q.lending_limit) for fr, q in node.quotas.items()
                      if q.lending_limit is not None}

    def copy(self) -> QuotaTree:
        """A tree whose usage can change without changing this one's (quotas are shared: never changed)."""
        return QuotaTree({k: _with_own_usage(n) for k, n in self.nodes.items()})

    # ---- reading --------------------------------------------------------------------------------

    def quota(self, key: str, fr: FlavorResource) -> Quota:
        return self.nodes[key].quotas.get(fr, _NO_QUOTA)

    def local_quota(self, key: str, fr: FlavorResource) -> int:
        """What a node keeps for itself: its subtree quota beyond its lendingLimit (0 without one)."""
        return self.nodes[key].local.get(fr, 0)  # a child's is set before its parent's subtree quota is summed

    def local_available(self, key: str, fr: FlavorResource) -> int:
        node = self.nodes[key]
        return max(0, node.local.get(fr, 0) - node.usage.get(fr, 0))

    def available(self, key: str, fr: FlavorResource) -> int:
        """What ``key`` can admit without preempting (0 when it is in debt)."""
        return max(0, self._available(key, fr))

    def _available(self, key: str, fr: FlavorResource) -> int:
        node = self.nodes[key]
        if node.parent is None:
            return node.subtree.get(fr, 0) - node.usage.get(fr, 0)
        from_parent = self._available(node.parent, fr)
        borrowing = self.quota(key, fr).borrowing_limit
        if borrowing is not None:
            local = self.local_quota(key, fr)
            stored_in_parent = node.subtree.get(fr, 0) - local
            used_in_parent = max(0, node.usage.get(fr, 0) - local)
            from_parent = min(stored_in_parent - used_in_parent + borrowing, from_parent)
        return self.local_available(key, fr) + from_parent

    def potential_available(self, key: str, fr: FlavorResource) -> int:
        """The most ``key`` could ever admit of ``fr``: its quota plus what the tree can lend it."""
        node = self.nodes[key]
        if node.parent is None:
            return node.subtree.get(fr, 0)
        most = self.local_quota(key, fr) + self.potential_available(node.parent, fr)
        borrowing = self.quota(key, fr).borrowing_limit
        if borrowing is not None:
            most = min(node.subtree.get(fr, 0) + borrowing, most)
        return most

    def borrowing_with(self, key: str, fr: FlavorResource, amount: int) -> bool:
        """Would ``amount`` more take ``key`` beyond its own quota (nominal for a ClusterQueue)?"""
        node = self.nodes[key]
        own = self.quota(key, fr).nominal if not node.is_cohort else node.subtree.get(fr, 0)
        return own < node.usage.get(fr, 0) + amount

    def borrowing_height(self, key: str, fr: FlavorResource, amount: int) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits``: 0 within the ClusterQueue's nominal quota, else the height
        of the lowest Cohort whose subtree has room (how far the quota is borrowed from); and whether that
        subtree is smaller than the whole tree (quota could be reclaimed within it)."""
        node = self.nodes[key]
        if node.parent is None or not self.borrowing_with(key, fr, amount):
            return 0, node.parent is not None
        remaining = amount - self.local_available(key, fr)
        for parent in self.path_to_root(node.parent):
            if not self.borrowing_with(parent, fr, remaining):
                return self._height(parent), self.nodes[parent].parent is not None
            remaining -= self.local_available(parent, fr)
        return self._height(self.root(key)), False

    def _height(self, key: str) -> int:
        node = self.nodes[key]
        cohorts = [c for c in node.children if self.nodes[c].is_cohort]
        return max([min(len(node.children), 1), *(self._height(c) + 1 for c in cohorts)])

    def path_to_root(self, key: str) -> Iterator[str]:
        current: str | None = key
        while current is not None:
            yield current
            current = self.nodes[current].parent

    def root(self, key: str) -> str:
        return list(self.path_to_root(key))[-1]

    # ---- usage ----------------------------------------------------------------------------------

    def add_usage(self, key: str, usage: Mapping[FlavorResource, int]) -> None:
        for fr, amount in usage.items():
            self._add(key, fr, amount)

    def _add(self, key: str, fr: FlavorResource, amount: int) -> None:
        """``amount`` more at ``key``; what goes beyond the node's local quota left is its parent's too."""
        nodes = self.nodes
        node = nodes[key]
        while True:
            used = node.usage.get(fr, 0)
            local_left = max(0, node.local.get(fr, 0) - used)
            node.usage[fr] = used + amount
            if node.parent is None or amount <= local_left:
                return
            amount -= local_left
            node = nodes[node.parent]

    def remove_usage(self, key: str, usage: Mapping[FlavorResource, int]) -> None:
        for fr, amount in usage.items():
            self._remove(key, fr, amount)

    def _remove(self, key: str, fr: FlavorResource, amount: int) -> None:
        """``amount`` less at ``key``; the parent gives back what the node had stored in it, up to ``amount``."""
        nodes = self.nodes
        node = nodes[key]
        while True:
            used = node.usage.get(fr, 0)
            stored_in_parent = used - node.local.get(fr, 0)
            node.usage[fr] = used - amount
            if stored_in_parent <= 0 or node.parent is None:
                return
            amount = min(amount, stored_in_parent)
            node = nodes[node.parent]

    def fits(self, key: str, usage: Mapping[FlavorResource, int]) -> bool:
        return all(amount <= self.available(key, fr) for fr, amount in usage.items())


def cq_key(name: str) -> str:
    return f"cq:{name}"


def cohort_key(name: str) -> str:
    return f"cohort:{name}"


def fair_weight(fair_sharing: FairSharing | None) -> float:
    """``parseFairWeight``: the weight as a float (Kueue's ``AsFloat64Slow``), 1 when unset."""
    weight = fair_sharing.weight if fair_sharing is not None else None
    return float(Quantity.parse(DEFAULT_FAIR_SHARING_WEIGHT if weight is None else weight).value)


def _closes_cycle(nodes: Mapping[str, Node], child: str, parent_name: str) -> bool:
    """Would ``child`` under ``parent_name`` make a loop? Kueue refuses such a tree (ErrCohortHasCycle); the
    link is left out here so that every walk up the tree ends."""
    current: str | None = cohort_key(parent_name)
    while current is not None and current in nodes:
        if current == cohort_key(child):
            return True
        current = nodes[current].parent
    return False


def _link(nodes: dict[str, Node], child: str, parent_name: str) -> None:
    parent = cohort_key(parent_name)
    if parent not in nodes:
        nodes[parent] = Node(parent_name, True)  # implicit: named by a member, no quota of its own
    nodes[child].parent = parent
    nodes[parent].children.append(child)


def _quotas(groups: Iterable[ResourceGroup]) -> dict[FlavorResource, Quota]:
    out: dict[FlavorResource, Quota] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                out[(flavor.name, quota.name)] = Quota(
                    _amount(quota.name, quota.nominal_quota) or 0,
                    _amount(quota.name, quota.borrowing_limit), _amount(quota.name, quota.lending_limit))
    return out


def _amount(resource: str, value: str | int | float | None) -> int | None:
    if value is None:
        return None
    return resource_value(resource, Quantity.parse(value).value)


def _with_own_usage(node: Node) -> Node:
    out = copy.copy(node)
    out.usage = dict(node.usage)
    return out

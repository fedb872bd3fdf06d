"""Topology domains from node labels, and the free capacity of each leaf, as Kueue's TAS cache keeps them.

The twin of ``pkg/cache/scheduler/tas_topology_tree.go``, ``tas_flavor.go``, ``tas_nodes_cache.go`` and
``tas_non_tas_pod_cache.go`` at Kueue ``ff69552``:

- a TAS ResourceFlavor (``spec.topologyName``) covers the nodes that carry every one of its ``nodeLabels``
  and a label for every level of its Topology (``NodeMatchesFlavor``), and only nodes that are Ready and
  schedulable (the nodes cache drops the others);
- each such node is a **leaf**: its domain at level *i* is the tuple of its values for levels ``0..i``, so
  two racks of the same name in different blocks are different domains. When the lowest level is
  ``kubernetes.io/hostname`` the leaf is named by the hostname label alone: nodes that share a hostname
  value share one leaf (their allocatable summed, the first node's labels and taints kept), as Kueue does;
- a leaf's **free capacity** is its allocatable minus the requests of the bound, running pods that are not
  TAS pods (DaemonSets, static pods, Deployments), each of them also taking one ``pods``; the admitted TAS
  Workloads are booked separately (:meth:`FlavorTopology.add_usage`), so that a preemption can simulate
  an empty cluster.

Amounts are the scheduler twin's integers (:func:`dratwin.scheduler.resources.pod_requests` and
:func:`~dratwin.scheduler.resources.node_allocatable`): cpu in millicores, the rest in units, ``pods`` counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.api.core import Node, Pod, Toleration
from dratwin.api.kueue import ResourceFlavor, Topology
from dratwin.kueue.tas.request import is_tas_pod
from dratwin.scheduler.resources import node_allocatable, pod_requests

HOSTNAME_LABEL = "kubernetes.io/hostname"
DOMAIN_SEPARATOR = ","
TERMINAL_PHASES = ("Succeeded", "Failed")
Amounts = dict[str, int]


def domain_id(values: Sequence[str]) -> str:
    """``utiltas.DomainID``: a domain's level values joined with commas."""
    return DOMAIN_SEPARATOR.join(values)


@dataclass(eq=False)
class Domain:
    """A topology domain; ``index`` addresses the scratch counts of an assignment run."""

    id: str
    values: tuple[str, ...]
    index: int = 0
    parent: Domain | None = None
    children: list[Domain] = field(default_factory=list)


@dataclass(eq=False)
class Leaf(Domain):
    """A lowest-level domain: the node(s) under it and what they offer."""

    capacity: Amounts = field(default_factory=dict)
    node: Node | None = None  # the node whose labels and taints TAS checks (hostname topologies only)


@dataclass(frozen=True)
class NodeView:
    """What TAS reads of a node: the typed object and whether it is Ready."""

    node: Node
    ready: bool = True


def node_is_ready(raw: Mapping[str, object]) -> bool:
    """A node's ``Ready`` condition is ``True``; a node written without conditions counts as Ready (the
    twin's inputs often omit status conditions)."""
    status = raw.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not conditions:
        return True
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


@dataclass
class TopologyTree:
    """The static domains of one TAS flavor: built once from the nodes, shared by assignment runs."""

    levels: tuple[str, ...]
    leaves: dict[str, Leaf] = field(default_factory=dict)
    per_level: list[dict[str, Domain]] = field(default_factory=list)
    roots: list[Domain] = field(default_factory=list)
    node_to_leaf: dict[str, str] = field(default_factory=dict)
    size: int = 0  # domains in all, the length of a run's scratch arrays

    @property
    def hostname_lowest(self) -> bool:
        return bool(self.levels) and self.levels[-1] == HOSTNAME_LABEL

    def level_index(self, key: str) -> int | None:
        return self.levels.index(key) if key in self.levels else None

    @classmethod
    def build(cls, levels: Sequence[str], nodes: Iterable[Node]) -> TopologyTree:
        tree = cls(tuple(levels), per_level=[{} for _ in levels])
        for node in nodes:
            tree._add_node(node)
        for leaf in tree.leaves.values():
            tree._index(leaf, len(levels) - 1)
        return tree

    def _add_node(self, node: Node) -> None:
        labels = node.metadata.labels
        values = tuple(labels[key] for key in self.levels)
        leaf_id = labels[HOSTNAME_LABEL] if self.hostname_lowest else domain_id(values)
        leaf = self.leaves.get(leaf_id)
        if leaf is None:
            leaf = Leaf(leaf_id, values, node=node if self.hostname_lowest else None)
            self.leaves[leaf_id] = leaf
        for name, amount in node_allocatable(node).items():
            leaf.capacity[name] = leaf.capacity.get(name, 0) + amount
        self.node_to_leaf[node.metadata.name] = leaf_id

    def _index(self, domain: Domain, level: int) -> None:
        domain.index = self.size
        self.size += 1
        self.per_level[level][domain.id] = domain
        if level == 0:
            self.roots.append(domain)
            return
        parent_values = domain.values[:-1]
        parent_id = domain_id(parent_values)
        parent = self.per_level[level - 1].get(parent_id)
        if parent is None:
            parent = Domain(parent_id, parent_values)
            self._index(parent, level - 1)
        domain.parent = parent
        parent.children.append(domain)


def flavor_nodes(flavor: ResourceFlavor, levels: Sequence[str], nodes: Iterable[NodeView]) -> list[Node]:
    """The nodes a TAS flavor covers: Ready, schedulable, with the flavor's labels and every level's label."""
    wanted = flavor.spec.node_labels
    out = []
    for view in nodes:
        node = view.node
        labels = node.metadata.labels
        if not view.ready or node.spec.unschedulable:
            continue
        if any(labels.get(k) != v for k, v in wanted.items()) or any(level not in labels for level in levels):
            continue
        out.append(node)
    return out


@dataclass
class FlavorTopology:
    """The TAS snapshot of one flavor: its tree, each leaf's free capacity and the TAS usage booked on it.

    The one owner of the TAS usage during a scheduling cycle: admissions add theirs here
    (:meth:`add_usage`), finished Workloads remove it.
    """

    flavor: str
    topology_name: str
    tree: TopologyTree
    tolerations: tuple[Toleration, ...] = ()
    free: dict[str, Amounts] = field(default_factory=dict)  # allocatable minus non-TAS pods, per leaf
    tas_usage: dict[str, Amounts] = field(default_factory=dict)

    @classmethod
    def build(cls, flavor: ResourceFlavor, topology: Topology, nodes: Sequence[NodeView],
              pods: Iterable[Pod] = ()) -> FlavorTopology:
        levels = [level.node_label for level in topology.spec.levels]
        tree = TopologyTree.build(levels, flavor_nodes(flavor, levels, nodes))
        free = {leaf_id: dict(leaf.capacity) for leaf_id, leaf in tree.leaves.items()}
        for pod in pods:
            leaf_id = tree.node_to_leaf.get(pod.spec.node_name) if pod.spec.node_name else None
            if leaf_id is None or pod.status.phase in TERMINAL_PHASES or is_tas_pod(pod.metadata.annotations):
                continue
            _subtract(free[leaf_id], pod_requests(pod))
        return cls(flavor.metadata.name, topology.metadata.name, tree, tuple(flavor.spec.tolerations), free)

    def remaining(self, leaf_id: str, simulate_empty: bool = False) -> Amounts:
        """What a leaf can still take: its free capacity, less the TAS usage unless the cluster is taken as empty."""
        left = dict(self.free[leaf_id])
        if not simulate_empty and leaf_id in self.tas_usage:
            _subtract(left, self.tas_usage[leaf_id])
        return left

    def add_usage(self, usage: Mapping[str, Amounts]) -> None:
        """Book an admitted Workload's usage per leaf (``addTASUsage``); a leaf no longer here is skipped."""
        for leaf_id, amounts in usage.items():
            if leaf_id in self.free:
                _add(self.tas_usage.setdefault(leaf_id, {}), amounts)

    def remove_usage(self, usage: Mapping[str, Amounts]) -> None:
        for leaf_id, amounts in usage.items():
            if leaf_id in self.tas_usage:
                _subtract(self.tas_usage[leaf_id], amounts)

    def fits(self, usage: Iterable[tuple[str, Amounts, int]]) -> bool:
        """``TASFlavorSnapshot.Fits``: each (leaf, one pod's requests, count) of an assignment still fits, each
        checked on its own against what is booked (as Kueue does, not summed over the PodSets)."""
        for leaf_id, per_pod, count in usage:
            if leaf_id not in self.free or count_in(per_pod, self.remaining(leaf_id))[0] < count:
                return False
        return True


def count_in(requests: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """``CountInWithLimitingResource``: how many times ``requests`` fit in ``capacity`` (never below 0), and
    the resource that limits it (ties broken by name). A zero request never limits."""
    best: int | None = None
    limiting = ""
    for name in sorted(requests):
        amount = requests[name]
        count = _UNLIMITED if amount == 0 else max(0, capacity.get(name, 0) // amount)
        if best is None or count < best:
            best, limiting = count, name
    return (best if best is not None else 0), limiting


_UNLIMITED = 2**31 - 1


def _add(into: Amounts, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _subtract(into: Amounts, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) - amount

"""Topology domains from node labels and each leaf's free capacity (pkg/cache/scheduler/tas_topology_tree.go,
tas_flavor.go, tas_nodes_cache.go, tas_non_tas_pod_cache.go at Kueue ff69552; concepts/
topology_aware_scheduling.md 'Node topology information' and 'Capacity calculation')."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue_tas import (
    THREE_LEVELS,
    TWO_LEVELS,
    bound_pod,
    flavor_topology,
    node_views,
    tas_flavor,
    tas_node,
)

from dratwin.api.kueue import ResourceFlavor, Topology
from dratwin.kueue.tas.domains import FlavorTopology, count_in
from dratwin.kueue.tas.shapes import (
    RACK_LABEL,
    tas_shape_context,
    tas_shape_flavor,
    tas_shape_nodes,
    tas_shape_topology,
    tas_shape_topology_request,
)


@dataclass(frozen=True)
class TreeCase:
    name: str
    cite: str
    nodes: Callable[[], list[dict[str, Any]]]
    levels: tuple[str, ...] = THREE_LEVELS
    flavor: dict[str, Any] | None = None
    pods: list[dict[str, Any]] = field(default_factory=list)
    domains: list[int] = field(default_factory=list)  # domains per level
    free: dict[str, dict[str, int]] = field(default_factory=dict)  # leaf → free capacity


TREES = [
    TreeCase("a rack name repeated in two blocks is two domains",
             "topology_aware_scheduling.md 'Node topology information' (node-1 and node-3 share rack-1)",
             lambda: [tas_node("node-1", "block-1", "rack-1"), tas_node("node-2", "block-1", "rack-2"),
                      tas_node("node-3", "block-2", "rack-1"), tas_node("node-4", "block-2", "rack-3")],
             TWO_LEVELS, domains=[2, 4],
             free={"block-1,rack-1": {"cpu": 1000, "memory": 1 << 30, "pods": 10}}),
    TreeCase("a node without a level's label, or without the flavor's labels, is not in the topology",
             "tas_cache_test.go 'only nodes with matching levels are considered; no host label on node'; "
             "utiltas.NodeMatchesFlavor",
             lambda: [tas_node("a", "b1", "r1", labels={"pool": "tas"}), tas_node("b", "b1", labels={"pool": "tas"}),
                      tas_node("c", "b1", "r1")],
             flavor=tas_flavor(labels={"pool": "tas"}), domains=[1, 1, 1]),
    TreeCase("nodes that are not Ready, or unschedulable, are left out",
             "topology_aware_scheduling.md 'Capacity calculation'; tas_cache_test.go 'no assignment as node is "
             "not ready' and 'no assignment as node is unschedulable'",
             lambda: [tas_node("a", "b1", "r1"), tas_node("b", "b1", "r1", ready=False),
                      tas_node("c", "b1", "r1", unschedulable=True)],
             domains=[1, 1, 1]),
    TreeCase("nodes sharing a hostname label share one leaf: allocatable summed under the first one's rack",
             "tas_topology_tree.go addNode (a hostname leaf found again only adds capacity)",
             lambda: [tas_node("n-1", "b1", "r1", host="node-0"), tas_node("n-2", "b1", "r2", host="node-0")],
             domains=[1, 1, 1], free={"node-0": {"cpu": 2000, "memory": 2 << 30, "pods": 20}}),
    TreeCase("bound running non-TAS pods take their requests and one pod each",
             "tas_non_tas_pod_cache.go addNodeUsage (OnePodRequest added)",
             lambda: [tas_node("a", "b1", "r1", cpu="4")], pods=[bound_pod("p", "a", cpu="1500m"),
                                                                bound_pod("q", "a", cpu="1", phase="Failed")],
             domains=[1, 1, 1], free={"a": {"cpu": 2500, "memory": 1 << 30, "pods": 9}}),
]


@pytest.mark.parametrize("case", TREES, ids=lambda c: c.name)
def test_tree(case: TreeCase) -> None:
    topo = flavor_topology(case.nodes(), case.levels, case.pods, case.flavor)
    assert [len(level) for level in topo.tree.per_level] == case.domains
    for leaf, free in case.free.items():
        assert topo.free[leaf] == free


def test_domains_chain_up_to_their_roots() -> None:
    """tas_topology_tree.go initializeHelper: a leaf's parent is the domain of its values but the last."""
    topo = flavor_topology([tas_node("x", "b1", "r1"), tas_node("y", "b1", "r2")])
    leaf = topo.tree.leaves["x"]
    assert leaf.values == ("b1", "r1", "x")
    assert leaf.parent is not None and leaf.parent.id == "b1,r1"
    assert leaf.parent.parent is not None and leaf.parent.parent.id == "b1"
    assert [r.id for r in topo.tree.roots] == ["b1"]
    assert sorted(c.id for c in topo.tree.roots[0].children) == ["b1,r1", "b1,r2"]


@pytest.mark.parametrize(("unique", "leaves", "racks", "leaf_cpu"), [
    (False, 64, 1, 960_000),  # Kueue's generator labels hostnames node-0..node-63 in every rack
    (True, 640, 10, 96_000),
], ids=["hostnames as Kueue's generator writes them", "unique hostnames"])
def test_tas_performance_shape(unique: bool, leaves: int, racks: int, leaf_cpu: int) -> None:
    """test/performance/scheduler/configs/tas/generator.yaml and runner/generator/topology_generator.go."""
    nodes = tas_shape_nodes(unique_hostnames=unique)
    assert len(nodes) == 640
    topo = FlavorTopology.build(msgspec.convert(tas_shape_flavor(), ResourceFlavor),
                                msgspec.convert(tas_shape_topology(), Topology), node_views(nodes))
    assert len(topo.tree.leaves) == leaves
    assert len(topo.tree.per_level[1]) == racks
    assert {topo.free[leaf]["cpu"] for leaf in topo.tree.leaves} == {leaf_cpu}


COUNTS = [
    ("the scarcest resource limits", {"cpu": 1000, "pods": 1}, {"cpu": 2500, "pods": 10}, (2, "cpu")),
    ("a tie is broken by the resource name", {"cpu": 1000, "memory": 1}, {"cpu": 2000, "memory": 2}, (2, "cpu")),
    ("a zero request never limits", {"cpu": 0, "pods": 1}, {"pods": 3}, (3, "pods")),
    ("a resource the node lacks fits 0 times", {"example.com/gpu": 1, "pods": 1}, {"pods": 3}, (0, "example.com/gpu")),
    ("an over-used resource fits 0 times, never fewer", {"cpu": 1000}, {"cpu": -500}, (0, "cpu")),
]


@pytest.mark.parametrize(("name", "requests", "capacity", "expected"), COUNTS, ids=[c[0] for c in COUNTS])
def test_count_in(name: str, requests: dict[str, int], capacity: dict[str, int], expected: tuple[int, str]) -> None:
    """pkg/resources/requests.go CountInWithLimitingResource."""
    assert count_in(requests, capacity) == expected


def test_usage_is_booked_and_released_per_leaf() -> None:
    """tas_flavor_snapshot.go addTASUsage / removeTASUsage, and Fits over an assignment's domains."""
    topo = flavor_topology([tas_node("a", "b1", "r1", cpu="2")])
    topo.add_usage({"a": {"cpu": 1000, "pods": 1}, "gone": {"cpu": 1000, "pods": 1}})
    assert topo.remaining("a") == {"cpu": 1000, "memory": 1 << 30, "pods": 9}
    assert topo.remaining("a", simulate_empty=True)["cpu"] == 2000
    assert topo.fits([("a", {"cpu": 1000, "pods": 1}, 1)])
    assert not topo.fits([("a", {"cpu": 1000, "pods": 1}, 2)])
    assert not topo.fits([("gone", {"cpu": 1, "pods": 1}, 1)])
    topo.remove_usage({"a": {"cpu": 1000, "pods": 1}})
    assert topo.remaining("a")["cpu"] == 2000


def test_tas_shape_requests_and_context() -> None:
    """runner/generator/generator.go: tasConstraint required / preferred / balanced (a slice request)."""
    assert tas_shape_topology_request("required") == {"required": RACK_LABEL}
    assert tas_shape_topology_request("preferred") == {"preferred": RACK_LABEL}
    assert tas_shape_topology_request("balanced", slice_size=4) == {"podSetSliceRequiredTopology": RACK_LABEL,
                                                                    "podSetSliceSize": 4}
    with pytest.raises(ValueError, match="tasConstraint 'spread'"):
        tas_shape_topology_request("spread")
    assert len(tas_shape_context(unique_hostnames=True).flavors["tas-flavor"].tree.leaves) == 640

"""The TAS assignment algorithm (pkg/cache/scheduler/tas_flavor_snapshot.go findTopologyAssignment at Kueue
ff69552); the cases follow the semantics of pkg/cache/scheduler/tas_cache_test.go TestFindTopologyAssignments
and concepts/topology_aware_scheduling.md, on trees built here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue_tas import (
    BLOCK,
    HOST,
    RACK,
    THREE_LEVELS,
    TWO_LEVELS,
    bound_pod,
    default_tree,
    flavor_topology,
    request,
    scattered_tree,
    tas_flavor,
    tas_node,
)

from dratwin.kueue.tas.assign import (
    Gates,
    PodSetRequest,
    TopologyAssignment,
    find_assignment,
    find_group_assignment,
)

Nodes = Callable[[], list[dict[str, Any]]]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    nodes: Nodes
    ask: PodSetRequest
    levels: tuple[str, ...] = THREE_LEVELS
    pods: list[dict[str, Any]] = field(default_factory=list)
    flavor: dict[str, Any] | None = None
    gates: Gates = field(default_factory=Gates)
    placed: list[tuple[tuple[str, ...], int]] | None = None  # (values, pods) in the assignment's order
    reason: str = ""


def _blocks() -> list[dict[str, Any]]:
    return [tas_node("b1", "b1", cpu="2", pods="20"), tas_node("b2", "b2", cpu="1"),
            tas_node("b3", "b3", cpu="4", pods="40")]


def _tainted() -> list[dict[str, Any]]:
    nodes = default_tree()
    nodes[5]["spec"]["taints"] = [{"key": "foo", "value": "bar", "effect": "NoSchedule"}]
    return nodes


def _labelled() -> list[dict[str, Any]]:
    nodes = default_tree()
    nodes[5]["metadata"]["labels"]["disk"] = "ssd"
    return nodes


CASES = [
    Case("rack required: the rack that fits with the least room left (BestFit)",
         "tas_cache_test.go 'rack required; multiple Pods fit in some racks; BestFit'",
         default_tree, request(2, required=RACK), levels=TWO_LEVELS, placed=[(("b2", "r2"), 2)]),
    Case("rack required: no rack holds every pod",
         "tas_cache_test.go 'rack required; too many pods to fit in any rack; BestFit'",
         default_tree, request(4, required=RACK), levels=TWO_LEVELS,
         reason='topology "default" allows to fit only 3 out of 4 pod(s)'),
    Case("block required: no block holds every pod",
         "tas_cache_test.go 'block required; too many Pods to fit requested; BestFit'",
         default_tree, request(5, required=BLOCK), levels=TWO_LEVELS,
         reason='topology "default" allows to fit only 4 out of 5 pod(s)'),
    Case("rack preferred: no rack holds them, so one block, fewest racks first",
         "tas_cache_test.go 'rack preferred; but only block can accommodate the workload; BestFit'",
         default_tree, request(4, preferred=RACK), levels=TWO_LEVELS,
         placed=[(("b1", "r1"), 1), (("b1", "r2"), 3)]),
    Case("rack preferred on hostnames: the assignment names only the hosts, in level order",
         "tas_flavor_snapshot.go buildAssignment (hostname only when it is the lowest level)",
         default_tree, request(4, preferred=RACK), placed=[(("x3",), 1), (("x1",), 1), (("x5",), 1), (("x6",), 1)]),
    Case("block preferred at the top: spread over blocks, the last one best-fitted",
         "tas_cache_test.go 'block preferred; Pods fit in 2 blocks; BestFit'",
         _blocks, request(5, preferred=BLOCK), levels=(BLOCK,), placed=[(("b2",), 1), (("b3",), 4)]),
    Case("block preferred: more pods than the topology holds",
         "tas_cache_test.go 'block preferred; but the workload cannot be accommodate in entire topology'",
         default_tree, request(8, preferred=BLOCK), levels=TWO_LEVELS,
         reason='topology "default" allows to fit only 7 out of 8 pod(s)'),
    Case("unconstrained: LeastFreeCapacity (TASProfileMixed on) fills the smallest hosts first",
         "tas_cache_test.go 'unconstrained; 6 pods fit into hosts scattered across the whole datacenter'",
         scattered_tree, request(6, unconstrained=True),
         placed=[(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]),
    Case("unconstrained with TASProfileMixed off: BestFit takes the biggest hosts",
         "tas_flavor_snapshot.go useLeastFreeCapacityAlgorithm (KEP-2724 matrix)",
         scattered_tree, request(6, unconstrained=True), gates=Gates(profile_mixed=False),
         placed=[(("x3",), 4), (("x6",), 2)]),
    Case("implied TAS (a TAS-only ClusterQueue) places a PodSet that asks nothing as unconstrained",
         "tas_cache_test.go 'no annotation; implied default to unconstrained'",
         scattered_tree, request(6, implied=True),
         placed=[(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]),
    Case("a pod bigger than every leaf fits nowhere; each leaf counts as limited by cpu",
         "tas_cache_test.go 'block required; single Pod which cannot be split; BestFit'",
         default_tree, request(1, cpu=4000, required=BLOCK), levels=TWO_LEVELS,
         reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; '
                'excluded: resource "cpu": 4'),
    Case("above hostname a leaf is a rack: its nodes' allocatable is summed, so a pod bigger than any node fits",
         "tas_topology_tree.go addNode (capacity added per leaf domain)",
         default_tree, request(1, cpu=3000, required=BLOCK), levels=TWO_LEVELS, placed=[(("b1", "r2"), 1)]),
    Case("an untolerated NoSchedule taint excludes the node, counted in the message",
         "tas_cache_test.go 'skip node which has untolerated taint; BestFit'",
         _tainted, request(6, required=BLOCK),
         reason='topology "default" allows to fit only 4 out of 6 pod(s). Total nodes: 6; excluded: '
                'taint "foo=bar:NoSchedule": 1'),
    Case("a taint the flavor tolerates does not exclude the node",
         "tas_cache_test.go 'allow to schedule on node with tolerated taint; BestFit'",
         _tainted, request(2, required=BLOCK),
         flavor=tas_flavor(tolerations=[{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
         placed=[(("x4",), 2)]),
    Case("the pod's nodeSelector excludes the other nodes",
         "tas_cache_test.go 'skip node which doesn't match node selector, missing label; BestFit'",
         _labelled, request(3, required=BLOCK, pod={"nodeSelector": {"disk": "ssd"}}),
         reason='topology "default" allows to fit only 2 out of 3 pod(s). Total nodes: 6; excluded: nodeSelector: 5'),
    Case("required node affinity excludes the nodes it does not select",
         "tas_flavor_snapshot.go findTopologyAssignment (AffinitySelector)",
         _labelled, request(1, required=BLOCK, pod={"affinity": {"nodeAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "disk", "operator": "In", "values": ["hdd"]}]}]}}}}),
         reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 6; excluded: affinity: 6'),
    Case("a running non-TAS pod's requests are not free",
         "concepts/topology_aware_scheduling.md 'Capacity calculation'; tas_cache_test.go 'include usage from "
         "running non-TAS pods, found free capacity on another node'",
         default_tree, request(2, required=RACK), pods=[bound_pod("daemon", "x4", cpu="1")],
         placed=[(("x1",), 1), (("x5",), 1)]),
    Case("a finished pod and a TAS pod are not counted as non-TAS usage",
         "tas_cache_test.go 'don't consider terminal pods when computing the capacity'; utiltas.IsTAS",
         default_tree, request(2, required=RACK),
         pods=[bound_pod("done", "x4", cpu="2", phase="Succeeded"),
               bound_pod("tas", "x4", cpu="2", annotations={"kueue.x-k8s.io/podset-required-topology": RACK})],
         placed=[(("x4",), 2)]),
    Case("the pods allocatable limits a node like any resource",
         "tas_cache_test.go 'no assignment as node does not have enough allocatable pods'",
         lambda: [tas_node("x1", "b1", "r1", cpu="8", pods="2")], request(3, cpu=100, required=BLOCK),
         reason='topology "default" allows to fit only 2 out of 3 pod(s)'),
    Case("slices: every slice within one rack, the podset within one block",
         "tas_cache_test.go 'block required for podset; rack required for slices; BestFit'",
         default_tree, request(2, required=BLOCK, slice_topology=RACK, slice_size=2), placed=[(("x4",), 2)]),
    Case("slices: the blocks hold one slice each, two are needed",
         "tas_cache_test.go 'block required for podset; rack required for slices; only 1 out of 2 slices fit'",
         default_tree, request(4, required=BLOCK, slice_topology=RACK, slice_size=2),
         reason='topology "default" allows to fit only 1 out of 2 slice(s)'),
    Case("slices only: the top level, placed as unconstrained",
         "tas_flavor_snapshot.go levelKey (slice-only request); tas_cache_test.go 'no topology for podset; "
         "rack required for slices'",
         default_tree, request(4, slice_topology=RACK, slice_size=2),
         placed=[(("x1",), 1), (("x5",), 1), (("x4",), 2)]),
    Case("a level the topology does not have",
         "tas_flavor_snapshot.go findTopologyAssignment", default_tree, request(1, required="zone"),
         reason="no requested topology level: zone"),
    Case("a slice level without a slice size",
         "tas_cache_test.go 'slice size is required when slice topology is requested'",
         default_tree, request(1, required=BLOCK, slice_topology=HOST),
         reason="slice topology requested, but slice size not provided"),
    Case("a slice level above the podset's level",
         "tas_cache_test.go 'slice required topology level cannot be above the main required topology level'",
         default_tree, request(2, required=HOST, slice_topology=BLOCK, slice_size=1),
         reason=f"podset slice topology {BLOCK} is above the podset topology {HOST}"),
    Case("no node carries the flavor's labels: no domain at the level",
         "tas_cache_test.go 'only nodes with matching labels are considered; no matching node'",
         default_tree, request(1, required=RACK), flavor=tas_flavor(labels={"pool": "tas"}),
         reason=f"no topology domains at level: {RACK}"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_assignment(case: Case) -> None:
    topo = flavor_topology(case.nodes(), case.levels, case.pods, case.flavor)
    found = find_assignment(topo, case.ask, gates=case.gates)
    if case.placed is None:
        assert found == case.reason
        return
    assert isinstance(found, TopologyAssignment), found
    assert [(d.values, d.count) for d in found.domains] == case.placed
    assert found.levels == ((HOST,) if case.levels[-1] == HOST else case.levels)
    assert found.pod_count == case.ask.count


def test_assumed_usage_and_an_empty_cluster() -> None:
    """tas_flavor_snapshot.go FindTopologyAssignmentsForFlavor (assumedUsage of earlier PodSets) and
    WithSimulateEmpty (the admitted TAS Workloads' usage left out)."""
    topo = flavor_topology(default_tree(), TWO_LEVELS)
    moved = find_assignment(topo, request(2, required=RACK), assumed={"b2,r2": {"cpu": 1000, "pods": 1}})
    assert isinstance(moved, TopologyAssignment)
    assert [(d.values, d.count) for d in moved.domains] == [(("b1", "r2"), 2)]
    topo.add_usage({"b1,r2": {"cpu": 3000, "pods": 3}, "b2,r2": {"cpu": 2000, "pods": 2}})
    assert find_assignment(topo, request(2, required=RACK)) == \
        'topology "default" allows to fit only 1 out of 2 pod(s). Total nodes: 4; excluded: resource "cpu": 2'
    empty = find_assignment(topo, request(2, required=RACK), simulate_empty=True)
    assert isinstance(empty, TopologyAssignment)
    assert [(d.values, d.count) for d in empty.domains] == [(("b2", "r2"), 2)]


@dataclass(frozen=True)
class GroupCase:
    name: str
    cite: str
    nodes: Nodes
    levels: tuple[str, ...]
    workers: PodSetRequest
    leader: PodSetRequest
    pods: list[dict[str, Any]] = field(default_factory=list)
    placed_workers: list[tuple[tuple[str, ...], int]] = field(default_factory=list)
    placed_leader: list[tuple[tuple[str, ...], int]] = field(default_factory=list)
    reason: str = ""


GROUPS = [
    GroupCase("the leader goes where it costs the workers least room",
              "tas_cache_test.go 'find topology assignment for grouped podsets preserves worker capacity when "
              "placing leader'",
              lambda: [tas_node("h1", rack="r1", cpu="2"), tas_node("h2", rack="r1", cpu="4"),
                       tas_node("h3", rack="r1", cpu="3")], (RACK, HOST),
              request(4, cpu=2000, required=RACK), request(1, cpu=1000, required=RACK),
              placed_workers=[(("h1",), 1), (("h2",), 2), (("h3",), 1)], placed_leader=[(("h3",), 1)]),
    GroupCase("a rack where the workers fit only without the leader is skipped",
              "tas_cache_test.go 'find topology assignment for grouped podsets skips domain where only workers "
              "fit without leader'",
              lambda: [tas_node("small-used", "b1", "small", cpu="2800m"), tas_node("small-free", "b1", "small",
                                                                                     cpu="2800m"),
                       tas_node("large-free", "b1", "large", cpu="6")], THREE_LEVELS,
              request(1, cpu=2500, required=RACK), request(1, cpu=2500, required=RACK),
              pods=[bound_pod("filler", "small-used", cpu="2500m")],
              placed_workers=[(("large-free",), 1)], placed_leader=[(("large-free",), 1)]),
    GroupCase("no room for the leader: no placement, the message counting the workers alone (Kueue's wording)",
              "tas_cache_test.go 'find topology assignment for two podsets with the same group - leader does not "
              "fit anywhere' ('allows to fit only 4 out of 4 pod(s)')",
              lambda: [tas_node("h1", rack="r1", cpu="2"), tas_node("h2", rack="r1", cpu="2")], (RACK, HOST),
              request(2, cpu=2000, required=RACK), request(1, cpu=1000, required=RACK),
              reason='topology "default" allows to fit only 2 out of 2 pod(s)'),
]


@pytest.mark.parametrize("case", GROUPS, ids=lambda c: c.name)
def test_group_assignment(case: GroupCase) -> None:
    topo = flavor_topology(case.nodes(), case.levels, case.pods)
    found = find_group_assignment(topo, case.workers, case.leader)
    if case.reason:
        assert found == case.reason
        return
    assert not isinstance(found, str), found
    workers, leader = found
    assert leader is not None
    assert [(d.values, d.count) for d in workers.domains] == case.placed_workers
    assert [(d.values, d.count) for d in leader.domains] == case.placed_leader

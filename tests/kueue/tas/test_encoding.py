"""The v1beta2 topologyAssignment (pkg/util/tas/tas_assignment.go V1Beta2From / InternalSeqFrom, apis/kueue/
v1beta2 TopologyAssignment) and the node selector each pod gets from it (pkg/controller/tas/topology_ungater.go,
pkg/podset FromAssignment) at Kueue ff69552."""

from __future__ import annotations

from typing import Any

import pytest

from dratwin.kueue.tas.assign import DomainAssignment, TopologyAssignment
from dratwin.kueue.tas.encoding import decode, encode, gated, node_selectors, ungated

HOST = "kubernetes.io/hostname"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.com/topology-rack"


def _hosts(*pairs: tuple[str, int]) -> TopologyAssignment:
    return TopologyAssignment((HOST,), tuple(DomainAssignment((host,), count) for host, count in pairs))


def _pools(prefix: str, nodes: int) -> TopologyAssignment:
    return _hosts(*((f"{prefix}-{pool}-node-{i}", 2) for pool in "ab" for i in range(nodes)))


SLICES: list[tuple[str, TopologyAssignment, list[dict[str, Any]]]] = [
    ("one domain: universal value and count", _hosts(("x1", 3)),
     [{"domainCount": 1, "valuesPerLevel": [{"universal": "x1"}], "podCounts": {"universal": 3}}]),
    ("common prefix out of the roots, counts kept one by one", _hosts(("x1", 1), ("x3", 2)),
     [{"domainCount": 2, "valuesPerLevel": [{"individual": {"prefix": "x", "roots": ["1", "3"]}}],
       "podCounts": {"individual": [1, 2]}}]),
    ("prefix and suffix", TopologyAssignment((RACK,), (DomainAssignment(("rack-1-a",), 1),
                                                       DomainAssignment(("rack-2-a",), 1))),
     [{"domainCount": 2, "valuesPerLevel": [{"individual": {"prefix": "rack-", "suffix": "-a", "roots": ["1", "2"]}}],
       "podCounts": {"universal": 1}}]),
    ("prefix and suffix never overlap", TopologyAssignment((RACK,), (DomainAssignment(("ababa",), 1),
                                                                    DomainAssignment(("aba",), 1))),
     [{"domainCount": 2, "valuesPerLevel": [{"individual": {"suffix": "aba", "roots": ["ab", ""]}}],
       "podCounts": {"universal": 1}}]),
    ("every level: a shared block is universal", TopologyAssignment((BLOCK, RACK), (
        DomainAssignment(("b1", "r1"), 2), DomainAssignment(("b1", "r2"), 2))),
     [{"domainCount": 2, "valuesPerLevel": [{"universal": "b1"}, {"individual": {"prefix": "r", "roots": ["1", "2"]}}],
       "podCounts": {"universal": 2}}]),
    ("few hostnames: the single slice is shorter than one slice per prefix", _pools("pool", 1),
     [{"domainCount": 2,
       "valuesPerLevel": [{"individual": {"prefix": "pool-", "suffix": "-node-0", "roots": ["a", "b"]}}],
       "podCounts": {"universal": 2}}]),
]


@pytest.mark.parametrize(("name", "assignment", "slices"), SLICES, ids=[c[0] for c in SLICES])
def test_compact_slices(name: str, assignment: TopologyAssignment, slices: list[dict[str, Any]]) -> None:
    encoded = encode(assignment)
    assert encoded == {"levels": list(assignment.levels), "slices": slices}
    assert decode(encoded) == assignment


def test_hostname_prefix_runs_win_when_shorter() -> None:
    """compactTopologyAssignmentEncoding: long runs of hostnames sharing a prefix get a slice each
    (TASAssignmentsEncodingByHostnamePrefix, beta, on); with the gate off, one slice."""
    assignment = _pools("gpu-training-pool", 30)
    encoded = encode(assignment)
    assert [s["valuesPerLevel"][0]["individual"]["prefix"] for s in encoded["slices"]] == [
        "gpu-training-pool-a-node-", "gpu-training-pool-b-node-"]
    assert encoded["slices"][0]["valuesPerLevel"][0]["individual"]["roots"][:3] == ["0", "1", "2"]
    assert decode(encoded) == assignment
    single = encode(assignment, by_hostname_prefix=False)
    assert len(single["slices"]) == 1 and decode(single) == assignment


def test_each_pod_gets_its_domain_and_loses_the_gate() -> None:
    """podset.FromAssignment adds the kueue.x-k8s.io/topology gate; the ungater gives the pods, in order, the
    domains' labels as nodeSelector (assignGatedPodsToDomainsGreedy) and removes the gate."""
    assignment = TopologyAssignment((BLOCK, RACK), (DomainAssignment(("b1", "r1"), 1),
                                                    DomainAssignment(("b1", "r2"), 2)))
    assert list(node_selectors(assignment)) == [{BLOCK: "b1", RACK: "r1"}, {BLOCK: "b1", RACK: "r2"},
                                                {BLOCK: "b1", RACK: "r2"}]
    spec = gated({"containers": [], "schedulingGates": [{"name": "other"}], "nodeSelector": {"pool": "tas"}})
    assert spec["schedulingGates"] == [{"name": "other"}, {"name": "kueue.x-k8s.io/topology"}]
    pod = ungated({"metadata": {"name": "p"}, "spec": spec}, {RACK: "r2"})
    assert pod["spec"]["schedulingGates"] == [{"name": "other"}]
    assert pod["spec"]["nodeSelector"] == {"pool": "tas", RACK: "r2"}
    assert "schedulingGates" not in ungated({"spec": gated({})}, {HOST: "x1"})["spec"]

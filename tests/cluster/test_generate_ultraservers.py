"""``cluster generate`` for P6e-GB200 UltraServers: whole UltraServers or packed instances, one NVLink clique per
UltraServer, the ComputeDomain kubelet plugin's devices, Capacity Block and node group labels."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.compute_domains import compute_domain_classes

from dratwin.allocator import Allocator, Features
from dratwin.api.core import Node
from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.api.validation import validate_objects
from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]
from dratwin.cluster.generate import GeneratedCluster, generate
from dratwin.cluster.generate_options import GenerateOptions, parse_node_group

CLIQUE = "nvidia.com/gpu.clique"
CD_DRIVER = "compute-domain.nvidia.com"


def gen(*groups: str, **options: Any) -> GeneratedCluster:
    return generate(GenerateOptions(groups=tuple(parse_node_group(g) for g in groups), **options))


def labels(result: GeneratedCluster) -> list[dict[str, str]]:
    return [n["metadata"]["labels"] for n in result.nodes]


@dataclass(frozen=True)
class Case:
    name: str
    groups: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    nodes: int = 0
    clique_sizes: list[int] = field(default_factory=list)  # nodes per clique, largest first
    plain: int = 0  # nodes without a clique (other types)
    warning: str = ""


CASES = [
    Case("one-full-ultraserver", ("u-p6e-gb200x72=1",), nodes=18, clique_sizes=[18]),
    Case("two-half-ultraservers", ("u-p6e-gb200x36=2",), nodes=18, clique_sizes=[9, 9]),
    Case("instances-packed-into-ultraservers", ("p6e-gb200.36xlarge=20",), nodes=20, clique_sizes=[18, 2],
         warning="p6e-gb200.36xlarge is sold only as UltraServers"),
    Case("ultraservers-beside-other-types", ("p5.48xlarge=2", "u-p6e-gb200x36=1", "u-p6e-gb200x36=1"), nodes=20,
         clique_sizes=[9, 9], plain=2),
    Case("auto-mode-launches-none", ("u-p6e-gb200x36=1",), {"provisioner": "auto-mode"}, nodes=9,
         clique_sizes=[9], warning="EKS Auto Mode launches no UltraServer instances"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ultraservers_are_nvlink_cliques(case: Case) -> None:
    result = gen(*case.groups, **case.options)
    assert len(result.nodes) == case.nodes
    cliques = Counter(label.get(CLIQUE) for label in labels(result))
    assert sorted((n for c, n in cliques.items() if c), reverse=True) == case.clique_sizes
    assert cliques.get(None, 0) == case.plain
    assert any(case.warning in w for w in result.warnings) if case.warning else not any(
        "UltraServer" in w for w in result.warnings)
    with_clique = {n["metadata"]["name"] for n in result.nodes if CLIQUE in n["metadata"]["labels"]}
    published = {s["spec"]["nodeName"] for s in result.slices if s["spec"]["driver"] == CD_DRIVER}
    assert published == with_clique  # the ComputeDomain plugin runs where the EKS guide enables ComputeDomains


def test_the_compute_domain_plugin_publishes_channel_0_and_daemon_0() -> None:
    result = gen("u-p6e-gb200x36=1")
    [one] = [s for s in result.slices if s["spec"]["driver"] == CD_DRIVER][:1]
    assert one["spec"]["pool"] == {"name": one["spec"]["nodeName"], "generation": 1, "resourceSliceCount": 1}
    assert one["spec"]["devices"] == [
        {"name": "channel-0", "attributes": {"id": {"int": 0}, "type": {"string": "channel"}}},
        {"name": "daemon-0", "attributes": {"id": {"int": 0}, "type": {"string": "daemon"}}},
    ]


def test_an_ultraserver_lives_in_one_zone() -> None:
    result = gen("u-p6e-gb200x36=2", zones=("us-east-1-dfw-2a", "us-east-1-dfw-2b"))
    zones = {(label[CLIQUE], label["topology.kubernetes.io/zone"]) for label in labels(result)}
    assert len(zones) == 2 and len({z for _, z in zones}) == 2


@pytest.mark.parametrize(("provisioner", "expected", "absent"), [
    ("karpenter", {"karpenter.sh/capacity-type": "reserved",
                   "karpenter.k8s.aws/capacity-reservation-type": "capacity-block"}, ()),
    ("node-group", {"eks.amazonaws.com/capacityType": "CAPACITY_BLOCK", "eks.amazonaws.com/nodegroup": "gb200"},
     ("karpenter.sh/nodepool", "karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-family")),
], ids=["karpenter", "managed-node-group"])
def test_ultraserver_nodes_come_from_a_capacity_block(provisioner: str, expected: dict[str, str],
                                                      absent: tuple[str, ...]) -> None:
    [first, *_] = labels(gen("u-p6e-gb200x36=1", provisioner=provisioner, nodepool="gb200"))
    assert {k: first.get(k) for k in expected} == expected
    assert not [k for k in absent if k in first]


def test_node_groups_of_other_types_are_on_demand() -> None:
    [first] = labels(gen("p5.48xlarge", provisioner="node-group", nodepool="p5"))
    assert first["eks.amazonaws.com/capacityType"] == "ON_DEMAND"
    assert CLIQUE not in first


def _loaded(objects: list[dict[str, Any]]) -> list[LoadedObject]:
    return [LoadedObject(raw=o, source=SourceLocation("generated", i)) for i, o in enumerate(objects)]


def test_the_output_validates_and_a_channel_claim_gets_channel_0() -> None:
    result = gen("u-p6e-gb200x36=1", gpu_manager="device-plugin")
    classes = compute_domain_classes()
    problems = validate_objects(_loaded([*classes, *result.objects]), SelectorCompiler())
    assert [p for p in problems if p.is_error] == []
    claim = msgspec.convert({  # the request the ComputeDomain controller writes
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"devices": {"requests": [
            {"name": "channel", "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}}},
        ResourceClaim, strict=False)
    allocator = Allocator(Features(), [msgspec.convert(c, DeviceClass, strict=False) for c in classes],
                          [msgspec.convert(s, ResourceSlice, strict=False) for s in result.slices])
    node = msgspec.convert(result.nodes[0], Node, strict=False)
    outcome = allocator.allocate(node, [claim])
    assert outcome.results is not None
    [allocation] = outcome.results
    assert [(r.driver, r.device) for r in allocation.devices.results] == [(CD_DRIVER, "channel-0")]

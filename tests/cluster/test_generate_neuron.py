"""``cluster generate`` on Trainium and Inferentia: the Neuron DRA driver's slices, DRANET's EFAs, the device plugin."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from tests.builders.generated import attr, devices_of, gen, loaded, node_names, slices_of

from dratwin.api.validation import validate_objects
from dratwin.catalog import neuron_shape
from dratwin.catalog.neuron import GROUP_ATTRIBUTES
from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]
from dratwin.cluster.generate_options import GenerateError
from dratwin.cluster.neuron import rdma_device

NEURON, EFA = "neuron.aws.com", "dra.net"
COMMON = {"deviceId", "draDriverVersion", "instanceType", "networkNodeLayer1", "networkNodeLayer2",
          "networkNodeLayer3", "neuronDriverVersion", "resourceType"}
TOPOLOGY = {"topology_x", "topology_y", "topology4_id", "topology8_id"}
GROUPS = set(GROUP_ATTRIBUTES)


@dataclass(frozen=True)
class TypeCase:
    id: str
    instance_type: str
    devices: int
    attributes: set[str]  # of every Neuron device
    efas: int  # EFA devices DRANET publishes
    extended: dict[str, str] = field(default_factory=dict)  # device plugin resources in allocatable


TYPE_CASES = [
    TypeCase("trn2.48xlarge: grid and groups", "trn2.48xlarge", 16, COMMON | TOPOLOGY | GROUPS, 16),
    TypeCase("trn1.32xlarge: two devices per EFA", "trn1.32xlarge", 16, COMMON | TOPOLOGY | GROUPS, 8),
    TypeCase("trn1n.32xlarge", "trn1n.32xlarge", 16, COMMON | TOPOLOGY | GROUPS, 16),
    TypeCase("trn1.2xlarge: one device, no EFA", "trn1.2xlarge", 1, COMMON, 0),
    TypeCase("inf2.24xlarge: a ring, no EFA", "inf2.24xlarge", 6, COMMON, 0),
    TypeCase("inf2.48xlarge", "inf2.48xlarge", 12, COMMON, 0),
    TypeCase("trn2u.48xlarge: the UltraServer node", "trn2u.48xlarge", 1, COMMON | {"capacityBlockId"}, 16),
]


@pytest.mark.parametrize("case", TYPE_CASES, ids=lambda c: c.id)
def test_neuron_dra_slices(case: TypeCase) -> None:
    result = gen(case.instance_type)
    [node] = result.nodes
    name = node["metadata"]["name"]
    devices = devices_of(result, name, NEURON)
    assert len(devices) == case.devices
    for device in devices:
        assert set(device["attributes"]) == case.attributes, device["name"]
        assert attr(device, "instanceType") == case.instance_type
    assert len(devices_of(result, name, EFA)) == case.efas
    allocatable = node["status"]["allocatable"]
    assert "aws.amazon.com/neuron" not in allocatable and "aws.amazon.com/neuroncore" not in allocatable
    [neuron_slice] = slices_of(result, name, NEURON)
    assert neuron_slice["spec"]["pool"] == {"name": name, "generation": 1, "resourceSliceCount": 1}


def test_trn2_devices_are_named_and_placed_as_the_driver_publishes_them() -> None:
    result = gen("trn2.48xlarge")
    [name] = node_names(result)
    devices = devices_of(result, name, NEURON)
    assert [d["name"] for d in devices] == [f"neurondevice{i}" for i in range(16)]
    assert [(attr(d, "topology_x"), attr(d, "topology_y")) for d in devices[4:8]] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert {attr(d, "resourceType") for d in devices} == {"neuron_device"}
    assert {attr(d, "neuronDriverVersion") for d in devices} == {"2.25.4.0"}
    assert devices[0]["attributes"]["draDriverVersion"] == {"version": "1.0.1"}


@pytest.mark.parametrize("instance_type", ["trn2.48xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2u.48xlarge"])
def test_each_efa_carries_the_groups_of_its_neuron_devices(instance_type: str) -> None:
    result = gen(instance_type)
    [name] = node_names(result)
    shape = neuron_shape(instance_type)
    assert shape is not None
    efas = {attr(e, "dra.net/pciAddress"): e for e in devices_of(result, name, EFA)}
    assert list(efas) == shape.efa_addresses
    for device_id, address in enumerate(shape.efas):
        groups = {k: attr(efas[address], k) for k in GROUP_ATTRIBUTES}
        assert groups == shape.device_groups(device_id)
    if not shape.ultraserver:
        by_group1 = {attr(d, GROUP_ATTRIBUTES[0]) for d in devices_of(result, name, NEURON)}
        assert by_group1 == set(efas)


def test_trn_efas_have_dranet_attributes_but_no_topology_dratwin_does_not_know() -> None:
    result = gen("trn2.48xlarge")
    [name] = node_names(result)
    efa = devices_of(result, name, EFA)[0]
    assert efa["name"] == "pci-0000-c9-00-0"
    assert attr(efa, "dra.net/pciDevice") == "Elastic Fabric Adapter (EFA)"
    assert attr(efa, "dra.net/pciSubsystem") == "efa2"
    assert attr(efa, "dra.net/rdmaDevice") == "rdmap201s0"
    assert attr(efa, "dra.net/rdma") is True
    assert attr(efa, "resource.kubernetes.io/pcieRoot") is None and attr(efa, "dra.net/numaNode") is None
    assert any("PCIe roots and NUMA nodes of its EFAs are not known" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("address", "expected"),
    [("0000:10:1b.0", "rdmap16s27"), ("0000:c9:00.0", "rdmap201s0"), ("0000:10:1a.1", "rdmap16s26f1"),
     ("0001:00:1f.0", "rdmaP1p0s31"), ("not-a-bdf", None)],
)
def test_rdma_device_names(address: str, expected: str | None) -> None:
    assert rdma_device(address) == expected


def test_device_plugin_mode_advertises_counts_and_keeps_the_efa_groups() -> None:
    result = gen("trn2.48xlarge", "inf2.xlarge", neuron_manager="device-plugin")
    trn2, inf2 = result.nodes
    assert trn2["status"]["allocatable"]["aws.amazon.com/neuron"] == "16"
    assert trn2["status"]["allocatable"]["aws.amazon.com/neuroncore"] == "128"
    assert inf2["status"]["allocatable"]["aws.amazon.com/neuron"] == "1"
    assert [s["spec"]["driver"] for s in result.slices] == [EFA]  # DRANET still adds the group ids
    assert set(GROUP_ATTRIBUTES) <= set(result.slices[0]["spec"]["devices"][0]["attributes"])


def test_auto_mode_serves_neuron_through_the_device_plugin() -> None:
    result = gen("trn2.48xlarge", provisioner="auto-mode")
    assert result.nodes[0]["status"]["allocatable"]["aws.amazon.com/neuron"] == "16"
    assert NEURON not in {s["spec"]["driver"] for s in result.slices}
    with pytest.raises(GenerateError, match="EKS Auto Mode serves Neuron devices only through its Neuron device"):
        gen("trn2.48xlarge", provisioner="auto-mode", neuron_manager="dra")


def test_ultraserver_nodes_come_in_fours_in_one_zone() -> None:
    result = gen("trn2u.48xlarge=8", zones=("us-east-1a", "us-east-1b"))
    labels = [n["metadata"]["labels"] for n in result.nodes]
    prefix = "neuron.amazonaws.com/ultraserver-"
    assert [lab[f"{prefix}node-id-4"] for lab in labels] == ["0", "1", "2", "3"] * 2
    assert [lab[f"{prefix}node-id-2"] for lab in labels] == ["0", "1"] * 4
    servers = [lab[f"{prefix}server-id-4"] for lab in labels]
    assert len(set(servers[:4])) == 1 and len(set(servers[4:])) == 1 and servers[0] != servers[4]
    assert len({lab[f"{prefix}server-id-2"] for lab in labels}) == 4
    zones = [lab["topology.kubernetes.io/zone"] for lab in labels]
    assert zones == ["us-east-1a"] * 4 + ["us-east-1b"] * 4
    assert {lab[f"{prefix}mode"] for lab in labels} == {"1_2_4"}
    blocks = {attr(devices_of(result, n, NEURON)[0], "capacityBlockId") for n in node_names(result)}
    assert len(blocks) == 2
    assert any("neuron_node device" in w for w in result.warnings)


def test_neuron_fleet_validates() -> None:
    result = gen("trn2.48xlarge=2", "trn1.32xlarge", "trn1n.32xlarge", "trn1.2xlarge", "inf2.48xlarge",
                 "trn2u.48xlarge=4")
    assert [str(p) for p in validate_objects(loaded(result.objects), SelectorCompiler())] == []


def test_p4d_efas_are_those_of_dranets_live_slice() -> None:
    """DRANET's EKS GPU + EFA example tabulates the p4d.24xlarge EFAs: name, PCIe root and RDMA device."""
    result = gen("p4d.24xlarge")
    [name] = node_names(result)
    found = [(e["name"], attr(e, "resource.kubernetes.io/pcieRoot"), attr(e, "dra.net/numaNode"),
              attr(e, "dra.net/rdmaDevice"), attr(e, "dra.net/pciSubsystem")) for e in devices_of(result, name, EFA)]
    assert found == [("pci-0000-10-1b-0", "pci0000:10", 0, "rdmap16s27", "efa0"),
                     ("pci-0000-20-1b-0", "pci0000:20", 0, "rdmap32s27", "efa0"),
                     ("pci-0000-90-1b-0", "pci0000:90", 1, "rdmap144s27", "efa0"),
                     ("pci-0000-a0-1b-0", "pci0000:a0", 1, "rdmap160s27", "efa0")]

"""``dratwin.catalog.neuron``: the Neuron device layout of each Trainium / Inferentia type and its group ids."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import yaml
from tests.conftest import DRIVERS

from dratwin.catalog import load_catalog, neuron_shape, neuron_shapes
from dratwin.catalog.neuron import GROUP_ATTRIBUTES, group_hash

TRN2_SLICES = DRIVERS / "resourceslice-trn2.48xlarge-neuron-efa.yaml"


def _reference_devices() -> list[dict[str, object]]:
    docs = yaml.safe_load_all(TRN2_SLICES.read_text())
    return [d for doc in docs if doc for d in doc["spec"]["devices"]]


def _groups(device: dict[str, object]) -> dict[str, str]:
    attributes = device["attributes"]
    assert isinstance(attributes, dict)
    return {k: v["string"] for k, v in attributes.items() if k in GROUP_ATTRIBUTES}


@pytest.mark.parametrize("device", _reference_devices(), ids=lambda d: str(d["name"]))
def test_group_ids_are_those_of_the_reference_trn2_slices(device: dict[str, object]) -> None:
    shape = neuron_shape("trn2.48xlarge")
    assert shape is not None
    attributes = device["attributes"]
    assert isinstance(attributes, dict)
    if str(device["name"]).startswith("neurondevice"):
        expected = shape.device_groups(attributes["deviceId"]["int"])
    else:
        expected = shape.efa_groups(attributes["dra.net/pciAddress"]["string"])
    assert _groups(device) == expected


def test_group4_ids_of_a_live_trn2_node() -> None:
    """The four devicegroup4 ids a published lab printed from a live trn2.48xlarge's ResourceSlice."""
    shape = neuron_shape("trn2.48xlarge")
    assert shape is not None
    live = {0: "13713e551cd37c19", 4: "671622785349fddf", 8: "237e3ef7b968b4d3", 12: "b3d6ce1919d29f8f"}
    for first, expected in live.items():
        assert {shape.device_groups(d)[GROUP_ATTRIBUTES[1]] for d in range(first, first + 4)} == {expected}


def test_group_hash_ignores_order_and_repeats() -> None:
    assert group_hash(["0000:b4:00.0", "0000:c9:00.0"]) == group_hash(["0000:c9:00.0", "0000:b4:00.0", "0000:c9:00.0"])
    assert len(group_hash(["0000:c9:00.0"])) == 16


@dataclass(frozen=True)
class TopologyCase:
    id: str
    instance_type: str
    device: int
    expected: dict[str, int]


TOPOLOGY_CASES = [
    TopologyCase("trn2 first device", "trn2.48xlarge", 0, {"topology_x": 0, "topology_y": 0, "topology4_id": 0,
                                                          "topology8_id": 0}),
    TopologyCase("trn2 row 1 column 1", "trn2.48xlarge", 5, {"topology_x": 1, "topology_y": 1, "topology4_id": 1,
                                                            "topology8_id": 0}),
    TopologyCase("trn2 last device", "trn2.48xlarge", 15, {"topology_x": 3, "topology_y": 3, "topology4_id": 3,
                                                          "topology8_id": 1}),
    TopologyCase("trn1n row 2", "trn1n.32xlarge", 9, {"topology_x": 2, "topology_y": 1, "topology4_id": 2,
                                                     "topology8_id": 1}),
    TopologyCase("one device: none", "trn1.2xlarge", 0, {}),
    TopologyCase("UltraServer node: none", "trn2u.48xlarge", 3, {}),
    TopologyCase("Inferentia2 ring: none", "inf2.48xlarge", 3, {}),
]


@pytest.mark.parametrize("case", TOPOLOGY_CASES, ids=lambda c: c.id)
def test_topology_attributes(case: TopologyCase) -> None:
    shape = neuron_shape(case.instance_type)
    assert shape is not None
    assert shape.topology(case.device) == case.expected


def test_trn1_pairs_two_devices_with_each_efa() -> None:
    shape = neuron_shape("trn1.32xlarge")
    assert shape is not None
    assert len(shape.efa_addresses) == 8
    for device in range(0, 16, 2):
        assert shape.device_groups(device) == shape.device_groups(device + 1)
    assert shape.efa_groups(shape.efas[3]) == shape.device_groups(2)


def test_types_without_efa_pairing_have_no_group_ids() -> None:
    for name in ("trn1.2xlarge", "inf2.xlarge", "inf2.48xlarge", "trn2.3xlarge"):
        shape = neuron_shape(name)
        assert shape is not None and shape.device_groups(0) == {}, name
    assert neuron_shape("p5.48xlarge") is None


@pytest.mark.parametrize("name", sorted(neuron_shapes()))
def test_shapes_agree_with_the_ec2_catalog(name: str) -> None:
    shape, it = neuron_shapes()[name], load_catalog().get(name)
    assert it.neuron is not None
    if it.neuron.count:
        assert shape.count == it.neuron.count
    if it.efa_count and shape.efa_enabled:
        assert len(shape.efa_addresses) == it.efa_count


def test_every_neuron_type_of_the_catalog_has_a_shape() -> None:
    assert sorted(it.name for it in load_catalog() if it.neuron is not None) == sorted(neuron_shapes())


def test_trn2u_host_comes_from_the_neuron_data() -> None:
    it = load_catalog().get("trn2u.48xlarge")
    assert (it.vcpu, it.memory_mib, it.arch, it.efa_count) == (192, 2048 * 1024, "amd64", 16)
    assert it.node_resources().capacity["cpu"] == "192"

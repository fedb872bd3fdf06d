"""The example manifests in examples/: they load, hold the objects the README promises, and are coherent."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest

from dratwin.api.core import Node
from dratwin.api.loader import LoadedObject, load_paths
from dratwin.api.quantity import parse_quantity
from dratwin.api.resource import DeviceAttribute, DeviceClass, ResourceClaim, ResourceSlice
from dratwin.api.validation import validate_objects
from dratwin.cel import SelectorCompiler

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def objects() -> list[LoadedObject]:
    return load_paths([str(EXAMPLES)])


def _of_kind(objects: list[LoadedObject], kind: str) -> dict[str, LoadedObject]:
    return {obj.name: obj for obj in objects if obj.kind == kind}


def _slices(objects: list[LoadedObject]) -> list[ResourceSlice]:
    return [msgspec.convert(o.raw, ResourceSlice, strict=False) for o in objects if o.kind == "ResourceSlice"]


def _claim(objects: list[LoadedObject], name: str) -> ResourceClaim:
    return msgspec.convert(_of_kind(objects, "ResourceClaim")[name].raw, ResourceClaim, strict=False)


def _attribute(driver: str, attributes: Mapping[str, DeviceAttribute], name: str) -> DeviceAttribute | None:
    """The value of a device attribute by qualified name (bare names belong to the driver's domain)."""
    for key, value in attributes.items():
        if (key if "/" in key else f"{driver}/{key}") == name:
            return value
    return None


def test_files_are_the_documented_ones() -> None:
    yaml_files = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    assert yaml_files == [
        "claims.yaml",
        "deviceclasses.yaml",
        "nodes.yaml",
        "p4d-mig-slices.yaml",
        "p5-slices.yaml",
        "workloads.yaml",
    ]
    assert (EXAMPLES / "README.md").is_file()
    scenarios = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert scenarios == ["compute-domain", "dranet", "missing-deviceclass", "neuron", "oversubscribed-node", "plan",
                         "queues", "simulate"]


def test_names_are_unique_across_files(objects: list[LoadedObject]) -> None:
    keys = Counter((o.kind, o.namespace, o.name) for o in objects)
    assert [key for key, count in keys.items() if count > 1] == []
    assert all(o.api_version for o in objects)


def test_contains_the_expected_objects(objects: list[LoadedObject]) -> None:
    assert set(_of_kind(objects, "Node")) == {"p5-node-1", "p4d-node-1"}
    classes = {"gpu.nvidia.com", "mig.nvidia.com", "efa.networking.k8s.aws"}
    assert set(_of_kind(objects, "DeviceClass")) == classes
    claims = {"vllm-gpu", "train-gpu-efa", "mig-1g", "llama-70b-fp16-gpu"}
    assert set(_of_kind(objects, "ResourceClaim")) == claims
    assert {o.namespace for o in objects if o.kind == "ResourceClaim"} == {"ml"}
    assert set(_of_kind(objects, "Namespace")) == {"ml"}


def test_every_object_decodes_into_its_type(objects: list[LoadedObject]) -> None:
    types: dict[str, type[msgspec.Struct]] = {
        "Node": Node,
        "DeviceClass": DeviceClass,
        "ResourceSlice": ResourceSlice,
        "ResourceClaim": ResourceClaim,
    }
    for obj in objects:
        if obj.kind in types:
            msgspec.convert(obj.raw, types[obj.kind], strict=False)


def test_nodes_carry_eks_and_karpenter_labels(objects: list[LoadedObject]) -> None:
    loaded = _of_kind(objects, "Node")
    nodes = {name: msgspec.convert(o.raw, Node, strict=False) for name, o in loaded.items()}
    expected_types = {"p5-node-1": "p5.48xlarge", "p4d-node-1": "p4d.24xlarge"}
    for name, node in nodes.items():
        labels = node.metadata.labels
        assert labels["node.kubernetes.io/instance-type"] == expected_types[name]
        assert labels["kubernetes.io/hostname"] == name
        assert labels["kubernetes.io/arch"] == "amd64"
        assert labels["topology.kubernetes.io/zone"].startswith(labels["topology.kubernetes.io/region"])


def test_slices_belong_to_their_node_with_pool_named_after_it(objects: list[LoadedObject]) -> None:
    by_node: dict[str, list[ResourceSlice]] = {}
    for resource_slice in _slices(objects):
        assert resource_slice.spec.node_name == resource_slice.spec.pool.name
        assert resource_slice.spec.pool.resource_slice_count == 1
        assert len(resource_slice.spec.devices) <= 128
        by_node.setdefault(resource_slice.spec.node_name or "", []).append(resource_slice)
    assert sorted(s.spec.driver for s in by_node["p5-node-1"]) == ["dra.net", "gpu.nvidia.com"]
    assert [s.spec.driver for s in by_node["p4d-node-1"]] == ["gpu.nvidia.com"]
    counts = {(node, s.spec.driver): len(s.spec.devices) for node, slices in by_node.items() for s in slices}
    assert counts == {
        ("p5-node-1", "gpu.nvidia.com"): 8,
        ("p5-node-1", "dra.net"): 32,
        ("p4d-node-1", "gpu.nvidia.com"): 32,
    }


def test_every_p5_gpu_shares_its_pcie_root_with_four_efas(objects: list[LoadedObject]) -> None:
    roots: dict[str, Counter[str]] = {"gpu.nvidia.com": Counter(), "dra.net": Counter()}
    for resource_slice in _slices(objects):
        if resource_slice.spec.node_name != "p5-node-1":
            continue
        driver = resource_slice.spec.driver
        for device in resource_slice.spec.devices:
            root = _attribute(driver, device.attributes, "resource.kubernetes.io/pcieRoot")
            assert root is not None, device.name
            roots[driver][root.string or ""] += 1
    assert len(roots["gpu.nvidia.com"]) == 8
    for pcie_root, gpus in roots["gpu.nvidia.com"].items():
        assert (gpus, roots["dra.net"][pcie_root]) == (1, 4), pcie_root


def test_claim_selectors_and_constraints_name_published_attributes(objects: list[LoadedObject]) -> None:
    vllm = _claim(objects, "vllm-gpu").spec.devices.requests[0].exactly
    assert vllm is not None and vllm.device_class_name == "gpu.nvidia.com"
    [selector] = vllm.selectors
    assert selector.cel is not None
    expected = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0'
    assert expected in selector.cel.expression

    train = _claim(objects, "train-gpu-efa").spec.devices
    counts = [(r.name, r.exactly.count if r.exactly else None) for r in train.requests]
    assert counts == [("gpu", 1), ("efa", 4)]
    assert [(c.requests, c.match_attribute) for c in train.constraints] == [
        (["gpu", "efa"], "resource.kubernetes.io/pcieRoot")
    ]

    mig = _claim(objects, "mig-1g").spec.devices
    assert mig.requests[0].exactly is not None and mig.requests[0].exactly.count == 2
    assert [c.match_attribute for c in mig.constraints] == ["gpu.nvidia.com/parentUUID"]

    # The attributes the constraints and selectors use exist on the devices they are meant for.
    for resource_slice in _slices(objects):
        driver = resource_slice.spec.driver
        for device in resource_slice.spec.devices:
            attributes = device.attributes
            if driver == "dra.net":
                assert _attribute(driver, attributes, "dra.net/rdma") is not None
                assert _attribute(driver, attributes, "dra.net/pciDevice") is not None
            else:
                assert _attribute(driver, attributes, "gpu.nvidia.com/type") is not None
                assert "memory" in device.capacity
            if resource_slice.spec.node_name == "p4d-node-1":
                assert _attribute(driver, attributes, "gpu.nvidia.com/parentUUID") is not None
                assert _attribute(driver, attributes, "gpu.nvidia.com/profile") is not None


def test_the_unfit_claim_really_exceeds_every_gpu(objects: list[LoadedObject]) -> None:
    gpu_memory = [
        parse_quantity(device.capacity["memory"].value)
        for resource_slice in _slices(objects)
        if resource_slice.spec.node_name == "p5-node-1" and resource_slice.spec.driver == "gpu.nvidia.com"
        for device in resource_slice.spec.devices
    ]
    assert len(gpu_memory) == 8
    assert all(parse_quantity("40Gi") < memory < parse_quantity("100Gi") for memory in gpu_memory)
    llama = _claim(objects, "llama-70b-fp16-gpu").spec.devices.requests[0].exactly
    assert llama is not None and llama.selectors[0].cel is not None
    assert 'quantity("100Gi")) > 0' in llama.selectors[0].cel.expression


def test_examples_validate_without_errors_or_warnings(objects: list[LoadedObject]) -> None:
    problems = validate_objects(objects, SelectorCompiler(list_type_attributes=False))
    assert [str(problem) for problem in problems] == []

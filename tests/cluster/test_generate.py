"""``dratwin.cluster.generate``: Nodes and ResourceSlices of real instance types, as a real EKS cluster shows them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
import yaml
from tests.conftest import DRIVERS, REPO

from dratwin.allocator import Allocator, Features
from dratwin.api.codec import dump_yaml
from dratwin.api.core import Node
from dratwin.api.loader import LoadedObject, SourceLocation, load_paths
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.api.validation import validate_objects
from dratwin.catalog import UnknownInstanceTypeError, load_catalog
from dratwin.catalog._data import data_yaml
from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]
from dratwin.cluster.generate import GeneratedCluster, generate
from dratwin.cluster.generate_options import (
    GenerateError,
    GenerateOptions,
    MigRequest,
    NodeGroup,
    parse_mig_request,
    parse_node_group,
    parse_taint,
)

KARPENTER_PAGE = data_yaml("karpenter-instance-types.yaml")["instance_types"]
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


def gen(*groups: str, **options: Any) -> GeneratedCluster:
    return generate(GenerateOptions(groups=tuple(parse_node_group(g) for g in groups), **options))


def attr(device: dict[str, Any], name: str) -> Any:
    value = device["attributes"].get(name)
    return None if value is None else next(iter(value.values()))


def slices_of(result: GeneratedCluster, node: str, driver: str) -> list[dict[str, Any]]:
    return [s for s in result.slices if s["spec"]["nodeName"] == node and s["spec"]["driver"] == driver]


def devices_of(result: GeneratedCluster, node: str, driver: str) -> list[dict[str, Any]]:
    return [d for s in slices_of(result, node, driver) for d in s["spec"]["devices"]]


def loaded(objects: list[dict[str, Any]]) -> list[LoadedObject]:
    return [LoadedObject(raw=o, source=SourceLocation("generated", i)) for i, o in enumerate(objects)]


# ---- validity ---------------------------------------------------------------------------------------------------

def _mig_fleet() -> GeneratedCluster:
    """Every MIG-capable GPU model with its own smallest profile (profiles differ per model)."""
    result = GeneratedCluster()
    for index, (group, profile) in enumerate(
        [("p4d.24xlarge=2", "1g.5gb"), ("p5.48xlarge", "1g.10gb"), ("p5en.48xlarge", "1g.18gb"),
         ("p6-b200.48xlarge", "1g.23gb+me"), ("p4de.24xlarge", "3g.40gb=1")]
    ):
        part = gen(group, mig=(parse_mig_request(profile),), name_prefix=f"mig{index}")
        result.nodes += part.nodes
        result.slices += part.slices
    return result


CONFIGS: dict[str, Callable[[], GeneratedCluster]] = {
    "dra mixed fleet": lambda: gen("p5.48xlarge=2", "g6e.12xlarge=2", "g7e.48xlarge", "p4d.24xlarge", "g5g.xlarge",
                                   "g4dn.metal", "g6f.large", "p6-b300.48xlarge", "trn2.48xlarge"),
    "static MIG": _mig_fleet,
    "device plugins": lambda: gen("p5.48xlarge", "trn2.48xlarge", "g4ad.4xlarge", "inf2.xlarge", "g6f.large",
                                  gpu_manager="device-plugin", efa_manager="device-plugin"),
    "auto mode, west": lambda: gen("g6e.48xlarge=3", "p6-b300.48xlarge", provisioner="auto-mode",
                                   zones=("us-west-2a", "us-west-2b"), taints=(parse_taint("gpu:NoSchedule"),)),
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_generated_objects_validate(config: str) -> None:
    result = CONFIGS[config]()
    assert result.nodes
    problems = validate_objects(loaded(result.objects), SelectorCompiler())
    assert [str(p) for p in problems] == []


# ---- p5.48xlarge: the shape of the shared capture ---------------------------------------------------------------


def _shared_p5() -> dict[str, dict[str, Any]]:
    docs = yaml.safe_load_all((DRIVERS / "resourceslice-p5.48xlarge.yaml").read_text())
    return {doc["spec"]["driver"]: doc for doc in docs if doc}


def test_p5_slices_have_the_shape_of_the_shared_capture() -> None:
    shared = _shared_p5()
    result = gen("p5.48xlarge")
    node = result.nodes[0]["metadata"]["name"]
    for driver in ("gpu.nvidia.com", "dra.net"):
        [ours] = slices_of(result, node, driver)
        theirs = shared[driver]
        assert ours["spec"]["pool"] == {"name": node, "generation": 1, "resourceSliceCount": 1}
        assert ours["spec"]["nodeName"] == node
        assert ours["metadata"]["ownerReferences"][0]["name"] == node
        ours_by_name = {d["name"]: d for d in ours["spec"]["devices"]}
        theirs_by_name = {d["name"]: d for d in theirs["spec"]["devices"]}
        assert list(ours_by_name) == list(theirs_by_name)
        for name, device in theirs_by_name.items():
            mine = ours_by_name[name]
            # the capture leaves out rdmaDevice (its p5 values were not known); dratwin names it from the address
            extra = {RDMA_DEVICE} if driver == "dra.net" else set()
            assert sorted(mine["attributes"]) == sorted({*device["attributes"], *extra}), name
            assert attr(mine, PCIE_ROOT) == attr(device, PCIE_ROOT), name
            for key in device["attributes"]:
                if key != "uuid":  # UUIDs are placeholders on both sides
                    assert mine["attributes"][key] == device["attributes"][key], (name, key)
            assert mine.get("capacity") == device.get("capacity"), name


RDMA_DEVICE = "dra.net/rdmaDevice"


def test_p5_gpu_efa_pairing() -> None:
    result = gen("p5.48xlarge")
    node = result.nodes[0]["metadata"]["name"]
    gpu_roots = Counter(attr(d, PCIE_ROOT) for d in devices_of(result, node, "gpu.nvidia.com"))
    efa_roots = Counter(attr(d, PCIE_ROOT) for d in devices_of(result, node, "dra.net"))
    assert set(gpu_roots) == set(efa_roots) and len(gpu_roots) == 8
    assert set(gpu_roots.values()) == {1} and set(efa_roots.values()) == {4}


def test_uuids_differ_between_nodes_and_output_is_deterministic() -> None:
    first = gen("p5.48xlarge=3", "g6e.12xlarge=2", mig=())
    second = gen("p5.48xlarge=3", "g6e.12xlarge=2", mig=())
    assert dump_yaml(first.objects) == dump_yaml(second.objects)
    uuids = [attr(d, "uuid") for s in first.slices for d in s["spec"]["devices"] if attr(d, "uuid")]
    assert len(uuids) == len(set(uuids)) == 3 * 8 + 2 * 4
    names = [o["metadata"]["name"] for o in first.objects]
    assert len(names) == len(set(names))
    assert dump_yaml(gen("p5.48xlarge=2").objects) != dump_yaml(gen("p5.48xlarge=2", zones=("us-east-1b",)).objects)


# ---- nodes --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["p5.48xlarge", "g6e.12xlarge", "g5g.16xlarge", "p4d.24xlarge", "g4dn.metal"])
def test_labels_and_allocatable_per_type(name: str) -> None:
    result = gen(name, gpu_manager="device-plugin", efa_manager="device-plugin")
    node = result.nodes[0]
    labels = node["metadata"]["labels"]
    page = KARPENTER_PAGE[name]
    for key, value in page["labels"].items():
        assert labels[key] == value, key
    it = load_catalog().get(name)
    assert it.gpus is not None
    assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]
    assert labels["topology.kubernetes.io/zone"] == "us-east-1a"
    assert labels["topology.kubernetes.io/region"] == "us-east-1"
    assert labels["karpenter.sh/capacity-type"] == "on-demand"
    assert labels["karpenter.k8s.aws/instance-gpu-count"] == str(it.gpus.count)
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["eks.amazonaws.com/device-manager-nvidia"] == "device-plugin"
    assert ("eks.amazonaws.com/device-manager-efa" in labels) == (it.efa_count > 0)
    allocatable = node["status"]["allocatable"]
    # Karpenter's own page is the reference for everything it lists (pod-eni needs ENABLE_POD_ENI, not modelled).
    assert {k: v for k, v in page["allocatable"].items() if k != "vpc.amazonaws.com/pod-eni"} == allocatable
    assert node["status"]["capacity"]["cpu"] == str(it.vcpu)
    assert node["status"]["capacity"]["pods"] == page["allocatable"]["pods"]
    assert result.slices == []


def test_dra_nodes_have_no_extended_resources_and_label_the_managers() -> None:
    node = gen("p5.48xlarge").nodes[0]
    assert set(node["status"]["allocatable"]) == {"cpu", "ephemeral-storage", "memory", "pods"}
    labels = node["metadata"]["labels"]
    assert labels["eks.amazonaws.com/device-manager-nvidia"] == "dra"
    assert labels["eks.amazonaws.com/device-manager-efa"] == "dra"
    assert "spec" in node and "taints" not in node["spec"]


def test_device_plugin_mode_has_extended_resources_and_no_slices() -> None:
    result = gen("p5.48xlarge=2", gpu_manager="device-plugin", efa_manager="device-plugin")
    assert result.slices == []
    for node in result.nodes:
        for field in ("capacity", "allocatable"):
            assert node["status"][field]["nvidia.com/gpu"] == "8"
            assert node["status"][field]["vpc.amazonaws.com/efa"] == "32"


def test_mixed_managers() -> None:
    result = gen("p5.48xlarge", gpu_manager="dra", efa_manager="device-plugin")
    node = result.nodes[0]
    assert [s["spec"]["driver"] for s in result.slices] == ["gpu.nvidia.com"]
    assert node["status"]["allocatable"]["vpc.amazonaws.com/efa"] == "32"
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]
    assert node["metadata"]["labels"]["eks.amazonaws.com/device-manager-efa"] == "device-plugin"


def test_neuron_device_plugin_and_amd_nodes() -> None:
    result = gen("trn2.48xlarge", "g4ad.16xlarge", gpu_manager="dra", efa_manager="dra", neuron_manager="device-plugin")
    trn2, g4ad = result.nodes
    assert trn2["status"]["allocatable"]["aws.amazon.com/neuron"] == "16"
    assert trn2["status"]["allocatable"]["aws.amazon.com/neuroncore"] == "128"
    assert "nvidia.com/gpu.present" not in trn2["metadata"]["labels"]
    assert "eks.amazonaws.com/device-manager-nvidia" not in trn2["metadata"]["labels"]
    assert g4ad["status"]["allocatable"]["amd.com/gpu"] == "4"
    assert [s["spec"]["driver"] for s in result.slices] == ["dra.net"]  # trn2's 16 EFAs via DRANET
    assert any("AMD GPUs" in w for w in result.warnings)


def test_names_zones_regions_prefix_and_taints() -> None:
    result = gen("g6e.xlarge=3", zones=("us-west-2a", "us-west-2b"))
    names = [n["metadata"]["name"] for n in result.nodes]
    assert names == [f"ip-10-0-64-{i}.us-west-2.compute.internal" for i in (10, 11, 12)]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in result.nodes] == [
        "us-west-2a", "us-west-2b", "us-west-2a"]
    assert gen("g6e.xlarge").nodes[0]["metadata"]["name"] == "ip-10-0-64-10.ec2.internal"
    prefixed = gen("g6e.xlarge=2", name_prefix="gpu", taints=(parse_taint("nvidia.com/gpu=true:NoSchedule"),))
    assert [n["metadata"]["name"] for n in prefixed.nodes] == ["gpu-1", "gpu-2"]
    assert prefixed.nodes[0]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert parse_taint("nvidia.com/gpu:NoSchedule").to_dict() == {"key": "nvidia.com/gpu", "effect": "NoSchedule"}


def test_auto_mode_labels() -> None:
    node = gen("g6e.2xlarge", provisioner="auto-mode").nodes[0]
    labels = node["metadata"]["labels"]
    assert labels["eks.amazonaws.com/compute-type"] == "auto"
    assert labels["eks.amazonaws.com/instance-gpu-name"] == "l40s"
    assert not [k for k in labels if k.startswith("karpenter.k8s.aws/")]
    assert node["status"]["capacity"]["ephemeral-storage"] == "80Gi"


def test_type_without_karpenter_page_entry_uses_110_pods() -> None:
    result = gen("p6e-gb200.36xlarge")
    assert result.nodes[0]["status"]["capacity"]["pods"] == "110"
    assert any("110" in w for w in result.warnings)


# ---- g7e: no Karpenter device metadata ----------------------------------------------------------------------------


def test_type_without_dra_metadata_has_no_topology_and_warns() -> None:
    result = gen("g7e.48xlarge")
    node = result.nodes[0]["metadata"]["name"]
    gpus = devices_of(result, node, "gpu.nvidia.com")
    efas = devices_of(result, node, "dra.net")
    assert [d["name"] for d in gpus] == [f"gpu-{i}" for i in range(8)]
    assert len(efas) == 4
    for device in gpus + efas:
        assert PCIE_ROOT not in device["attributes"]
        assert "resource.kubernetes.io/numaNode" not in device["attributes"]
    assert attr(gpus[0], "productName") == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert attr(gpus[0], "cudaComputeCapability") == "12.0.0"
    assert gpus[0]["capacity"]["memory"]["value"] == "98304Mi"
    assert any("g7e.48xlarge" in w and "topology unknown" in w for w in result.warnings)


def test_numa_node_only_where_known() -> None:
    g6e = gen("g6e.48xlarge")
    node = g6e.nodes[0]["metadata"]["name"]
    assert all("resource.kubernetes.io/numaNode" not in d["attributes"]
               for d in devices_of(g6e, node, "gpu.nvidia.com"))
    p5en = gen("p5en.48xlarge")  # its EFAs carry NUMA nodes; the GPUs on their roots inherit them
    node = p5en.nodes[0]["metadata"]["name"]
    assert {attr(d, "resource.kubernetes.io/numaNode") for d in devices_of(p5en, node, "gpu.nvidia.com")} == {0, 1}


# ---- MIG -----------------------------------------------------------------------------------------------------------


def _mig_counts(result: GeneratedCluster) -> Counter[str]:
    node = result.nodes[0]["metadata"]["name"]
    devices = devices_of(result, node, "gpu.nvidia.com")
    assert all(attr(d, "type") == "mig" for d in devices)
    return Counter(attr(d, "parentUUID") for d in devices)


@pytest.mark.parametrize(
    ("instance_type", "profile", "per_gpu"),
    [
        ("p4d.24xlarge", "1g.5gb", 7),
        ("p4d.24xlarge", "3g.20gb", 2),
        ("p4de.24xlarge", "1g.20gb", 4),
        ("p5.48xlarge", "2g.20gb", 3),
        ("p5.48xlarge", "7g.80gb", 1),
        ("p5e.48xlarge", "1g.18gb", 7),
        ("p5.4xlarge", "1g.10gb", 7),
    ],
)
def test_mig_fills_each_gpu(instance_type: str, profile: str, per_gpu: int) -> None:
    counts = _mig_counts(gen(instance_type, mig=(MigRequest(profile),)))
    gpus = load_catalog().get(instance_type).gpus
    assert gpus is not None
    assert len(counts) == gpus.count and set(counts.values()) == {per_gpu}


def test_mig_device_shape() -> None:
    result = gen("p4d.24xlarge", mig=(parse_mig_request("1g.5gb=2"), parse_mig_request("2g.10gb=1"),
                                      parse_mig_request("3g.20gb=1")))
    node = result.nodes[0]["metadata"]["name"]
    devices = devices_of(result, node, "gpu.nvidia.com")
    assert [d["name"] for d in devices[:4]] == [
        "gpu-0-mig-1g5gb-19-0", "gpu-0-mig-1g5gb-19-1", "gpu-0-mig-2g10gb-14-2", "gpu-0-mig-3g20gb-9-4"]
    first = devices[0]
    assert sorted(first["attributes"]) == sorted([
        "addressingMode", "architecture", "brand", "cudaComputeCapability", "cudaDriverVersion", "driverVersion",
        "parentUUID", "productName", "profile", "resource.kubernetes.io/numaNode", "resource.kubernetes.io/pciBusID",
        PCIE_ROOT, "type", "uuid"])
    assert attr(first, "resource.kubernetes.io/pciBusID") == "0000:10:1c.0"
    assert attr(first, "uuid").startswith("MIG-") and attr(first, "parentUUID").startswith("GPU-")
    assert first["capacity"] == {
        "copyEngines": {"value": "1"}, "decoders": {"value": "0"}, "encoders": {"value": "0"},
        "jpegEngines": {"value": "0"}, "memory": {"value": "4864Mi"}, "memorySlice0": {"value": "1"},
        "multiprocessors": {"value": "14"}, "ofaEngines": {"value": "0"}}
    assert len(devices) == 8 * 4


def test_mig_with_device_plugin_advertises_mig_resources() -> None:
    node = gen("p5.48xlarge", mig=(MigRequest("3g.40gb"),), gpu_manager="device-plugin").nodes[0]
    assert node["status"]["allocatable"]["nvidia.com/mig-3g.40gb"] == "16"
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]


def test_mig_errors_and_warnings() -> None:
    valid = "1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
    with pytest.raises(GenerateError, match=re.escape(f"'1g.5gb' does not exist on NVIDIA H100 80GB HBM3; "
                                                      f"valid profiles: {valid}")):
        gen("p5.48xlarge", mig=(MigRequest("1g.5gb"),))
    with pytest.raises(GenerateError, match=r"none of g6e\.12xlarge has a MIG-capable GPU"):
        gen("g6e.12xlarge", mig=(MigRequest("1g.10gb"),))
    with pytest.raises(GenerateError, match="does not fit"):
        gen("p5.48xlarge", mig=(MigRequest("4g.40gb", 2),))
    mixed = gen("p5.48xlarge", "g6e.12xlarge", mig=(MigRequest("1g.10gb"),))
    assert any("NVIDIA L40S has no MIG profile table" in w for w in mixed.warnings)
    g6e = mixed.nodes[1]["metadata"]["name"]
    assert {attr(d, "type") for d in devices_of(mixed, g6e, "gpu.nvidia.com")} == {"gpu"}
    estimated = gen("p5en.48xlarge", mig=(MigRequest("3g.71gb"),))
    assert any("estimate" in w for w in estimated.warnings)


# ---- bad options ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["p5.48xlarge=0", "p5.48xlarge=x", "=3", "p5.48xlarge=-1", ""])
def test_bad_node_group(text: str) -> None:
    with pytest.raises(GenerateError, match="expected TYPE=COUNT"):
        parse_node_group(text)


def test_node_group_defaults_to_one() -> None:
    assert parse_node_group("p5.48xlarge") == NodeGroup("p5.48xlarge", 1)
    assert parse_node_group("p5.48xlarge=12") == NodeGroup("p5.48xlarge", 12)


@pytest.mark.parametrize("text", ["1g", "mig-1g.10gb", "1g.10gb=x", "1g.10gb=0"])
def test_bad_mig_request(text: str) -> None:
    with pytest.raises(GenerateError, match="MIG profile"):
        parse_mig_request(text)


@pytest.mark.parametrize("text", ["nvidia.com/gpu", "nvidia.com/gpu:Never", ":NoSchedule"])
def test_bad_taint(text: str) -> None:
    with pytest.raises(GenerateError, match="bad taint"):
        parse_taint(text)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"zones": ("us-east-1a", "eu-west-1a")}, "several regions"),
        ({"zones": ("mars-1",)}, "bad zone"),
        ({"name_prefix": "GPU_"}, "bad name prefix"),
        ({"gpu_manager": "plugin"}, "unknown GPU manager"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(GenerateError, match=message):
        gen("g6e.xlarge", **options)


def test_unknown_instance_type() -> None:
    with pytest.raises(UnknownInstanceTypeError, match=r"did you mean p5\.48xlarge"):
        gen("p5.48xlarg")
    with pytest.raises(GenerateError, match="between 1 and"):
        generate(GenerateOptions(groups=(NodeGroup("g6e.xlarge", 0),)))


# ---- round trip: the allocator on a generated node -----------------------------------------------------------------


def _allocate(result: GeneratedCluster, claim_name: str) -> tuple[Any, dict[tuple[str, str], dict[str, Any]]]:
    examples = load_paths([str(REPO / "examples" / "deviceclasses.yaml"), str(REPO / "examples" / "claims.yaml")])
    classes = [msgspec.convert(o.raw, DeviceClass, strict=False) for o in examples if o.kind == "DeviceClass"]
    [claim_obj] = [o for o in examples if o.kind == "ResourceClaim" and o.name == claim_name]
    claim = msgspec.convert(claim_obj.raw, ResourceClaim, strict=False)
    slices = [msgspec.convert(s, ResourceSlice, strict=False) for s in result.slices]
    node = msgspec.convert(result.nodes[0], Node, strict=False)
    outcome = Allocator(Features(), classes, slices).allocate(node, [claim])
    devices = {(s["spec"]["driver"], d["name"]): d for s in result.slices for d in s["spec"]["devices"]}
    return outcome, devices


def test_gpu_and_four_efas_on_one_pcie_root_allocate_on_a_generated_p5() -> None:
    outcome, devices = _allocate(gen("p5.48xlarge"), "train-gpu-efa")
    assert outcome.allocated and outcome.results is not None
    results = outcome.results[0].devices.results
    picked = [devices[(r.driver, r.device)] for r in results]
    assert Counter(r.request for r in results) == {"gpu": 1, "efa": 4}
    assert len({attr(d, PCIE_ROOT) for d in picked}) == 1


def test_the_same_claim_cannot_align_on_g6e_48xlarge() -> None:
    # g6e.48xlarge has 8 GPUs and 4 EFAs, but no EFA shares a PCIe root with a GPU (Karpenter's metadata).
    outcome, _ = _allocate(gen("g6e.48xlarge"), "train-gpu-efa")
    assert not outcome.allocated

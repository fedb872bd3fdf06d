"""The packaged catalog: data files present and unchanged, typed access, lookups, Karpenter's node overhead model."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest
from tests.conftest import DRIVERS, REPO, shared_folder

from dratwin.catalog import (
    IncompleteInstanceTypeError,
    UnknownInstanceTypeError,
    captured_topology,
    classic_memory,
    load_catalog,
)
from dratwin.catalog._data import DATA_FILES, data_yaml
from dratwin.catalog.dra import dra_metadata
from dratwin.catalog.resources import kube_reserved_cpu_millicores, memory_capacity_mib, node_resources

COPIES = {
    name: DRIVERS / name
    for name in (
        "karpenter-dra-instance-device-metadata.yaml",
        "resourceslice-p5.48xlarge.yaml",
        "resourceslice-p4d.24xlarge-static-mig.yaml",
    )
}
_SHARED = shared_folder()
if _SHARED is not None:  # the reference folder, when given, must hold the same files as the packaged copies
    COPIES.update({f"shared/{name}": _SHARED / "data" / "drivers" / name for name in list(COPIES)})
    COPIES["shared/aws-accelerated-instances.yaml"] = _SHARED / "data" / "aws-accelerated-instances.yaml"
NOT_ON_KARPENTER_PAGE = {"p6e-gb200.36xlarge", "trn2.3xlarge", "trn2u.48xlarge"}
KARPENTER_PAGE = data_yaml("karpenter-instance-types.yaml")["instance_types"]


# ---- the packaged files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DATA_FILES)
def test_data_file_is_packaged_and_listed_in_sources(name: str) -> None:
    assert resources.files("dratwin").joinpath("data", name).is_file()
    sources = resources.files("dratwin").joinpath("data", "SOURCES.md").read_text(encoding="utf-8")
    assert f"`{name}`" in sources


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_are_unchanged(name: str) -> None:
    packaged = resources.files("dratwin").joinpath("data", name.removeprefix("shared/")).read_bytes()
    assert packaged == COPIES[name].read_bytes(), f"re-copy {name} from {COPIES[name]}"


def test_pyproject_ships_the_data_files() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "data/*" in pyproject["tool"]["setuptools"]["package-data"]["dratwin"]


# ---- instance types ---------------------------------------------------------------------------------------------


def test_every_catalog_type_loads_and_is_joined_with_karpenter_data() -> None:
    accelerated = [it for it in load_catalog() if it.source == "aws-accelerated-instances.yaml"]
    assert len(accelerated) == 81
    for it in accelerated:
        assert (it.name in KARPENTER_PAGE) == (it.name not in NOT_ON_KARPENTER_PAGE), it.name
        assert bool(it.karpenter_labels) == (it.name in KARPENTER_PAGE)
        assert (it.gpus is None) or (it.neuron is None)


def test_p5_48xlarge() -> None:
    p5 = load_catalog().get("p5.48xlarge")
    assert (p5.family, p5.size, p5.arch, p5.vcpu, p5.memory_mib) == ("p5", "48xlarge", "amd64", 192, 2_097_152)
    assert p5.gpus is not None
    gpus = (p5.gpus.model, p5.gpus.count, p5.gpus.memory_mib, p5.gpus.name)
    assert gpus == ("NVIDIA H100 80GB HBM3", 8, 81920, "h100")
    assert (p5.efa_count, p5.price_usd_per_hour, p5.max_pods) == (32, 55.04, 100)
    labels = p5.well_known_labels()
    assert labels["karpenter.k8s.aws/instance-gpu-name"] == "h100"
    assert labels["karpenter.k8s.aws/instance-gpu-count"] == "8"
    assert labels["karpenter.k8s.aws/instance-gpu-memory"] == "81920"
    assert labels["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    assert p5.dra is not None and p5.dra.gpu is not None and p5.dra.efa is not None
    roots = [f"pci0000:{bus}" for bus in ("44", "55", "66", "77", "88", "99", "aa", "bb")]
    assert [d.pcie_root for d in p5.dra.gpu.devices] == roots
    assert p5.dra.efa.count == 32


def test_neuron_and_amd_types() -> None:
    trn2 = load_catalog().get("trn2.48xlarge")
    assert trn2.gpus is None and trn2.neuron is not None
    assert (trn2.neuron.count, trn2.neuron.cores, trn2.efa_count) == (16, 128, 16)
    g4ad = load_catalog().get("g4ad.16xlarge")
    assert g4ad.gpus is not None and (g4ad.gpus.manufacturer, g4ad.gpus.count) == ("amd", 4)


def test_labels_computed_for_types_missing_from_karpenters_page() -> None:
    gb200 = load_catalog().get("p6e-gb200.36xlarge")
    labels = gb200.well_known_labels()
    assert labels["karpenter.k8s.aws/instance-family"] == "p6e-gb200"
    assert labels["karpenter.k8s.aws/instance-gpu-count"] == "4"
    assert labels["kubernetes.io/arch"] == "arm64"
    assert gb200.max_pods is None
    with pytest.raises(IncompleteInstanceTypeError, match=r"trn2\.3xlarge"):
        load_catalog().get("trn2.3xlarge").node_resources()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("p5.48xl", "did you mean p5.48xlarge"),
        ("g6e.12xl", "g6e sizes: g6e.xlarge"),
        ("m5.lrage", "did you mean m5.large"),
        ("x9.large", "instance types of the families c5, c5a"),
        ("p9.48xlarge", "g4ad, g4dn"),
    ],
)
def test_unknown_type_has_a_hint(name: str, expected: str) -> None:
    with pytest.raises(UnknownInstanceTypeError, match=f"unknown instance type '{name}'") as info:
        load_catalog().get(name)
    assert expected in str(info.value)


def test_lookup_ignores_case() -> None:
    assert load_catalog().get("P5.48XLARGE").name == "p5.48xlarge"


# ---- DRA metadata ----------------------------------------------------------------------------------------------


def test_dra_metadata_agrees_with_the_catalog() -> None:
    metadata = dra_metadata()
    assert len(metadata) == 53
    catalog = load_catalog()
    for name, meta in metadata.items():
        it = catalog.get(name)
        assert it.dra is meta
        assert meta.gpu is not None and it.gpus is not None
        assert meta.gpu.count == it.gpus.count, name
        assert (meta.efa.count if meta.efa else 0) == it.efa_count, name
        roots = {d.pcie_root for d in meta.gpu.devices} & {d.pcie_root for d in (meta.efa.devices if meta.efa else ())}
        assert roots == set(meta.gpu_efa_shared_pcie_roots), name
    assert catalog.get("g7e.48xlarge").dra is None


def test_g4dn_metal_efa_overrides() -> None:
    efa = dra_metadata()["g4dn.metal"].efa
    assert efa is not None
    assert (efa.devices[0].rdma, efa.devices[0].numa_node, efa.devices[0].pcie_root) == (False, 1, "pci0000:c2")


def test_captured_topology_matches_the_metadata() -> None:
    for name in ("p5.48xlarge", "p4d.24xlarge"):
        captured = captured_topology(name)
        meta = dra_metadata()[name]
        assert captured is not None and meta.gpu is not None
        assert [g.pcie_root for g in captured.gpus] == [d.pcie_root for d in meta.gpu.devices]
    p5 = captured_topology("p5.48xlarge")
    efa = dra_metadata()["p5.48xlarge"].efa
    assert p5 is not None and efa is not None
    assert [(e.pcie_root, e.numa_node) for e in p5.efas] == [(d.pcie_root, d.numa_node) for d in efa.devices]
    assert p5.gpus[0].pci_bus_id == "0000:53:00.0"
    assert p5.node_attributes == {"addressingMode": "HMM", "driverVersion": "580.126.9", "cudaDriverVersion": "13.0.0"}
    assert captured_topology("g6e.12xlarge") is None


def test_classic_memory() -> None:
    assert classic_memory("NVIDIA H100 80GB HBM3") == "81559Mi"
    assert classic_memory("NVIDIA L40S") is None


# ---- Karpenter's overhead model --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(KARPENTER_PAGE))
def test_overhead_model_reproduces_karpenters_allocatable(name: str) -> None:
    it = load_catalog().get(name)
    page = KARPENTER_PAGE[name]["allocatable"]
    computed = it.node_resources().allocatable
    for resource in ("cpu", "memory", "pods", "ephemeral-storage"):
        assert computed[resource] == page[resource], (name, resource)


def test_karpenters_extended_resources_match_the_catalog() -> None:
    for name, entry in KARPENTER_PAGE.items():
        it = load_catalog().get(name)
        page = entry["allocatable"]
        assert int(page.get("vpc.amazonaws.com/efa", 0)) == it.efa_count, name
        if it.gpus is not None and it.gpus.manufacturer == "nvidia":
            # g6f/gr6f: EC2 reports 0 GPUs for the fractional vGPU, the driver (and the device plugin) see 1.
            assert int(page.get("nvidia.com/gpu", 0)) == (0 if it.gpus.fractional else it.gpus.count), name
        if it.neuron is not None:
            assert int(page["aws.amazon.com/neuron"]) == it.neuron.count, name


def test_overhead_formula_pieces() -> None:
    assert kube_reserved_cpu_millicores(1) == 60
    assert kube_reserved_cpu_millicores(2) == 70
    assert kube_reserved_cpu_millicores(4) == 80
    assert kube_reserved_cpu_millicores(192) == 80 + 188 * 2.5
    assert memory_capacity_mib(8192, "amd64") == 8192 - 615
    assert memory_capacity_mib(8192, "arm64") == 8128 - 610
    resources_ = node_resources(4, 16384, "amd64", 58, root_volume_gib=80, extended={"nvidia.com/gpu": 1})
    assert resources_.capacity["ephemeral-storage"] == "80Gi"
    assert resources_.allocatable["ephemeral-storage"] == "71Gi"
    assert resources_.allocatable["nvidia.com/gpu"] == resources_.capacity["nvidia.com/gpu"] == "1"


def test_accelerated_catalog_comes_first_in_file_order() -> None:
    shared = data_yaml("aws-accelerated-instances.yaml")
    accelerated = [it.name for it in load_catalog() if it.source == "aws-accelerated-instances.yaml"]
    assert [t["name"] for t in shared["instance_types"]] == accelerated == load_catalog().names()[:81]

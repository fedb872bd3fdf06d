"""Karpenter's per-instance-type DRA device metadata (``karpenter-dra-instance-device-metadata.yaml``).

What the NVIDIA GPU DRA driver and DRANET publish on an instance type, as scraped from live nodes by the
Karpenter team: the GPU model attributes and each GPU's PCIe root; each EFA's PCIe root (and NUMA node where the
scrape had it). Runtime-only values (UUIDs, PCI bus IDs, driver versions) are not in it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dratwin.catalog._data import data_yaml

METADATA_FILE = "karpenter-dra-instance-device-metadata.yaml"


@dataclass(frozen=True)
class GpuDeviceMetadata:
    """One GPU of the template: ``gpu-<index>`` and its PCIe root (``pci<domain>:<bus>``)."""

    name: str
    pcie_root: str


@dataclass(frozen=True)
class GpuMetadata:
    """The ``gpu.nvidia.com`` template of an instance type; every GPU of a type is the same model."""

    product_name: str
    architecture: str
    brand: str
    cuda_compute_capability: str
    type: str
    memory: str
    devices: tuple[GpuDeviceMetadata, ...]

    @property
    def count(self) -> int:
        return len(self.devices)


@dataclass(frozen=True)
class EfaDeviceMetadata:
    """One EFA of the template (synthetic ``efa-<index>`` name), its PCIe root and, when scraped, NUMA node."""

    name: str
    pcie_root: str
    rdma: bool
    numa_node: int | None = None


@dataclass(frozen=True)
class EfaMetadata:
    """The ``dra.net`` template of an instance type (EFA devices only)."""

    pci_device: str
    pci_vendor: str
    pci_subsystem: str
    devices: tuple[EfaDeviceMetadata, ...]

    @property
    def count(self) -> int:
        return len(self.devices)


@dataclass(frozen=True)
class DraDeviceMetadata:
    """Everything Karpenter knows about the DRA devices of one instance type."""

    instance_type: str
    gpu: GpuMetadata | None
    efa: EfaMetadata | None
    gpu_efa_shared_pcie_roots: tuple[str, ...]


def _gpu(raw: Mapping[str, Any]) -> GpuMetadata:
    devices = tuple(GpuDeviceMetadata(str(d["name"]), str(d["pcieRoot"])) for d in raw["devices"])
    if len(devices) != int(raw["count"]):
        raise ValueError(f"{METADATA_FILE}: gpu count {raw['count']} but {len(devices)} devices")
    return GpuMetadata(
        product_name=str(raw["productName"]),
        architecture=str(raw["architecture"]),
        brand=str(raw["brand"]),
        cuda_compute_capability=str(raw["cudaComputeCapability"]),
        type=str(raw.get("type", "gpu")),
        memory=str(raw["memory"]),
        devices=devices,
    )


def _efa(raw: Mapping[str, Any]) -> EfaMetadata:
    devices = []
    for d in raw["devices"]:
        numa = d.get("numaNode", raw.get("numaNode"))
        devices.append(
            EfaDeviceMetadata(
                name=str(d["name"]),
                pcie_root=str(d["pcieRoot"]),
                rdma=bool(d.get("rdma", raw.get("rdma", True))),
                numa_node=None if numa is None else int(numa),
            )
        )
    if len(devices) != int(raw["count"]):
        raise ValueError(f"{METADATA_FILE}: efa count {raw['count']} but {len(devices)} devices")
    return EfaMetadata(
        pci_device=str(raw["pciDevice"]),
        pci_vendor=str(raw["pciVendor"]),
        pci_subsystem=str(raw["pciSubsystem"]),
        devices=tuple(devices),
    )


@functools.cache
def dra_metadata() -> Mapping[str, DraDeviceMetadata]:
    """The DRA device metadata of every instance type Karpenter covers (53), by instance type name."""
    found: dict[str, DraDeviceMetadata] = {}
    for name, raw in data_yaml(METADATA_FILE)["instance_types"].items():
        found[str(name)] = DraDeviceMetadata(
            instance_type=str(name),
            gpu=_gpu(raw["gpu"]) if raw.get("gpu") else None,
            efa=_efa(raw["efa"]) if raw.get("efa") else None,
            gpu_efa_shared_pcie_roots=tuple(str(r) for r in raw.get("gpu_efa_shared_pcie_roots") or ()),
        )
    return found

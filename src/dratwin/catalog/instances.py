"""The accelerated EC2 instance types dratwin knows: specs, prices, Karpenter labels and allocatable, DRA metadata.

Joined from three packaged files (see ``dratwin/data/SOURCES.md``): the EC2 catalog
(``aws-accelerated-instances.yaml``), Karpenter's generated instance-types page
(``karpenter-instance-types.yaml``) and Karpenter's DRA device metadata
(``karpenter-dra-instance-device-metadata.yaml``).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dratwin.catalog._data import data_yaml
from dratwin.catalog.dra import DraDeviceMetadata, dra_metadata
from dratwin.catalog.resources import (
    DEFAULT_MAX_PODS,
    KARPENTER_ROOT_VOLUME_GIB,
    NodeResources,
    node_resources,
)
from dratwin.errors import InputError

CATALOG_FILE = "aws-accelerated-instances.yaml"
KARPENTER_FILE = "karpenter-instance-types.yaml"
KARPENTER_PREFIX = "karpenter.k8s.aws/"


class UnknownInstanceTypeError(InputError):
    """An instance type that is not in dratwin's catalog (which holds accelerated types only)."""


class IncompleteInstanceTypeError(InputError):
    """An instance type whose catalog entry lacks what is needed (e.g. vCPUs) to model a node."""


@dataclass(frozen=True)
class Gpus:
    """The GPUs of an instance type (all the same model)."""

    manufacturer: str  # "nvidia" | "amd"
    name: str  # EC2's short name, Karpenter's instance-gpu-name label ("h100", "l40s")
    model: str  # the product name NVML reports ("NVIDIA H100 80GB HBM3")
    count: int
    memory_mib: int | None  # per GPU, as EC2 reports it (GpuInfo.MemoryInfo.SizeInMiB)
    architecture: str | None = None
    cuda_compute_capability: str | None = None  # "9.0"
    fractional: bool = False  # g6f/gr6f: a vGPU slice of an L4
    memory_gb_nominal: float | None = None  # NVIDIA's nominal GB where EC2's value is unknown (GB200)


@dataclass(frozen=True)
class Neuron:
    """The AWS Trainium / Inferentia devices of an instance type."""

    name: str  # "trainium2"
    model: str  # "AWS Trainium2"
    count: int
    cores: int | None  # NeuronCores in total (aws.amazon.com/neuroncore)
    memory_gib: float | None  # per device


@dataclass(frozen=True)
class InstanceType:
    """One EC2 instance type as dratwin models it."""

    name: str
    family: str
    size: str
    arch: str | None
    vcpu: int | None
    memory_mib: int | None
    gpus: Gpus | None
    neuron: Neuron | None
    efa_count: int  # max EFA interfaces (0: EFA not supported)
    price_usd_per_hour: float | None  # us-east-1 Linux on-demand (None: not sold on demand there)
    karpenter_labels: Mapping[str, str] = field(default_factory=dict)
    karpenter_allocatable: Mapping[str, str] = field(default_factory=dict)
    dra: DraDeviceMetadata | None = None
    unverified: tuple[str, ...] = ()

    @property
    def max_pods(self) -> int | None:
        """The EKS (ENI-limited) max pods Karpenter computes for the type; None when the data has none."""
        pods = self.karpenter_allocatable.get("pods")
        return None if pods is None else int(pods)

    def node_resources(
        self, extended: Mapping[str, int] | None = None, root_volume_gib: int = KARPENTER_ROOT_VOLUME_GIB
    ) -> NodeResources:
        """Capacity and allocatable of a node of this type (Karpenter's overhead model, see catalog.resources)."""
        if self.vcpu is None or self.memory_mib is None or self.arch is None:
            raise IncompleteInstanceTypeError(
                f"the catalog has no vCPU count, memory or architecture for {self.name}, so it cannot be "
                "modelled as a node (see unverified in aws-accelerated-instances.yaml)"
            )
        return node_resources(
            self.vcpu, self.memory_mib, self.arch, self.max_pods or DEFAULT_MAX_PODS, root_volume_gib,
            dict(extended or {}),
        )

    def well_known_labels(self) -> dict[str, str]:
        """Karpenter's instance labels (``karpenter.k8s.aws/*``, arch, os, instance-type) for a node of this type.

        Taken from Karpenter's generated page when the type is on it, else computed from the catalog.
        """
        if self.karpenter_labels:
            return dict(self.karpenter_labels)
        labels = {
            f"{KARPENTER_PREFIX}instance-category": re.sub(r"\d.*", "", self.family),
            f"{KARPENTER_PREFIX}instance-family": self.family,
            f"{KARPENTER_PREFIX}instance-size": self.size,
        }
        generation = re.search(r"\d+", self.family)
        if generation:
            labels[f"{KARPENTER_PREFIX}instance-generation"] = generation.group()
        if self.vcpu is not None:
            labels[f"{KARPENTER_PREFIX}instance-cpu"] = str(self.vcpu)
        if self.memory_mib is not None:
            labels[f"{KARPENTER_PREFIX}instance-memory"] = str(self.memory_mib)
        if self.gpus is not None:
            labels[f"{KARPENTER_PREFIX}instance-gpu-count"] = str(self.gpus.count)
            labels[f"{KARPENTER_PREFIX}instance-gpu-manufacturer"] = self.gpus.manufacturer
            if self.gpus.name:
                labels[f"{KARPENTER_PREFIX}instance-gpu-name"] = self.gpus.name
            if self.gpus.memory_mib is not None:
                labels[f"{KARPENTER_PREFIX}instance-gpu-memory"] = str(self.gpus.memory_mib)
        if self.neuron is not None:
            labels[f"{KARPENTER_PREFIX}instance-accelerator-count"] = str(self.neuron.count)
            labels[f"{KARPENTER_PREFIX}instance-accelerator-manufacturer"] = "aws"
            labels[f"{KARPENTER_PREFIX}instance-accelerator-name"] = self.neuron.name
        if self.arch is not None:
            labels["kubernetes.io/arch"] = self.arch
        labels["kubernetes.io/os"] = "linux"
        labels["node.kubernetes.io/instance-type"] = self.name
        return dict(sorted(labels.items()))


def _accelerators(raw: Mapping[str, Any]) -> tuple[Gpus | None, Neuron | None]:
    acc = raw.get("accelerator") or {}
    if acc.get("kind") == "gpu":
        memory = acc.get("memory_mib_each_ec2")
        cc = acc.get("cuda_compute_capability")
        nominal = acc.get("memory_gb_nominal_nvidia")
        return (
            Gpus(
                manufacturer=str(acc.get("manufacturer") or ""),
                name=str(acc.get("ec2_name") or ""),
                model=str(acc.get("product_name") or ""),
                count=int(acc.get("count") or 0),
                memory_mib=None if memory is None else int(memory),
                architecture=acc.get("architecture"),
                cuda_compute_capability=None if cc is None else str(cc),
                fractional=bool(acc.get("fractional", False)),
                memory_gb_nominal=None if nominal is None else float(nominal),
            ),
            None,
        )
    if acc.get("kind") == "neuron":
        cores, memory = acc.get("neuron_cores"), acc.get("memory_gib_each")
        return None, Neuron(
            name=str(acc.get("ec2_name") or ""),
            model=str(acc.get("product_name") or ""),
            count=int(acc.get("count") or 0),
            cores=None if cores is None else int(cores),
            memory_gib=None if memory is None else float(memory),
        )
    return None, None


def _instance_type(raw: Mapping[str, Any], karpenter: Mapping[str, Any], dra: DraDeviceMetadata | None) -> InstanceType:
    name = str(raw["name"])
    memory = raw.get("memory_gib")
    gpus, neuron = _accelerators(raw)
    price = raw.get("price_usd_per_hour_us_east_1_linux_on_demand")
    entry = karpenter.get(name) or {}
    return InstanceType(
        name=name,
        family=str(raw.get("family") or name.split(".")[0]),
        size=name.split(".", 1)[1],
        arch=raw.get("arch"),
        vcpu=None if raw.get("vcpus") is None else int(raw["vcpus"]),
        memory_mib=None if memory is None else round(float(memory) * 1024),
        gpus=gpus,
        neuron=neuron,
        efa_count=int(raw.get("max_efa_interfaces") or 0),
        price_usd_per_hour=None if price is None else float(price),
        karpenter_labels={str(k): str(v) for k, v in (entry.get("labels") or {}).items()},
        karpenter_allocatable={str(k): str(v) for k, v in (entry.get("allocatable") or {}).items()},
        dra=dra,
        unverified=tuple(str(u) for u in raw.get("unverified") or ()),
    )


class Catalog:
    """The accelerated instance types, by name, with a "did you mean" for unknown names."""

    def __init__(self, instance_types: Mapping[str, InstanceType]) -> None:
        self._types = dict(instance_types)

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __iter__(self) -> Iterator[InstanceType]:
        return iter(self._types.values())

    def __len__(self) -> int:
        return len(self._types)

    def names(self) -> list[str]:
        return list(self._types)

    def families(self) -> list[str]:
        return sorted({t.family for t in self._types.values()})

    def get(self, name: str) -> InstanceType:
        """The instance type called ``name``; UnknownInstanceTypeError with suggestions when there is none."""
        found = self._types.get(name) or self._types.get(name.strip().lower())
        if found is None:
            raise UnknownInstanceTypeError(self._unknown(name))
        return found

    def _unknown(self, name: str) -> str:
        text = f"unknown instance type {name!r}"
        family = name.strip().lower().split(".")[0]
        sizes = [t.name for t in self._types.values() if t.family == family]
        close = difflib.get_close_matches(name.strip().lower(), self.names(), n=3, cutoff=0.6 if sizes else 0.85)
        if close:
            text += f" (did you mean {' or '.join(close)}?)"
        if sizes:
            return text + f"; {family} sizes: {', '.join(sizes)}"
        return text + (f"; dratwin's catalog holds the {len(self)} accelerated instance types (GPU, Trainium, "
                       f"Inferentia) of the families {', '.join(self.families())}")


@functools.cache
def load_catalog() -> Catalog:
    """The catalog of the packaged data (loaded once per process)."""
    karpenter = data_yaml(KARPENTER_FILE)["instance_types"]
    metadata = dra_metadata()
    types = {}
    for raw in data_yaml(CATALOG_FILE)["instance_types"]:
        it = _instance_type(raw, karpenter, metadata.get(str(raw["name"])))
        types[it.name] = it
    return Catalog(types)

"""The EC2 instance types dratwin knows: specs, prices, offerings, Karpenter labels and allocatable, DRA metadata.

Three groups, from the packaged files (see ``dratwin/data/SOURCES.md``):

- accelerated types (GPU, Trainium, Inferentia): the EC2 catalog (``aws-accelerated-instances.yaml``) joined with
  Karpenter's generated instance-types page (``karpenter-instance-types.yaml``) and Karpenter's DRA device metadata
  (``karpenter-dra-instance-device-metadata.yaml``);
- general-purpose, compute- and memory-optimized and burstable types (``aws-general-instances.yaml``): Karpenter's
  labels and allocatable with the us-east-1 on-demand price; vCPUs, memory and architecture are read from the labels;
- NVIDIA GPU types of Karpenter's earlier instance-types pages that EC2 no longer offers (``aws-previous-gpu-
  instances.yaml``: p3, p2, g3, g3s), in the same shape, with their last list price and no offering.

``load_catalog(extra)`` merges user catalogs over them (prices, discounts, regions, zones, whole instance types;
the format is in ``dratwin/data/CATALOG.md`` and the reading in ``dratwin.catalog.overlay``).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dratwin.catalog._data import data_yaml
from dratwin.catalog.dra import DraDeviceMetadata, dra_metadata
from dratwin.catalog.neuron import neuron_shape
from dratwin.catalog.offerings import (
    DEFAULT_REGION,
    DEFAULT_ZONES,
    ON_DEMAND,
    SPOT,
    Candidate,
    Offering,
    Requirements,
    cheapest,
    cheapest_offering,
)
from dratwin.catalog.resources import (
    DEFAULT_MAX_PODS,
    KARPENTER_ROOT_VOLUME_GIB,
    NodeResources,
    node_resources,
)
from dratwin.errors import InputError

CATALOG_FILE = "aws-accelerated-instances.yaml"
GENERAL_FILE = "aws-general-instances.yaml"
PREVIOUS_GPU_FILE = "aws-previous-gpu-instances.yaml"
KARPENTER_FILE = "karpenter-instance-types.yaml"
KARPENTER_PREFIX = "karpenter.k8s.aws/"
CPU_LABEL = f"{KARPENTER_PREFIX}instance-cpu"
MEMORY_LABEL = f"{KARPENTER_PREFIX}instance-memory"
ARCH_LABEL = "kubernetes.io/arch"
ARCHITECTURES = ("amd64", "arm64")
ENTRY_KEYS = ("labels", "allocatable", "price_usd_per_hour", "list_price_usd_per_hour", "zones", "accelerator", "notes")


class UnknownInstanceTypeError(InputError):
    """An instance type that is not in dratwin's catalog."""


class CatalogFileError(InputError):
    """A catalog file (a user catalog, or a packaged one) with a value dratwin cannot use.

    ``file`` and ``key`` (a dotted path such as ``prices.m7i.large.spot``) say where; the message says what to fix.
    """

    def __init__(self, file: str, key: str, problem: str) -> None:
        self.file = file
        self.key = key
        self.problem = problem
        super().__init__(f"{file}: {key}: {problem}" if key else f"{file}: {problem}")


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
    # Linux on-demand USD/hour in the catalog's region (us-east-1 unless a user catalog says otherwise), after a
    # user catalog's price overrides and discount; None: no on-demand price known (not sold on demand there).
    price_usd_per_hour: float | None
    karpenter_labels: Mapping[str, str] = field(default_factory=dict)
    karpenter_allocatable: Mapping[str, str] = field(default_factory=dict)
    dra: DraDeviceMetadata | None = None
    unverified: tuple[str, ...] = ()
    # Where it can be launched: one offering per zone and capacity type with a known price (see catalog.offerings).
    offerings: tuple[Offering, ...] = ()
    region: str = DEFAULT_REGION
    source: str = ""  # the file the type comes from ("aws-general-instances.yaml", a user catalog's path)
    # The last known on-demand list price of a type that has no offering (EC2 no longer offers it); for reports.
    list_price_usd_per_hour: float | None = None
    notes: tuple[str, ...] = ()  # what the data says about the type (not offered, no DRA device metadata, ...)

    @property
    def dra_note(self) -> str | None:
        """Why no DRA claim can make Karpenter launch this GPU type (None for types with device metadata)."""
        if self.gpus is None or self.gpus.manufacturer != "nvidia" or self.dra is not None:
            return None
        return f"no DRA device metadata for {self.name}: Karpenter cannot launch it for DRA claims"

    @property
    def accelerated(self) -> bool:
        """Whether the type has GPUs or Neuron devices."""
        return self.gpus is not None or self.neuron is not None

    def cheapest_offering(self, requirements: Requirements = None) -> Offering | None:
        """The cheapest available offering compatible with ``requirements`` (see catalog.offerings.cheapest)."""
        return cheapest_offering(self, requirements)

    def spot_price(self, zone: str) -> float | None:
        """The spot price in ``zone``; None when the catalog has none (dratwin ships no spot prices)."""
        return next((o.price for o in self.offerings if o.capacity_type == SPOT and o.zone == zone), None)

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
        return self.computed_labels()

    def computed_labels(self) -> dict[str, str]:
        """The well-known labels as computed from the catalog's fields (for types Karpenter's page lacks)."""
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
    vcpu = None if raw.get("vcpus") is None else int(raw["vcpus"])
    memory_mib = None if memory is None else round(float(memory) * 1024)
    arch, efa_count = raw.get("arch"), int(raw.get("max_efa_interfaces") or 0)
    shape = neuron_shape(name)
    if shape is not None and shape.host is not None and vcpu is None:  # trn2u.48xlarge: from the Neuron docs
        vcpu, memory_mib, arch = shape.host.vcpus, shape.host.memory_mib, shape.host.arch
    if shape is not None and raw.get("max_efa_interfaces") is None and shape.efa_enabled:
        efa_count = len(shape.efa_addresses)  # the EFAs the connected-device maps pair with its devices
    return InstanceType(
        name=name,
        family=str(raw.get("family") or name.split(".")[0]),
        size=name.split(".", 1)[1],
        arch=arch,
        vcpu=vcpu,
        memory_mib=memory_mib,
        gpus=gpus,
        neuron=neuron,
        efa_count=efa_count,
        price_usd_per_hour=None if price is None else float(price),
        karpenter_labels={str(k): str(v) for k, v in (entry.get("labels") or {}).items()},
        karpenter_allocatable={str(k): str(v) for k, v in (entry.get("allocatable") or {}).items()},
        dra=dra,
        unverified=tuple(str(u) for u in raw.get("unverified") or ()),
    )


def _int_label(labels: Mapping[str, str], key: str, file: str, where: str) -> int:
    value = labels.get(key)
    if value is None:
        raise CatalogFileError(file, f"{where}.labels", f"needs {key} (Karpenter's label, e.g. from its "
                               "instance-types page); dratwin reads vCPUs, memory (MiB) and architecture from labels")
    try:
        number = int(str(value))
    except ValueError:
        raise CatalogFileError(file, f"{where}.labels.{key}", f"expected an integer, got {value!r}") from None
    if number <= 0:
        raise CatalogFileError(file, f"{where}.labels.{key}", f"expected a positive integer, got {value!r}")
    return number


def _gpus_from_labels(labels: Mapping[str, str]) -> Gpus | None:
    count = labels.get(f"{KARPENTER_PREFIX}instance-gpu-count")
    if count is None:
        return None
    name = labels.get(f"{KARPENTER_PREFIX}instance-gpu-name", "")
    memory = labels.get(f"{KARPENTER_PREFIX}instance-gpu-memory")
    return Gpus(
        manufacturer=labels.get(f"{KARPENTER_PREFIX}instance-gpu-manufacturer", ""),
        name=name,
        model=name,  # the labels carry EC2's short name only; give an accelerator block for the NVML product name
        count=int(count),
        memory_mib=None if memory is None else int(memory),
    )


def _neuron_from_labels(labels: Mapping[str, str]) -> Neuron | None:
    count = labels.get(f"{KARPENTER_PREFIX}instance-accelerator-count")
    if count is None:
        return None
    name = labels.get(f"{KARPENTER_PREFIX}instance-accelerator-name", "")
    return Neuron(name=name, model=name, count=int(count), cores=None, memory_gib=None)


def labelled_instance_type(name: str, entry: Mapping[str, Any], file: str, key: str = "") -> InstanceType:
    """An instance type from an entry of ``aws-general-instances.yaml``'s shape (labels, allocatable, price).

    vCPUs, memory and architecture come from the labels ``karpenter.k8s.aws/instance-cpu``, ``-memory`` (MiB) and
    ``kubernetes.io/arch``; max pods from ``allocatable.pods``; EFAs from ``allocatable["vpc.amazonaws.com/efa"]``;
    accelerators from an ``accelerator`` block shaped as in ``aws-accelerated-instances.yaml`` or else from the
    ``instance-gpu-*`` / ``instance-accelerator-*`` labels. Labels that are missing are computed (family, size,
    category, generation, os, instance-type). CatalogFileError names ``file`` and ``key`` for what is wrong.
    """
    where = key or name
    if not isinstance(entry, Mapping):
        raise CatalogFileError(file, where, "expected a mapping with labels (and optionally allocatable, "
                               "price_usd_per_hour, zones, accelerator)")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise CatalogFileError(file, f"{where}.{unknown[0]}", "unknown key; an instance type has "
                               f"{', '.join(ENTRY_KEYS[:-1])} and {ENTRY_KEYS[-1]}")
    if "." not in name or name.startswith(".") or name.endswith("."):
        raise CatalogFileError(file, where, "an instance type name is <family>.<size>, e.g. m7i.large")
    raw_labels, raw_allocatable = entry.get("labels"), entry.get("allocatable") or {}
    if not isinstance(raw_labels, Mapping):
        raise CatalogFileError(file, f"{where}.labels", "expected a mapping of Karpenter's well-known labels "
                               f"(at least {CPU_LABEL}, {MEMORY_LABEL} and {ARCH_LABEL})")
    if not isinstance(raw_allocatable, Mapping):
        raise CatalogFileError(file, f"{where}.allocatable", "expected a mapping of resource name to quantity")
    labels = {str(k): "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
              for k, v in raw_labels.items()}
    allocatable = {str(k): str(v) for k, v in raw_allocatable.items()}
    given_name = labels.get("node.kubernetes.io/instance-type", name)
    if given_name != name:
        raise CatalogFileError(file, f"{where}.labels.node.kubernetes.io/instance-type",
                               f"is {given_name!r} but the entry is {name!r}; make them equal or drop the label")
    vcpu = _int_label(labels, CPU_LABEL, file, where)
    memory_mib = _int_label(labels, MEMORY_LABEL, file, where)
    arch = labels.get(ARCH_LABEL)
    if arch not in ARCHITECTURES:
        raise CatalogFileError(file, f"{where}.labels.{ARCH_LABEL}", f"expected one of {', '.join(ARCHITECTURES)}, "
                               f"got {arch!r}")
    pods = allocatable.get("pods")
    if pods is not None and not pods.isdigit():
        raise CatalogFileError(file, f"{where}.allocatable.pods", f"expected the max pods as an integer, got {pods!r}")
    price = _optional_price(entry, "price_usd_per_hour", file, where)
    list_price = _optional_price(entry, "list_price_usd_per_hour", file, where)
    notes = entry.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise CatalogFileError(file, f"{where}.notes", f"expected a list of sentences, got {notes!r}")
    efa = allocatable.get("vpc.amazonaws.com/efa", "0")
    if not efa.isdigit():
        raise CatalogFileError(file, f"{where}.allocatable.vpc.amazonaws.com/efa",
                               f"expected the EFA count as an integer, got {efa!r}")
    if "accelerator" in entry:
        if not isinstance(entry["accelerator"], Mapping):
            raise CatalogFileError(file, f"{where}.accelerator", "expected a mapping as in "
                                   "aws-accelerated-instances.yaml (kind: gpu|neuron, count, ...)")
        try:
            gpus, neuron = _accelerators(entry)
        except (TypeError, ValueError) as error:
            raise CatalogFileError(file, f"{where}.accelerator", f"cannot be read: {error}") from None
    else:
        try:
            gpus, neuron = _gpus_from_labels(labels), _neuron_from_labels(labels)
        except ValueError:
            raise CatalogFileError(file, f"{where}.labels", "the instance-gpu-count, instance-gpu-memory and "
                                   "instance-accelerator-count labels must be integers") from None
    family, size = name.split(".", 1)
    it = InstanceType(
        name=name,
        family=labels.get(f"{KARPENTER_PREFIX}instance-family", family),
        size=labels.get(f"{KARPENTER_PREFIX}instance-size", size),
        arch=arch,
        vcpu=vcpu,
        memory_mib=memory_mib,
        gpus=gpus,
        neuron=neuron,
        efa_count=int(efa),
        price_usd_per_hour=price,
        karpenter_allocatable=allocatable,
        source=file,
        list_price_usd_per_hour=list_price,
        notes=tuple(notes),
    )
    return replace(it, karpenter_labels=dict(sorted({**it.computed_labels(), **labels}.items())))


def _optional_price(entry: Mapping[str, Any], key: str, file: str, where: str) -> float | None:
    price = entry.get(key)
    if price is not None and (isinstance(price, bool) or not isinstance(price, int | float) or price < 0):
        raise CatalogFileError(file, f"{where}.{key}", f"expected a non-negative number of USD per hour (or null), "
                               f"got {price!r}")
    return None if price is None else float(price)


def with_offerings(
    it: InstanceType,
    zones: Sequence[str],
    *,
    region: str = DEFAULT_REGION,
    on_demand: float | None = None,
    spot: Mapping[str, float] | None = None,
    unavailable: Iterable[tuple[str, str]] = (),
) -> InstanceType:
    """``it`` with ``price_usd_per_hour`` = ``on_demand`` and one offering per zone and capacity type with a price.

    ``spot`` maps zone to spot price; ``unavailable`` holds (zone, capacity type) pairs marked unavailable.
    """
    off = set(unavailable)
    offerings = []
    for zone in zones:
        if on_demand is not None:
            offerings.append(Offering(zone, ON_DEMAND, on_demand, (zone, ON_DEMAND) not in off))
        if spot and zone in spot:
            offerings.append(Offering(zone, SPOT, spot[zone], (zone, SPOT) not in off))
    return replace(it, price_usd_per_hour=on_demand, offerings=tuple(offerings), region=region)


class Catalog:
    """The instance types of a region, by name, with their offerings and a "did you mean" for unknown names."""

    def __init__(
        self,
        instance_types: Mapping[str, InstanceType],
        *,
        region: str = DEFAULT_REGION,
        zones: Sequence[str] = DEFAULT_ZONES,
        discount: float = 0.0,
        files: Sequence[str] = (),
    ) -> None:
        self._types = dict(instance_types)
        self.region = region
        self.zones = tuple(zones)
        self.discount = discount  # the fraction taken off every on-demand price (user catalogs)
        self.files = tuple(files)  # the user catalogs merged over the packaged data, in order

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

    def types_for(self, arch: str | None = None, os: str = "linux") -> list[InstanceType]:
        """The types that run ``arch`` ("amd64" / "arm64"; None: any) and ``os``.

        Every type is Linux (Karpenter's page and the prices are for AL2023 / Linux); other systems get [].
        """
        if os != "linux":
            return []
        return [t for t in self._types.values() if arch is None or t.arch == arch]

    def cheapest(self, requirements: Requirements = None) -> list[Candidate]:
        """Every type with a compatible available offering, cheapest first (see catalog.offerings.cheapest)."""
        return cheapest(self._types.values(), requirements)

    def _unknown(self, name: str) -> str:
        text = f"unknown instance type {name!r}"
        family = name.strip().lower().split(".")[0]
        sizes = [t.name for t in self._types.values() if t.family == family]
        close = difflib.get_close_matches(name.strip().lower(), self.names(), n=3, cutoff=0.6 if sizes else 0.85)
        if close:
            text += f" (did you mean {' or '.join(close)}?)"
        if sizes:
            return text + f"; {family} sizes: {', '.join(sizes)}"
        return text + (f"; dratwin's catalog holds {len(self)} instance types of the families "
                       f"{', '.join(self.families())}; add others with a user catalog (dratwin/data/CATALOG.md)")


@functools.cache
def _packaged_catalog() -> Catalog:
    karpenter = data_yaml(KARPENTER_FILE)["instance_types"]
    metadata = dra_metadata()
    types: dict[str, InstanceType] = {}
    for raw in data_yaml(CATALOG_FILE)["instance_types"]:
        it = replace(_instance_type(raw, karpenter, metadata.get(str(raw["name"]))), source=CATALOG_FILE)
        types[it.name] = it
    for file in (GENERAL_FILE, PREVIOUS_GPU_FILE):
        for name, entry in data_yaml(file)["instance_types"].items():
            if name in types:
                raise CatalogFileError(file, str(name), f"also in {types[name].source}")
            types[str(name)] = labelled_instance_type(str(name), entry, file)
    return Catalog({name: with_offerings(it, DEFAULT_ZONES, on_demand=it.price_usd_per_hour)
                    for name, it in types.items()})


def load_catalog(extra: Sequence[Path | str] = ()) -> Catalog:
    """The catalog of the packaged data, with the user catalogs ``extra`` merged over it in order.

    Without ``extra`` the packaged catalog is loaded once per process and shared. The user catalog format is in
    ``dratwin/data/CATALOG.md``; CatalogFileError names the file, the key and what to fix.
    """
    if isinstance(extra, str | Path):
        extra = (extra,)
    if not extra:
        return _packaged_catalog()
    from dratwin.catalog.overlay import apply_user_catalogs  # here: overlay imports this module

    return apply_user_catalogs(_packaged_catalog(), [Path(p) for p in extra])

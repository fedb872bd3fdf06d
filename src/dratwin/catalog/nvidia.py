"""NVIDIA GPU models beyond the Karpenter metadata: classic-path memory, MIG geometry, captured PCI topology.

- :func:`classic_memory` — the ``memory`` capacity of a whole GPU on the driver's classic path (NVML total),
  where a capture exists (``nvidia-gpus.yaml``).
- :func:`mig_layout` — the MIG profiles of a GPU model: engines, memory, the memory slices each instance
  occupies and its valid placement starts, and the per-GPU budget; :meth:`MigLayout.plan` places instances.
- :func:`captured_topology` — per-GPU PCI bus IDs / NUMA nodes and per-EFA PCI addresses / NUMA nodes read from
  the packaged ResourceSlice captures (p5.48xlarge, p4d.24xlarge).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.catalog._data import data_yaml, data_yaml_all
from dratwin.errors import InputError

GPUS_FILE = "nvidia-gpus.yaml"
ENGINES = ("multiprocessors", "copyEngines", "decoders", "encoders", "jpegEngines", "ofaEngines")


class UnknownMigProfileError(InputError):
    """A MIG profile that the GPU model does not have, or a layout that does not fit on one GPU."""


@dataclass(frozen=True)
class MigProfile:
    """One GPU instance profile (e.g. ``1g.10gb``) of a GPU model."""

    name: str
    gi_profile_id: int
    memory: str
    engines: Mapping[str, int]
    memory_slices: int
    placements: tuple[int, ...]

    @property
    def device_infix(self) -> str:
        """``1g.5gb+me`` -> ``1g5gb-me``: the profile in the driver's device names (RFC 1123)."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower().replace(".", "")).strip("-")

    def device_name(self, gpu_index: int, start: int) -> str:
        return f"gpu-{gpu_index}-mig-{self.device_infix}-{self.gi_profile_id}-{start}"


@dataclass(frozen=True)
class MigInstance:
    profile: MigProfile
    start: int

    @property
    def memory_slices(self) -> range:
        return range(self.start, self.start + self.profile.memory_slices)


@dataclass(frozen=True)
class MigLayout:
    """The MIG geometry of one GPU model and its per-GPU budget (DynamicMIG counter set)."""

    product_name: str
    profiles: tuple[MigProfile, ...]
    budget: Mapping[str, int]
    memory_slices: int
    estimated: bool

    @property
    def profile_names(self) -> list[str]:
        return [p.name for p in self.profiles]

    def profile(self, name: str) -> MigProfile:
        for candidate in self.profiles:
            if candidate.name == name:
                return candidate
        raise UnknownMigProfileError(
            f"MIG profile {name!r} does not exist on {self.product_name}; valid profiles: "
            f"{', '.join(self.profile_names)}"
        )

    def max_instances(self, name: str) -> int:
        """How many instances of one profile fit on one GPU."""
        return len(self.plan([(name, None)]))

    def plan(self, specs: Sequence[tuple[str, int | None]]) -> list[MigInstance]:
        """Place MIG instances on one GPU, the way mig-parted would partition it.

        ``specs`` are (profile, count) in order; a count of None fills what is left. Instances with a count are
        placed first, in the order given, each at its lowest free start (backtracking, so a layout that fits is
        always found); fill profiles then take every free placement from the lowest start while the budget
        allows. Raises
        UnknownMigProfileError for an unknown profile or a layout that does not fit.
        """
        wanted = [(self.profile(name), count) for name, count in specs]
        fixed = [profile for profile, count in wanted if count is not None for _ in range(count)]
        placed = self._place_all(fixed, [])
        if placed is None:
            text = ", ".join(f"{count}x {p.name}" for p, count in wanted if count is not None)
            raise UnknownMigProfileError(
                f"MIG layout {text} does not fit on one {self.product_name} (8 memory slices, 7 compute slices; "
                f"max per GPU: {', '.join(f'{p.name} {self.max_instances(p.name)}' for p in self.profiles)})"
            )
        for profile, count in wanted:
            if count is None:
                for start in profile.placements:
                    candidate = MigInstance(profile, start)
                    if self._fits(candidate, placed):
                        placed.append(candidate)
        return sorted(placed, key=lambda i: (i.start, -i.profile.memory_slices))

    def _place_all(self, todo: list[MigProfile], placed: list[MigInstance]) -> list[MigInstance] | None:
        if not todo:
            return list(placed)
        profile, rest = todo[0], todo[1:]
        for start in profile.placements:
            candidate = MigInstance(profile, start)
            if self._fits(candidate, placed):
                found = self._place_all(rest, [*placed, candidate])
                if found is not None:
                    return found
        return None

    def _fits(self, candidate: MigInstance, placed: Sequence[MigInstance]) -> bool:
        used = {s for instance in placed for s in instance.memory_slices}
        if used.intersection(candidate.memory_slices) or candidate.memory_slices.stop > self.memory_slices:
            return False
        for engine in ENGINES:
            total = candidate.profile.engines[engine] + sum(i.profile.engines[engine] for i in placed)
            if total > self.budget[engine]:
                return False
        return True


@functools.cache
def _gpus_file() -> Mapping[str, Any]:
    raw: Mapping[str, Any] = data_yaml(GPUS_FILE)
    return raw


def classic_memory(product_name: str) -> str | None:
    """The captured classic-path ``memory`` capacity (NVML total) of a model, None when not captured."""
    value = _gpus_file()["classic_memory"].get(product_name)
    return None if value is None else str(value)


@functools.cache
def mig_layouts() -> Mapping[str, MigLayout]:
    layouts: dict[str, MigLayout] = {}
    for product, raw in _gpus_file()["mig"].items():
        counters = raw["counters"]
        profiles = tuple(
            MigProfile(
                name=str(p["name"]),
                gi_profile_id=int(p["gi_profile_id"]),
                memory=str(p["memory"]),
                engines={e: int(p[e]) for e in ENGINES},
                memory_slices=int(p["memorySlices"]),
                placements=tuple(int(s) for s in p["placements"]),
            )
            for p in raw["profiles"]
        )
        layouts[str(product)] = MigLayout(
            product_name=str(product),
            profiles=profiles,
            budget={e: int(counters[e]) for e in ENGINES},
            memory_slices=int(counters["memorySlices"]),
            estimated=bool(raw.get("estimated", False)),
        )
    return layouts


def mig_layout(product_name: str) -> MigLayout | None:
    """The MIG geometry of a GPU model; None for models without MIG or without a packaged table."""
    return mig_layouts().get(product_name)


# ---- captured topology ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CapturedGpu:
    pci_bus_id: str
    pcie_root: str
    numa_node: int


@dataclass(frozen=True)
class CapturedEfa:
    pci_address: str
    pcie_root: str
    numa_node: int


@dataclass(frozen=True)
class CapturedTopology:
    """The PCI topology of one instance type as a captured ResourceSlice shows it."""

    instance_type: str
    source: str
    gpus: tuple[CapturedGpu, ...] = ()
    efas: tuple[CapturedEfa, ...] = ()
    node_attributes: Mapping[str, str] = field(default_factory=dict)


CAPTURES = {
    "p5.48xlarge": "resourceslice-p5.48xlarge.yaml",
    "p4d.24xlarge": "resourceslice-p4d.24xlarge-static-mig.yaml",
}


def _attr(device: Mapping[str, Any], name: str) -> Any:
    value = device.get("attributes", {}).get(name)
    return None if value is None else next(iter(value.values()))


@functools.cache
def captured_topology(instance_type: str) -> CapturedTopology | None:
    """The captured PCI topology of an instance type, None when no capture is packaged for it.

    GPUs are in device order (``gpu-<minor>``; for a capture in MIG mode, in order of their first MIG device);
    EFAs in the order of the capture, which is PCI-address order.
    """
    source = CAPTURES.get(instance_type)
    if source is None:
        return None
    gpus: dict[str, CapturedGpu] = {}
    efas: list[CapturedEfa] = []
    node: dict[str, str] = {}
    for doc in data_yaml_all(source):
        if doc.get("kind") != "ResourceSlice":
            continue
        spec = doc["spec"]
        for device in spec.get("devices", []):
            if spec["driver"] == "gpu.nvidia.com":
                key = _attr(device, "parentUUID") or _attr(device, "uuid")
                gpus.setdefault(
                    str(key),
                    CapturedGpu(
                        pci_bus_id=str(_attr(device, "resource.kubernetes.io/pciBusID")),
                        pcie_root=str(_attr(device, "resource.kubernetes.io/pcieRoot")),
                        numa_node=int(_attr(device, "resource.kubernetes.io/numaNode")),
                    ),
                )
                for name in ("addressingMode", "driverVersion", "cudaDriverVersion"):
                    if _attr(device, name) is not None:
                        node[name] = str(_attr(device, name))
            elif spec["driver"] == "dra.net":
                efas.append(
                    CapturedEfa(
                        pci_address=str(_attr(device, "dra.net/pciAddress")),
                        pcie_root=str(_attr(device, "resource.kubernetes.io/pcieRoot")),
                        numa_node=int(_attr(device, "dra.net/numaNode")),
                    )
                )
    return CapturedTopology(instance_type, source, tuple(gpus.values()), tuple(efas), node)

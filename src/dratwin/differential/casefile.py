"""The allocator case format of the conformance suite: one YAML mapping per case.

Keys: ``name``, ``source``, ``features`` (the allocator features that are on; all others are off),
``node``, ``objects`` (Node, DeviceClass, ResourceSlice and ResourceClaim objects, in input order),
``allocate`` (claim names in namespace ``default``, allocated together in this order) and ``expect``
(``result``: allocated / unsatisfiable / error, with ``allocations`` or ``errorContains``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

Case = dict[str, Any]

# Case feature name -> the Kubernetes feature gates it stands for.
GATES: dict[str, tuple[str, ...]] = {
    "adminAccess": ("DRAAdminAccess",),
    "prioritizedList": ("DRAPrioritizedList",),
    "partitionableDevices": ("DRAPartitionableDevices",),
    "deviceTaints": ("DRADeviceTaints",),
    "deviceBindingConditions": ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
    "consumableCapacity": ("DRAConsumableCapacity",),
    "listTypeAttributes": ("DRAListTypeAttributes",),
    "extendedResources": ("DRAExtendedResource",),
}
CASE_KEYS = ("name", "source", "features", "node", "objects", "allocate", "expect")


def feature_gates(features: Sequence[str]) -> str:
    """Every gate of the format set explicitly: the case's features on, all others off."""
    enabled = set(features)
    unknown = sorted(enabled - set(GATES))
    if unknown:
        raise ValueError(f"unknown case features {unknown}; known: {', '.join(GATES)}")
    return ",".join(
        f"{gate}={'true' if feature in enabled else 'false'}" for feature, gates in GATES.items() for gate in gates
    )


def variant_for(features: Sequence[str]) -> str:
    """The allocator upstream 1.36 picks: the most stable one that supports every enabled feature."""
    enabled = set(features)
    if "listTypeAttributes" in enabled:
        return "experimental"
    if enabled & {"consumableCapacity", "deviceBindingConditions"}:
        return "incubating"
    return "stable"


class _CaseDumper(yaml.SafeDumper):
    """Block style, no aliases (objects are written out in full), multi-line strings as blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_CaseDumper.add_representer(str, _represent_str)


def dump_case(case: Mapping[str, Any], comments: Sequence[str] = ()) -> str:
    """The case as YAML in the format's key order, each comment line as a ``#`` line on top."""
    ordered = {key: case[key] for key in CASE_KEYS if key in case}
    header = "".join(f"# {line}\n" if line else "#\n" for text in comments for line in text.splitlines())
    return header + yaml.dump(ordered, Dumper=_CaseDumper, sort_keys=False, allow_unicode=True, width=120)


def write_case(path: Path, case: Mapping[str, Any], comments: Sequence[str] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_case(case, comments), encoding="utf-8")
    return path


def load_case(path: Path) -> Case:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: a case is a YAML mapping, found {type(loaded).__name__}")
    return loaded

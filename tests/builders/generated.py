"""Builders over ``dratwin cluster generate``: a cluster from ``TYPE=N`` strings, and readers of its slices."""

from __future__ import annotations

from typing import Any

from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.cluster.generate import GeneratedCluster, generate
from dratwin.cluster.generate_options import GenerateOptions, parse_node_group

Raw = dict[str, Any]


def gen(*groups: str, **options: Any) -> GeneratedCluster:
    """``gen("trn2.48xlarge=2", neuron_manager="dra")``."""
    return generate(GenerateOptions(groups=tuple(parse_node_group(g) for g in groups), **options))


def attr(device: Raw, name: str) -> Any:
    """The value of one attribute of a device (whatever its type), None when absent."""
    value = device["attributes"].get(name)
    return None if value is None else next(iter(value.values()))


def slices_of(result: GeneratedCluster, node: str, driver: str) -> list[Raw]:
    return [s for s in result.slices if s["spec"]["nodeName"] == node and s["spec"]["driver"] == driver]


def devices_of(result: GeneratedCluster, node: str, driver: str) -> list[Raw]:
    return [d for s in slices_of(result, node, driver) for d in s["spec"]["devices"]]


def node_names(result: GeneratedCluster) -> list[str]:
    return [str(n["metadata"]["name"]) for n in result.nodes]


def loaded(objects: list[Raw]) -> list[LoadedObject]:
    """Objects as ``dratwin validate`` reads them from a file (one document each)."""
    return [LoadedObject(raw=o, source=SourceLocation("generated", i)) for i, o in enumerate(objects)]

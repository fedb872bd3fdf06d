"""Random ResourceSlices for the case generator: pools, slices, devices, counters, capacity, taints.

A pool is one or two slices of one driver, on the target node, on another node, or network-attached
(node selector, all nodes, per-device node selection). Some pools are deliberately broken the ways
the allocator must handle: incomplete (a slice missing), with an outdated slice, invalid (duplicate
device names, counters of an unknown counter set). Partitionable pools publish their counter sets
in a slice of their own; a pool of the same name under the second driver can reuse a counter set
name, since upstream keys counters by pool name alone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from dratwin.differential.themes import Themes

Wire = dict[str, Any]

TARGET_NODE = "node-1"
MODELS = ("a100", "h100", "l4")
PCIE_ROOTS = ("pci-0", "pci-1")
BINDING_CONDITION = "dra.example.com/attached"
BINDING_FAILURE = "dra.example.com/attach-failed"


@dataclass(frozen=True)
class DeviceRef:
    """A published device, for the allocated-state generator."""

    driver: str
    pool: str
    device: str
    multi_allocatable: bool
    capacity: tuple[str, ...]


@dataclass
class Published:
    """Everything the slice generator made: the slices in input order and the devices."""

    slices: list[Wire] = field(default_factory=list)
    devices: list[DeviceRef] = field(default_factory=list)


@dataclass
class _Pool:
    driver: str
    name: str
    generation: int
    targeting: Wire
    slices: list[Wire] = field(default_factory=list)


def publish(rng: random.Random, themes: Themes, drivers: list[str], nodes: list[str]) -> Published:
    """Every driver's pools and their slices; the slices' order is shuffled half of the time."""
    published = Published()
    pool_names = _pool_names(rng, themes, drivers)
    for driver in drivers:
        for pool_name in pool_names[driver]:
            pool = _Pool(driver, pool_name, rng.choice((1, 1, 2)), _targeting(rng, themes, nodes))
            _fill_pool(rng, themes, pool, nodes, published)
            published.slices.extend(pool.slices)
    if rng.random() < 0.5:
        rng.shuffle(published.slices)
    return published


def _pool_names(rng: random.Random, themes: Themes, drivers: list[str]) -> dict[str, list[str]]:
    names = {driver: [f"pool-{i + 1}" for i in range(rng.choice((1, 1, 2)))] for driver in drivers}
    if len(drivers) > 1 and not themes.same_pool_name:
        second = drivers[1]
        names[second] = [f"{second[-1]}-{name}" for name in names[second]]
    return names


def _targeting(rng: random.Random, themes: Themes, nodes: list[str]) -> Wire:
    """How the pool's slices select nodes: mostly the target node's own pool."""
    if not themes.network or rng.random() < 0.4:
        return {"nodeName": TARGET_NODE if rng.random() < 0.85 or len(nodes) == 1 else rng.choice(nodes[1:])}
    kind = rng.choice(("nodeSelector", "allNodes", "perDeviceNodeSelection"))
    if kind == "nodeSelector":
        return {"nodeSelector": _region_selector(rng)}
    return {kind: True}


def _region_selector(rng: random.Random) -> Wire:
    regions = rng.choice((["region-1"], ["region-2"], ["region-1", "region-2"]))
    term = {"matchExpressions": [{"key": "region", "operator": "In", "values": regions}]}
    return {"nodeSelectorTerms": [term]}


def _fill_pool(rng: random.Random, themes: Themes, pool: _Pool, nodes: list[str], published: Published) -> None:
    slice_count = rng.choice((1, 1, 1, 2))
    counter_sets = _counter_sets(rng) if themes.counters and rng.random() < 0.7 else []
    declared = slice_count + (1 if counter_sets else 0)
    if themes.broken and rng.random() < 0.25:
        declared += 1  # incomplete: one slice is never published
    device_names: list[str] = []
    for index in range(slice_count):
        devices = [
            _device(rng, themes, pool, f"dev-{index}-{i}", counter_sets, nodes) for i in range(rng.randint(1, 3))
        ]
        if themes.broken and rng.random() < 0.25:
            seen = device_names + [d["name"] for d in devices[1:]]
            if seen:
                devices[0]["name"] = rng.choice(seen)  # invalid pool: a duplicate device name
        device_names += [d["name"] for d in devices]
        pool.slices.append(_slice(pool, f"slice-{index}", declared, devices))
        published.devices += [_ref(pool, d) for d in devices]
    if counter_sets:
        pool.slices.append(_counter_slice(pool, declared, counter_sets))
    if themes.broken and rng.random() < 0.2:
        _add_other_generation(rng, pool, declared)


def _slice(pool: _Pool, suffix: str, declared: int, devices: list[Wire]) -> Wire:
    spec: Wire = {
        "driver": pool.driver,
        "pool": {"name": pool.name, "generation": pool.generation, "resourceSliceCount": declared},
        **pool.targeting,
        "devices": devices,
    }
    return _resource_slice(f"{pool.driver}-{pool.name}-{suffix}", spec)


def _resource_slice(name: str, spec: Wire) -> Wire:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _counter_slice(pool: _Pool, declared: int, counter_sets: list[Wire]) -> Wire:
    targeting = {"nodeName": TARGET_NODE} if "perDeviceNodeSelection" in pool.targeting else pool.targeting
    spec: Wire = {
        "driver": pool.driver,
        "pool": {"name": pool.name, "generation": pool.generation, "resourceSliceCount": declared},
        **targeting,
        "sharedCounters": counter_sets,
    }
    return _resource_slice(f"{pool.driver}-{pool.name}-counters", spec)


def _add_other_generation(rng: random.Random, pool: _Pool, declared: int) -> None:
    """An outdated slice (older generation: ignored) or a newer one on another node (the pool's
    current generation is then obsolete)."""
    if pool.generation > 1 and rng.random() < 0.6:
        generation, node = pool.generation - 1, TARGET_NODE
    else:
        generation, node = pool.generation + 1, "node-2"
    device = {"name": "dev-9-0", "attributes": {"model": {"string": rng.choice(MODELS)}}}
    spec: Wire = {
        "driver": pool.driver,
        "pool": {"name": pool.name, "generation": generation, "resourceSliceCount": declared},
        "nodeName": node,
        "devices": [device],
    }
    pool.slices.append(_resource_slice(f"{pool.driver}-{pool.name}-gen-{generation}", spec))


def _counter_sets(rng: random.Random) -> list[Wire]:
    sets = [{"name": "cs-0", "counters": {"mem": {"value": rng.choice(("8Gi", "16Gi"))}, "slots": {"value": "2"}}}]
    if rng.random() < 0.3:
        sets.append({"name": "cs-1", "counters": {"slots": {"value": rng.choice(("1", "3"))}}})
    return sets


def _device(
    rng: random.Random, themes: Themes, pool: _Pool, name: str, counter_sets: list[Wire], nodes: list[str]
) -> Wire:
    device: Wire = {"name": name, "attributes": _attributes(rng, themes, pool.driver)}
    capacity = _capacity(rng, themes)
    if capacity:
        device["capacity"] = capacity
    if themes.shared and rng.random() < 0.5:
        device["allowMultipleAllocations"] = True
        if "memory" in capacity and rng.random() < 0.7:
            capacity["memory"]["requestPolicy"] = _request_policy(rng)
    if counter_sets and rng.random() < 0.8:
        device["consumesCounters"] = _consumption(rng, themes, counter_sets)
    if themes.taints and rng.random() < 0.4:
        device["taints"] = [_taint(rng)]
    if themes.binding and rng.random() < 0.4:
        device["bindingConditions"] = [BINDING_CONDITION]
        device["bindingFailureConditions"] = [BINDING_FAILURE]
        if rng.random() < 0.5:
            device["bindsToNode"] = True
    if "perDeviceNodeSelection" in pool.targeting:
        device.update(_device_targeting(rng, nodes))
    return device


def _attributes(rng: random.Random, themes: Themes, driver: str) -> Wire:
    attributes: Wire = {}
    if rng.random() < 0.9:
        attributes["model"] = {"string": rng.choice(MODELS)}
    if rng.random() < 0.7:
        attributes["mem"] = {"int": rng.choice((8, 16, 40, 80))}
    if rng.random() < 0.5:
        attributes["healthy"] = {"bool": rng.random() < 0.7}
    if rng.random() < 0.4:
        attributes["driverVersion"] = {"version": rng.choice(("1.0.0", "1.2.3", "2.0.0"))}
    if rng.random() < 0.4:
        attributes["resource.kubernetes.io/pcieRoot"] = {"string": rng.choice(PCIE_ROOTS)}
    if rng.random() < 0.3:
        attributes["dra.example.com/numa"] = {"int": rng.choice((0, 1))}
    if themes.list_attributes and rng.random() < 0.5:
        attributes["dra.example.com/numa"] = {"ints": rng.sample((0, 1, 2), rng.randint(1, 2))}
    if themes.list_attributes and rng.random() < 0.3:
        attributes["model"] = {"strings": rng.sample(MODELS, 2)}
    return attributes


def _capacity(rng: random.Random, themes: Themes) -> Wire:
    capacity: Wire = {}
    if rng.random() < 0.8:
        capacity["memory"] = {"value": rng.choice(("1Gi", "8Gi", "16Gi", "40Gi"))}
    if rng.random() < 0.4:
        capacity["dra.example.com/cores"] = {"value": rng.choice(("4", "8"))}
    return capacity


def _request_policy(rng: random.Random) -> Wire:
    if rng.random() < 0.5:
        return {"default": "1Gi", "validValues": ["1Gi", "2Gi", "4Gi"]}
    valid_range: Wire = {"min": "1Gi", "step": "1Gi"}
    if rng.random() < 0.5:
        valid_range["max"] = "8Gi"
    return {"default": rng.choice(("1Gi", "2Gi")), "validRange": valid_range}


def _consumption(rng: random.Random, themes: Themes, counter_sets: list[Wire]) -> list[Wire]:
    counter_set = rng.choice(counter_sets)
    counters = {name: {"value": _share_of(rng, name)} for name in counter_set["counters"] if rng.random() < 0.8}
    if not counters:
        counters = {"slots": {"value": "1"}}
    name = counter_set["name"]
    if themes.broken and rng.random() < 0.25:
        name = "cs-9"  # invalid pool: an unknown counter set
    return [{"counterSet": name, "counters": counters}]


def _share_of(rng: random.Random, counter: str) -> str:
    return rng.choice(("4Gi", "8Gi")) if counter == "mem" else "1"


def _taint(rng: random.Random) -> Wire:
    taint: Wire = {"key": rng.choice(("example.com/t1", "example.com/t2")), "effect": rng.choice(
        ("NoSchedule", "NoSchedule", "NoExecute", "None"))}
    if rng.random() < 0.5:
        taint["value"] = rng.choice(("x", "y"))
    return taint


def _device_targeting(rng: random.Random, nodes: list[str]) -> Wire:
    kind = rng.choice(("nodeName", "nodeName", "allNodes", "nodeSelector"))
    if kind == "nodeName":
        return {"nodeName": rng.choice(nodes)}
    if kind == "allNodes":
        return {"allNodes": True}
    return {"nodeSelector": _region_selector(rng)}


def _ref(pool: _Pool, device: Wire) -> DeviceRef:
    return DeviceRef(
        pool.driver, pool.name, device["name"], bool(device.get("allowMultipleAllocations")),
        tuple(device.get("capacity") or {}),
    )

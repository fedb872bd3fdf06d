"""Checks across the ResourceSlices of one pool (driver + pool name): what makes the allocator skip a pool.

Upstream (``structured``, pool gathering) uses only the slices of the highest generation, treats a
pool whose slice count differs from ``resourceSliceCount`` as incomplete, and a pool with duplicate
device names, duplicate counter sets or references to unknown counters as invalid.

The API server accepts every slice on its own, so an incomplete or inconsistent pool is a warning (the
input may hold only part of a cluster, or alternative layouts of one node); once the input holds the
whole pool, what makes it invalid is an error.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from dratwin.api.codec import MapKey
from dratwin.api.resource import ResourceSlice
from dratwin.api.validation_base import ProblemKind
from dratwin.api.validation_formats import did_you_mean
from dratwin.api.validation_refs import Checked


@dataclass
class _Slice:
    item: Checked
    value: ResourceSlice


def check_pools(items: list[Checked]) -> None:
    pools: dict[tuple[str, str], list[_Slice]] = defaultdict(list)
    for item in items:
        if isinstance(item.value, ResourceSlice) and item.value.spec.driver and item.value.spec.pool.name:
            spec = item.value.spec
            pools[(spec.driver, spec.pool.name)].append(_Slice(item, item.value))
    for (driver, pool), slices in pools.items():
        newest = max(s.value.spec.pool.generation for s in slices)
        current = [s for s in slices if s.value.spec.pool.generation == newest]
        for s in slices:
            if s.value.spec.pool.generation < newest:
                s.item.rep.warn(ProblemKind.INVALID, ("spec", "pool", "generation"),
                                f"pool {driver}/{pool} has slices of generation {newest}: the allocator ignores this "
                                f"slice of generation {s.value.spec.pool.generation}")
        if _check_count(current, f"{driver}/{pool}"):
            _check_unique_devices(current)
            _check_consumption(current, _check_counter_sets(current))


def _check_count(current: list[_Slice], pool: str) -> bool:
    """Whether the input holds the whole pool (warnings when it does not)."""
    declared = current[0].value.spec.pool.resource_slice_count
    path = ("spec", "pool", "resourceSliceCount")
    consistent = True
    for s in current[1:]:
        if s.value.spec.pool.resource_slice_count != declared:
            consistent = False
            s.item.rep.warn(ProblemKind.INVALID, path, f"slice {current[0].item.name} of pool {pool} says {declared}: "
                            "the allocator uses the value of the first slice it sees")
    if declared <= 0 or (consistent and len(current) == declared):
        return declared > 0
    first = current[0].item
    if len(current) > declared:
        first.rep.warn(ProblemKind.INVALID, path, f"pool {pool} has {len(current)} slices of this generation in the "
                       f"input, more than resourceSliceCount {declared}: the allocator treats it as incomplete and "
                       "does not use its devices", "alternative layouts of one node belong in separate inputs")
    elif len(current) < declared:
        first.rep.warn(ProblemKind.NOT_FOUND, path, f"pool {pool} is incomplete in the input ({len(current)} of "
                       f"{declared} slices): the allocator does not use an incomplete pool",
                       "add the pool's other slices with another -f")
    return False


def _check_unique_devices(current: list[_Slice]) -> None:
    seen: dict[str, str] = {}
    for s in current:
        for i, device in enumerate(s.value.spec.devices):
            other = seen.get(device.name)
            if other is not None and other != s.item.name:
                s.item.rep.duplicate(("spec", "devices", i, "name"), device.name,
                                     f"slice {other} of the same pool also has this device: the allocator treats "
                                     "the pool as invalid")
            seen.setdefault(device.name, s.item.name)


def _check_counter_sets(current: list[_Slice]) -> dict[str, set[str]]:
    sets: dict[str, set[str]] = {}
    owner: dict[str, str] = {}
    for s in current:
        for i, counter_set in enumerate(s.value.spec.shared_counters):
            if counter_set.name in owner and owner[counter_set.name] != s.item.name:
                s.item.rep.duplicate(("spec", "sharedCounters", i, "name"), counter_set.name,
                                     f"slice {owner[counter_set.name]} of the same pool defines this counter set too")
            owner.setdefault(counter_set.name, s.item.name)
            sets.setdefault(counter_set.name, set()).update(counter_set.counters)
    return sets


def _check_consumption(current: list[_Slice], sets: dict[str, set[str]]) -> None:
    for s in current:
        for i, device in enumerate(s.value.spec.devices):
            for j, consumption in enumerate(device.consumes_counters):
                path = ("spec", "devices", i, "consumesCounters", j)
                counters = sets.get(consumption.counter_set)
                if counters is None:
                    s.item.rep.not_found((*path, "counterSet"), consumption.counter_set,
                                         "no counter set of this name in the pool's sharedCounters: the allocator "
                                         "treats the pool as invalid", did_you_mean(consumption.counter_set, sets))
                    continue
                for name in consumption.counters:
                    if name not in counters:
                        s.item.rep.not_found((*path, "counters", MapKey(name)), name,
                                             f"counter set {consumption.counter_set} has no such counter",
                                             did_you_mean(name, counters))

"""Gathering the resource pools visible from one node (Kubernetes 1.36 default allocator).

A pool is (driver, pool name). Per node: keep the relevant slices of the newest generation, decide
whether the pool is complete (all ``resourceSliceCount`` slices present), obsolete (a newer
generation exists elsewhere: ignored), or invalid (duplicate device names, bad counter references),
and order pools and slices the way the chosen allocator variant visits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dratwin.allocator.features import Features
from dratwin.allocator.nodes import node_matches
from dratwin.allocator.state import DeviceID
from dratwin.allocator.variants import Variant, select_variant
from dratwin.api.core import Node
from dratwin.api.resource import CounterSet, ResourceSlice
from dratwin.errors import AllocationError


@dataclass
class Pool:
    """The slices of one pool that matter for one node, and the pool's health."""

    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice] = field(default_factory=list)  # relevant, newest generation
    device_slices: list[ResourceSlice] = field(default_factory=list)  # relevant slices with devices
    other_device_slices: list[ResourceSlice] = field(default_factory=list)  # same pool, other nodes
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    incomplete: bool = False
    invalid_reason: str = ""
    has_binding_conditions: bool = False
    _ids: dict[int, list[DeviceID]] = field(default_factory=dict, repr=False)

    def device_ids(self, slice_index: int) -> list[DeviceID]:
        """The IDs of the devices of ``device_slices[slice_index]``, built once."""
        ids = self._ids.get(slice_index)
        if ids is None:
            devices = self.device_slices[slice_index].spec.devices
            # tuple.__new__ skips the NamedTuple's Python-level constructor: this runs per node and call.
            make, driver, pool = tuple.__new__, self.driver, self.name
            ids = self._ids[slice_index] = [make(DeviceID, (driver, pool, d.name)) for d in devices]
        return ids

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)

    @property
    def usable(self) -> bool:
        return not self.incomplete and not self.invalid


class SliceIndex:
    """All ResourceSlices of the cluster, indexed once so that one node's pools are found without a scan.

    Slices naming a node are kept per node; the rest (and every counter-set slice, which belongs to its
    whole pool) are candidates for every node. ``by_pool`` serves the completeness check.
    """

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.slices = list(slices)
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        self.pools_cache: dict[tuple[str, Features, str], list[Pool]] = {}
        self._position: dict[int, int] | None = None
        for resource_slice in self.slices:
            spec = resource_slice.spec
            self.by_pool.setdefault((spec.driver, spec.pool.name), []).append(resource_slice)
            if spec.node_name and not spec.shared_counters:
                self.by_node.setdefault(spec.node_name, []).append(resource_slice)
            else:
                self.shared.append(resource_slice)

    @property
    def position(self) -> dict[int, int]:
        """Each slice's place in the input (by object id), for the stable variant's order."""
        if self._position is None:
            self._position = {id(s): i for i, s in enumerate(self.slices)}
        return self._position

    def for_node(self, node_name: str) -> list[ResourceSlice]:
        return [*self.by_node.get(node_name, ()), *self.shared]


def gather_pools(
    index: SliceIndex | Sequence[ResourceSlice], node: Node, features: Features, variant: Variant | None = None
) -> list[Pool]:
    """The pools that provide devices for ``node``, in the order the allocator searches them."""
    if not isinstance(index, SliceIndex):
        index = SliceIndex(index)
    variant = variant or select_variant(features)
    key = (node.metadata.name, features, variant.name)
    cached = index.pools_cache.get(key)
    if cached is not None:
        return cached  # the slices of an index never change, and a node's pools depend on nothing else
    pools: dict[tuple[str, str], Pool] = {}
    for resource_slice in index.for_node(node.metadata.name):
        if is_relevant(resource_slice, node, features):
            _add_slice(pools, resource_slice)
    result = []
    for pool in pools.values():
        if _settle_completeness(pool, index.by_pool[(pool.driver, pool.name)], features):
            if not pool.incomplete:
                _check_validity(pool, features)  # Only complete pools are judged, like upstream.
            result.append(pool)
    index.pools_cache[key] = sort_pools(result) if variant.sorted_pools else input_order(result, index)
    return index.pools_cache[key]


def sort_pools(pools: list[Pool]) -> list[Pool]:
    """(driver, pool) in byte order; pools with binding conditions last; slices by name."""
    for pool in pools:
        pool.device_slices.sort(key=lambda s: s.metadata.name.encode())
    return sorted(pools, key=lambda p: (p.has_binding_conditions, p.driver.encode(), p.name.encode()))


def input_order(pools: list[Pool], index: SliceIndex) -> list[Pool]:
    """Slices as the input lists them, pools by their first slice in the input.

    Upstream's stable variant keeps the slices of a pool in input order but visits the pools in Go
    map order, which differs from call to call; input order is one of those orders, and the one
    the results of the stable variant are reported for (see :mod:`dratwin.allocator.order`)."""
    for pool in pools:
        pool.device_slices.sort(key=lambda s: index.position[id(s)])
    return sorted(pools, key=lambda p: min(index.position[id(s)] for s in p.slices))


def is_relevant(resource_slice: ResourceSlice, node: Node, features: Features) -> bool:
    spec = resource_slice.spec
    if not features.partitionable_devices and (spec.per_device_node_selection is not None or spec.shared_counters):
        return False
    if spec.shared_counters:
        return True  # Counter sets belong to the whole pool, whatever node they name.
    if spec.node_name or spec.all_nodes or spec.node_selector is not None:
        return _matches(node, resource_slice, spec.node_name, spec.all_nodes, spec)
    if spec.per_device_node_selection:
        return any(_matches(node, resource_slice, d.node_name, d.all_nodes, d) for d in spec.devices)
    return False  # No node selection known to us: a future extension, ignored like upstream.


def _matches(
    node: Node, resource_slice: ResourceSlice, name: str | None, all_nodes: bool | None, holder: object
) -> bool:
    try:
        return node_matches(node, name, all_nodes, getattr(holder, "node_selector", None))
    except AllocationError as error:
        raise AllocationError(f"node selection of ResourceSlice {resource_slice.metadata.name}: {error}") from error


def _add_slice(pools: dict[tuple[str, str], Pool], resource_slice: ResourceSlice) -> None:
    spec = resource_slice.spec
    key = (spec.driver, spec.pool.name)
    pool = pools.get(key)
    if pool is None or spec.pool.generation > pool.generation:
        pools[key] = pool = Pool(spec.driver, spec.pool.name, spec.pool.generation)
    elif spec.pool.generation < pool.generation:
        return  # Outdated.
    pool.slices.append(resource_slice)


def _settle_completeness(pool: Pool, in_pool: Sequence[ResourceSlice], features: Features) -> bool:
    """Mark the pool incomplete if slices are missing; False when the pool is obsolete (ignore it).

    ``in_pool`` is every slice of the pool in the cluster, whichever node it names."""
    expected = pool.slices[0].spec.pool.resource_slice_count
    newer_exists = any(s.spec.pool.generation > pool.generation for s in in_pool)
    if newer_exists and len(pool.slices) != expected:
        return False  # Being replaced by a newer generation that has nothing for this node.
    current = [s for s in in_pool if s.spec.pool.generation == pool.generation]
    pool.incomplete = len(pool.slices) != expected and len(current) != expected
    relevant_ids = {id(s) for s in pool.slices}
    for resource_slice in pool.slices:
        if resource_slice.spec.shared_counters:
            continue
        pool.device_slices.append(resource_slice)
        if any(d.binding_conditions for d in resource_slice.spec.devices):
            pool.has_binding_conditions = True
    pool.other_device_slices = [s for s in current if id(s) not in relevant_ids and not s.spec.shared_counters]
    for resource_slice in current if features.partitionable_devices else ():
        for counter_set in resource_slice.spec.shared_counters:
            if counter_set.name in pool.counter_sets:
                pool.invalid_reason = f"duplicate counter set name {counter_set.name}"
            pool.counter_sets.setdefault(counter_set.name, counter_set)
    return True


def _check_validity(pool: Pool, features: Features) -> None:
    if pool.invalid_reason:
        return
    seen: set[str] = set()
    for resource_slice in pool.device_slices:
        for device in resource_slice.spec.devices:
            if device.name in seen:
                pool.invalid_reason = f"duplicate device name {device.name}"
                return
            seen.add(device.name)
    if not features.partitionable_devices:
        return  # Counter sets are ignored, and devices that consume counters are skipped.
    for resource_slice in (*pool.device_slices, *pool.other_device_slices):
        for device in resource_slice.spec.devices:
            for consumption in device.consumes_counters:
                counter_set = pool.counter_sets.get(consumption.counter_set)
                if counter_set is None:
                    pool.invalid_reason = (
                        f"device {device.name} consumes counters from unknown counter set {consumption.counter_set}"
                    )
                    return
                unknown = sorted(set(consumption.counters) - set(counter_set.counters))
                if unknown:
                    pool.invalid_reason = (
                        f"device {device.name} consumes unknown counter {unknown[0]} "
                        f"of counter set {consumption.counter_set}"
                    )
                    return

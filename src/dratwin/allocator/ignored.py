"""Slices whose devices the allocator does not consider for a node, and why, in words for people.

The allocator skips some slices without an error: a pool that is invalid, incomplete or being
replaced, a slice that mixes devices and counter sets, a slice with no node selection at all, or
partitionable-device slices while that feature is off. A node whose devices all sit in such slices
looks empty to the allocator; these messages say which slice it is and what is wrong with it.
"""

from __future__ import annotations

from dratwin.allocator.features import Features
from dratwin.allocator.pools import Pool, SliceIndex, is_relevant
from dratwin.api.core import Node
from dratwin.api.resource import ResourceSlice

NOT_CONSIDERED = "its devices are not considered"


def ignored_slices(index: SliceIndex, node: Node, features: Features, pools: list[Pool]) -> list[str]:
    """One message per slice with devices that could serve ``node`` but are not considered."""
    by_pool = {(p.driver, p.name): p for p in pools}
    messages: list[str] = []
    for resource_slice in index.for_node(node.metadata.name):
        if not resource_slice.spec.devices:
            continue
        message = _why_ignored(resource_slice, node, features, by_pool.get(_pool_key(resource_slice)))
        if message and message not in messages:
            messages.append(message)
    return messages


def _why_ignored(resource_slice: ResourceSlice, node: Node, features: Features, pool: Pool | None) -> str:
    spec = resource_slice.spec
    where = f"slice {resource_slice.metadata.name} of pool {spec.driver}/{spec.pool.name}"
    if not features.partitionable_devices and (spec.per_device_node_selection is not None or spec.shared_counters):
        return (
            f"{where} uses perDeviceNodeSelection or sharedCounters, which the allocator ignores while "
            f"DRAPartitionableDevices is off; {NOT_CONSIDERED}"
        )
    if spec.shared_counters:
        return (
            f"{where} has both devices and sharedCounters (since Kubernetes 1.35 a slice holds one or the other): "
            f"the allocator reads only its counter sets; {NOT_CONSIDERED}"
        )
    selection = spec.node_name or spec.all_nodes or spec.node_selector is not None or spec.per_device_node_selection
    if not selection:
        return (
            f"{where} sets none of nodeName, nodeSelector, allNodes and perDeviceNodeSelection: the allocator "
            f"skips it as a kind of slice it does not know; {NOT_CONSIDERED}"
        )
    if not is_relevant(resource_slice, node, features):
        return ""
    if pool is None or spec.pool.generation < pool.generation:
        return f"{where} is outdated (generation {spec.pool.generation}): a newer generation exists; {NOT_CONSIDERED}"
    if pool.incomplete:
        return (
            f"{where} belongs to an incomplete pool (not all of its {spec.pool.resource_slice_count} slices are "
            f"published; the driver may be updating it); {NOT_CONSIDERED}"
        )
    if pool.invalid:
        return f"{where} is invalid: {pool.invalid_reason}; {NOT_CONSIDERED}"
    return ""


def _pool_key(resource_slice: ResourceSlice) -> tuple[str, str]:
    return (resource_slice.spec.driver, resource_slice.spec.pool.name)

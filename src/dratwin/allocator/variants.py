"""Upstream's three allocator implementations, and which one Kubernetes 1.36 runs for a set of features.

``k8s.io/dynamic-resource-allocation`` v0.36.2 keeps three independent copies of the allocator,
``stable``, ``incubating`` and ``experimental``. ``NewAllocator`` tries them in that order and takes
the first whose supported features include every enabled one. What each copy does differently is
collected here as flags of one :class:`Variant`, so that the search, the pool gathering and the
result building each ask one question instead of testing feature combinations themselves.

Differences between the 1.36 copies (read in their sources):

- pool and slice order: ``incubating`` and ``experimental`` sort pools by (driver, pool name) with
  pools that have devices with binding conditions last, and a pool's slices by name. ``stable``
  visits pools in Go map order, which is random on every call, and keeps slices in input order.
  dratwin visits them in input order (first appearance) and, where it matters, says so;
- search: ``incubating`` and ``experimental`` try the next device of a request only after the one
  chosen before it (combinations); ``stable`` starts every device of a request from the first
  device again (permutations: the same answers, more steps);
- consumable capacity: ``stable`` does not know capacity requests and ignores them;
  ``incubating`` and ``experimental`` refuse them with an error while DRAConsumableCapacity is off;
- CEL: ``stable`` does not pass ``allowMultipleAllocations`` to selectors, so
  ``device.allowMultipleAllocations`` is always false there;
- constraints: ``distinctAttribute`` is unknown to ``stable`` ("empty constraint");
- node selector: ``bindsToNode`` pins the allocation to the node only outside ``stable``;
- list-type attributes (sets in constraints, ``includes()``): ``experimental`` only.

Binding conditions, admin access, taints, counters and the 32-results limit behave alike where a
copy supports the feature at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from dratwin.allocator.features import Features

STABLE, INCUBATING, EXPERIMENTAL = "stable", "incubating", "experimental"


@dataclass(frozen=True)
class Variant:
    """How one of upstream's allocator copies behaves where the copies differ."""

    name: str
    supports: frozenset[str]  # allocator features (upstream's Features fields) the copy implements
    sorted_pools: bool  # pools by (driver, pool), binding-condition pools last, slices by name
    combinations: bool  # a request's next device is searched after the previous one, not from the start
    refuses_capacity_requests: bool  # capacity requests while DRAConsumableCapacity is off are an error
    distinct_attribute: bool  # distinctAttribute constraints are known
    cel_sees_multiple_allocations: bool  # device.allowMultipleAllocations carries the device's value
    binds_to_node: bool  # a device with bindsToNode pins the allocation to the node


_COMMON = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
_INCUBATING = _COMMON | {"DeviceBindingAndStatus", "ConsumableCapacity"}

VARIANTS = (
    Variant(STABLE, _COMMON, False, False, False, False, False, False),
    Variant(INCUBATING, _INCUBATING, True, True, True, True, True, True),
    Variant(EXPERIMENTAL, _INCUBATING | {"ListTypeAttributes"}, True, True, True, True, True, True),
)


def enabled_features(features: Features) -> frozenset[str]:
    """The allocator features that are on, named like upstream's ``structured.Features`` fields."""
    flags = {
        "AdminAccess": features.admin_access,
        "PrioritizedList": features.prioritized_list,
        "PartitionableDevices": features.partitionable_devices,
        "DeviceTaints": features.device_taints,
        "DeviceBindingAndStatus": features.binding_conditions,
        "ConsumableCapacity": features.consumable_capacity,
        "ListTypeAttributes": features.list_type_attributes,
    }
    return frozenset(name for name, on in flags.items() if on)


@functools.lru_cache(maxsize=64)
def select_variant(features: Features, allowed: tuple[str, ...] = ()) -> Variant:
    """The first copy (stable, incubating, experimental) that supports every enabled feature.

    ``allowed`` limits the choice to some copies, as upstream's tests do with ``EnableAllocators``
    (empty: all of them)."""
    wanted = enabled_features(features)
    for variant in VARIANTS:
        if allowed and variant.name not in allowed:
            continue
        if wanted <= variant.supports:
            return variant
    names = ", ".join(allowed) if allowed else "any"
    raise ValueError(f"no allocator variant ({names}) supports the features {', '.join(sorted(wanted))}")

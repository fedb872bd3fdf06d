"""What a case exercises, read from the case itself (not from how it was generated).

:func:`coverage` names every allocator feature a case touches (``incomplete-pool``,
``first-available``, ``cel-runtime-error``, ...); the differential run prints the counts over all
its cases, and the generator's tests assert that each feature is covered often enough.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from dratwin.differential.casefile import Case, variant_for
from dratwin.differential.gen_claims import MULTI_ALLOCATION_SELECTOR, RUNTIME_ERROR_SELECTORS

Wire = Mapping[str, Any]

# Every tag coverage() can give, besides feature:* and variant:*.
TAGS = (
    "several-nodes", "several-drivers", "several-pools", "several-slices", "incomplete-pool",
    "invalid-pool-duplicate-device", "invalid-pool-unknown-counter-set", "several-generations",
    "slice-node-selector", "slice-all-nodes", "per-device-node-selection", "exact-count", "all-mode",
    "several-requests", "several-claims", "first-available", "match-attribute", "distinct-attribute",
    "cel-selector", "cel-runtime-error", "cel-allow-multiple-allocations", "admin-access", "device-taints",
    "tolerations", "shared-counters", "consumes-counters", "same-pool-name-two-drivers",
    "same-pool-name-two-drivers-counters", "multi-allocatable", "capacity-request", "capacity-request-policy",
    "binding-conditions", "binds-to-node", "allocated-state", "allocated-admin-access", "allocated-shared",
    "class-config", "claim-config", "list-type-attributes", "unknown-class",
)


def coverage(case: Case) -> set[str]:
    objects = case.get("objects") or []
    slices = [o for o in objects if o.get("kind") == "ResourceSlice"]
    classes = [o for o in objects if o.get("kind") == "DeviceClass"]
    claims = [o for o in objects if o.get("kind") == "ResourceClaim"]
    features = case.get("features") or []
    tags = {f"feature:{name}" for name in features} | {f"variant:{variant_for(features)}"}
    if sum(o.get("kind") == "Node" for o in objects) > 1:
        tags.add("several-nodes")
    tags |= _slice_tags(slices)
    tags |= _selector_tags([*classes, *claims])
    to_allocate = [c for c in claims if c["metadata"]["name"] in set(case.get("allocate") or [])]
    tags |= _claim_tags(to_allocate, {c["metadata"]["name"] for c in classes})
    tags |= _allocated_tags([c for c in claims if (c.get("status") or {}).get("allocation")])
    if any((c.get("spec") or {}).get("config") for c in classes):
        tags.add("class-config")
    return tags


def count(cases: Iterable[Case]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for case in cases:
        counts.update(coverage(case))
    return counts


def _slice_tags(slices: list[Wire]) -> set[str]:
    tags: set[str] = set()
    pools: dict[tuple[str, str], list[Wire]] = {}
    for resource_slice in slices:
        spec = resource_slice.get("spec") or {}
        pools.setdefault((spec.get("driver", ""), spec.get("pool", {}).get("name", "")), []).append(spec)
        tags |= _targeting_tags(spec)
        tags |= _device_tags(spec.get("devices") or [])
        if spec.get("sharedCounters"):
            tags.add("shared-counters")
    drivers = {driver for driver, _ in pools}
    if len(drivers) > 1:
        tags.add("several-drivers")
    if any(sum(d == driver for d, _ in pools) > 1 for driver in drivers):
        tags.add("several-pools")
    for specs in pools.values():
        tags |= _pool_tags(specs)
    tags |= _shared_pool_name_tags(pools)
    return tags


def _targeting_tags(spec: Wire) -> set[str]:
    tags = set()
    if spec.get("nodeSelector"):
        tags.add("slice-node-selector")
    if spec.get("allNodes"):
        tags.add("slice-all-nodes")
    if spec.get("perDeviceNodeSelection"):
        tags.add("per-device-node-selection")
    return tags


def _device_tags(devices: list[Wire]) -> set[str]:
    tags = set()
    for device in devices:
        checks = {
            "device-taints": device.get("taints"),
            "consumes-counters": device.get("consumesCounters"),
            "multi-allocatable": device.get("allowMultipleAllocations"),
            "binding-conditions": device.get("bindingConditions"),
            "binds-to-node": device.get("bindsToNode"),
            "capacity-request-policy": any(c.get("requestPolicy") for c in (device.get("capacity") or {}).values()),
            "list-type-attributes": any(
                set(a) & {"ints", "bools", "strings", "versions"} for a in (device.get("attributes") or {}).values()
            ),
        }
        tags |= {tag for tag, present in checks.items() if present}
    return tags


def _pool_tags(specs: list[Wire]) -> set[str]:
    tags = set()
    generations = {s.get("pool", {}).get("generation", 0) for s in specs}
    if len(generations) > 1:
        tags.add("several-generations")
    newest = [s for s in specs if s.get("pool", {}).get("generation", 0) == max(generations)]
    if len(newest) > 1:
        tags.add("several-slices")
    if any(s.get("pool", {}).get("resourceSliceCount", 0) > len(newest) for s in newest):
        tags.add("incomplete-pool")
    names = [d.get("name") for s in newest for d in s.get("devices") or []]
    if len(names) != len(set(names)):
        tags.add("invalid-pool-duplicate-device")
    counter_sets = {c.get("name") for s in newest for c in s.get("sharedCounters") or []}
    devices = [d for s in newest for d in s.get("devices") or []]
    consumed = {c.get("counterSet") for d in devices for c in d.get("consumesCounters") or []}
    if consumed - counter_sets:
        tags.add("invalid-pool-unknown-counter-set")
    return tags


def _shared_pool_name_tags(pools: Mapping[tuple[str, str], list[Wire]]) -> set[str]:
    tags = set()
    by_name: dict[str, set[str]] = {}
    for driver, name in pools:
        by_name.setdefault(name, set()).add(driver)
    for name, drivers in by_name.items():
        if len(drivers) > 1:
            tags.add("same-pool-name-two-drivers")
            if sum(any(s.get("sharedCounters") for s in pools[(d, name)]) for d in drivers) > 1:
                tags.add("same-pool-name-two-drivers-counters")
    return tags


def _expressions(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        cel = value.get("cel")
        if isinstance(cel, Mapping) and isinstance(cel.get("expression"), str):
            yield cel["expression"]
        for item in value.values():
            yield from _expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _expressions(item)


def _selector_tags(objects: list[Wire]) -> set[str]:
    expressions = {e for o in objects for e in _expressions(o.get("spec") or {})}
    tags = set()
    if expressions:
        tags.add("cel-selector")
    if expressions & set(RUNTIME_ERROR_SELECTORS):
        tags.add("cel-runtime-error")
    if MULTI_ALLOCATION_SELECTOR in expressions:
        tags.add("cel-allow-multiple-allocations")
    return tags


def _requests_of(request: Wire) -> list[Wire]:
    return list(request.get("firstAvailable") or [request.get("exactly") or {}])


def _claim_tags(claims: list[Wire], class_names: set[str]) -> set[str]:
    tags = {"several-claims"} if len(claims) > 1 else set()
    for claim in claims:
        devices = (claim.get("spec") or {}).get("devices") or {}
        requests = devices.get("requests") or []
        if len(requests) > 1:
            tags.add("several-requests")
        if any(r.get("firstAvailable") for r in requests):
            tags.add("first-available")
        for constraint in devices.get("constraints") or []:
            tags |= {tag for key, tag in (("matchAttribute", "match-attribute"),
                                          ("distinctAttribute", "distinct-attribute")) if constraint.get(key)}
        if devices.get("config"):
            tags.add("claim-config")
        for request in (r for top in requests for r in _requests_of(top)):
            tags.add("all-mode" if request.get("allocationMode") == "All" else "exact-count")
            checks = {
                "admin-access": request.get("adminAccess"),
                "tolerations": request.get("tolerations"),
                "capacity-request": request.get("capacity"),
                "unknown-class": request.get("deviceClassName") not in class_names,
            }
            tags |= {tag for tag, present in checks.items() if present}
    return tags


def _allocated_tags(claims: list[Wire]) -> set[str]:
    tags = {"allocated-state"} if claims else set()
    for claim in claims:
        for result in claim["status"]["allocation"].get("devices", {}).get("results") or []:
            if result.get("adminAccess"):
                tags.add("allocated-admin-access")
            if result.get("shareID"):
                tags.add("allocated-shared")
    return tags

"""Random DeviceClasses, claims to allocate and already-allocated claims for the case generator.

Selectors come from three tables: ones that are safe on every device, ones that fail at run time on
some devices (a missing attribute, a type mismatch: upstream then returns an error), and one that
only compiles in the consumable-capacity CEL environment (``device.allowMultipleAllocations``).
"""

from __future__ import annotations

import random
from typing import Any

from dratwin.differential.gen_slices import DeviceRef
from dratwin.differential.themes import Themes

Wire = dict[str, Any]

SAFE_SELECTORS = (
    'device.driver == "driver-b"',
    '"model" in device.attributes["driver-a"] && device.attributes["driver-a"].model == "h100"',
    '"mem" in device.attributes["driver-a"] && device.attributes["driver-a"].mem >= 40',
    '"model" in device.attributes["driver-b"] && device.attributes["driver-b"].model != "l4"',
    '"healthy" in device.attributes["driver-a"] && device.attributes["driver-a"].healthy',
    '"memory" in device.capacity["driver-a"] && device.capacity["driver-a"].memory.compareTo(quantity("8Gi")) >= 0',
    '"driverVersion" in device.attributes["driver-a"] && '
    'device.attributes["driver-a"].driverVersion.isGreaterThan(semver("1.0.0"))',
    '"pcieRoot" in device.attributes["resource.kubernetes.io"]',
)
# Each of these fails on some devices: a missing attribute or capacity, or a type mismatch.
RUNTIME_ERROR_SELECTORS = (
    'device.attributes["driver-a"].mem > 16',
    'device.attributes["driver-a"].model == "h100" || device.driver == "driver-b"',
    'device.capacity["driver-a"].memory.isGreaterThan(quantity("4Gi"))',
    'device.attributes["dra.example.com"].numa == 0',
    'device.attributes["driver-a"].model > 3',
)
# Compiles only where the CEL environment has device.allowMultipleAllocations (consumable capacity).
MULTI_ALLOCATION_SELECTOR = "device.allowMultipleAllocations"
CONSTRAINT_ATTRIBUTES = (
    "driver-a/model",
    "driver-b/model",
    "driver-a/mem",
    "resource.kubernetes.io/pcieRoot",
    "dra.example.com/numa",
)
TOLERATIONS = (
    {"key": "example.com/t1", "operator": "Exists"},
    {"key": "example.com/t2", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
    {"operator": "Exists"},
    {"key": "example.com/t1", "operator": "Exists", "effect": "NoExecute"},
)


def device_classes(rng: random.Random, themes: Themes) -> list[Wire]:
    classes = [
        _device_class("class-a", ['device.driver == "driver-a"']),
        _device_class("class-b", ['device.driver == "driver-b"']),
        _device_class("class-any", []),
        _device_class("class-sel", [_selector_text(rng, themes)]),
    ]
    if themes.config:
        config = [{"opaque": {"driver": "driver-a", "parameters": {"source": "class", "mode": rng.choice("xy")}}}]
        classes.append(_device_class("class-cfg", ['device.driver == "driver-a"'], config))
    if themes.shared:
        classes.append(_device_class("class-multi", [MULTI_ALLOCATION_SELECTOR]))
    return classes


def _device_class(name: str, expressions: list[str], config: list[Wire] | None = None) -> Wire:
    spec: Wire = {"selectors": [{"cel": {"expression": e}} for e in expressions]} if expressions else {}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def _selector_text(rng: random.Random, themes: Themes) -> str:
    if themes.cel_errors and rng.random() < 0.5:
        return rng.choice(RUNTIME_ERROR_SELECTORS)
    return rng.choice(SAFE_SELECTORS)


def claims_to_allocate(rng: random.Random, themes: Themes, classes: list[Wire]) -> list[Wire]:
    count = rng.choices((1, 2, 3), weights=(6, 3, 1))[0]
    names = [c["metadata"]["name"] for c in classes]
    return [_claim(rng, themes, f"claim-{index}", names) for index in range(count)]


def _claim(rng: random.Random, themes: Themes, name: str, classes: list[str]) -> Wire:
    requests = [_request(rng, themes, f"req-{i}", classes) for i in range(rng.choices((1, 2, 3), (5, 3, 2))[0])]
    devices: Wire = {"requests": requests}
    if themes.constraints and rng.random() < 0.7:
        devices["constraints"] = [_constraint(rng, requests) for _ in range(rng.choice((1, 1, 2)))]
    if themes.config and rng.random() < 0.6:
        devices["config"] = [_claim_config(rng, requests)]
    return _resource_claim(name, {"devices": devices})


def _resource_claim(name: str, spec: Wire, status: Wire | None = None) -> Wire:
    claim: Wire = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if status is not None:
        claim["status"] = status
    return claim


def _request(rng: random.Random, themes: Themes, name: str, classes: list[str]) -> Wire:
    if themes.prioritized and rng.random() < 0.5:
        subrequests = [
            {"name": f"sub-{i}", **_device_request(rng, themes, classes, admin=False)}
            for i in range(rng.randint(2, 3))
        ]
        return {"name": name, "firstAvailable": subrequests}
    return {"name": name, "exactly": _device_request(rng, themes, classes, admin=True)}


def _device_request(rng: random.Random, themes: Themes, classes: list[str], *, admin: bool) -> Wire:
    request: Wire = {"deviceClassName": _class_name(rng, themes, classes)}
    if rng.random() < 0.35:
        request["selectors"] = [{"cel": {"expression": _selector_text(rng, themes)}} for _ in range(rng.randint(1, 2))]
    request.update(_allocation_mode(rng))
    if admin and themes.admin and rng.random() < 0.4:
        request["adminAccess"] = True
    if themes.taints and rng.random() < 0.5:
        request["tolerations"] = [dict(rng.choice(TOLERATIONS))]
    if themes.shared and rng.random() < 0.5:
        request["capacity"] = {"requests": _capacity_requests(rng)}
    return request


def _class_name(rng: random.Random, themes: Themes, classes: list[str]) -> str:
    if themes.broken and rng.random() < 0.05:
        return rng.choice(("class-missing", ""))
    return rng.choice(classes)


def _allocation_mode(rng: random.Random) -> Wire:
    draw = rng.random()
    if draw < 0.15:
        return {"allocationMode": "All"}
    if draw < 0.3:
        # The API server's defaults, written out: the allocator itself does not default (it calls an
        # empty mode unsupported), and every stored claim has them.
        return {"allocationMode": "ExactCount", "count": 1}
    return {"allocationMode": "ExactCount", "count": rng.choice((1, 1, 2, 3))}


def _capacity_requests(rng: random.Random) -> Wire:
    requests: Wire = {"memory": rng.choice(("1Gi", "2Gi", "3Gi", "10Gi"))}
    if rng.random() < 0.3:
        requests["dra.example.com/cores"] = rng.choice(("2", "4"))
    return requests


def _request_names(request: Wire, rng: random.Random) -> str:
    """A request's name, or now and then one of its subrequests' (``req-0/sub-1``)."""
    subrequests = request.get("firstAvailable")
    if subrequests and rng.random() < 0.3:
        return f"{request['name']}/{rng.choice(subrequests)['name']}"
    return str(request["name"])


def _constraint(rng: random.Random, requests: list[Wire]) -> Wire:
    kind = "matchAttribute" if rng.random() < 0.6 else "distinctAttribute"
    constraint: Wire = {kind: rng.choice(CONSTRAINT_ATTRIBUTES)}
    if len(requests) > 1 and rng.random() < 0.5:
        chosen = rng.sample(requests, rng.randint(1, len(requests)))
        constraint["requests"] = [_request_names(r, rng) for r in chosen]
    return constraint


def _claim_config(rng: random.Random, requests: list[Wire]) -> Wire:
    config: Wire = {"opaque": {"driver": rng.choice(("driver-a", "driver-b")), "parameters": {"source": "claim"}}}
    if rng.random() < 0.5:
        config["requests"] = [_request_names(r, rng) for r in rng.sample(requests, 1)]
    return config


def allocated_claims(rng: random.Random, themes: Themes, devices: list[DeviceRef]) -> list[Wire]:
    """Claims with status.allocation whose devices are in use (or shared, or admin-access)."""
    if not devices:
        return []
    claims = []
    for index in range(rng.randint(1, 3)):
        results = [_allocated_result(rng, themes, rng.choice(devices)) for _ in range(rng.choice((1, 1, 2)))]
        spec = {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "class-any"}}]}}
        status = {"allocation": {"devices": {"results": results}}}
        claims.append(_resource_claim(f"allocated-claim-{index}", spec, status))
    return claims


def _allocated_result(rng: random.Random, themes: Themes, device: DeviceRef) -> Wire:
    result: Wire = {"request": "req-0", "driver": device.driver, "pool": device.pool, "device": device.device}
    if themes.admin and rng.random() < 0.3:
        result["adminAccess"] = True
    elif device.multi_allocatable and rng.random() < 0.7:
        result["shareID"] = _uid(rng)
        if "memory" in device.capacity:
            result["consumedCapacity"] = {"memory": rng.choice(("1Gi", "2Gi", "4Gi"))}
    return result


def _uid(rng: random.Random) -> str:
    digits = f"{rng.getrandbits(128):032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"

"""Small builders for allocator tests: Kubernetes-shaped dicts in, msgspec API structs out.

    node("n1", labels={"zone": "a"})
    device_class("gpu", "device.driver == 'gpu.example.com'", config=[("gpu.example.com", {"mode": "x"})])
    resource_slice("s1", "gpu.example.com", "pool-1", node_name="n1", devices=[
        device("d0", attributes={"model": "a100", "numa": 0}, capacity={"memory": "40Gi"}),
    ])
    claim("c0").request("gpu", device_class="gpu", count=2).match_attribute("gpu.example.com/numa").build()

Python values become typed attributes (bool, int, str; a dict such as ``{"version": "1.2.3"}`` is kept as
written); quantities become ``{"value": q}`` unless given as a dict (with a ``requestPolicy``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import msgspec

from dratwin.api.core import Node
from dratwin.api.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice

T = TypeVar("T")
Wire = dict[str, Any]


def convert(data: Mapping[str, Any], kind: type[T]) -> T:
    return msgspec.convert(data, kind, strict=False)


def wire(obj: Any) -> Any:
    """The object as plain builtins, the way it would be written as JSON."""
    return msgspec.to_builtins(obj)


def _drop_none(data: Mapping[str, Any]) -> Wire:
    return {k: v for k, v in data.items() if v is not None}


def _selectors(expressions: Iterable[str]) -> list[Wire]:
    return [{"cel": {"expression": e}} for e in expressions]


def _attribute(value: Any) -> Wire:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str):
        return {"string": value}
    raise TypeError(f"no attribute type for {value!r}")


def _quantity(value: Any) -> Wire:
    return dict(value) if isinstance(value, Mapping) else {"value": str(value)}


def _counters(counters: Mapping[str, Any]) -> Wire:
    return {name: _quantity(q) for name, q in counters.items()}


# ---- nodes, classes, slices --------------------------------------------------------------------


def node(name: str = "n1", labels: Mapping[str, str] | None = None) -> Node:
    return convert({"metadata": {"name": name, "labels": dict(labels or {})}}, Node)


def node_selector(*requirements: tuple[str, str, list[str]], fields: bool = False) -> Wire:
    """One-term NodeSelector (as a dict) from (key, operator, values) requirements."""
    reqs = [{"key": k, "operator": op, "values": list(v)} for k, op, v in requirements]
    return {"nodeSelectorTerms": [{"matchFields" if fields else "matchExpressions": reqs}]}


def device_class(
    name: str,
    *selectors: str,
    config: Iterable[tuple[str, Any]] = (),
) -> DeviceClass:
    data = {
        "metadata": {"name": name},
        "spec": {
            "selectors": _selectors(selectors),
            "config": [{"opaque": {"driver": d, "parameters": p}} for d, p in config],
        },
    }
    return convert(data, DeviceClass)


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Wire:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Wire:
    return _drop_none(
        {"key": key or None, "operator": operator or None, "value": value or None, "effect": effect or None}
    )


def device(
    name: str,
    attributes: Mapping[str, Any] | None = None,
    capacity: Mapping[str, Any] | None = None,
    *,
    taints: Iterable[Wire] = (),
    consumes_counters: Mapping[str, Mapping[str, Any]] | None = None,
    allow_multiple: bool | None = None,
    binding_conditions: Iterable[str] = (),
    binds_to_node: bool | None = None,
    node_name: str | None = None,
    node_selector: Wire | None = None,
    all_nodes: bool | None = None,
) -> Wire:
    """A device as a dict (it becomes part of a slice)."""
    return _drop_none(
        {
            "name": name,
            "attributes": {k: _attribute(v) for k, v in (attributes or {}).items()},
            "capacity": {k: _quantity(v) for k, v in (capacity or {}).items()},
            "taints": list(taints),
            "consumesCounters": [
                {"counterSet": s, "counters": _counters(c)} for s, c in (consumes_counters or {}).items()
            ],
            "allowMultipleAllocations": allow_multiple,
            "bindingConditions": list(binding_conditions),
            "bindsToNode": binds_to_node,
            "nodeName": node_name,
            "nodeSelector": node_selector,
            "allNodes": all_nodes,
        }
    )


def resource_slice(
    name: str,
    driver: str,
    pool: str | None = None,
    *,
    node_name: str | None = None,
    node_selector: Wire | None = None,
    all_nodes: bool | None = None,
    per_device: bool | None = None,
    devices: Iterable[Wire] = (),
    shared_counters: Mapping[str, Mapping[str, Any]] | None = None,
    generation: int = 1,
    count: int = 1,
) -> ResourceSlice:
    """A slice; the pool defaults to the node name (or the slice name), as drivers do."""
    spec = _drop_none(
        {
            "driver": driver,
            "pool": {"name": pool or node_name or name, "generation": generation, "resourceSliceCount": count},
            "nodeName": node_name,
            "nodeSelector": node_selector,
            "allNodes": all_nodes,
            "perDeviceNodeSelection": per_device,
            "devices": list(devices),
            "sharedCounters": [{"name": s, "counters": _counters(c)} for s, c in (shared_counters or {}).items()],
        }
    )
    return convert({"metadata": {"name": name}, "spec": spec}, ResourceSlice)


# ---- claims ------------------------------------------------------------------------------------


def _exact(
    device_class: str,
    count: int | None,
    mode: str | None,
    selectors: Iterable[str],
    tolerations: Iterable[Wire] | None,
    capacity: Mapping[str, Any] | None,
) -> Wire:
    return _drop_none(
        {
            "deviceClassName": device_class,
            "allocationMode": mode,
            "count": count,
            "selectors": _selectors(selectors),
            "tolerations": list(tolerations) if tolerations is not None else None,
            "capacity": {"requests": {k: str(v) for k, v in capacity.items()}} if capacity is not None else None,
        }
    )


def subrequest(
    name: str,
    device_class: str,
    count: int | None = None,
    *,
    mode: str | None = None,
    selectors: Iterable[str] = (),
    tolerations: Iterable[Wire] | None = None,
    capacity: Mapping[str, Any] | None = None,
) -> Wire:
    return {"name": name, **_exact(device_class, count, mode, selectors, tolerations, capacity)}


def result(request: str, driver: str, pool: str, device: str, **extra: Any) -> Wire:
    """A DeviceRequestAllocationResult as written in the API (extra keys in camelCase: adminAccess=True)."""
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


class ClaimBuilder:
    def __init__(self, name: str, namespace: str) -> None:
        self._meta: Wire = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
        self._requests: list[Wire] = []
        self._constraints: list[Wire] = []
        self._config: list[Wire] = []
        self._allocation: Wire | None = None

    def request(
        self,
        name: str,
        device_class: str,
        count: int | None = None,
        *,
        mode: str | None = None,
        selectors: Iterable[str] = (),
        admin: bool | None = None,
        tolerations: Iterable[Wire] | None = None,
        capacity: Mapping[str, Any] | None = None,
    ) -> ClaimBuilder:
        exactly = _exact(device_class, count, mode, selectors, tolerations, capacity)
        if admin is not None:
            exactly["adminAccess"] = admin
        self._requests.append({"name": name, "exactly": exactly})
        return self

    def first_available(self, name: str, *subrequests: Wire) -> ClaimBuilder:
        self._requests.append({"name": name, "firstAvailable": list(subrequests)})
        return self

    def match_attribute(self, attribute: str, *requests: str) -> ClaimBuilder:
        self._constraints.append({"requests": list(requests), "matchAttribute": attribute})
        return self

    def distinct_attribute(self, attribute: str, *requests: str) -> ClaimBuilder:
        self._constraints.append({"requests": list(requests), "distinctAttribute": attribute})
        return self

    def config(self, driver: str, parameters: Any, *requests: str) -> ClaimBuilder:
        self._config.append({"requests": list(requests), "opaque": {"driver": driver, "parameters": parameters}})
        return self

    def allocated(self, *results: Wire, node_selector: Wire | None = None) -> ClaimBuilder:
        """Mark the claim allocated with these results (see ``result``)."""
        self._allocation = _drop_none({"devices": {"results": list(results)}, "nodeSelector": node_selector})
        return self

    def build(self) -> ResourceClaim:
        data: Wire = {
            "metadata": self._meta,
            "spec": {"devices": {"requests": self._requests, "constraints": self._constraints, "config": self._config}},
        }
        if self._allocation is not None:
            data["status"] = {"allocation": self._allocation}
        return convert(data, ResourceClaim)


def claim(name: str, namespace: str = "default") -> ClaimBuilder:
    return ClaimBuilder(name, namespace)


def allocation(data: Mapping[str, Any]) -> AllocationResult:
    return convert(data, AllocationResult)


def answer(
    outcome: str = "allocated",
    claims: Mapping[str, Iterable[Wire]] | None = None,
    *,
    config: Mapping[str, list[Wire]] | None = None,
    node_selector: Wire | None = None,
    error: str = "",
) -> Wire:
    """An allocator answer as ``dratwin allocate -o json`` prints it: ``claims`` maps a claim name (in
    namespace default) to its device results (see ``result``); ``config`` per claim name."""
    body: Wire = {"result": outcome}
    if error:
        body["error"] = error
    if claims is not None:
        body["allocations"] = {
            f"default/{name}": _drop_none({
                "devices": _drop_none({"results": list(results), "config": (config or {}).get(name)}),
                "nodeSelector": node_selector,
            })
            for name, results in claims.items()
        }
    return body


__all__ = [
    "ClaimBuilder",
    "allocation",
    "answer",
    "claim",
    "convert",
    "device",
    "device_class",
    "node",
    "node_selector",
    "resource_slice",
    "result",
    "subrequest",
    "taint",
    "toleration",
    "wire",
]

"""Older versions of resource.k8s.io, converted to v1 as the 1.36 API server converts them.

A 1.36 API server stores resource.k8s.io objects as v1 and converts every other version it serves on the
way in (``pkg/apis/resource/v1beta1`` and ``v1beta2`` of kubernetes/kubernetes, through the internal
version). dratwin reads v1, so it converts the same way, as a pure function from raw dict to raw dict:

- **v1beta2** has exactly the fields of v1 (v1 was copied from it): only ``apiVersion`` changes.
- **v1beta1** differs in two places. A request wrote its fields flat (``deviceClassName``, ``selectors``,
  ``allocationMode``, ``count``, ``adminAccess``, ``tolerations``, ``capacity``); v1 has them under
  ``exactly``. The API server moves them there whenever any of them is set (``firstAvailable`` stays
  where it is; a request with both is left for validation to refuse). A device of a ResourceSlice wrapped
  its fields in ``basic``; v1 has them on the device. And the slice's ``nodeName`` and ``allNodes`` were
  plain values, where v1 has optional ones: ``""`` and ``false`` become absent.
- Defaulting runs on the version written, before conversion. v1beta1 defaults a request's
  ``allocationMode``/``count`` only when it names a device class, v1 always; where that differs the
  request has no class and is invalid either way, so nothing is defaulted here (dratwin reads v1 defaults
  where it needs them, as for objects written as v1).

Fields dratwin does not know (metadata, annotations, status, unknown fields) are kept as they are. Every
move is recorded, so that a problem found in the v1 object points at the line the user wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.loader import FieldPath

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
CONVERTED_VERSIONS = (f"{GROUP}/v1beta1", f"{GROUP}/v1beta2")
CONVERTED_KINDS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"})

# resource.k8s.io/v1beta1 DeviceRequest fields that v1 keeps in ExactDeviceRequest (conversion.go's
# hasAnyMainRequestFieldsSet), in the order v1 declares them.
FLAT_REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                       "capacity")


@dataclass
class Conversion:
    """A v1 object made from an older version, and where each moved field was written."""

    raw: dict[str, Any]
    from_version: str
    moved: dict[FieldPath, FieldPath] = field(default_factory=dict)  # v1 path → the path as written

    def original_path(self, path: FieldPath) -> FieldPath:
        """Where the user wrote the field that is at ``path`` in the v1 object."""
        for end in range(len(path), 0, -1):
            written = self.moved.get(path[:end])
            if written is not None:
                return written + path[end:]
        return path


def needs_conversion(raw: Mapping[str, Any]) -> bool:
    return raw.get("apiVersion") in CONVERTED_VERSIONS and raw.get("kind") in CONVERTED_KINDS


def convert_to_v1(raw: Mapping[str, Any]) -> Conversion:
    """The v1 form of a resource.k8s.io v1beta1/v1beta2 object; ``raw`` is not changed.

    Only the mappings and lists on the way to a changed field are copied; the rest (device attributes,
    metadata, status) is shared with ``raw``, which is what makes a dump of 100,000 devices cheap to convert.
    """
    version = str(raw.get("apiVersion"))
    out = dict(raw)
    out["apiVersion"] = V1
    conversion = Conversion(out, version)
    if version.endswith("/v1beta1"):
        _from_v1beta1(out, str(raw.get("kind")), conversion)
    return conversion


def _own(parent: dict[str, Any], key: str) -> Any:
    """``parent[key]``, replaced by a shallow copy of itself when it is a mapping or a list (copy on write)."""
    value = parent.get(key)
    if isinstance(value, dict | list):
        value = copy.copy(value)
        parent[key] = value
    return value


def _from_v1beta1(out: dict[str, Any], kind: str, conversion: Conversion) -> None:
    spec = _own(out, "spec")
    if not isinstance(spec, dict):
        return
    if kind == "ResourceClaim":
        _claim_spec(spec, ("spec",), conversion)
    elif kind == "ResourceClaimTemplate" and isinstance(spec.get("spec"), dict):
        _claim_spec(_own(spec, "spec"), ("spec", "spec"), conversion)
    elif kind == "ResourceSlice":
        _slice_spec(spec, conversion)


def _claim_spec(spec: dict[str, Any], path: FieldPath, conversion: Conversion) -> None:
    devices = _own(spec, "devices")
    requests = _own(devices, "requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return
    for index, request in enumerate(requests):
        if isinstance(request, dict):
            requests[index] = request = dict(request)
            _request(request, (*path, "devices", "requests", index), conversion)


def _is_set(name: str, value: Any) -> bool:
    """conversion.go's test per field: Go's zero value (empty string, 0, nil) is "not set"."""
    if value is None:
        return False
    if name in ("deviceClassName", "allocationMode"):
        return bool(value != "")
    if name == "count":
        return bool(value != 0)
    return True  # selectors, tolerations (a non-nil list, even empty), adminAccess, capacity (non-nil)


def _request(request: dict[str, Any], path: FieldPath, conversion: Conversion) -> None:
    if not any(_is_set(name, request.get(name)) for name in FLAT_REQUEST_FIELDS):
        for name in FLAT_REQUEST_FIELDS:
            request.pop(name, None)
        return
    exactly: dict[str, Any] = {}
    for name in FLAT_REQUEST_FIELDS:
        if name not in request:
            continue
        value = request.pop(name)
        if _is_set(name, value) and value != []:  # v1 omits empty lists
            exactly[name] = value
            conversion.moved[(*path, "exactly", name)] = (*path, name)
    rebuilt = {"name": request.pop("name")} if "name" in request else {}
    rebuilt["exactly"] = exactly
    rebuilt.update(request)
    request.clear()
    request.update(rebuilt)
    conversion.moved[(*path, "exactly")] = path


def _slice_spec(spec: dict[str, Any], conversion: Conversion) -> None:
    if spec.get("nodeName") == "":
        del spec["nodeName"]
    if spec.get("allNodes") is False:
        del spec["allNodes"]
    devices = _own(spec, "devices")
    if not isinstance(devices, list):
        return
    for index, device in enumerate(devices):
        if isinstance(device, dict) and "basic" in device:
            devices[index] = device = dict(device)
            _basic_device(device, ("spec", "devices", index), conversion)


def _basic_device(device: dict[str, Any], path: FieldPath, conversion: Conversion) -> None:
    basic = device.pop("basic")
    if not isinstance(basic, dict):
        if basic is not None:
            device["basic"] = basic  # not an object: left for the structural check to report
        return
    rebuilt = {"name": device.pop("name")} if "name" in device else {}
    for name, value in basic.items():
        if value is None or value == {} or value == []:
            continue  # v1 omits what the device left empty
        rebuilt[name] = value
        conversion.moved[(*path, name)] = (*path, "basic", name)
    rebuilt.update(device)
    device.clear()
    device.update(rebuilt)

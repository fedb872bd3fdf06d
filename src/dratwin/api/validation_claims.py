"""API rules of DeviceClass, ResourceClaim and ResourceClaimTemplate specs (resource.k8s.io/v1, 1.36).

Follows ``pkg/apis/resource/validation`` after v1 defaulting (allocationMode defaults to ExactCount, a
count of 0 or none to 1), with dratwin's own wording and hints. CEL selectors are compiled with the
compiler given to the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dratwin.api.codec import MapKey
from dratwin.api.driver_configs import check_driver_config
from dratwin.api.driver_shapes import known_shapes
from dratwin.api.loader import FieldPath
from dratwin.api.resource import (
    CapacityRequirements,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    OpaqueDeviceConfiguration,
)
from dratwin.api.validation_base import Context, ProblemKind, Reporter
from dratwin.api.validation_core import validate_name
from dratwin.api.validation_formats import (
    did_you_mean,
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    label_key,
    label_value,
    resource_qualified_name,
)
from dratwin.errors import CelCompileError

MAX_REQUESTS = 32  # also the most devices one claim can be allocated (AllocationResultsMaxSize)
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_TOLERATIONS = 16
CEL_MAX_LENGTH = 10 * 1024
OPAQUE_MAX_BYTES = 10 * 1024
ALLOCATION_MODES = ["All", "ExactCount"]
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]
TOLERATION_OPERATORS = ["Equal", "Exists"]

RequestNames = dict[str, set[str] | None]  # request name -> subrequest names (None for `exactly`)

_AnyRequest = ExactDeviceRequest | DeviceSubRequest


def validate_device_class(rep: Reporter, ctx: Context, device_class: DeviceClass) -> None:
    spec = device_class.spec
    validate_selectors(rep, ctx, spec.selectors, ("spec", "selectors"))
    if len(spec.config) > MAX_CONFIGS:
        rep.too_many(("spec", "config"), len(spec.config), MAX_CONFIGS)
    else:
        for i, config in enumerate(spec.config):
            validate_opaque(rep, config.opaque, ("spec", "config", i, "opaque"))
    name = spec.extended_resource_name
    if name is not None:
        _validate_extended_resource_name(rep, name, ("spec", "extendedResourceName"))


def _validate_extended_resource_name(rep: Reporter, name: str, path: FieldPath) -> None:
    domain = name.partition("/")[0] if "/" in name else ""
    errors = label_key(name) + label_key(f"requests.{name}")
    if not domain or "kubernetes.io/" in name or name.startswith("requests."):
        errors.append("must be an extended resource name: domain/name outside kubernetes.io, such as "
                      "nvidia.com/gpu")
    rep.invalid_all(path, name, sorted(set(errors)))


def request_names(claim: DeviceClaim) -> RequestNames:
    return {
        request.name: (None if not request.first_available else {sub.name for sub in request.first_available})
        for request in claim.requests
    }


def validate_claim_spec(rep: Reporter, ctx: Context, claim: DeviceClaim, path: FieldPath) -> None:
    """``spec.devices`` of a claim (``path`` ends in ``devices``)."""
    names = request_names(claim)
    requests_path = (*path, "requests")
    if len(claim.requests) > MAX_REQUESTS:
        rep.too_many(requests_path, len(claim.requests), MAX_REQUESTS,
                     "requests (split the work into several claims; a pod may reference many)")
    else:
        seen: set[str] = set()
        for i, request in enumerate(claim.requests):
            if request.name and request.name in seen:
                rep.duplicate((*requests_path, i, "name"), request.name, "request names must be unique in a claim")
            seen.add(request.name)
            _validate_request(rep, ctx, request, (*requests_path, i))
        _check_minimum_devices(rep, claim.requests, requests_path)
    if len(claim.constraints) > MAX_CONSTRAINTS:
        rep.too_many((*path, "constraints"), len(claim.constraints), MAX_CONSTRAINTS)
    else:
        for i, constraint in enumerate(claim.constraints):
            _validate_constraint(rep, constraint, (*path, "constraints", i), names)
    if len(claim.config) > MAX_CONFIGS:
        rep.too_many((*path, "config"), len(claim.config), MAX_CONFIGS)
    else:
        for i, config in enumerate(claim.config):
            config_path = (*path, "config", i)
            _validate_request_refs(rep, config.requests, (*config_path, "requests"), names)
            validate_opaque(rep, config.opaque, (*config_path, "opaque"))


def _validate_request(rep: Reporter, ctx: Context, request: DeviceRequest, path: FieldPath) -> None:
    validate_name(rep, (*path, "name"), request.name, dns_label, "request name")
    if request.exactly is not None and request.first_available:
        rep.invalid(path, request.name, "exactly one of `exactly` or `firstAvailable` may be set, not both")
    elif request.exactly is not None:
        _validate_common(rep, ctx, request.exactly, (*path, "exactly"))
    elif request.first_available:
        subs_path = (*path, "firstAvailable")
        if len(request.first_available) > MAX_SUBREQUESTS:
            rep.too_many(subs_path, len(request.first_available), MAX_SUBREQUESTS, "subrequests")
            return
        seen: set[str] = set()
        for i, sub in enumerate(request.first_available):
            validate_name(rep, (*subs_path, i, "name"), sub.name, dns_label, "subrequest name")
            if sub.name and sub.name in seen:
                rep.duplicate((*subs_path, i, "name"), sub.name, "subrequest names must be unique in a request")
            seen.add(sub.name)
            _validate_common(rep, ctx, sub, (*subs_path, i))
    else:
        rep.required(path, "exactly one of `exactly` or `firstAvailable` is required",
                     "put deviceClassName, selectors and count under `exactly` (resource.k8s.io/v1)")


def _validate_common(rep: Reporter, ctx: Context, request: _AnyRequest, path: FieldPath) -> None:
    """The fields `exactly` and a subrequest share."""
    class_path = (*path, "deviceClassName")
    if not request.device_class_name:
        rep.required(class_path, "every request needs a DeviceClass")
    elif "/" in request.device_class_name and dns_subdomain(request.device_class_name):
        name = request.device_class_name
        rep.invalid(class_path, name, "; ".join(dns_subdomain(name)), extended_resource_hint(name, ctx))
    else:
        validate_name(rep, class_path, request.device_class_name, dns_subdomain, "class name")
    validate_selectors(rep, ctx, request.selectors, (*path, "selectors"))
    _validate_allocation_mode(rep, request.allocation_mode, request.count, path)
    tolerations_path = (*path, "tolerations")
    if len(request.tolerations) > MAX_TOLERATIONS:
        rep.too_many(tolerations_path, len(request.tolerations), MAX_TOLERATIONS)
    else:
        for i, toleration in enumerate(request.tolerations):
            validate_toleration(rep, toleration, (*tolerations_path, i))
    if request.capacity is not None:
        _validate_capacity_requests(rep, request.capacity, (*path, "capacity", "requests"))


def _validate_allocation_mode(rep: Reporter, mode: str | None, count: int | None, path: FieldPath) -> None:
    mode_path, count_path = (*path, "allocationMode"), (*path, "count")
    if mode == "All":
        if count:
            rep.invalid(count_path, count, "must not be set when allocationMode is All",
                        "remove count, or use allocationMode ExactCount")
    elif mode in (None, "", "ExactCount"):
        if count is not None and count < 0:
            rep.invalid(count_path, count, "must be at least 1")
        elif count == 0:
            rep.warn(ProblemKind.INVALID, count_path, "count 0 is defaulted to 1 by the API server",
                     "write the number of devices wanted, at least 1")
    else:
        rep.unsupported(mode_path, mode, ALLOCATION_MODES)


def _check_minimum_devices(rep: Reporter, requests: Sequence[DeviceRequest], path: FieldPath) -> None:
    """The allocator refuses a claim whose requests need more than 32 devices in any case."""
    total = 0
    for request in requests:
        if request.exactly is not None:
            total += _minimum(request.exactly)
        elif request.first_available:
            total += min(_minimum(sub) for sub in request.first_available)
    if total > MAX_REQUESTS:
        rep.add(ProblemKind.TOO_MANY, path, f"the requests need at least {total} devices, but one claim can be "
                f"allocated at most {MAX_REQUESTS}", total, "split the devices over several claims")


def _minimum(request: _AnyRequest) -> int:
    if request.allocation_mode == "All":
        return 0
    return max(request.count or 1, 1)


def validate_selectors(rep: Reporter, ctx: Context, selectors: Sequence[DeviceSelector], path: FieldPath) -> None:
    if len(selectors) > MAX_SELECTORS:
        rep.too_many(path, len(selectors), MAX_SELECTORS, "selectors (join conditions with &&)")
        return
    for i, selector in enumerate(selectors):
        if selector.cel is None:
            rep.required((*path, i, "cel"), "a selector needs a CEL expression", _selector_example(path))
        else:
            validate_cel(rep, ctx, selector.cel.expression, (*path, i, "cel", "expression"))


def _selector_example(path: FieldPath) -> str:
    """A class picks the devices of a driver; a request narrows its class's devices down."""
    if path[:2] == ("spec", "selectors"):
        return ('a DeviceClass usually selects its driver\'s devices: '
                'cel: {expression: "device.driver == \\"gpu.example.com\\""}')
    return ('a request narrows down its class\'s devices, e.g. cel: {expression: '
            '"device.capacity[\\"gpu.example.com\\"].memory.compareTo(quantity(\\"40Gi\\")) >= 0"}')


def extended_resource_hint(name: str, ctx: Context) -> str:
    """For an extended resource name written as deviceClassName: the class that serves it, or what to do."""
    shapes = known_shapes()
    in_input = ctx.extended_resources.get(name)
    container = f"or request {name} in the container's resources"
    if in_input is not None:
        return (f"{name} is the extended resource name of DeviceClass {in_input}; use deviceClassName: {in_input}, "
                f"{container}")
    known = shapes.extended_resources.get(name)
    if known is not None:
        driver = shapes.class_drivers.get(known, known)
        return (f"{name} is the extended resource name of DeviceClass {known} (created by the chart of the {driver} "
                f"DRA driver); use deviceClassName: {known}, {container}")
    plugin_class = shapes.device_plugin_resources.get(name)
    if plugin_class is not None:
        return (f"{name} is a device plugin's extended resource, not a DeviceClass; with the DRA driver use "
                f"deviceClassName: {plugin_class}, {container} to use the device plugin")
    return f"{name} looks like an extended resource name, not a DeviceClass: name a DeviceClass here, {container}"


# Fields of a claim's request (and of a claim) that people write into a DeviceClass.
_CLAIM_FIELDS = frozenset({"deviceClassName", "count", "allocationMode", "adminAccess", "tolerations", "capacity",
                           "requests", "devices", "exactly", "firstAvailable", "constraints"})


def class_field_hint(kind: str, path: FieldPath) -> str:
    """A DeviceClass field that belongs to a claim: say where it goes, instead of a did-you-mean."""
    if kind != "DeviceClass" or len(path) < 2 or path[0] != "spec":
        return ""
    name = str(path[-1])
    if len(path) == 4 and path[1] == "config" and name == "requests":
        return ("a DeviceClass's config applies to every device allocated through the class; only a claim's "
                "config names requests")
    if len(path) == 2 and name in _CLAIM_FIELDS:
        return (f"{name} belongs to a ResourceClaim (spec.devices.requests[].exactly.{name} or spec.devices.{name}); "
                "a DeviceClass has only selectors, config and extendedResourceName")
    return ""


def validate_cel(rep: Reporter, ctx: Context, expression: str, path: FieldPath) -> None:
    if not expression.strip():
        rep.required(path, "the CEL expression must not be empty")
        return
    if len(expression) > CEL_MAX_LENGTH:
        rep.too_long(path, CEL_MAX_LENGTH, len(expression), "bytes")
        return
    if ctx.compiler is None:
        return
    if expression not in ctx.cel_results:
        try:
            ctx.compiler.compile(expression)
            ctx.cel_results[expression] = None
        except Exception as failure:  # a CelCompileError, or a compiler bug that must not hide other problems
            ctx.cel_results[expression] = failure
    result = ctx.cel_results[expression]
    if result is None:
        ctx.selectors.append((rep, path, expression))
    if isinstance(result, CelCompileError):
        where = f" (line {result.line}, column {result.column} of the expression)" if result.line else ""
        rep.invalid(path, expression, f"does not compile: {result.message}{where}", result.hint)
    elif result is not None:
        rep.warn(ProblemKind.NOT_CHECKED, path, f"dratwin could not compile this expression: "
                 f"{type(result).__name__}: {result}")


def validate_toleration(rep: Reporter, toleration: DeviceToleration, path: FieldPath) -> None:
    if toleration.key:
        rep.invalid_all((*path, "key"), toleration.key, label_key(toleration.key))
    operator = toleration.operator or "Equal"  # the API server defaults an empty operator to Equal
    if operator == "Exists":
        if toleration.value:
            rep.invalid((*path, "value"), toleration.value, "must be empty when operator is Exists",
                        "remove the value, or use operator Equal")
    elif operator == "Equal":
        rep.invalid_all((*path, "value"), toleration.value, label_value(toleration.value))
    else:
        rep.unsupported((*path, "operator"), operator, TOLERATION_OPERATORS)
    if toleration.effect and toleration.effect not in TAINT_EFFECTS:
        rep.unsupported((*path, "effect"), toleration.effect, TAINT_EFFECTS)


def _validate_capacity_requests(rep: Reporter, capacity: CapacityRequirements, path: FieldPath) -> None:
    for name, value in capacity.requests.items():
        rep.invalid_all((*path, MapKey(name)), name, resource_qualified_name(name))
        rep.quantity((*path, MapKey(name)), value)


def _validate_constraint(rep: Reporter, constraint: DeviceConstraint, path: FieldPath, names: RequestNames) -> None:
    _validate_request_refs(rep, constraint.requests, (*path, "requests"), names)
    match, distinct = constraint.match_attribute, constraint.distinct_attribute
    if match is not None and distinct is not None:
        rep.invalid(path, match, "exactly one of matchAttribute or distinctAttribute may be set, not both")
    elif match is None and distinct is None:
        rep.required(path, "a constraint needs matchAttribute (or distinctAttribute)",
                     "e.g. matchAttribute: resource.kubernetes.io/pcieRoot")
    for field, value in (("matchAttribute", match), ("distinctAttribute", distinct)):
        if value is not None:
            rep.invalid_all((*path, field), value, fully_qualified_name(value))


def _validate_request_refs(rep: Reporter, refs: Sequence[str], path: FieldPath, names: RequestNames) -> None:
    if len(refs) > MAX_REQUESTS:
        rep.too_many(path, len(refs), MAX_REQUESTS)
        return
    valid = set(names) | {f"{r}/{s}" for r, subs in names.items() for s in subs or ()}
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        if ref in seen:
            rep.duplicate((*path, i), ref)
        seen.add(ref)
        segments = ref.split("/")
        if len(segments) > 2:
            rep.invalid((*path, i), ref, "must be a request name or request/subrequest (at most one '/')")
            continue
        messages = [m for s in segments for m in dns_label(s)]
        if not messages and ref not in valid:
            listed = ", ".join(sorted(valid)) or "none"
            messages = [f"must name a request of this claim, or request/subrequest (has: {listed})"]
        rep.invalid_all((*path, i), ref, messages, did_you_mean(ref, valid) if ref not in valid else "")


def validate_opaque(rep: Reporter, opaque: OpaqueDeviceConfiguration | None, path: FieldPath) -> None:
    if opaque is None:
        rep.required(path, "a config entry needs `opaque` (driver and parameters)")
        return
    if not opaque.driver:
        rep.required((*path, "driver"), "the driver that reads these parameters, e.g. gpu.nvidia.com")
    else:
        rep.invalid_all((*path, "driver"), opaque.driver, driver_name(opaque.driver))
    params_path = (*path, "parameters")
    if opaque.parameters is None:
        rep.required(params_path, "the driver's configuration object")
    elif not isinstance(opaque.parameters, dict):
        shown = opaque.parameters if isinstance(opaque.parameters, str | int | float | bool) else "<a list>"
        rep.invalid(params_path, shown, "must be a JSON object (usually with apiVersion and kind)")
    else:
        size = len(json.dumps(opaque.parameters, separators=(",", ":"), default=str))
        if size > OPAQUE_MAX_BYTES:
            rep.too_long(params_path, OPAQUE_MAX_BYTES, size, "bytes")
        else:
            check_driver_config(rep, opaque, path)

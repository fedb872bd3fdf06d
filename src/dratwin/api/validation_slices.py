"""API rules of one ResourceSlice (resource.k8s.io/v1, 1.36); rules across the slices of a pool are in
:mod:`dratwin.api.validation_pools`."""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.api.codec import MapKey
from dratwin.api.loader import FieldPath
from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    CapacityRequestPolicy,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    ResourcePool,
    ResourceSliceSpec,
)
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_claims import TAINT_EFFECTS
from dratwin.api.validation_core import validate_name, validate_node_selector
from dratwin.api.validation_formats import (
    DNS_SUBDOMAIN_MAX,
    dns_label,
    dns_subdomain,
    driver_name,
    label_key,
    label_value,
    resource_qualified_name,
    semver,
    suggest_semver,
)

MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64  # when any device uses taints, consumesCounters or list attributes
MAX_COUNTER_SETS = 8
MAX_COUNTERS = 32
MAX_CONSUMPTIONS = 2
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
MAX_VALUE_LENGTH = 64
MAX_TAINTS = 16
MAX_BINDING_CONDITIONS = 4
MAX_VALID_VALUES = 10


def validate_slice_spec(rep: Reporter, spec: ResourceSliceSpec) -> None:
    path: FieldPath = ("spec",)
    if not spec.driver:
        rep.required((*path, "driver"), "the name of the DRA driver, e.g. gpu.nvidia.com")
    else:
        rep.invalid_all((*path, "driver"), spec.driver, driver_name(spec.driver))
    _validate_pool(rep, spec.pool, (*path, "pool"))
    _validate_node_selection(rep, spec, path)
    if spec.devices and spec.shared_counters:
        rep.invalid(path, "", "only one of `sharedCounters` and `devices` may be set in a slice (since 1.35)",
                    "publish the counter sets in their own slice of the same pool")
    _validate_devices(rep, spec, (*path, "devices"))
    _validate_counter_sets(rep, spec.shared_counters, (*path, "sharedCounters"))


def _validate_pool(rep: Reporter, pool: ResourcePool, path: FieldPath) -> None:
    name_path = (*path, "name")
    if not pool.name:
        rep.required(name_path, "the pool name, usually the node name")
    elif len(pool.name) > DNS_SUBDOMAIN_MAX:
        rep.too_long(name_path, DNS_SUBDOMAIN_MAX, len(pool.name))
    else:
        rep.invalid_all(name_path, pool.name, sorted({m for part in pool.name.split("/") for m in dns_subdomain(part)}))
    if pool.resource_slice_count <= 0:
        rep.invalid((*path, "resourceSliceCount"), pool.resource_slice_count,
                    "must be greater than zero: the number of slices in this pool at this generation")
    if pool.generation < 0:
        rep.invalid((*path, "generation"), pool.generation, "must be zero or greater")


def _validate_node_selection(rep: Reporter, spec: ResourceSliceSpec, path: FieldPath) -> None:
    chosen: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            chosen.append("nodeName")
            rep.invalid_all((*path, "nodeName"), spec.node_name, dns_subdomain(spec.node_name))
        else:
            rep.invalid((*path, "nodeName"), "", "must be unset or a node name")
    if spec.node_selector is not None:
        chosen.append("nodeSelector")
        validate_node_selector(rep, spec.node_selector, (*path, "nodeSelector"), single_term=True)
    for field, flag in (("allNodes", spec.all_nodes), ("perDeviceNodeSelection", spec.per_device_node_selection)):
        if flag:
            chosen.append(field)
        elif flag is not None:
            rep.invalid((*path, field), flag, "must be unset or true")
    if not chosen:
        rep.required(path, "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is required",
                     "nodeName for devices of one node, allNodes: true for devices every node can reach")
    elif len(chosen) > 1:
        rep.invalid(path, "{" + ", ".join(chosen) + "}", "exactly one of nodeName, nodeSelector, allNodes, "
                    "perDeviceNodeSelection may be set")


def uses_advanced_features(devices: Sequence[Device]) -> bool:
    """Taints, counter consumption or list attributes: then a slice holds at most 64 devices."""
    return any(
        d.taints or d.consumes_counters or any(_is_list(a) for a in d.attributes.values()) for d in devices
    )


def _is_list(attribute: DeviceAttribute) -> bool:
    return any(v is not None for v in (attribute.ints, attribute.bools, attribute.strings, attribute.versions))


def _validate_devices(rep: Reporter, spec: ResourceSliceSpec, path: FieldPath) -> None:
    advanced = uses_advanced_features(spec.devices)
    limit = MAX_DEVICES_ADVANCED if advanced else MAX_DEVICES
    if len(spec.devices) > limit:
        why = " (64 when any device uses taints, consumesCounters or list attributes)" if advanced else ""
        rep.too_many(path, len(spec.devices), limit, f"devices{why}")
        return
    seen: set[str] = set()
    for i, device in enumerate(spec.devices):
        if device.name and device.name in seen:
            rep.duplicate((*path, i, "name"), device.name, "device names must be unique in the pool")
        seen.add(device.name)
        _validate_device(rep, device, (*path, i), bool(spec.per_device_node_selection))


def _validate_device(rep: Reporter, device: Device, path: FieldPath, per_device: bool) -> None:
    validate_name(rep, (*path, "name"), device.name, dns_label, "device name")
    entries = len(device.attributes) + len(device.capacity)
    if entries > MAX_ATTRIBUTES_AND_CAPACITIES:
        rep.too_many(path, entries, MAX_ATTRIBUTES_AND_CAPACITIES, "attributes and capacities together")
    values = sum(_value_count(a) for a in device.attributes.values())
    if values > MAX_ATTRIBUTE_VALUES:
        rep.too_many(path, values, MAX_ATTRIBUTE_VALUES, "attribute values (list elements count one each)")
    for name, attribute in device.attributes.items():
        key_path = (*path, "attributes", MapKey(name))
        rep.invalid_all(key_path, name, resource_qualified_name(name))
        _validate_attribute(rep, attribute, key_path)
    multi = bool(device.allow_multiple_allocations)
    for name, capacity in device.capacity.items():
        key_path = (*path, "capacity", MapKey(name))
        rep.invalid_all(key_path, name, resource_qualified_name(name))
        _validate_capacity(rep, capacity, key_path, multi)
    if len(device.taints) > MAX_TAINTS:
        rep.too_many((*path, "taints"), len(device.taints), MAX_TAINTS)
    else:
        for i, taint in enumerate(device.taints):
            validate_taint(rep, taint, (*path, "taints", i))
    _validate_consumptions(rep, device.consumes_counters, (*path, "consumesCounters"))
    _validate_device_node_selection(rep, device, path, per_device)
    _validate_binding_conditions(rep, device, path)


def _value_count(attribute: DeviceAttribute) -> int:
    lists = [v for v in (attribute.ints, attribute.bools, attribute.strings, attribute.versions) if v]
    return sum(len(v) for v in lists) if lists else 1


def _validate_attribute(rep: Reporter, attribute: DeviceAttribute, path: FieldPath) -> None:
    members = {
        "int": attribute.int_value, "bool": attribute.bool_value, "string": attribute.string,
        "version": attribute.version, "ints": attribute.ints, "bools": attribute.bools,
        "strings": attribute.strings, "versions": attribute.versions,
    }
    present = [name for name, value in members.items() if value is not None]
    if len(present) != 1:
        message = "has no value" if not present else f"has several values ({', '.join(present)})"
        rep.invalid(path, "", f"{message}: exactly one of int, bool, string or version must be set",
                    "e.g. {string: \"H100\"} or {version: \"1.2.3\"}")
    if attribute.string is not None:
        _check_length(rep, (*path, "string"), attribute.string)
    if attribute.version is not None:
        _check_version(rep, (*path, "version"), attribute.version)
    for name in ("ints", "bools", "strings", "versions"):
        items = members[name]
        if isinstance(items, list) and not items:
            rep.invalid((*path, name), [], "must not be empty when set")
    for i, text in enumerate(attribute.strings or ()):
        _check_length(rep, (*path, "strings", i), text)
    for i, text in enumerate(attribute.versions or ()):
        _check_version(rep, (*path, "versions", i), text)


def _check_length(rep: Reporter, path: FieldPath, text: str) -> None:
    if len(text.encode()) > MAX_VALUE_LENGTH:
        rep.too_long(path, MAX_VALUE_LENGTH, len(text.encode()), "bytes")


def _check_version(rep: Reporter, path: FieldPath, text: str) -> None:
    fixed = suggest_semver(text)
    rep.invalid_all(path, text, semver(text), f'try "{fixed}"' if fixed else "")
    _check_length(rep, path, text)


def _validate_capacity(rep: Reporter, capacity: DeviceCapacity, path: FieldPath, multi: bool) -> None:
    value = rep.quantity((*path, "value"), capacity.value)
    policy = capacity.request_policy
    if policy is None:
        return
    if not multi:
        rep.forbidden((*path, "requestPolicy"), "only devices with allowMultipleAllocations: true may have a "
                      "requestPolicy", "set allowMultipleAllocations: true on the device, or remove the policy")
    elif value is not None:
        _validate_request_policy(rep, policy, value, (*path, "requestPolicy"))


def _validate_request_policy(rep: Reporter, policy: CapacityRequestPolicy, capacity: Quantity, path: FieldPath) -> None:
    if policy.valid_values and policy.valid_range is not None:
        rep.forbidden(path, "only one of validValues and validRange may be set")
        return
    if not policy.valid_values and policy.valid_range is None:
        if policy.default is not None:
            rep.quantity((*path, "default"), policy.default)
        return
    which = "validValues" if policy.valid_values else "validRange"
    if policy.default is None:
        rep.required((*path, "default"), f"required when {which} is set")
        return
    default = rep.quantity((*path, "default"), policy.default)
    if default is None:
        return
    if policy.valid_values:
        _validate_valid_values(rep, policy.valid_values, default, capacity, (*path, "validValues"))
    else:
        _validate_range(rep, policy, default, capacity, (*path, "validRange"))


def _validate_valid_values(
    rep: Reporter, raw: Sequence[str | int | float], default: Quantity, capacity: Quantity, path: FieldPath
) -> None:
    if len(raw) > MAX_VALID_VALUES:
        rep.too_many(path, len(raw), MAX_VALID_VALUES)
        return
    values = [rep.quantity((*path, i), v) for i, v in enumerate(raw)]
    parsed = [v for v in values if v is not None]
    for i in range(1, len(values)):
        before, this = values[i - 1], values[i]
        if before is not None and this is not None and this < before:
            rep.invalid((*path, i), str(this), "values must be sorted in ascending order")
        if this is not None and this in values[:i]:
            rep.duplicate((*path, i), str(this))
    for i, v in enumerate(values):
        if v is not None and v > capacity:
            rep.invalid((*path, i), str(v), f"is larger than the capacity value {capacity}")
    if len(parsed) == len(values) and default not in parsed:
        rep.invalid(path, str(default), "the default must be one of the validValues")


def _validate_range(
    rep: Reporter, policy: CapacityRequestPolicy, default: Quantity, capacity: Quantity, path: FieldPath
) -> None:
    assert policy.valid_range is not None
    valid_range = policy.valid_range
    if valid_range.min is None:
        rep.required((*path, "min"), "required when validRange is set")
        return
    low = rep.quantity((*path, "min"), valid_range.min)
    high = rep.quantity((*path, "max"), valid_range.max) if valid_range.max is not None else None
    step = rep.quantity((*path, "step"), valid_range.step) if valid_range.step is not None else None
    if low is None:
        return
    if low > capacity:
        rep.invalid((*path, "min"), str(low), f"is larger than the capacity value {capacity}")
    if default < low:
        rep.invalid((*path, "default"), str(default), f"is less than min {low}")
    if high is not None:
        if low > high:
            rep.invalid((*path, "max"), str(high), f"is less than min {low}")
        if high > capacity:
            rep.invalid((*path, "max"), str(high), f"is larger than the capacity value {capacity}")
        if default > high:
            rep.invalid((*path, "default"), str(default), f"is more than max {high}")
    if step is None:
        return
    if step.sign() <= 0:
        rep.invalid((*path, "step"), str(step), "must be greater than zero")
        return
    if low + step > capacity:
        rep.invalid((*path, "step"), str(step), f"one step above min ({low + step}) is larger than the capacity "
                    f"value {capacity}")
    for name, value in (("default", default), ("max", high)):
        if value is not None and ((value - low).value / step.value).denominator != 1:
            rep.invalid((*path, "step"), str(value), f"{name} {value} is not min {low} plus a multiple of step {step}")


def validate_taint(rep: Reporter, taint: DeviceTaint, path: FieldPath) -> None:
    rep.invalid_all((*path, "key"), taint.key, label_key(taint.key))
    if taint.value:
        rep.invalid_all((*path, "value"), taint.value, label_value(taint.value))
    if not taint.effect:
        rep.required((*path, "effect"), "one of " + ", ".join(TAINT_EFFECTS))
    elif taint.effect not in TAINT_EFFECTS:
        rep.unsupported((*path, "effect"), taint.effect, TAINT_EFFECTS)


def _validate_consumptions(rep: Reporter, consumptions: Sequence[DeviceCounterConsumption], path: FieldPath) -> None:
    if len(consumptions) > MAX_CONSUMPTIONS:
        rep.too_many(path, len(consumptions), MAX_CONSUMPTIONS, "counter sets per device")
        return
    seen: set[str] = set()
    for i, consumption in enumerate(consumptions):
        if consumption.counter_set in seen:
            rep.duplicate((*path, i, "counterSet"), consumption.counter_set, "list each counter set once")
        seen.add(consumption.counter_set)
        validate_name(rep, (*path, i, "counterSet"), consumption.counter_set, dns_label, "counter set name")
        _validate_counters(rep, consumption.counters, (*path, i, "counters"))


def _validate_counter_sets(rep: Reporter, sets: Sequence[CounterSet], path: FieldPath) -> None:
    if len(sets) > MAX_COUNTER_SETS:
        rep.too_many(path, len(sets), MAX_COUNTER_SETS, "counter sets")
        return
    seen: set[str] = set()
    for i, counter_set in enumerate(sets):
        if counter_set.name in seen:
            rep.duplicate((*path, i, "name"), counter_set.name, "counter set names must be unique in the pool")
        seen.add(counter_set.name)
        validate_name(rep, (*path, i, "name"), counter_set.name, dns_label, "counter set name")
        _validate_counters(rep, counter_set.counters, (*path, i, "counters"))


def _validate_counters(rep: Reporter, counters: dict[str, Counter], path: FieldPath) -> None:
    if not counters:
        rep.required(path, "at least one counter")
    elif len(counters) > MAX_COUNTERS:
        rep.too_many(path, len(counters), MAX_COUNTERS, "counters")
        return
    for name, counter in counters.items():
        rep.invalid_all((*path, MapKey(name)), name, dns_label(name))
        rep.quantity((*path, MapKey(name), "value"), counter.value)


def _validate_device_node_selection(rep: Reporter, device: Device, path: FieldPath, per_device: bool) -> None:
    chosen = [f for f, v in (("nodeName", device.node_name), ("nodeSelector", device.node_selector),
                             ("allNodes", device.all_nodes)) if v is not None]
    if not per_device:
        if chosen:
            rep.invalid((*path, chosen[0]), None, "nodeName, nodeSelector and allNodes of a device may only be set "
                        "when the slice has perDeviceNodeSelection: true")
        return
    if device.node_name is not None:
        if device.node_name:
            rep.invalid_all((*path, "nodeName"), device.node_name, dns_subdomain(device.node_name))
        else:
            rep.invalid((*path, "nodeName"), "", "must not be empty")
    if device.node_selector is not None:
        validate_node_selector(rep, device.node_selector, (*path, "nodeSelector"), single_term=False)
    if device.all_nodes is False:
        rep.invalid((*path, "allNodes"), False, "must be unset or true")
    if not chosen:
        rep.required(path, "exactly one of nodeName, nodeSelector or allNodes is required on each device when the "
                     "slice has perDeviceNodeSelection: true")
    elif len(chosen) > 1:
        rep.invalid(path, "{" + ", ".join(chosen) + "}", "exactly one of nodeName, nodeSelector or allNodes may be set")


def _validate_binding_conditions(rep: Reporter, device: Device, path: FieldPath) -> None:
    conditions, failures = device.binding_conditions, device.binding_failure_conditions
    for field, items in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if len(items) > MAX_BINDING_CONDITIONS:
            rep.too_many((*path, field), len(items), MAX_BINDING_CONDITIONS)
            continue
        seen: set[str] = set()
        for i, item in enumerate(items):
            rep.invalid_all((*path, field, i), item, label_key(item))
            if item in seen:
                rep.duplicate((*path, field, i), item)
            seen.add(item)
    for i, item in enumerate(failures):
        if item in conditions:
            rep.invalid((*path, "bindingFailureConditions", i), item, "must not also be a binding condition")
    if bool(conditions) != bool(failures):
        missing = "bindingFailureConditions" if conditions else "bindingConditions"
        rep.add(ProblemKind.INVALID, (*path, missing), f"{missing} are required when the other list is set")

"""How Kueue counts DRA devices in quota (``deviceClassMappings``), at Kueue ``ff69552``.

Sources: ``pkg/dra/claims.go`` (templates, counting, CEL matching), ``pkg/dra/extended_resources.go``,
``pkg/controller/core/workload_controller.go`` handleDRA, concepts/dynamic_resource_allocation.md. Per
PodSet, for each pod claim:

- a claim named directly (``resourceClaimName``) makes the Workload inadmissible ("KueueDRAIntegration
  feature does not support use of resource claims");
- for each request of the referenced ResourceClaimTemplate: ``firstAvailable`` and ``allocationMode: All``
  are refused; ``adminAccess`` requests are skipped (no quota); an ``exactly`` request adds its count
  (default 1) to its DeviceClass; a request with CEL selectors is checked against the devices the cluster
  publishes (the class's selectors, then the request's): fewer matches than the count is inadmissible
  with "insufficient matching devices for CEL selector ...", a message distinct from a quota wait;
- each DeviceClass is charged under the name its mapping gives; an unmapped class is inadmissible
  ("DeviceClass X is not mapped in DRA configuration for podset Y");
- a class mapped with **counter** sources (partitionable devices; ``pkg/dra/counters.go``) is charged
  instead, per source, the largest amount of that counter one matching device consumes (devices matched as
  for capacity, below), times the request's count;
- a class mapped with **capacity** sources (consumable capacity, gate ``KueueDRAIntegrationConsumableCapacity``,
  alpha, off by default; ``pkg/dra/capacity.go``) is charged, per source, the largest over the matching
  devices of the source's driver (complete pools of their newest generation, the source's ``deviceSelector``,
  the class's and the request's selectors) of the request's ``capacity.requests[<name>]`` (or the device's
  ``requestPolicy.default``, or its whole capacity) rounded up to the device's ``validValues`` or
  ``validRange`` (min, step), times the request's count; fewer matching devices than the count, devices
  without that capacity, or no device whose policy allows the request make the Workload inadmissible.

Extended resources (``KueueDRAIntegrationExtendedResource``): a container request of a resource that a
DeviceClass serves (``spec.extendedResourceName``) is charged under the class's mapped name (its own name
when the class is not mapped); with no such class it stays a plain extended resource.

The messages are Kueue's field errors as its aggregate prints them (``<field>: Invalid value: null:
<detail>``), so that they read as the Workload's condition would. CEL runs in the project's environment
(:mod:`dratwin.cel`), the one the allocator twin uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from dratwin.api.core import Container
from dratwin.api.kueue import Configuration, DeviceClassMapping, DeviceSource, PodSet, Workload
from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    CapacityRequestPolicyRange,
    CELDeviceSelector,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.errors import CelCompileError, CelRuntimeError
from dratwin.scheduler.resources import is_extended_resource_name

RESOURCE_CLAIMS_MESSAGE = "KueueDRAIntegration feature does not support use of resource claims"
GATE_EXTENDED_RESOURCE = "KueueDRAIntegrationExtendedResource"
GATE_PARTITIONABLE = "KueueDRAIntegrationPartitionableDevices"
GATE_DRA = "KueueDRAIntegration"
GATE_CONSUMABLE_CAPACITY = "KueueDRAIntegrationConsumableCapacity"
# Kueue's defaults of its DRA gates (ff69552): beta and on, except consumable capacity (alpha).
DEFAULT_GATES = {GATE_DRA: True, GATE_EXTENDED_RESOURCE: True, GATE_PARTITIONABLE: True,
                 GATE_CONSUMABLE_CAPACITY: False}


@dataclass(frozen=True)
class DraInputs:
    """The cluster's DRA objects Kueue reads: templates by (namespace, name), classes, slices."""

    templates: Mapping[tuple[str, str], ResourceClaimTemplate]
    classes: Mapping[str, DeviceClass]
    slices: Sequence[ResourceSlice]
    compiler: SelectorCompiler = field(default_factory=SelectorCompiler)


@dataclass(frozen=True)
class DraUsage:
    """What DRA adds to one pod of a PodSet, and the extended resources it replaces."""

    charged: dict[str, int] = field(default_factory=dict)
    replaced: frozenset[str] = frozenset()


class _Refused(Exception):
    """One of Kueue's field errors, already worded."""


def gate(config: Configuration, name: str) -> bool:
    return config.feature_gates.get(name, DEFAULT_GATES.get(name, False))


def dra_usage(workload: Workload, config: Configuration, inputs: DraInputs) -> dict[str, DraUsage] | str:
    """Per PodSet name, what DRA charges per pod; a message when Kueue refuses the Workload."""
    if not gate(config, GATE_DRA):
        return {}
    for pod_set in workload.spec.pod_sets:
        if any(c.resource_claim_name for c in pod_set.template.spec.resource_claims):
            return RESOURCE_CLAIMS_MESSAGE
    namespace = workload.metadata.namespace or "default"
    mappings = _mapping_by_class(config.device_class_mappings)
    out: dict[str, DraUsage] = {}
    try:
        for index, pod_set in enumerate(workload.spec.pod_sets):
            charged, replaced = _pod_set(index, pod_set, namespace, config, mappings, inputs)
            if charged or replaced:
                out[pod_set.name] = DraUsage(charged, frozenset(replaced))
    except _Refused as refused:
        return str(refused)
    return out


def _mapping_by_class(mappings: Sequence[DeviceClassMapping]) -> dict[str, DeviceClassMapping]:
    return {name: m for m in mappings for name in m.device_class_names}


def _pod_set(index: int, pod_set: PodSet, namespace: str, config: Configuration,
             mappings: Mapping[str, DeviceClassMapping], inputs: DraInputs) -> tuple[dict[str, int], set[str]]:
    charged: dict[str, int] = {}
    replaced: set[str] = set()
    base = f"spec.podSets[{index}].template.spec"
    for j, pod_claim in enumerate(pod_set.template.spec.resource_claims):
        name = pod_claim.resource_claim_template_name
        if not name:
            continue
        path = f"{base}.resourceClaims[{j}]"
        template = inputs.templates.get((namespace, name))
        if template is None:
            raise _Refused(f"{path}: Internal error: failed to get claim spec for ResourceClaimTemplate {name} in "
                           f'podset {pod_set.name}: resourceclaimtemplates.resource.k8s.io "{name}" not found')
        for k, request in enumerate(template.spec.spec.devices.requests):
            where = f"{path}.devices.requests[{k}]"
            for logical, amount in _request_charge(request, where, name, pod_set.name, config, mappings, inputs):
                charged[logical] = charged.get(logical, 0) + amount
    if gate(config, GATE_EXTENDED_RESOURCE):
        _extended_resources(pod_set, mappings, inputs, charged, replaced)
    return charged, replaced


def _request_charge(request: DeviceRequest, where: str, template: str, pod_set: str, config: Configuration,
                    mappings: Mapping[str, DeviceClassMapping], inputs: DraInputs) -> Iterator[tuple[str, int]]:
    def refuse(field_path: str, value: str, detail: str) -> _Refused:
        return _Refused(f"{field_path}: Invalid value: {value}: ResourceClaimTemplate {template}: {detail}")

    if request.first_available is not None:
        raise refuse(where, "null", "FirstAvailable device selection is not supported")
    exact = request.exactly
    if exact is None:
        raise refuse(where, "null", "Exactly must be set if FirstAvailable is nil")
    if exact.admin_access:
        return
    mode = exact.allocation_mode or "ExactCount"
    if mode == "All":
        raise refuse(f"{where}.exactly.allocationMode", '"All"', "AllocationMode 'All' is not supported")
    if mode != "ExactCount":
        raise refuse(f"{where}.exactly.allocationMode", f'"{mode}"', f"unsupported allocation mode: {mode}")
    class_name = exact.device_class_name
    if not class_name:
        return
    count = exact.count if exact.count is not None else 1
    mapping = mappings.get(class_name)
    if mapping is None:
        raise _Refused(f"{where.rsplit('.devices', 1)[0]}.resourceClaimTemplateName: Not found: \"DeviceClass "
                       f'{class_name} is not mapped in DRA configuration for podset {pod_set}"')
    capacities = [s.capacity for s in mapping.sources if s.capacity is not None]
    if capacities and gate(config, GATE_CONSUMABLE_CAPACITY):
        _check_cel_matches(exact, count, where, inputs, drivers=sorted({c.driver for c in capacities}))
        yield mapping.name, sum(_capacity_charge(exact, source, count, where, inputs) for source in capacities)
        return
    counters = [s.counter for s in mapping.sources if s.counter is not None]
    if counters and gate(config, GATE_PARTITIONABLE):
        _check_cel_matches(exact, count, where, inputs, drivers=sorted({c.driver for c in counters}))
        yield mapping.name, sum(_counter_charge(exact, source, count, where, inputs) for source in counters)
        return
    _check_cel_matches(exact, count, where, inputs, drivers=[None])
    yield mapping.name, count


def _check_cel_matches(exact: ExactDeviceRequest, count: int, where: str, inputs: DraInputs,
                       drivers: Sequence[str | None]) -> None:
    """``validateCELSelectorsAgainstDevices``: a request with CEL selectors needs ``count`` matching devices
    among those of ``drivers`` (None: every driver)."""
    if not any(s.cel is not None for s in exact.selectors):
        return
    matching = sum(1 for driver in drivers for _ in _matching_devices(exact, where, inputs, driver=driver))
    if matching < count:
        raise _Refused(f"{where}.exactly.selectors: Internal error: insufficient matching devices for CEL "
                       f"selector in DeviceClass {exact.device_class_name}: {matching} device(s) match in the cluster "
                       f"but {count} requested")


def _capacity_charge(exact: ExactDeviceRequest, source: DeviceSource, count: int, where: str,
                     inputs: DraInputs) -> int:
    """``processCapacityCharge`` for one capacity source: the largest rounded request × count."""
    matched = _source_devices(exact, source, where, inputs)
    if len(matched) < count:
        raise _Refused(f"{where}: Internal error: insufficient matching devices for capacity driver: "
                       f"{len(matched)} device(s) match but {count} requested")
    requested = exact.capacity.requests.get(source.name) if exact.capacity is not None else None
    explicit = Quantity.parse(requested).value if requested is not None else None
    with_dimension = [d.capacity[source.name] for d in matched if source.name in d.capacity]
    if not with_dimension:
        raise _Refused(f'{where}: Internal error: matched devices have no capacity dimension "{source.name}"')
    charges = [c for c in (_device_charge(capacity, explicit) for capacity in with_dimension) if c is not None]
    if not charges:
        raise _Refused(f"{where}: Invalid value: null: capacity request cannot be satisfied by any matched "
                       f'device\'s RequestPolicy for dimension "{source.name}"')
    return max(0, _ceil(max(charges))) * count


def _device_charge(capacity: DeviceCapacity, explicit: Fraction | None) -> Fraction | None:
    """``chargeForDevice``: the request (or the policy's default, or the whole capacity) rounded to the
    device's policy; None when the policy cannot grant it."""
    policy = capacity.request_policy
    if explicit is not None:
        base = explicit
    elif policy is not None and policy.default is not None:
        base = Quantity.parse(policy.default).value
    else:
        base = Quantity.parse(capacity.value).value
    if policy is None:
        return base
    if policy.valid_values:
        return next((v for v in (Quantity.parse(q).value for q in policy.valid_values) if v >= base), None)
    if policy.valid_range is not None:
        return _in_valid_range(base, policy.valid_range)
    return base


def _in_valid_range(base: Fraction, valid: CapacityRequestPolicyRange) -> Fraction | None:
    """``roundToValidRange``: whole units, at least min, aligned to min + n × step, at most max."""
    value = _ceil(base)
    low = _ceil(Quantity.parse(valid.min).value) if valid.min is not None else None
    if low is not None:
        value = max(value, low)
        step = _ceil(Quantity.parse(valid.step).value) if valid.step is not None else 0
        if step > 0 and (value - low) % step:
            value = low + ((value - low) // step + 1) * step
    if valid.max is not None and value > _ceil(Quantity.parse(valid.max).value):
        return None
    return Fraction(value)


def _source_devices(exact: ExactDeviceRequest, source: DeviceSource, where: str, inputs: DraInputs) -> list[Device]:
    """``matchDevicesForSource``: the devices of the source's driver, in complete pools of their newest
    generation, that its ``deviceSelector``, the DeviceClass's and the request's selectors all select."""
    cel = source.device_selector.cel if source.device_selector is not None else None
    own = [DeviceSelector(cel=CELDeviceSelector(expression=cel.expression))] if cel is not None else []
    source_selectors = _compiled(own, where, "deviceSelector CEL compilation failed", inputs)
    device_class = inputs.classes.get(exact.device_class_name)
    class_selectors = _compiled(device_class.spec.selectors if device_class else [], f"{where}.exactly.selectors",
                                f"DeviceClass {exact.device_class_name} has invalid CEL selector", inputs)
    request_selectors = _compiled(exact.selectors, f"{where}.exactly.selectors", "CEL compilation failed", inputs)
    groups = [("deviceSelector", source_selectors), ("DeviceClass selector", class_selectors),
              ("request selector", request_selectors)]
    matched: list[Device] = []
    for device in _complete_pool_devices(inputs.slices, source.driver):
        view = CelDevice.build(source.driver, device)
        if all(_selects(selectors, view, f"{where}: Internal error: CEL evaluation error in {what} for device "
                        f"{device.name}") for what, selectors in groups):
            matched.append(device)
    return matched


def _selects(selectors: Sequence[Callable[[CelDevice], bool]], view: CelDevice, failure: str) -> bool:
    try:
        return all(selector(view) for selector in selectors)
    except CelRuntimeError as error:
        raise _Refused(f"{failure}: {error}") from error


def _complete_pool_devices(slices: Sequence[ResourceSlice], driver: str) -> Iterator[Device]:
    """``groupSlicesByPool``: per pool of ``driver``, the slices of its newest generation, if all are there."""
    pools: dict[str, list[ResourceSlice]] = {}
    for resource_slice in slices:
        if resource_slice.spec.driver != driver:
            continue
        pool = pools.setdefault(resource_slice.spec.pool.name, [])
        if pool and resource_slice.spec.pool.generation < pool[0].spec.pool.generation:
            continue
        if pool and resource_slice.spec.pool.generation > pool[0].spec.pool.generation:
            pool.clear()
        pool.append(resource_slice)
    for pool_slices in pools.values():
        if len(pool_slices) == pool_slices[0].spec.pool.resource_slice_count:
            for resource_slice in pool_slices:
                yield from resource_slice.spec.devices


def _ceil(amount: Fraction) -> int:
    return -(-amount.numerator // amount.denominator)


def _counter_charge(exact: ExactDeviceRequest, source: DeviceSource, count: int, where: str,
                    inputs: DraInputs) -> int:
    """``processCounterCharge``: the largest amount of the counter one matching device consumes, × count."""
    matched = _source_devices(exact, source, where, inputs)
    if len(matched) < count:
        raise _Refused(f"{where}: Internal error: insufficient matching devices for counter driver: "
                       f"{len(matched)} device(s) match but {count} requested")
    consumed = [Quantity.parse(c.value).value for device in matched for consumption in device.consumes_counters
                for name, c in consumption.counters.items() if name == source.name]
    if not consumed:
        raise _Refused(f'{where}: Internal error: matched devices have no consumesCounters entry for counter '
                       f'"{source.name}"')
    return max(0, _ceil(max(consumed))) * count


def _matching_devices(exact: ExactDeviceRequest, where: str, inputs: DraInputs,
                      driver: str | None) -> Iterator[Device]:
    device_class = inputs.classes.get(exact.device_class_name)
    class_selectors = _compiled(device_class.spec.selectors if device_class else [], f"{where}.exactly.selectors",
                                f"DeviceClass {exact.device_class_name} has invalid CEL selector", inputs)
    request_selectors = _compiled(exact.selectors, f"{where}.exactly.selectors", "CEL compilation failed", inputs)
    for resource_slice in inputs.slices:
        if driver is not None and resource_slice.spec.driver != driver:
            continue
        for device in resource_slice.spec.devices:
            view = CelDevice.build(resource_slice.spec.driver, device)
            try:
                if all(s(view) for s in class_selectors) and all(s(view) for s in request_selectors):
                    yield device
            except CelRuntimeError as error:
                raise _Refused(f"{where}.exactly.selectors: Invalid value: null: CEL evaluation failed for "
                               f"DeviceClass {exact.device_class_name}: {error}") from error


def _compiled(selectors: Sequence[DeviceSelector], path: str, context: str,
              inputs: DraInputs) -> list[Callable[[CelDevice], bool]]:
    out: list[Callable[[CelDevice], bool]] = []
    for i, selector in enumerate(selectors):
        if selector.cel is None:
            continue
        try:
            out.append(inputs.compiler.compile(selector.cel.expression).matches)
        except CelCompileError as error:
            raise _Refused(f'{path}[{i}].cel.expression: Invalid value: "{selector.cel.expression}": {context}: '
                           f"{error}") from error
    return out


def _extended_resources(pod_set: PodSet, mappings: Mapping[str, DeviceClassMapping], inputs: DraInputs,
                        charged: dict[str, int], replaced: set[str]) -> None:
    by_resource: dict[str, list[DeviceClass]] = {}
    for device_class in inputs.classes.values():
        if device_class.spec.extended_resource_name:
            by_resource.setdefault(device_class.spec.extended_resource_name, []).append(device_class)
    if not by_resource:
        return
    summed = _extended_requests(pod_set.template.spec.containers, by_resource, max_of=False)
    peak = _extended_requests(pod_set.template.spec.init_containers, by_resource, max_of=True)
    requested = {name: max(summed.get(name, Fraction(0)), peak.get(name, Fraction(0)))
                 for name in {*summed, *peak}}
    for name, amount in sorted(requested.items()):
        # the newest class wins, then the first by name (extended_resources.go selectedDeviceClass)
        chosen = sorted(by_resource[name], key=lambda c: (_negated_time(c.metadata.creation_timestamp),
                                                          c.metadata.name))[0]
        mapping = mappings.get(chosen.metadata.name)
        key = mapping.name if mapping is not None else name
        replaced.add(name)
        charged[key] = charged.get(key, 0) - (-amount.numerator // amount.denominator)


def _extended_requests(containers: Sequence[Container], served: Mapping[str, object],
                       max_of: bool) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for container in containers:
        for name, value in container.resources.requests.items():
            amount = Quantity.parse(value).value
            if amount > 0 and is_extended_resource_name(name) and name in served:
                out[name] = max(out.get(name, Fraction(0)), amount) if max_of else out.get(name, Fraction(0)) + amount
    return out


def _negated_time(timestamp: str | None) -> str:
    # RFC 3339 sorts as text; newest first is the reverse order, so invert each character
    return "".join(chr(0x10FFFF - ord(ch)) for ch in (timestamp or ""))

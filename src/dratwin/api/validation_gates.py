"""Fields that belong to a feature gate which is switched off (``--feature-gates``).

The API server silently drops such fields when an object is created. Where dropping them leaves an
invalid object (a request without `exactly`, a constraint without attribute, an attribute without
value, a slice without node selection) it is an error, otherwise a warning: the object is accepted
but does not do what it says.
"""

from __future__ import annotations

from collections.abc import Iterator

from dratwin.api.codec import MapKey
from dratwin.api.loader import FieldPath
from dratwin.api.resource import (
    DeviceClaim,
    DeviceClass,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceSliceSpec,
)
from dratwin.api.validation_base import FeatureGatesLike, ProblemKind, Reporter, Severity

Finding = tuple[FieldPath, str, Severity]  # field, gate, how bad it is to lose the field


def check_claim_gates(rep: Reporter, gates: FeatureGatesLike, claim: DeviceClaim, path: FieldPath) -> None:
    _report(rep, gates, _claim_findings(claim, path))


def check_class_gates(rep: Reporter, gates: FeatureGatesLike, device_class: DeviceClass) -> None:
    if device_class.spec.extended_resource_name is not None:
        _report(rep, gates, [(("spec", "extendedResourceName"), "DRAExtendedResource", Severity.WARNING)])


def check_slice_gates(rep: Reporter, gates: FeatureGatesLike, spec: ResourceSliceSpec) -> None:
    _report(rep, gates, _slice_findings(spec))


_GATE_ATTRIBUTES = {
    "DRAPrioritizedList": "prioritized_list",
    "DRADeviceTaints": "device_taints",
    "DRAPartitionableDevices": "partitionable_devices",
    "DRAConsumableCapacity": "consumable_capacity",
    "DRADeviceBindingConditions": "binding_conditions",
    "DRAListTypeAttributes": "list_type_attributes",
    "DRAExtendedResource": "extended_resource",
}


def _report(rep: Reporter, gates: FeatureGatesLike, findings: list[Finding] | Iterator[Finding]) -> None:
    for path, gate, severity in findings:
        if getattr(gates, _GATE_ATTRIBUTES[gate]):
            continue
        field = next(p for p in reversed(path) if isinstance(p, str))
        consequence = ("and then rejects the object" if severity is Severity.ERROR
                       else "so it has no effect")
        rep.add(ProblemKind.FORBIDDEN, path,
                f"{field} needs the feature gate {gate}, which is disabled: the API server drops the field "
                f"{consequence}", hint=f"enable it with --feature-gates {gate}=true, or remove the field",
                severity=severity)


def _claim_findings(claim: DeviceClaim, path: FieldPath) -> Iterator[Finding]:
    for i, request in enumerate(claim.requests):
        request_path = (*path, "requests", i)
        if request.first_available:
            yield (*request_path, "firstAvailable"), "DRAPrioritizedList", Severity.ERROR
            for j, sub in enumerate(request.first_available):
                yield from _request_findings(sub, (*request_path, "firstAvailable", j))
        if request.exactly is not None:
            yield from _request_findings(request.exactly, (*request_path, "exactly"))
    for i, constraint in enumerate(claim.constraints):
        if constraint.distinct_attribute is not None:
            severity = Severity.WARNING if constraint.match_attribute is not None else Severity.ERROR
            yield (*path, "constraints", i, "distinctAttribute"), "DRAConsumableCapacity", severity


def _request_findings(request: ExactDeviceRequest | DeviceSubRequest, path: FieldPath) -> Iterator[Finding]:
    if request.tolerations:
        yield (*path, "tolerations"), "DRADeviceTaints", Severity.WARNING
    if request.capacity is not None:
        yield (*path, "capacity"), "DRAConsumableCapacity", Severity.WARNING


def _slice_findings(spec: ResourceSliceSpec) -> Iterator[Finding]:
    if spec.per_device_node_selection is not None:
        yield ("spec", "perDeviceNodeSelection"), "DRAPartitionableDevices", Severity.ERROR
    if spec.shared_counters:
        yield ("spec", "sharedCounters"), "DRAPartitionableDevices", Severity.WARNING
    for i, device in enumerate(spec.devices):
        path = ("spec", "devices", i)
        if device.consumes_counters:
            yield (*path, "consumesCounters"), "DRAPartitionableDevices", Severity.WARNING
        if device.taints:
            yield (*path, "taints"), "DRADeviceTaints", Severity.WARNING
        if device.allow_multiple_allocations is not None:
            yield (*path, "allowMultipleAllocations"), "DRAConsumableCapacity", Severity.WARNING
        for name, capacity in device.capacity.items():
            if capacity.request_policy is not None:
                yield (*path, "capacity", MapKey(name), "requestPolicy"), "DRAConsumableCapacity", Severity.WARNING
        for field, value in (("bindsToNode", device.binds_to_node), ("bindingConditions", device.binding_conditions),
                             ("bindingFailureConditions", device.binding_failure_conditions)):
            if value:
                yield (*path, field), "DRADeviceBindingConditions", Severity.WARNING
        for name, attribute in device.attributes.items():
            for kind in ("ints", "bools", "strings", "versions"):
                if getattr(attribute, kind) is not None:
                    yield (*path, "attributes", MapKey(name), kind), "DRAListTypeAttributes", Severity.ERROR

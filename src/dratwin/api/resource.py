"""resource.k8s.io/v1 objects: DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate.

Field names follow the Kubernetes JSON names (camelCase on the wire). The structs are deliberately
permissive (strings for enums, optional one-of members) so that API-invalid input can still be
represented: validation reports it, and the allocator sees it as it is, as upstream's does.
Quantities are kept as written (``QuantityText``) and parsed where they are used.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dratwin.api.core import NodeSelector
from dratwin.api.meta import ObjectMeta

QuantityText = str | int | float


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of every wire struct: keyword-only, camelCase, absent fields omitted on output."""


# ---- DeviceClass -------------------------------------------------------------------------------


class CELDeviceSelector(_Wire):
    expression: str = ""


class DeviceSelector(_Wire):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(_Wire):
    driver: str = ""
    parameters: Any = None


class DeviceClassConfiguration(_Wire):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(_Wire):
    selectors: list[DeviceSelector] = msgspec.field(default_factory=list)
    config: list[DeviceClassConfiguration] = msgspec.field(default_factory=list)
    extended_resource_name: str | None = None


class DeviceClass(_Wire):
    api_version: str = "resource.k8s.io/v1"
    kind: str = "DeviceClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


# ---- ResourceSlice -----------------------------------------------------------------------------


class DeviceAttribute(_Wire):
    """Exactly one member should be set; an empty attribute is API-invalid but representable."""

    int_value: int | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None
    ints: list[int] | None = None
    bools: list[bool] | None = None
    strings: list[str] | None = None
    versions: list[str] | None = None


class CapacityRequestPolicyRange(_Wire):
    min: QuantityText | None = None
    max: QuantityText | None = None
    step: QuantityText | None = None


class CapacityRequestPolicy(_Wire):
    default: QuantityText | None = None
    valid_values: list[QuantityText] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(_Wire):
    value: QuantityText = "0"
    request_policy: CapacityRequestPolicy | None = None


class Counter(_Wire):
    value: QuantityText = "0"


class CounterSet(_Wire):
    name: str = ""
    counters: dict[str, Counter] = msgspec.field(default_factory=dict)


class DeviceCounterConsumption(_Wire):
    counter_set: str = ""
    counters: dict[str, Counter] = msgspec.field(default_factory=dict)


class DeviceTaint(_Wire):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class Device(_Wire):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = msgspec.field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = msgspec.field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = msgspec.field(default_factory=list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = msgspec.field(default_factory=list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = msgspec.field(default_factory=list)
    binding_failure_conditions: list[str] = msgspec.field(default_factory=list)
    allow_multiple_allocations: bool | None = None


class ResourcePool(_Wire):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class ResourceSliceSpec(_Wire):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = msgspec.field(default_factory=list)
    shared_counters: list[CounterSet] = msgspec.field(default_factory=list)


class ResourceSlice(_Wire):
    api_version: str = "resource.k8s.io/v1"
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = msgspec.field(default_factory=ResourceSliceSpec)


# ---- ResourceClaim -----------------------------------------------------------------------------


class DeviceToleration(_Wire):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class CapacityRequirements(_Wire):
    requests: dict[str, QuantityText] = msgspec.field(default_factory=dict)


class ExactDeviceRequest(_Wire):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = msgspec.field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = msgspec.field(default_factory=list)
    capacity: CapacityRequirements | None = None


class DeviceSubRequest(_Wire):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] = msgspec.field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    tolerations: list[DeviceToleration] = msgspec.field(default_factory=list)
    capacity: CapacityRequirements | None = None


class DeviceRequest(_Wire):
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = None


class DeviceConstraint(_Wire):
    requests: list[str] = msgspec.field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(_Wire):
    requests: list[str] = msgspec.field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(_Wire):
    requests: list[DeviceRequest] = msgspec.field(default_factory=list)
    constraints: list[DeviceConstraint] = msgspec.field(default_factory=list)
    config: list[DeviceClaimConfiguration] = msgspec.field(default_factory=list)


class ResourceClaimSpec(_Wire):
    devices: DeviceClaim = msgspec.field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(_Wire):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = msgspec.field(default_factory=list)
    binding_conditions: list[str] = msgspec.field(default_factory=list)
    binding_failure_conditions: list[str] = msgspec.field(default_factory=list)
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, QuantityText] = msgspec.field(default_factory=dict)


class DeviceAllocationConfiguration(_Wire):
    source: str = ""
    requests: list[str] = msgspec.field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(_Wire):
    results: list[DeviceRequestAllocationResult] = msgspec.field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = msgspec.field(default_factory=list)


class AllocationResult(_Wire):
    devices: DeviceAllocationResult = msgspec.field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(_Wire):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class ResourceClaimStatus(_Wire):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = msgspec.field(default_factory=list)


class ResourceClaim(_Wire):
    api_version: str = "resource.k8s.io/v1"
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)


class ResourceClaimTemplateSpec(_Wire):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(_Wire):
    api_version: str = "resource.k8s.io/v1"
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)

"""Feature gates that change what the allocator does, with Kubernetes 1.36 defaults."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

from dratwin.errors import DratwinError


class FeatureGateError(DratwinError):
    """A --feature-gates value that names an unknown gate or has a value other than true/false."""


# Kubernetes gate -> (attribute of Features, default in 1.36). DRAResourceClaimDeviceStatus and
# DRADeviceBindingConditions together switch on binding conditions in the allocator.
GATES: dict[str, tuple[str, bool]] = {
    "DRAAdminAccess": ("admin_access", True),
    "DRAPrioritizedList": ("prioritized_list", True),
    "DRAPartitionableDevices": ("partitionable_devices", True),
    "DRADeviceTaints": ("device_taints", True),
    "DRADeviceBindingConditions": ("binding_conditions_gate", True),
    "DRAResourceClaimDeviceStatus": ("device_status_gate", True),
    "DRAConsumableCapacity": ("consumable_capacity", True),
    "DRAListTypeAttributes": ("list_type_attributes", False),
    "DRAExtendedResource": ("extended_resource", True),
    "DRADeviceTaintRules": ("device_taint_rules", False),
    "DynamicResourceAllocation": ("dynamic_resource_allocation", True),
}
LOCKED_ON = {"DynamicResourceAllocation", "DRAAdminAccess"}


@dataclass(frozen=True)
class Features:
    """The optional allocator features; the defaults are those of Kubernetes 1.36."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    binding_conditions_gate: bool = True
    device_status_gate: bool = True
    consumable_capacity: bool = True
    list_type_attributes: bool = False
    extended_resource: bool = True
    device_taint_rules: bool = False
    dynamic_resource_allocation: bool = True

    @property
    def binding_conditions(self) -> bool:
        """Upstream's DeviceBindingAndStatus: both gates must be on."""
        return self.binding_conditions_gate and self.device_status_gate

    @property
    def variant(self) -> str:
        """Which of upstream's three allocator copies 1.36 would run with these features."""
        from dratwin.allocator.variants import select_variant  # variants reads Features itself

        return select_variant(self).name

    @classmethod
    def from_gates(cls, spec: str | None) -> Features:
        """Parse ``Gate=true,Other=false`` on top of the 1.36 defaults, like kube-scheduler's flag."""
        changes: dict[str, bool] = {}
        for item in (spec or "").split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, value = item.partition("=")
            name, value = name.strip(), value.strip().lower()
            if name not in GATES:
                close = difflib.get_close_matches(name, GATES, n=1)
                hint = f" (did you mean {close[0]}?)" if close else f"; known gates: {', '.join(sorted(GATES))}"
                raise FeatureGateError(f"unknown feature gate {name!r}{hint}")
            if not sep or value not in ("true", "false"):
                raise FeatureGateError(f"feature gate {name}: value must be true or false, got {value!r}")
            changes[GATES[name][0]] = value == "true"
        return dataclasses.replace(cls(), **changes)

    def describe(self) -> str:
        """``Gate=true,...`` for every gate, in name order."""
        return ",".join(f"{gate}={str(getattr(self, attr)).lower()}" for gate, (attr, _) in sorted(GATES.items()))

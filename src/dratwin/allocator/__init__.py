"""The DRA device allocator: pure, per node, with Kubernetes 1.36 semantics."""

from dratwin.allocator.allocator import AllocationOutcome, Allocator, NodeAllocationError
from dratwin.allocator.features import FeatureGateError, Features
from dratwin.allocator.state import AllocatedState, DeviceID

__all__ = [
    "AllocatedState",
    "AllocationOutcome",
    "Allocator",
    "DeviceID",
    "FeatureGateError",
    "Features",
    "NodeAllocationError",
]

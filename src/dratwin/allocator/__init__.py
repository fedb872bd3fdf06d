"""The DRA device allocator: pure, per node, with Kubernetes 1.36 semantics."""

from dratwin.allocator.allocator import AllocationOutcome, Allocator
from dratwin.allocator.effort import DEFAULT_BUDGET, UNLIMITED, EffortBudget
from dratwin.allocator.errors import AllocationTimeout, NodeAllocationError
from dratwin.allocator.features import FeatureGateError, Features
from dratwin.allocator.state import AllocatedState, DeviceID
from dratwin.allocator.variants import Variant, select_variant

__all__ = [
    "DEFAULT_BUDGET",
    "UNLIMITED",
    "AllocatedState",
    "AllocationOutcome",
    "AllocationTimeout",
    "Allocator",
    "DeviceID",
    "EffortBudget",
    "FeatureGateError",
    "Features",
    "NodeAllocationError",
    "Variant",
    "select_variant",
]

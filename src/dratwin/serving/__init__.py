"""The inference load model: request-rate curves, replicas' throughput from their share of a device, SLO
misses, and the GPU (DCGM) and CPU metrics an autoscaler reads. Pure: time and placements are arguments."""

from dratwin.serving.curve import RateCurve, RateCurveError, ServingSpecError
from dratwin.serving.load import (
    DeviceLoad,
    GroupedLoad,
    Groups,
    LoadSnapshot,
    Replica,
    ReplicaLoad,
    Service,
    ServiceLoad,
    ServiceTotals,
    ServingModel,
)
from dratwin.serving.profile import ServingProfile, mig_compute_fraction

__all__ = [
    "DeviceLoad",
    "GroupedLoad",
    "Groups",
    "LoadSnapshot",
    "RateCurve",
    "RateCurveError",
    "Replica",
    "ReplicaLoad",
    "Service",
    "ServiceLoad",
    "ServiceTotals",
    "ServingModel",
    "ServingProfile",
    "ServingSpecError",
    "mig_compute_fraction",
]

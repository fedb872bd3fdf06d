"""Services and replicas for the load model's tests."""

from __future__ import annotations

from dratwin.scenario.model import RatePoint, ServiceSpec
from dratwin.serving import Replica, ServingModel, ServingProfile

GIB = 1024**3


def flat(rps: float) -> tuple[RatePoint, ...]:
    return (RatePoint(0.0, rps),)


def service(name: str, *points: tuple[float, float], per_gpu: float = 10.0) -> ServiceSpec:
    """A service whose rate curve is ``points`` of (seconds, requests per second)."""
    return ServiceSpec(name, tuple(RatePoint(t, r) for t, r in points), per_gpu)


def model(*specs: ServiceSpec, profile: ServingProfile | None = None, balancing: str = "equal") -> ServingModel:
    profiles = {s.deployment: profile for s in specs} if profile else None
    return ServingModel.from_specs(specs, profiles, balancing)  # type: ignore[arg-type]


def whole(name: str, service: str = "svc", device: str | None = None, **kw: object) -> Replica:
    return Replica(name, service, device or f"gpu-{name}", "exclusive", **kw)  # type: ignore[arg-type]


def mig(name: str, fraction: float, service: str = "svc", **kw: object) -> Replica:
    return Replica(name, service, f"mig-{name}", "mig", fraction, **kw)  # type: ignore[arg-type]


def sliced(name: str, device: str, service: str = "svc", **kw: object) -> Replica:
    return Replica(name, service, device, "time-sliced", **kw)  # type: ignore[arg-type]

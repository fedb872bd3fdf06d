"""Pods as the HPA samples them, and autoscaler specs as a scenario writes them."""

from __future__ import annotations

import dataclasses
from typing import Any

from dratwin.autoscaling.calculator import PodPhase, PodSample
from dratwin.scenario.model import AutoscalerSpec


def cpu_pods(*percents: float | None, request: float = 1.0, prefix: str = "p") -> list[PodSample]:
    """Running, Ready pods long past their start, each using ``percent`` of a ``request``-core request
    (None: no sample from metrics-server)."""
    return [
        PodSample(f"{prefix}{i}", None if pct is None else pct / 100 * request, request, started_at=-3600.0)
        for i, pct in enumerate(percents)
    ]


def value_pods(*values: float | None, prefix: str = "p") -> list[PodSample]:
    """Running, Ready pods with a per-pod metric value (a DCGM series through a custom-metrics adapter)."""
    return [PodSample(f"{prefix}{i}", v, started_at=-3600.0) for i, v in enumerate(values)]


def pending(name: str, request: float = 1.0) -> PodSample:
    return PodSample(name, None, request, phase="Pending", ready=False, started_at=None, ready_changed_at=None)


def pod(name: str, value: float | None, request: float = 1.0, phase: PodPhase = "Running", **kw: Any) -> PodSample:
    return PodSample(name, value, request, phase, **kw)


def autoscaler(
    kind: str = "hpa",
    metric: str = "DCGM_FI_DEV_GPU_UTIL",
    target: float = 60.0,
    min_replicas: int = 1,
    max_replicas: int = 10,
    **settings: Any,
) -> AutoscalerSpec:
    return AutoscalerSpec(kind, metric, target, min_replicas, max_replicas, dict(settings))  # type: ignore[arg-type]


def one_by_one(samples: list[PodSample]) -> list[PodSample]:
    """Each counted sample as that many pods of their own (named ``<name>-<i>``)."""
    return [dataclasses.replace(s, name=f"{s.name}-{i}", count=1) for s in samples for i in range(s.count)]

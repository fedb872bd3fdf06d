"""The typed form of a scenario, as the simulation consumes it: one :class:`RunSpec` per variant and seed.

A scenario file is resolved (cluster sizes expanded into objects, arrival processes sampled with the
seed, variants applied) into complete run specifications, so the simulation itself never reads files,
samples arrivals or merges overrides: it runs exactly what it is given, and the same ``RunSpec`` always
gives the same run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dratwin.api.loader import LoadedObject, SourceLocation

Provisioner = Literal["none", "karpenter", "auto-mode"]


@dataclass(frozen=True)
class Arrival:
    """Objects created together at one moment: a Job, a Deployment, bare pods, their claims.

    ``run_seconds`` is how long each pod made from these objects runs once its containers have started
    (after its cold start); ``None`` runs until the objects are deleted (a Deployment, a server).
    """

    at_seconds: float
    objects: tuple[LoadedObject, ...]
    run_seconds: float | None = None
    source: SourceLocation | None = None


@dataclass(frozen=True)
class RatePoint:
    """One point of a piecewise-linear request-rate curve: requests per second at a time."""

    at_seconds: float
    requests_per_second: float


@dataclass(frozen=True)
class AutoscalerSpec:
    """How a service's replicas are scaled: HPA-style or KEDA-style, on a DCGM metric or on CPU."""

    kind: Literal["hpa", "keda"]
    metric: Literal["DCGM_FI_DEV_GPU_UTIL", "cpu"]
    target: float  # average utilization per replica, in percent
    min_replicas: int = 1  # KEDA may have 0
    max_replicas: int = 10
    settings: dict[str, Any] = field(default_factory=dict)  # the algorithm's own knobs (windows, polling)


@dataclass(frozen=True)
class ServiceSpec:
    """An inference service: the Deployment that serves it, its load and its autoscaler."""

    deployment: str  # namespace/name
    rate: tuple[RatePoint, ...]
    requests_per_second_per_gpu: float  # what one replica on one whole, uncontended GPU serves
    autoscaler: AutoscalerSpec | None = None


@dataclass(frozen=True)
class ColdStartSpec:
    """The four steps of a pod's cold start; sizes in bytes, bandwidths in bytes per second."""

    image_bytes: dict[str, int] = field(default_factory=dict)  # by image; others use default_image_bytes
    default_image_bytes: int = 0
    node_image_bandwidth: float = 0.0  # 0: pulls take no time
    model_bytes: dict[str, int] = field(default_factory=dict)  # by workload (namespace/name)
    object_storage_bandwidth: float = 0.0
    cluster_cache: bool = False  # the LADF pattern: a pod is created once its model data is cached
    cluster_cache_bandwidth: float = 0.0
    gpu_load_bandwidth: float = 0.0
    warm_up_seconds: float = 0.0


@dataclass(frozen=True)
class RunSpec:
    """Everything one simulated run needs; the result depends on nothing else."""

    scenario: str
    variant: str
    seed: int
    until_seconds: float
    objects: tuple[LoadedObject, ...]  # the cluster at time 0: nodes, slices, classes, NodePools, claims
    arrivals: tuple[Arrival, ...]  # sorted by at_seconds
    provisioner: Provisioner = "none"
    scoring: str = "LeastAllocated"  # the scheduler's NodeResourcesFit strategy or an opt-in policy
    services: tuple[ServiceSpec, ...] = ()
    cold_start: ColdStartSpec = field(default_factory=ColdStartSpec)
    node_launch_seconds: dict[str, float] = field(default_factory=dict)  # by instance type; others: default
    default_node_launch_seconds: float = 60.0
    admitted: bool = False  # objects and arrivals are already through admission (the bare form's intake)

"""A scenario file read and judged, before any seed is applied: notations parsed, choices made.

:func:`dratwin.scenario.checks.interpret` makes a :class:`Plan` from the decoded file (reporting every bad
value); :mod:`dratwin.scenario.resolve` turns a plan into one run specification per variant and seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.cluster.generate_options import MigRequest
from dratwin.scenario import format as fmt
from dratwin.scenario.model import AutoscalerSpec, ColdStartSpec, RatePoint
from dratwin.scenario.sampling import DiurnalRate, RunTime


@dataclass(frozen=True)
class ArrivalPlan:
    kind: Literal["at", "poisson", "diurnal", "trace"]
    path: FieldPath  # where the arrival is written, for problems found later (a trace that cannot be read)
    at_seconds: float = 0.0
    rate: float = 0.0  # poisson: per second
    diurnal: DiurnalRate | None = None
    trace_file: str = ""  # as written: relative to the scenario file


@dataclass(frozen=True)
class ServicePlan:
    deployment: str  # the Deployment's name in the template (before instance naming)
    rate: tuple[RatePoint, ...]
    requests_per_second_per_gpu: float
    autoscaler: AutoscalerSpec | None
    written_autoscaler: fmt.Autoscaler | None  # what the file says, to merge a variant's override over


@dataclass(frozen=True)
class WorkloadPlan:
    name: str
    index: int
    objects: tuple[LoadedObject, ...]  # the template's objects, with lines in the scenario file
    arrival: ArrivalPlan
    count: int | None
    until_seconds: float
    run_time: RunTime | Literal["trace"] | None  # None: runs until deleted
    service: ServicePlan | None = None

    @property
    def single(self) -> bool:
        """One instance at most: its objects keep their names."""
        return self.arrival.kind == "at" and (self.count or 1) == 1


@dataclass(frozen=True)
class ClusterPlan:
    written: fmt.Cluster
    path: FieldPath  # spec.cluster, or a variant's overrides.cluster
    objects: tuple[LoadedObject, ...]  # inline objects and node pools, with lines in the scenario file
    launch_seconds: dict[str, float] = field(default_factory=dict)
    default_launch_seconds: float = 60.0


@dataclass(frozen=True)
class VariantPlan:
    name: str
    gpu_manager: str | None = None
    mig: tuple[MigRequest, ...] | None = None  # () whole GPUs; None: as the cluster says
    mig_instance_types: tuple[str, ...] = ()  # the instance types ``mig`` applies to; () all
    scoring: str | None = None
    cluster: ClusterPlan | None = None
    autoscalers: dict[str, AutoscalerSpec | None] = field(default_factory=dict)  # by workload, when overridden
    templates: dict[str, tuple[LoadedObject, ...]] = field(default_factory=dict)  # by workload, when overridden
    objects: tuple[LoadedObject, ...] = ()  # replace the cluster's objects of the same identity, or are added
    written_autoscaler: fmt.Autoscaler | None = None  # the override as written, for a sweep to merge over


@dataclass(frozen=True)
class Plan:
    name: str
    duration_seconds: float
    seeds: tuple[int, ...]
    cluster: ClusterPlan
    workloads: tuple[WorkloadPlan, ...]
    cold_start: ColdStartSpec
    scoring: str
    variants: tuple[VariantPlan, ...]

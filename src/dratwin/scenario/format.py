"""The ``kind: Scenario`` file format (``apiVersion: dratwin.io/v1alpha1``), as msgspec types.

These types are the format's single definition: :mod:`dratwin.scenario.structure` walks a file against them
(unknown fields, wrong types, missing fields, all at once), msgspec then decodes the file into them, and
:mod:`dratwin.scenario.checks` judges the values (durations, rates, one-of choices). Field names are the
file's camelCase names; notations (``10m``, ``12/h``, ``10Gi``) stay strings here and are read by
:mod:`dratwin.scenario.quantities`.

A ``kind: Sweep`` (:mod:`dratwin.scenario.sweep_format`) names a scenario and a grid of values over what
variants override; it reuses these types (a fleet's ``generate`` entries, ``sharing``), and nothing here
assumes that one file makes one run.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

API_VERSION = "dratwin.io/v1alpha1"
KIND = "Scenario"

DeviceManager = Literal["dra", "device-plugin"]
AutoscalerKind = Literal["hpa", "keda"]
AutoscalerMetric = Literal["DCGM_FI_DEV_GPU_UTIL", "cpu"]
TraceFormat = Literal["alibaba-v2023"]


class _Base(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    pass


class Metadata(_Base, kw_only=True):
    name: str
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


# ---- cluster ---------------------------------------------------------------------------------------------


class GenerateEntry(_Base, kw_only=True):
    """Nodes of one instance type, with ``dratwin cluster generate``'s options (same names, same defaults)."""

    instance_type: str
    count: int = 1
    gpu_manager: DeviceManager = "dra"
    efa_manager: DeviceManager = "dra"
    neuron_manager: DeviceManager | None = None
    mig: list[str] = []
    zones: list[str] = []
    taints: list[str] = []
    nodepool: str = "default"


class LaunchTimes(_Base, kw_only=True):
    """How long a node the provisioner launches takes to become Ready."""

    default: str | None = None
    by_instance_type: dict[str, str] = {}


class Cluster(_Base, kw_only=True):
    objects: list[dict[str, Any]] = []
    files: list[str] = []
    generate: list[GenerateEntry] = []
    node_pools: list[dict[str, Any]] = []
    auto_mode: bool = False
    launch_times: LaunchTimes | None = None


# ---- workloads -------------------------------------------------------------------------------------------


class Poisson(_Base, kw_only=True):
    rate: str


class Diurnal(_Base, kw_only=True):
    """A daily cycle: ``mean`` x (1 + ``amplitude`` x cos(2π (t - ``peak``) / 24h)), t = 0 at midnight."""

    mean: str
    peak: str = "12:00"
    amplitude: float = 0.5


class TraceSource(_Base, kw_only=True):
    file: str
    format: TraceFormat = "alibaba-v2023"


class ArrivalSpec(_Base, kw_only=True):
    """Exactly one of: ``at`` (a time), ``poisson``, ``diurnal`` or ``trace``."""

    at: str | None = None
    poisson: Poisson | None = None
    diurnal: Diurnal | None = None
    trace: TraceSource | None = None


class Exponential(_Base, kw_only=True):
    mean: str


class LogNormal(_Base, kw_only=True):
    median: str
    sigma: float


class Uniform(_Base, kw_only=True):
    min: str
    max: str


class RunForSpec(_Base, kw_only=True):
    """A distribution of run times; a plain string instead is a fixed time (``10m``) or ``trace``."""

    exponential: Exponential | None = None
    lognormal: LogNormal | None = None
    uniform: Uniform | None = None


class RatePointSpec(_Base, kw_only=True):
    at: str
    requests_per_second: float


class RateCurve(_Base, kw_only=True):
    """Exactly one of: ``points`` (piecewise linear) or ``diurnal`` (sampled every ``step``)."""

    points: list[RatePointSpec] = []
    diurnal: Diurnal | None = None
    step: str = "10m"


class Autoscaler(_Base, kw_only=True):
    """HPA or KEDA on a DCGM metric or on CPU; unset knobs take the upstream defaults (see checks)."""

    kind: AutoscalerKind | None = None
    metric: AutoscalerMetric | None = None
    target: float | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    # HPA (kube-controller-manager and the HorizontalPodAutoscaler's behavior)
    tolerance: float | None = None
    sync_period: str | None = None
    scale_up_stabilization: str | None = None
    scale_down_stabilization: str | None = None
    # KEDA (ScaledObject)
    polling_interval: str | None = None
    cooldown_period: str | None = None
    activation_threshold: float | None = None


class Service(_Base, kw_only=True):
    deployment: str | None = None
    rate: RateCurve
    requests_per_second_per_gpu: float
    autoscaler: Autoscaler | None = None


class Workload(_Base, kw_only=True):
    name: str
    template: dict[str, Any] | list[dict[str, Any]]
    arrival: ArrivalSpec | None = None
    count: int | None = None
    until: str | None = None
    run_for: str | RunForSpec | None = None
    service: Service | None = None


# ---- cold start, variants, the whole file ----------------------------------------------------------------


class ColdStart(_Base, kw_only=True):
    images: dict[str, str] = {}
    default_image_size: str | None = None
    image_pull_bandwidth: str | None = None
    models: dict[str, str] = {}
    object_storage_bandwidth: str | None = None
    cluster_cache: bool | None = None
    cluster_cache_bandwidth: str | None = None
    gpu_load_bandwidth: str | None = None
    warm_up: str | None = None


class Sharing(_Base, kw_only=True):
    """MIG partitions of every MIG-capable GPU, as ``cluster generate --mig`` takes them (``3g.40gb=1``)."""

    mig: list[str]
    instance_types: list[str] = []  # the generate entries it applies to (all when empty)


class Overrides(_Base, kw_only=True):
    gpu_manager: DeviceManager | None = None
    sharing: Literal["whole"] | Sharing | None = None
    scoring: str | None = None
    cluster: Cluster | None = None
    autoscaler: Autoscaler | None = None
    templates: dict[str, dict[str, Any] | list[dict[str, Any]]] = {}  # by workload name: what it creates
    objects: list[dict[str, Any]] = []  # replace the cluster's objects of the same kind and name, or are added


class Variant(_Base, kw_only=True):
    name: str
    overrides: Overrides = msgspec.field(default_factory=Overrides)


class Spec(_Base, kw_only=True):
    duration: str
    seed: int | None = None
    seeds: list[int] = []
    cluster: Cluster = msgspec.field(default_factory=Cluster)
    workloads: list[Workload] = []
    cold_start: ColdStart | None = None
    scoring: str = "LeastAllocated"
    variants: list[Variant] = []


class ScenarioFile(_Base, kw_only=True):
    api_version: str
    kind: str
    metadata: Metadata
    spec: Spec

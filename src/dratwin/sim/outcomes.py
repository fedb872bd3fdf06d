"""What a run produced, as plain typed values that ``-o json`` prints and a report layer reads.

Times are simulated seconds; hours are device-hours (one device held for one hour). Percentiles are
nearest-rank: p95 is the smallest value that at least 95% of the samples do not exceed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Distribution:
    count: int = 0
    mean: float = 0.0
    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    max: float = 0.0

    @classmethod
    def of(cls, samples: Sequence[float]) -> Distribution:
        if not samples:
            return cls()
        ordered = sorted(samples)

        def rank(p: float) -> float:
            return _round(ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)])

        return cls(len(ordered), _round(sum(ordered) / len(ordered)), rank(50), rank(95), rank(99),
                   _round(ordered[-1]))


@dataclass(frozen=True)
class DeviceHours:
    """Device-hours of one driver: present (published by a node), allocated (held by a claim), idle."""

    driver: str
    devices: int
    present: float
    allocated: float
    idle: float


@dataclass(frozen=True)
class FragmentationSummary:
    """FGD's fragmentation (see sim/fragmentation.py) over the run's samples: the mean fragmented GPUs, the
    mean and largest share of the free GPUs that is fragmented, and how many samples they are over."""

    samples: int
    mean_gpus: float
    mean_share: float
    max_share: float


@dataclass(frozen=True)
class NeverPlaced:
    """Pods still pending at the end, grouped by the scheduler's own message (or the blocking reason)."""

    reason: str
    count: int
    pods: tuple[str, ...]  # up to three, for a first look


@dataclass(frozen=True)
class NodeCount:
    at_seconds: float
    nodes: int


@dataclass(frozen=True)
class NodeCost:
    instance_type: str
    nodes: int
    hours: float
    usd_per_hour: float | None  # None: not in the catalog (costed at 0); the mean when its nodes' zones differ
    usd: float
    capacity_type: str = "on-demand"  # karpenter.sh/capacity-type of the nodes (on-demand for nodes without it)


@dataclass(frozen=True)
class DisruptionCommand:
    """One command of Karpenter's disruption controller, as it was carried out."""

    at_seconds: float  # when it passed its validation and its nodes were tainted
    reason: str  # the budgets' reason: Empty, Underutilized or Drifted
    method: str  # emptiness, drift, multi-node or single-node
    decision: str  # delete or replace
    nodes: tuple[str, ...]
    replacements: tuple[str, ...]  # instance types launched for it (empty for a delete)
    pods_evicted: int
    drained_at_seconds: float | None  # None: its replacements were still launching when the run ended


@dataclass(frozen=True)
class Disruptions:
    """What Karpenter's disruption controller did over the run: nodes taken out by reason, pods evicted, and the
    progress of the evicted pods that run to completion (Job and bare pods), lost since they must start over."""

    nodes_empty: int = 0
    nodes_underutilized: int = 0
    nodes_drifted: int = 0
    replacements_launched: int = 0
    pods_evicted: int = 0
    work_lost_seconds: float = 0.0  # pod-seconds of running time thrown away by evictions
    commands_invalidated: int = 0  # found, but no longer valid after the 15 s validation wait
    commands: tuple[DisruptionCommand, ...] = ()


@dataclass(frozen=True)
class ColdStartSummary:
    """The cold starts of a run's pods, step by step (bound → Ready is ``total_seconds``)."""

    pods: int = 0
    image_pull_seconds: Distribution = field(default_factory=Distribution)  # bound -> containers running
    weights_seconds: Distribution = field(default_factory=Distribution)
    gpu_load_seconds: Distribution = field(default_factory=Distribution)
    warm_up_seconds: Distribution = field(default_factory=Distribution)
    total_seconds: Distribution = field(default_factory=Distribution)
    image_cache_hits: int = 0  # pods whose image was on their node (or being pulled there) already


@dataclass(frozen=True)
class ReplicaCount:
    at_seconds: float
    replicas: int  # the Deployment's spec.replicas
    ready: int


@dataclass(frozen=True)
class ScaleEvent:
    at_seconds: float
    from_replicas: int
    to_replicas: int
    reason: str  # the autoscaler's rule (MetricRatio, ScaledToZero...)


@dataclass(frozen=True)
class UtilizationSample:
    """What the DCGM exporter shows for one pod on one device at one autoscaler sync."""

    at_seconds: float
    node: str
    device: str  # driver/pool/device
    pod: str
    gpu_util: float | None  # DCGM_FI_DEV_GPU_UTIL; None on a MIG slice
    sm_active: float
    tensor_active: float
    fb_used_mib: float


@dataclass
class ServiceOutcome:
    """One inference service over the run: requests offered, served and missed (beyond capacity), its
    replicas over time and what its autoscaler did."""

    deployment: str
    autoscaler: str  # hpa, keda or none
    metric: str
    requests: float = 0.0
    served: float = 0.0
    slo_misses: float = 0.0
    mean_gpu_util: float | None = None  # over the syncs' ready replicas that show it
    mean_cpu_percent: float | None = None
    replicas_over_time: list[ReplicaCount] = field(default_factory=list)
    scale_events: list[ScaleEvent] = field(default_factory=list)
    utilization: list[UtilizationSample] = field(default_factory=list)


@dataclass(frozen=True)
class BorrowedQuota:
    """What a ClusterQueue used beyond its nominal quota of one flavor and resource (borrowed from its cohort),
    over the run, in Kueue's units (cpu in millicores, memory in bytes, devices counted)."""

    flavor: str
    resource: str
    peak: int
    at_seconds: tuple[float, ...]  # the moments it changed
    amounts: tuple[int, ...]


@dataclass(frozen=True)
class ClusterQueueOutcome:
    """One ClusterQueue over the run (:mod:`dratwin.sim.kueue_history`).

    ``waiting_seconds``: one sample per admission, from the Workload's creation or its requeue to Admitted=True
    (Kueue's ``kueue_admission_wait_time_seconds``). ``pending`` counts the Workloads waiting for quota (queued,
    inadmissible or in requeue backoff), ``admitted`` those holding quota, at each ``at_seconds``;
    admissions and preemptions are counted per ``bin_seconds`` from time 0. ``lost_gpu_hours``: the running
    time of the evicted Workloads' pods times their devices (the extended resources of their quota)."""

    name: str
    cohort: str
    workloads: int
    admissions: int
    preemptions: int
    evictions: int  # all reasons, preemptions among them
    finished: int
    pending_at_end: int
    admitted_at_end: int
    waiting_seconds: Distribution
    lost_gpu_hours: float
    borrowed: tuple[BorrowedQuota, ...]
    at_seconds: tuple[float, ...]
    pending: tuple[int, ...]
    admitted: tuple[int, ...]
    bin_seconds: float
    admissions_per_bin: tuple[int, ...]
    preemptions_per_bin: tuple[int, ...]


@dataclass(frozen=True)
class Eviction:
    at_seconds: float
    reason: str  # Kueue's Evicted reason: Preempted, PodsReadyTimeout, AdmissionCheck, Deactivated...


@dataclass(frozen=True)
class WorkloadOutcome:
    """One Workload at the end of the run: Kueue's print columns (QUEUE, RESERVED IN, ADMITTED, FINISHED, AGE as
    seconds) and the simulated times of its life."""

    namespace: str
    name: str
    queue: str
    reserved_in: str  # status.admission.clusterQueue; "" without an admission
    admitted: str  # the Admitted condition's status ("" while there is none)
    finished: str
    age_seconds: float
    cluster_queue: str
    created_seconds: float
    reserved_seconds: float | None  # the last QuotaReserved=True (None: no quota held now)
    admitted_seconds: float | None  # the last Admitted=True
    finished_seconds: float | None
    evictions: int
    preemptions: int
    reason: str = ""  # QuotaReserved=False reason while it waits
    evicted: tuple[Eviction, ...] = ()  # every eviction, in time order


@dataclass(frozen=True)
class KueueSummary:
    """Kueue's queues through the run: per ClusterQueue and per Workload."""

    admissions: int
    preemptions: int
    lost_gpu_hours: float
    cluster_queues: tuple[ClusterQueueOutcome, ...]
    workloads: tuple[WorkloadOutcome, ...]


@dataclass
class RunResult:
    scenario: str
    variant: str
    seed: int
    until_seconds: float
    events: int = 0
    scheduling_attempts: int = 0
    pods_created: int = 0
    pods_started: int = 0
    pods_succeeded: int = 0
    pods_running_at_end: int = 0
    pods_pending_at_end: int = 0
    waiting_seconds: Distribution = field(default_factory=Distribution)  # created -> bound
    startup_seconds: Distribution = field(default_factory=Distribution)  # bound -> containers running
    # GPU-hours (sim/gpu_use.py): allocated (held), used (kept busy, <= allocated), idle (present, not held).
    gpu_hours_allocated: float = 0.0
    gpu_hours_used: float = 0.0
    gpu_hours_idle: float = 0.0
    device_hours: list[DeviceHours] = field(default_factory=list)
    never_placed: list[NeverPlaced] = field(default_factory=list)
    nodes_over_time: list[NodeCount] = field(default_factory=list)
    cost_usd: float = 0.0
    cost_by_instance_type: list[NodeCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    services: list[ServiceOutcome] = field(default_factory=list)
    cold_start: ColdStartSummary | None = None  # None: the run has no cold start model
    disruptions: Disruptions = field(default_factory=Disruptions)
    fragmentation: FragmentationSummary | None = None  # None: the run took no samples (``sample_every``)
    kueue: KueueSummary | None = None  # None: the scenario has no Kueue objects


def _round(value: float) -> float:
    return round(value, 6)


def rounded(value: float) -> float:
    return _round(value)

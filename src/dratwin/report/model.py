"""What a report shows: per variant, series over time, latency samples, a node × time matrix, summary numbers
and the reasons pods waited. Plain data, filled by whoever ran the cluster through time.

Times are seconds since the start of the run. Every series of a variant may have its own sample times.
"""

from __future__ import annotations

import msgspec


class TimeSeries(msgspec.Struct, frozen=True, kw_only=True):
    """Values over time; ``times`` (seconds since the start) increase and have one value each."""

    times: tuple[float, ...]
    values: tuple[float, ...]


class NodeMatrix(msgspec.Struct, frozen=True, kw_only=True):
    """One number per node and time, such as GPU utilization (0-1); ``values[i][j]`` is node i at time j.

    A node that did not exist at a time has ``None`` there (drawn as a gap, not as zero).
    """

    metric: str
    nodes: tuple[str, ...]
    times: tuple[float, ...]
    values: tuple[tuple[float | None, ...], ...]


class WaitReason(msgspec.Struct, frozen=True, kw_only=True):
    """Why pods waited: the scheduler's or provisioner's reason, how many pods, and what it means."""

    reason: str
    pods: int
    explanation: str
    example_pod: str = ""


class QueueTotals(msgspec.Struct, frozen=True, kw_only=True):
    """Kueue's queues of a variant in numbers, means over the seeds: admissions and preemptions over all its
    ClusterQueues, the worst ClusterQueue's p95 wait for admission, the GPU-hours evictions threw away."""

    admissions: float
    preemptions: float
    waiting_p95_s: float
    lost_gpu_hours: float


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """A variant's outcome in numbers (what the comparison table and bars show)."""

    gpu_hours_allocated: float
    gpu_hours_used: float
    gpu_hours_idle: float
    cost_dollars: float
    pods_completed: float  # means over the seeds, as the summary's other numbers
    pods_never_placed: float
    slo_misses: float = 0.0
    fragmentation: float = 0.0
    queues: QueueTotals | None = None  # None: no Kueue in the scenario


class QueueSeries(msgspec.Struct, frozen=True, kw_only=True):
    """One Kueue ClusterQueue of a variant over time: Workloads pending (waiting for quota) and admitted
    (holding quota), admissions and preemptions per bin (at the bin's start), the quota borrowed from its
    cohort per "flavor/resource" (cpu in cores, memory in GiB, devices counted), its waiting times for
    admission and what it came to."""

    cluster_queue: str
    pending: TimeSeries
    admitted: TimeSeries
    bin_s: float
    admissions: TimeSeries
    preemptions: TimeSeries
    borrowed: tuple[tuple[str, TimeSeries], ...] = ()
    waiting_count: int = 0
    waiting_p50_s: float = 0.0
    waiting_p95_s: float = 0.0
    waiting_p99_s: float = 0.0
    waiting_max_s: float = 0.0
    admitted_total: int = 0
    preempted_total: int = 0
    pending_at_end: int = 0
    lost_gpu_hours: float = 0.0


class Variant(msgspec.Struct, frozen=True, kw_only=True):
    """One variant of the scenario and everything measured while it ran.

    ``allocated_gpus`` and ``used_gpus`` count GPUs (a share of a device is a fraction of one);
    ``capacity_gpus`` counts the GPUs of Ready nodes. ``cost_dollars`` is the cost so far. ``waiting_s``
    and ``startup_s`` are one sample per pod: from creation to placement, and from placement to Ready.
    """

    name: str
    description: str = ""
    summary: Summary
    allocated_gpus: TimeSeries
    used_gpus: TimeSeries
    capacity_gpus: TimeSeries
    pending_pods: TimeSeries
    nodes: TimeSeries
    cost_dollars: TimeSeries
    waiting_s: tuple[float, ...] = ()
    startup_s: tuple[float, ...] = ()
    node_utilization: NodeMatrix | None = None
    wait_reasons: tuple[WaitReason, ...] = ()
    fragmented_share: TimeSeries = TimeSeries(times=(), values=())  # FGD's, of the free GPUs (0-1)
    queues: tuple[QueueSeries, ...] = ()  # Kueue's ClusterQueues; empty without Kueue


class ReportData(msgspec.Struct, frozen=True, kw_only=True):
    """A whole report: the scenario it ran and its variants, in the order to show them."""

    title: str
    scenario: str
    seed: int
    duration_s: float
    variants: tuple[Variant, ...]

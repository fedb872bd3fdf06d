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


class ReportData(msgspec.Struct, frozen=True, kw_only=True):
    """A whole report: the scenario it ran and its variants, in the order to show them."""

    title: str
    scenario: str
    seed: int
    duration_s: float
    variants: tuple[Variant, ...]

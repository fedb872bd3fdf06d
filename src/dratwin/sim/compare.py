"""The variants of a scenario side by side: per variant, the mean over its seeds of each run's figures.

Pure: run results in, one row per variant out, in the order the variants first appear. "Allocated share"
is the mean GPU-hours allocated over the mean GPU-hours present (allocated + idle); "used share" is the
mean GPU-hours used over the mean GPU-hours allocated (how busy the allocated GPUs were). Fragmentation
is the mean over the runs of each run's mean fragmented share of the free GPUs (None: no run was sampled).
Nodes is the most nodes the cluster had at once during the run. With Kueue, ``queues`` has per ClusterQueue
the means over the runs of its admissions, preemptions, Workloads pending at the end, waiting percentiles,
GPU-hours lost to evictions and the peak of the quota it borrowed per flavor and resource.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dratwin.sim.outcomes import ClusterQueueOutcome, RunResult, rounded


@dataclass(frozen=True)
class QueueSummary:
    cluster_queue: str
    admissions: float
    preemptions: float
    pending_at_end: float
    waiting_p50_seconds: float
    waiting_p95_seconds: float
    lost_gpu_hours: float
    borrowed_peak: dict[str, float]  # "flavor/resource" -> the peak in Kueue's units (cpu in millicores)


@dataclass(frozen=True)
class VariantSummary:
    variant: str
    runs: int
    seeds: tuple[int, ...]
    gpu_hours_allocated: float
    gpu_hours_used: float
    gpu_hours_idle: float
    gpu_allocated_share: float  # 0-1; 0 where no GPU was present
    gpu_used_share: float  # of the allocated GPU-hours, 0-1; 0 where none were allocated
    waiting_p50_seconds: float
    waiting_p95_seconds: float
    waiting_p99_seconds: float
    startup_p95_seconds: float
    pods_never_placed: float
    nodes_peak: float
    cost_usd: float
    pods_completed: float = 0.0
    slo_misses: float = 0.0
    fragmentation: float | None = None
    queues: tuple[QueueSummary, ...] = ()  # empty: no Kueue in the scenario


def peak_nodes(result: RunResult) -> int:
    return max((count.nodes for count in result.nodes_over_time), default=0)


def compare(results: Sequence[RunResult]) -> list[VariantSummary]:
    by_variant: dict[str, list[RunResult]] = {}
    for result in results:
        by_variant.setdefault(result.variant, []).append(result)
    return [_summary(name, runs) for name, runs in by_variant.items()]


def _summary(variant: str, runs: list[RunResult]) -> VariantSummary:
    def mean(values: Sequence[float]) -> float:
        return rounded(sum(values) / len(values))

    allocated = mean([r.gpu_hours_allocated for r in runs])
    used = mean([r.gpu_hours_used for r in runs])
    idle = mean([r.gpu_hours_idle for r in runs])
    fragmentation = [r.fragmentation.mean_share for r in runs if r.fragmentation is not None]
    return VariantSummary(
        variant=variant,
        runs=len(runs),
        seeds=tuple(r.seed for r in runs),
        gpu_hours_allocated=allocated,
        gpu_hours_used=used,
        gpu_hours_idle=idle,
        gpu_allocated_share=rounded(allocated / (allocated + idle)) if allocated + idle > 0 else 0.0,
        gpu_used_share=rounded(used / allocated) if allocated > 0 else 0.0,
        waiting_p50_seconds=mean([r.waiting_seconds.p50 for r in runs]),
        waiting_p95_seconds=mean([r.waiting_seconds.p95 for r in runs]),
        waiting_p99_seconds=mean([r.waiting_seconds.p99 for r in runs]),
        startup_p95_seconds=mean([r.startup_seconds.p95 for r in runs]),
        pods_never_placed=mean([r.pods_pending_at_end for r in runs]),
        nodes_peak=mean([peak_nodes(r) for r in runs]),
        cost_usd=mean([r.cost_usd for r in runs]),
        pods_completed=mean([r.pods_succeeded for r in runs]),
        slo_misses=mean([sum(s.slo_misses for s in r.services) for r in runs]),
        fragmentation=mean(fragmentation) if fragmentation else None,
        queues=_queues(runs),
    )


def _queues(runs: list[RunResult]) -> tuple[QueueSummary, ...]:
    """Per ClusterQueue, the means over the runs that have it (a run without Kueue adds nothing)."""
    by_name: dict[str, list[ClusterQueueOutcome]] = {}
    for run in runs:
        for queue in run.kueue.cluster_queues if run.kueue is not None else ():
            by_name.setdefault(queue.name, []).append(queue)
    return tuple(_queue(name, queues) for name, queues in by_name.items())


def _queue(name: str, queues: list[ClusterQueueOutcome]) -> QueueSummary:
    def mean(values: Sequence[float]) -> float:
        return rounded(sum(values) / len(queues))

    resources = sorted({f"{b.flavor}/{b.resource}" for q in queues for b in q.borrowed})
    peaks = {r: mean([next((b.peak for b in q.borrowed if f"{b.flavor}/{b.resource}" == r), 0) for q in queues])
             for r in resources}
    return QueueSummary(cluster_queue=name, admissions=mean([q.admissions for q in queues]),
                        preemptions=mean([q.preemptions for q in queues]),
                        pending_at_end=mean([q.pending_at_end for q in queues]),
                        waiting_p50_seconds=mean([q.waiting_seconds.p50 for q in queues]),
                        waiting_p95_seconds=mean([q.waiting_seconds.p95 for q in queues]),
                        lost_gpu_hours=mean([q.lost_gpu_hours for q in queues]), borrowed_peak=peaks)

"""Run outputs turned into the report's and the metrics files' models (pure: no files written here).

The report shows, per variant, the summary numbers (GPU-hours, cost, pods completed and never placed,
SLO misses, fragmentation) as the means over its seeds, the same figures as the terminal table, and the
series, heatmap, latency samples and wait reasons of its first seed (one run's curves are what a cluster
would show; averaging curves of different arrivals shows none); each variant's description says which.

The metrics carry, per GPU and per sample, the DCGM fields as dcgm-exporter writes them (labelled with the
pod, namespace and container holding the GPU while one does, one series per pod), and dratwin's own
cluster series.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.metrics.model import ClusterSeries, DcgmField, DeviceIdentity, DeviceSeries, MetricsSet, PodRef, Sample
from dratwin.report.model import (
    NodeMatrix,
    QueueSeries,
    QueueTotals,
    ReportData,
    Summary,
    TimeSeries,
    Variant,
    WaitReason,
)
from dratwin.sim.batch import RunOutput
from dratwin.sim.compare import VariantSummary, compare
from dratwin.sim.outcomes import BorrowedQuota, ClusterQueueOutcome, KueueSummary
from dratwin.sim.timeline import DeviceInfo, Timeline

START_UNIX = 1767225600.0  # 2026-01-01T00:00:00Z: the simulated time 0 in the metrics files
TOP_REASONS = 10


class MissingTimeline(ValueError):
    """A run was made without samples (``sample_every``), so there is nothing to plot or export."""


def _timeline(output: RunOutput) -> Timeline:
    if output.timeline is None:
        raise MissingTimeline(f"run {output.result.variant}/{output.result.seed} has no timeline")
    return output.timeline


def report_data(scenario: str, outputs: Sequence[RunOutput]) -> ReportData:
    summaries = {s.variant: s for s in compare([o.result for o in outputs])}
    first: dict[str, RunOutput] = {}
    for output in outputs:
        first.setdefault(output.result.variant, output)
    variants = tuple(_variant(output, summaries[name]) for name, output in first.items())
    head = outputs[0].result if outputs else None
    return ReportData(title=f"dratwin simulate: {scenario}", scenario=scenario, seed=head.seed if head else 0,
                      duration_s=head.until_seconds if head else 0.0, variants=variants)


def _variant(output: RunOutput, summary: VariantSummary) -> Variant:
    timeline, result = _timeline(output), output.result
    times = tuple(timeline.times)

    def series(values: list[float]) -> TimeSeries:
        return TimeSeries(times=times, values=tuple(values))

    description = (f"Summary numbers: means over {_seeds(summary.seeds)}, as in the terminal table; curves, "
                   f"heatmap, latencies and wait reasons: seed {result.seed}.")
    never_placed = {pod for group in result.never_placed for pod in group.pods}
    return Variant(
        name=result.variant,
        description=description,
        summary=Summary(
            gpu_hours_allocated=summary.gpu_hours_allocated, gpu_hours_used=summary.gpu_hours_used,
            gpu_hours_idle=summary.gpu_hours_idle, cost_dollars=summary.cost_usd,
            pods_completed=summary.pods_completed, pods_never_placed=summary.pods_never_placed,
            slo_misses=summary.slo_misses, fragmentation=summary.fragmentation or 0.0,
            queues=_queue_totals(summary),
        ),
        allocated_gpus=series(timeline.allocated_gpus),
        used_gpus=series(timeline.used_gpus),
        fragmented_share=series(timeline.fragmented_share),
        capacity_gpus=series(timeline.capacity_gpus),
        pending_pods=series(timeline.pending_pods),
        nodes=series(timeline.nodes),
        cost_dollars=series(timeline.cost_usd),
        waiting_s=tuple(timeline.waiting_seconds),
        startup_s=tuple(timeline.startup_seconds),
        node_utilization=_node_matrix(timeline),
        wait_reasons=tuple(_wait_reason(reason, pods, never_placed, timeline.every_seconds)
                           for reason, pods in list(timeline.wait_reasons.items())[:TOP_REASONS]),
        queues=_queue_series(result.kueue, result.until_seconds),
    )


def _queue_totals(summary: VariantSummary) -> QueueTotals | None:
    """Kueue's numbers of a variant, means over its seeds (None without Kueue)."""
    if not summary.queues:
        return None
    queues = summary.queues
    return QueueTotals(admissions=sum(q.admissions for q in queues), preemptions=sum(q.preemptions for q in queues),
                       waiting_p95_s=max(q.waiting_p95_seconds for q in queues),
                       lost_gpu_hours=sum(q.lost_gpu_hours for q in queues))


def _queue_series(kueue: KueueSummary | None, until: float) -> tuple[QueueSeries, ...]:
    """Each ClusterQueue of one run; the step series carried on to the end of the run."""
    return tuple(_one_queue(q, until) for q in kueue.cluster_queues) if kueue is not None else ()


def _one_queue(q: ClusterQueueOutcome, until: float) -> QueueSeries:
    def steps(times: tuple[float, ...], values: tuple[float, ...]) -> TimeSeries:
        if times and times[-1] < until:
            times, values = (*times, until), (*values, values[-1])
        return TimeSeries(times=times, values=values)

    bins = tuple(k * q.bin_seconds for k in range(len(q.admissions_per_bin)))
    waiting = q.waiting_seconds
    return QueueSeries(
        cluster_queue=q.name, pending=steps(q.at_seconds, tuple(map(float, q.pending))),
        admitted=steps(q.at_seconds, tuple(map(float, q.admitted))), bin_s=q.bin_seconds,
        admissions=TimeSeries(times=bins, values=tuple(map(float, q.admissions_per_bin))),
        preemptions=TimeSeries(times=bins, values=tuple(map(float, q.preemptions_per_bin))),
        borrowed=tuple((f"{b.flavor}/{b.resource}", steps(b.at_seconds, tuple(_shown(b, a) for a in b.amounts)))
                       for b in q.borrowed),
        waiting_count=waiting.count, waiting_p50_s=waiting.p50, waiting_p95_s=waiting.p95,
        waiting_p99_s=waiting.p99, waiting_max_s=waiting.max, admitted_total=q.admissions,
        preempted_total=q.preemptions, pending_at_end=q.pending_at_end, lost_gpu_hours=q.lost_gpu_hours)


def _shown(borrowed: BorrowedQuota, amount: int) -> float:
    """Kueue's units as the plot shows them: cpu in cores (from millicores), memory in GiB (from bytes)."""
    if borrowed.resource == "cpu":
        return amount / 1000
    if borrowed.resource in ("memory", "ephemeral-storage"):
        return round(amount / 2**30, 3)
    return float(amount)


def _seeds(seeds: tuple[int, ...]) -> str:
    if len(seeds) == 1:
        return f"seed {seeds[0]} (one run)"
    ordered = sorted(seeds)
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"seeds {ordered[0]}-{ordered[-1]} ({len(seeds)} runs)"
    return f"seeds {', '.join(map(str, seeds))} ({len(seeds)} runs)"


def _node_matrix(timeline: Timeline) -> NodeMatrix | None:
    if not timeline.node_allocated_share:
        return None
    nodes = tuple(sorted(timeline.node_allocated_share))
    return NodeMatrix(metric="share of the node's GPUs allocated", nodes=nodes, times=tuple(timeline.times),
                      values=tuple(tuple(timeline.node_allocated_share[n]) for n in nodes))


def _wait_reason(reason: str, pods: list[str], never_placed: set[str], every: float) -> WaitReason:
    stuck = sum(1 for pod in pods if pod in never_placed)
    explanation = (f"kube-scheduler's FailedScheduling message for {len(pods)} pod(s) seen pending at the "
                   f"{every:g} s samples")
    if stuck:
        explanation += f"; {stuck} of them among the pods never placed"
    return WaitReason(reason=reason, pods=len(pods), explanation=explanation, example_pod=pods[0] if pods else "")


def _device_series(timeline: Timeline, key: str, labels: list[tuple[str, str]]) -> list[ClusterSeries]:
    """A device's allocation as dcgm-exporter writes a GPU's series: with the pod's labels while a pod holds
    it (one series per pod), without while none does."""
    by_pod: dict[str, list[Sample]] = {}
    values, pods = timeline.device_allocated[key], timeline.device_pod[key]
    for at, value, pod in zip(timeline.times, values, pods, strict=True):
        if value is not None and pod is not None:  # a shared device: counted once, with its first pod
            by_pod.setdefault(pod.split(",")[0], []).append(Sample(at, value))
    series = []
    for pod, pod_samples in sorted(by_pod.items()):
        namespace, _, name = pod.partition("/")
        pod_labels = [("pod", name), ("namespace", namespace)] if pod else []
        series.append(ClusterSeries(field="dratwin_device_allocated", samples=tuple(pod_samples),
                                    labels=tuple(labels + pod_labels)))
    return series


def metrics_sets(outputs: Sequence[RunOutput]) -> list[MetricsSet]:
    """One set per run, labelled with its variant and seed."""
    return [_metrics(output) for output in outputs]


def _metrics(output: RunOutput) -> MetricsSet:
    timeline, result = _timeline(output), output.result
    times = timeline.times

    def samples(values: Sequence[float | None]) -> tuple[Sample, ...]:
        return tuple(Sample(t, v) for t, v in zip(times, values, strict=True) if v is not None)

    cluster = [
        ClusterSeries(field="dratwin_allocated_gpus", samples=samples(timeline.allocated_gpus)),
        ClusterSeries(field="dratwin_gpus", samples=samples(timeline.capacity_gpus)),
        ClusterSeries(field="dratwin_used_gpus", samples=samples(timeline.used_gpus)),
        ClusterSeries(field="dratwin_fragmented_gpu_share", samples=samples(timeline.fragmented_share)),
        ClusterSeries(field="dratwin_pending_pods", samples=samples(timeline.pending_pods)),
        ClusterSeries(field="dratwin_running_pods", samples=samples(timeline.running_pods)),
        ClusterSeries(field="dratwin_nodes", samples=samples(timeline.nodes)),
        ClusterSeries(field="dratwin_cost_dollars", samples=samples(timeline.cost_usd)),
    ]
    dcgm: list[DeviceSeries] = []
    for key in sorted(timeline.device_allocated):
        info = timeline.devices[key]
        identity = _identity(info)
        cluster += _device_series(timeline, key, [*identity.labels(), ("driver", info.driver)])
        dcgm += _dcgm_series(timeline, key, identity)
    return MetricsSet(start_unix=START_UNIX, device_series=tuple(dcgm), cluster_series=tuple(cluster),
                      labels=(("variant", result.variant), ("seed", str(result.seed))))


def _identity(info: DeviceInfo) -> DeviceIdentity:
    return DeviceIdentity(hostname=info.hostname, gpu=info.index, uuid=info.uuid, model_name=info.model_name,
                          pci_bus_id=info.pci_bus_id, mig_profile=info.mig_profile,
                          gpu_instance_id=info.gpu_instance_id)


def _dcgm_series(timeline: Timeline, key: str, identity: DeviceIdentity) -> list[DeviceSeries]:
    """The DCGM fields of one device, one series per holding pod (and one while none holds it), as the
    exporter attributes a GPU to the pods the kubelet gave it to: pods sharing a GPU each get its values.
    A MIG partition has no GPU_UTIL."""
    fields: list[tuple[DcgmField, dict[str, list[float | None]]]] = [
        ("DCGM_FI_DEV_GPU_UTIL", timeline.device_gpu_util),
        ("DCGM_FI_DEV_FB_USED", timeline.device_fb_used_mib),
        ("DCGM_FI_PROF_SM_ACTIVE", timeline.device_sm_active),
        ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", timeline.device_tensor_active),
    ]
    pods = timeline.device_pod[key]
    result = []
    for name, values in fields:
        by_pod: dict[str, list[Sample]] = {}
        for at, value, pod in zip(timeline.times, values.get(key, []), pods, strict=True):
            if value is None or pod is None:
                continue
            for one in pod.split(",") if pod else [""]:
                by_pod.setdefault(one, []).append(Sample(at, value))
        for pod, pod_samples in sorted(by_pod.items()):
            namespace, _, pod_name = pod.partition("/")
            ref = PodRef(namespace=namespace, pod=pod_name, container=timeline.pod_containers.get(pod, "")) \
                if pod else None
            result.append(DeviceSeries(field=name, device=identity, samples=tuple(pod_samples), pod=ref))
    return result

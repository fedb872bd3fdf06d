"""Run outputs turned into the report's and the metrics files' models (pure: no files written here).

The report shows, per variant, GPU-hours and cost as the means over its seeds, and the pod counts, series,
heatmap and latency samples of its first seed (one run's curves are what a cluster would show; averaging curves of
different arrivals shows none). The inference services' GPU use (RunResult.services) is not drawn or
exported here yet, and a training Job's use inside its allocation is not modelled, so the page's "used"
series are empty and used GPU-hours are 0, and the metrics carry no DCGM utilization or memory fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.metrics.model import ClusterSeries, MetricsSet, Sample
from dratwin.report.model import NodeMatrix, ReportData, Summary, TimeSeries, Variant, WaitReason
from dratwin.sim.batch import RunOutput
from dratwin.sim.compare import VariantSummary, compare
from dratwin.sim.timeline import Timeline

START_UNIX = 1767225600.0  # 2026-01-01T00:00:00Z: the simulated time 0 in the metrics files
TOP_REASONS = 10
NOT_MODELLED = ("GPU use within an allocation is not drawn or exported yet (the services' utilization is in "
                "-o json): 'used' is empty and DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED and the profiling fields "
                "are not written")


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

    seeds = ", ".join(str(s) for s in summary.seeds)
    description = (f"GPU-hours and cost: means over seed(s) {seeds}; pod counts, plots and latencies: seed "
                   f"{result.seed}. {NOT_MODELLED}.")
    never_placed = {pod for group in result.never_placed for pod in group.pods}
    return Variant(
        name=result.variant,
        description=description,
        summary=Summary(
            gpu_hours_allocated=summary.gpu_hours_allocated, gpu_hours_used=0.0,
            gpu_hours_idle=summary.gpu_hours_idle, cost_dollars=summary.cost_usd,
            pods_completed=result.pods_succeeded, pods_never_placed=result.pods_pending_at_end,
            slo_misses=round(sum(service.slo_misses for service in result.services)),
        ),
        allocated_gpus=series(timeline.allocated_gpus),
        used_gpus=TimeSeries(times=(), values=()),
        capacity_gpus=series(timeline.capacity_gpus),
        pending_pods=series(timeline.pending_pods),
        nodes=series(timeline.nodes),
        cost_dollars=series(timeline.cost_usd),
        waiting_s=tuple(timeline.waiting_seconds),
        startup_s=tuple(timeline.startup_seconds),
        node_utilization=_node_matrix(timeline),
        wait_reasons=tuple(_wait_reason(reason, pods, never_placed, timeline.every_seconds)
                           for reason, pods in list(timeline.wait_reasons.items())[:TOP_REASONS]),
    )


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
        if value is not None and pod is not None:
            by_pod.setdefault(pod, []).append(Sample(at, value))
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
        ClusterSeries(field="dratwin_pending_pods", samples=samples(timeline.pending_pods)),
        ClusterSeries(field="dratwin_running_pods", samples=samples(timeline.running_pods)),
        ClusterSeries(field="dratwin_nodes", samples=samples(timeline.nodes)),
        ClusterSeries(field="dratwin_cost_dollars", samples=samples(timeline.cost_usd)),
    ]
    for key in sorted(timeline.device_allocated):
        info = timeline.devices[key]
        labels = [("gpu", str(info.index)), ("UUID", info.uuid)]
        if info.pci_bus_id:
            labels.append(("pci_bus_id", info.pci_bus_id))
        labels += [("device", f"nvidia{info.index}"), ("modelName", info.model_name), ("Hostname", info.hostname),
                   ("driver", info.driver)]
        cluster += _device_series(timeline, key, labels)
    return MetricsSet(start_unix=START_UNIX, cluster_series=tuple(cluster),
                      labels=(("variant", result.variant), ("seed", str(result.seed))))

"""The report's Kueue plots: per ClusterQueue over time the Workloads pending, admissions and preemptions,
the quota borrowed from the cohort, and the waiting times for admission; and the comparison's queue bars.

ECharts options as :mod:`.figures` makes them (pure). One line per (variant, ClusterQueue), coloured by its
place in that order, named "variant: ClusterQueue" when there are several variants.
"""

from __future__ import annotations

from collections.abc import Callable

from dratwin.report.figures import Figure, axes_option, colour, comparison_bar, figure, hours_of, line
from dratwin.report.model import QueueSeries, QueueTotals, ReportData, TimeSeries

HOURS = 3600.0


def has_queues(data: ReportData) -> bool:
    return any(v.queues for v in data.variants)


def _queues(data: ReportData) -> list[tuple[str, QueueSeries]]:
    several = len(data.variants) > 1
    return [(f"{v.name}: {q.cluster_queue}" if several else q.cluster_queue, q)
            for v in data.variants for q in v.queues]


def _lines(data: ReportData, title: str, y_name: str, pick: Callable[[QueueSeries], TimeSeries]) -> Figure:
    option = axes_option(title, y_name)
    option["series"] = [line(hours_of(pick(q)), list(pick(q).values), name, i)
                        for i, (name, q) in enumerate(_queues(data))]
    return figure(option)


def pending_workloads(data: ReportData) -> Figure:
    return _lines(data, "Workloads waiting for quota, per ClusterQueue", "Workloads", lambda q: q.pending)


def admitted_workloads(data: ReportData) -> Figure:
    return _lines(data, "Workloads holding quota, per ClusterQueue", "Workloads", lambda q: q.admitted)


def admissions_and_preemptions(data: ReportData) -> Figure:
    """Per bin: admissions (solid) and preemptions (dotted) of each ClusterQueue."""
    queues = _queues(data)
    width = max((q.bin_s for _, q in queues), default=0.0)
    option = axes_option(f"Admissions and preemptions per {_bin_text(width)}", "Workloads")
    for i, (name, q) in enumerate(queues):
        option["series"].append(line(hours_of(q.admissions), list(q.admissions.values), f"{name}: admitted", i))
        option["series"].append(line(hours_of(q.preemptions), list(q.preemptions.values), f"{name}: preempted", i,
                                      dashed=True))
    return figure(option)


def borrowed_quota(data: ReportData) -> Figure:
    """The quota each ClusterQueue used beyond its nominal quota, per flavor and resource."""
    option = axes_option("Quota borrowed from the cohort", "amount (cpu: cores, memory: GiB, devices)")
    for i, (name, q) in enumerate(_queues(data)):
        for resource, series in q.borrowed:
            option["series"].append(line(hours_of(series), list(series.values), f"{name}: {resource}", i))
    if not option["series"]:
        option["title"]["subtext"] = "no ClusterQueue borrowed"
    return figure(option)


def waiting_times(data: ReportData) -> Figure:
    """The waiting time for admission per ClusterQueue: p50, p95, p99 and the longest, in minutes."""
    queues = _queues(data)
    option = axes_option("Waiting for admission (creation or requeue to Admitted)", "minutes", x_name="")
    option["xAxis"] = {"type": "category", "data": [name for name, _ in queues]}
    option["tooltip"] = {"trigger": "axis", "axisPointer": {"type": "shadow"}}
    option.pop("dataZoom")
    picks: list[tuple[str, Callable[[QueueSeries], float]]] = [
        ("p50", lambda q: q.waiting_p50_s), ("p95", lambda q: q.waiting_p95_s), ("p99", lambda q: q.waiting_p99_s),
        ("longest", lambda q: q.waiting_max_s)]
    for i, (label, pick) in enumerate(picks):
        option["series"].append({
            "type": "bar", "name": label, "itemStyle": {"color": colour(i)},
            "data": [round(pick(q) / 60, 2) if q.waiting_count else None for _, q in queues]})
    return figure(option)


QUEUE_COMPARED: tuple[tuple[str, str, Callable[[QueueTotals], float]], ...] = (
    ("Workloads preempted (Kueue)", "Workloads", lambda t: t.preemptions),
    ("p95 wait for admission, worst ClusterQueue", "seconds", lambda t: t.waiting_p95_s),
    ("GPU-hours lost to evictions (Kueue)", "GPU-hours", lambda t: t.lost_gpu_hours),
)


def queue_comparison_bars(data: ReportData) -> list[Figure]:
    if not any(v.summary.queues for v in data.variants):
        return []
    names = [v.name for v in data.variants]
    return [comparison_bar(label, unit, names,
                           [read(v.summary.queues) if v.summary.queues else 0.0 for v in data.variants])
            for label, unit, read in QUEUE_COMPARED]


def _bin_text(seconds: float) -> str:
    if seconds >= HOURS:
        return f"{seconds / HOURS:g} h"
    return f"{seconds / 60:g} min"

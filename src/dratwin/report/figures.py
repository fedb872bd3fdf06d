"""The report's plots as Apache ECharts options (plain dicts, JSON-ready). Pure: no I/O.

Each figure is ``{"height": pixels, "option": <ECharts option>}``. Times are drawn in simulated hours since
the start; each variant keeps one colour on every plot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dratwin.report.model import ReportData, Summary, TimeSeries, Variant, WaitReason
from dratwin.report.stats import PERCENTILES, bin_columns, ecdf, percentile, thin

Figure = dict[str, Any]
Option = dict[str, Any]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
VIRIDIS = ("#440154", "#414487", "#2a788e", "#22a884", "#7ad151", "#fde725")
HEATMAP_BINS = 288
# Points per line at most (about): a week sampled at every event would make the page heavy and slow.
LINE_POINTS = 4000
HOURS = 3600.0
TIME_AXIS = "simulated time (hours)"


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def figure(option: Option, height: int = 360) -> Figure:
    return {"height": height, "option": option}


def axes_option(title: str, y_name: str, x_name: str = TIME_AXIS) -> Option:
    return {
        "animation": False,
        "title": {"text": title, "left": "center", "textStyle": {"fontSize": 14}},
        "tooltip": {"trigger": "axis"},
        "legend": {"bottom": 0, "type": "scroll"},
        "grid": {"left": 72, "right": 32, "top": 60, "bottom": 76},
        "toolbox": {"right": 8, "top": 24, "feature": {"dataZoom": {}, "restore": {}, "saveAsImage": {}}},
        "dataZoom": [{"type": "inside"}],
        "xAxis": {"type": "value", "name": x_name, "nameLocation": "middle", "nameGap": 28, "scale": True},
        "yAxis": {"type": "value", "name": y_name, "nameLocation": "middle", "nameGap": 52},
        "series": [],
    }


def line(
    xs: list[float], ys: list[float | None], name: str, index: int, dashed: bool = False, step: bool = True
) -> dict[str, Any]:
    xs, ys = thin(xs, ys, LINE_POINTS)
    return {
        "type": "line",
        "name": name,
        "data": [[x, y] for x, y in zip(xs, ys, strict=True)],
        "showSymbol": False,
        "step": "end" if step else False,
        "lineStyle": {"width": 2, "type": "dotted" if dashed else "solid", "color": colour(index)},
        "itemStyle": {"color": colour(index)},
    }


def hours_of(series: TimeSeries) -> list[float]:
    return [round(t / HOURS, 4) for t in series.times]


def _time_line(series: TimeSeries, name: str, index: int, dashed: bool = False, step: bool = True) -> dict[str, Any]:
    return line(hours_of(series), list(series.values), name, index, dashed, step)


def _per_variant(
    data: ReportData, title: str, y_name: str, pick: Callable[[Variant], TimeSeries], step: bool = True
) -> Figure:
    option = axes_option(title, y_name)
    option["series"] = [_time_line(pick(v), v.name, i, step=step) for i, v in enumerate(data.variants)]
    return figure(option)


def gpu_allocation(data: ReportData) -> Figure:
    option = axes_option("GPUs allocated and available", "GPUs")
    for i, variant in enumerate(data.variants):
        option["series"].append(_time_line(variant.allocated_gpus, f"{variant.name}: allocated", i))
        option["series"].append(_time_line(variant.capacity_gpus, f"{variant.name}: on Ready nodes", i, dashed=True))
    return figure(option)


def gpu_utilization(data: ReportData) -> Figure:
    """Used GPUs over allocated GPUs, in percent (a gap where nothing is allocated)."""
    option = axes_option("Utilization of allocated GPUs", "percent")
    option["yAxis"]["max"] = 100
    for i, variant in enumerate(data.variants):
        allocated = dict(zip(variant.allocated_gpus.times, variant.allocated_gpus.values, strict=True))
        used = variant.used_gpus
        ratio = [
            round(100 * u / allocated[t], 2) if allocated.get(t) else None
            for t, u in zip(used.times, used.values, strict=True)
        ]
        option["series"].append(line(hours_of(used), ratio, variant.name, i, step=False))
    return figure(option)


def fragmentation(data: ReportData) -> Figure:
    return _per_variant(data, "Fragmented share of the free GPUs (FGD)", "share", lambda v: v.fragmented_share)


def queue_length(data: ReportData) -> Figure:
    return _per_variant(data, "Pods waiting to be placed", "pods", lambda v: v.pending_pods)


def node_count(data: ReportData) -> Figure:
    return _per_variant(data, "Nodes", "nodes", lambda v: v.nodes)


def cost(data: ReportData) -> Figure:
    return _per_variant(data, "Cost so far", "dollars", lambda v: v.cost_dollars, step=False)


def node_heatmap(variant: Variant) -> Figure | None:
    """Nodes × time, binned to at most ``HEATMAP_BINS`` columns; a node that did not exist is left blank."""
    matrix = variant.node_utilization
    if matrix is None or not matrix.nodes:
        return None
    rows = [bin_columns(matrix.times, row, HEATMAP_BINS) for row in matrix.values]
    times = rows[0][0]
    cells = [
        [column, row, round(100 * value, 1)]
        for row, (_, values) in enumerate(rows)
        for column, value in enumerate(values)
        if value is not None
    ]
    option: Option = {
        "animation": False,
        "title": {
            "text": f"{variant.name}: {matrix.metric} per node (%)",
            "left": "center",
            "textStyle": {"fontSize": 14},
        },
        "tooltip": {"position": "top"},
        "grid": {"left": 120, "right": 96, "top": 40, "bottom": 48},
        "xAxis": {
            "type": "category",
            "data": [f"{t / HOURS:.2f}" for t in times],
            "name": TIME_AXIS,
            "nameLocation": "middle",
            "nameGap": 28,
        },
        "yAxis": {"type": "category", "data": list(matrix.nodes)},
        "visualMap": {
            "min": 0,
            "max": 100,
            "calculable": True,
            "orient": "vertical",
            "right": 8,
            "top": "middle",
            "inRange": {"color": list(VIRIDIS)},
        },
        "series": [{"type": "heatmap", "name": matrix.metric, "data": cells}],
    }
    return figure(option, height=max(260, min(900, 100 + 14 * len(matrix.nodes))))


def latency_ecdf(data: ReportData, which: str) -> Figure:
    """The distribution of waiting (``waiting_s``) or start-up (``startup_s``) times as empirical CDFs."""
    title = "Waiting time (created to placed)" if which == "waiting_s" else "Start-up time (placed to Ready)"
    option = axes_option(title, "fraction of pods", x_name="seconds")
    option["yAxis"]["max"] = 1
    option["xAxis"]["scale"] = False
    for i, variant in enumerate(data.variants):
        values: tuple[float, ...] = getattr(variant, which)
        xs, ys = ecdf(values)
        option["series"].append(line([round(x, 3) for x in xs], [round(y, 5) for y in ys], variant.name, i))
    return figure(option)


# The comparison's bars: (label, unit, how to read it from a variant).
COMPARED: tuple[tuple[str, str, Callable[[Variant], float]], ...] = (
    ("GPU-hours idle", "GPU-hours", lambda v: v.summary.gpu_hours_idle),
    ("GPU-hours used", "GPU-hours", lambda v: v.summary.gpu_hours_used),
    ("Fragmented share of the free GPUs (FGD)", "share", lambda v: v.summary.fragmentation),
    ("Cost", "dollars", lambda v: v.summary.cost_dollars),
    ("p95 waiting time", "seconds", lambda v: percentile(v.waiting_s, 95)),
    ("Pods never placed", "pods", lambda v: float(v.summary.pods_never_placed)),
)


def comparison_bars(data: ReportData) -> list[Figure]:
    names = [v.name for v in data.variants]
    return [comparison_bar(label, unit, names, [read(v) for v in data.variants]) for label, unit, read in COMPARED]


def comparison_bar(label: str, unit: str, names: list[str], values: list[float]) -> Figure:
    """One bar per variant, in the variants' colours (NaN: no bar)."""
    option = axes_option(label, unit, x_name="")
    option["xAxis"] = {"type": "category", "data": names}
    option["tooltip"] = {"trigger": "item"}
    option["grid"]["bottom"] = 40
    option.pop("dataZoom")
    option.pop("legend")
    option["series"] = [
        {
            "type": "bar",
            "name": label,
            "data": [
                {"value": None if math.isnan(x) else round(x, 3), "itemStyle": {"color": colour(i)}}
                for i, x in enumerate(values)
            ],
            "label": {"show": True, "position": "top"},
        }
    ]
    return figure(option, height=300)


def wait_reason_bars(data: ReportData, top: int) -> Figure:
    """Pods per reason, one bar per variant, for the reasons that are in some variant's top ``top``."""
    totals: dict[str, int] = {}
    for variant in data.variants:
        for reason in top_reasons(variant, top):
            totals[reason.reason] = totals.get(reason.reason, 0) + reason.pods
    reasons = sorted(totals, key=lambda r: (-totals[r], r))
    option = axes_option("Why pods waited", "", x_name="pods")
    option["yAxis"] = {
        "type": "category",
        "data": reasons,
        "inverse": True,
        "axisLabel": {"width": 220, "overflow": "break"},
    }
    option["xAxis"]["scale"] = False
    option["tooltip"] = {"trigger": "axis", "axisPointer": {"type": "shadow"}}
    option["grid"]["left"] = 240
    option.pop("dataZoom")
    for i, variant in enumerate(data.variants):
        pods = {r.reason: r.pods for r in variant.wait_reasons}
        option["series"].append(
            {
                "type": "bar",
                "name": variant.name,
                "data": [pods.get(r, 0) for r in reasons],
                "itemStyle": {"color": colour(i)},
            }
        )
    return figure(option, height=max(260, 120 + 36 * len(reasons) * max(1, len(data.variants))))


def top_reasons(variant: Variant, top: int) -> list[WaitReason]:
    return sorted(variant.wait_reasons, key=lambda r: (-r.pods, r.reason))[:top]


def latency_percentiles(values: tuple[float, ...]) -> dict[str, float]:
    return {f"p{p}": percentile(values, p) for p in PERCENTILES}


def summary_rows(summary: Summary, queues: bool = False) -> list[tuple[str, float]]:
    """The summary table's rows; with ``queues``, Kueue's too (0 for a variant without them)."""
    totals = summary.queues
    kueue = [
        ("Workloads admitted (Kueue)", totals.admissions if totals else 0.0),
        ("Workloads preempted (Kueue)", totals.preemptions if totals else 0.0),
        ("p95 wait for admission, worst ClusterQueue (s)", totals.waiting_p95_s if totals else 0.0),
        ("GPU-hours lost to evictions (Kueue)", totals.lost_gpu_hours if totals else 0.0),
    ] if queues else []
    return [*_rows(summary), *kueue]


def _rows(summary: Summary) -> list[tuple[str, float]]:
    return [
        ("GPU-hours allocated", summary.gpu_hours_allocated),
        ("GPU-hours used", summary.gpu_hours_used),
        ("GPU-hours idle", summary.gpu_hours_idle),
        ("cost (dollars)", summary.cost_dollars),
        ("pods completed", summary.pods_completed),
        ("pods never placed", summary.pods_never_placed),
        ("SLO misses", summary.slo_misses),
        ("fragmented share of free GPUs (FGD)", summary.fragmentation),
    ]

"""The report's plots as plotly.js figure specifications (plain dicts, JSON-ready). Pure: no I/O.

Times are drawn in simulated hours since the start. Each variant keeps one colour on every plot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dratwin.report.model import ReportData, Summary, TimeSeries, Variant
from dratwin.report.stats import PERCENTILES, bin_columns, ecdf, percentile

Figure = dict[str, Any]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HEATMAP_BINS = 288
HOURS = 3600.0


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _layout(title: str, y_title: str, x_title: str = "simulated time (hours)", **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "margin": {"l": 64, "r": 24, "t": 48, "b": 48},
        "legend": {"orientation": "h", "y": -0.2},
        "height": 360,
    }
    layout.update(extra)
    return layout


def _line(series: TimeSeries, name: str, index: int, dash: str = "solid", shape: str = "hv") -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": [round(t / HOURS, 4) for t in series.times],
        "y": list(series.values),
        "line": {"color": colour(index), "dash": dash, "shape": shape, "width": 2},
    }


def _per_variant(
    data: ReportData, title: str, y_title: str, pick: Callable[[Variant], TimeSeries], shape: str = "hv"
) -> Figure:
    traces = [_line(pick(v), v.name, i, shape=shape) for i, v in enumerate(data.variants)]
    return {"data": traces, "layout": _layout(title, y_title)}


def gpu_allocation(data: ReportData) -> Figure:
    traces: list[dict[str, Any]] = []
    for i, variant in enumerate(data.variants):
        traces.append(_line(variant.allocated_gpus, f"{variant.name}: allocated", i))
        traces.append(_line(variant.capacity_gpus, f"{variant.name}: on Ready nodes", i, dash="dot"))
    return {"data": traces, "layout": _layout("GPUs allocated and available", "GPUs")}


def gpu_utilization(data: ReportData) -> Figure:
    """Used GPUs over allocated GPUs, in percent (no value where nothing is allocated)."""
    traces = []
    for i, variant in enumerate(data.variants):
        allocated = dict(zip(variant.allocated_gpus.times, variant.allocated_gpus.values, strict=True))
        used = variant.used_gpus
        ratio = [
            round(100 * u / allocated[t], 2) if allocated.get(t) else None
            for t, u in zip(used.times, used.values, strict=True)
        ]
        trace = _line(used, variant.name, i, shape="linear")
        trace["y"] = ratio
        traces.append(trace)
    layout = _layout("Utilization of allocated GPUs", "percent")
    layout["yaxis"]["range"] = [0, 105]
    return {"data": traces, "layout": layout}


def queue_length(data: ReportData) -> Figure:
    return _per_variant(data, "Pods waiting to be placed", "pods", lambda v: v.pending_pods)


def node_count(data: ReportData) -> Figure:
    return _per_variant(data, "Nodes", "nodes", lambda v: v.nodes)


def cost(data: ReportData) -> Figure:
    return _per_variant(data, "Cost so far", "dollars", lambda v: v.cost_dollars, shape="linear")


def node_heatmap(variant: Variant) -> Figure | None:
    matrix = variant.node_utilization
    if matrix is None or not matrix.nodes:
        return None
    rows = [bin_columns(matrix.times, row, HEATMAP_BINS) for row in matrix.values]
    times = rows[0][0] if rows else []
    z = [[None if v is None else round(100 * v, 1) for v in values] for _, values in rows]
    figure: Figure = {
        "data": [
            {
                "type": "heatmap",
                "x": [round(t / HOURS, 4) for t in times],
                "y": list(matrix.nodes),
                "z": z,
                "zmin": 0,
                "zmax": 100,
                "colorscale": "Viridis",
                "colorbar": {"title": {"text": "%"}},
                "hoverongaps": False,
            }
        ],
        "layout": _layout(
            f"{variant.name}: {matrix.metric} per node",
            "node",
            height=max(260, min(900, 60 + 14 * len(matrix.nodes))),
        ),
    }
    figure["layout"]["yaxis"] = {"title": {"text": "node"}, "automargin": True, "type": "category"}
    return figure


def latency_ecdf(data: ReportData, which: str) -> Figure:
    """The distribution of waiting (``waiting_s``) or start-up (``startup_s``) times as empirical CDFs."""
    traces = []
    for i, variant in enumerate(data.variants):
        values: tuple[float, ...] = getattr(variant, which)
        xs, ys = ecdf(values)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": variant.name,
                "x": [round(x, 3) for x in xs],
                "y": [round(y, 5) for y in ys],
                "line": {"color": colour(i), "shape": "hv", "width": 2},
            }
        )
    title = "Waiting time (created to placed)" if which == "waiting_s" else "Start-up time (placed to Ready)"
    layout = _layout(title, "fraction of pods", x_title="seconds")
    layout["yaxis"]["range"] = [0, 1.02]
    return {"data": traces, "layout": layout}


# The comparison's bars: (label, unit, how to read it from a variant).
COMPARED: tuple[tuple[str, str, Callable[[Variant], float]], ...] = (
    ("GPU-hours idle", "GPU-hours", lambda v: v.summary.gpu_hours_idle),
    ("Cost", "dollars", lambda v: v.summary.cost_dollars),
    ("p95 waiting time", "seconds", lambda v: percentile(v.waiting_s, 95)),
    ("Pods never placed", "pods", lambda v: float(v.summary.pods_never_placed)),
)


def comparison_bars(data: ReportData) -> list[Figure]:
    figures = []
    names = [v.name for v in data.variants]
    for label, unit, read in COMPARED:
        values = [read(v) for v in data.variants]
        figures.append(
            {
                "data": [
                    {
                        "type": "bar",
                        "x": names,
                        "y": [None if math.isnan(x) else round(x, 3) for x in values],
                        "marker": {"color": [colour(i) for i in range(len(names))]},
                        "text": [_short(x) for x in values],
                        "textposition": "auto",
                    }
                ],
                "layout": _layout(label, unit, x_title="variant", height=300, showlegend=False),
            }
        )
    return figures


def wait_reason_bars(data: ReportData, top: int) -> Figure:
    traces = []
    for i, variant in enumerate(data.variants):
        reasons = top_reasons(variant, top)
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": variant.name,
                "y": [r.reason for r in reasons],
                "x": [r.pods for r in reasons],
                "marker": {"color": colour(i)},
            }
        )
    layout = _layout("Why pods waited", "reason", x_title="pods", barmode="group")
    layout["yaxis"] = {"automargin": True, "autorange": "reversed", "type": "category"}
    return {"data": traces, "layout": layout}


def top_reasons(variant: Variant, top: int) -> list[Any]:
    return sorted(variant.wait_reasons, key=lambda r: (-r.pods, r.reason))[:top]


def latency_percentiles(values: tuple[float, ...]) -> dict[str, float]:
    return {f"p{p}": percentile(values, p) for p in PERCENTILES}


def summary_rows(summary: Summary) -> list[tuple[str, float]]:
    return [
        ("GPU-hours allocated", summary.gpu_hours_allocated),
        ("GPU-hours used", summary.gpu_hours_used),
        ("GPU-hours idle", summary.gpu_hours_idle),
        ("cost (dollars)", summary.cost_dollars),
        ("pods completed", summary.pods_completed),
        ("pods never placed", summary.pods_never_placed),
        ("SLO misses", summary.slo_misses),
        ("fragmentation", summary.fragmentation),
    ]


def _short(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"

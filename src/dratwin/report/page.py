"""The report as one self-contained HTML page: Apache ECharts inlined, the figures as JSON, no network needed.

ECharts is not on PyPI: ``make`` vendors its bundle from the npm package (pinned version and checksum,
see the Makefile's ``vendor`` target) into ``vendor/echarts.min.js`` beside this module, and it ships in
the package from there.

``render_report`` is pure (data in, text out); ``write_report`` writes it. The page writes what it drew
into ``<output id="dratwin-render-status">`` (plots, plots rendered, errors, milliseconds), which the
browser check reads.
"""

from __future__ import annotations

import math
from functools import cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import jinja2
import msgspec

from dratwin.errors import DratwinError
from dratwin.report import figures as fig
from dratwin.report import figures_queues as queue_fig
from dratwin.report.model import ReportData
from dratwin.report.stats import PERCENTILES

TOP_WAIT_REASONS = 10


VENDORED = "vendor/echarts.min.js"


class ReportUnavailable(DratwinError):
    """The plotting library's bundle is not installed, so no page can be written."""


@cache
def plot_library_js() -> str:
    """The ECharts bundle vendored into the package."""
    bundle = resources.files("dratwin.report").joinpath(VENDORED)
    try:
        return bundle.read_text(encoding="utf-8")
    except FileNotFoundError as missing:
        raise ReportUnavailable(
            f"dratwin/report/{VENDORED} is missing, so no report can be written: this install lacks the "
            "committed ECharts bundle. Reinstall from a full checkout, or run `make vendor` (needs npm)."
        ) from missing


@cache
def _template() -> jinja2.Template:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("dratwin.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template("report.html.j2")


def build_figures(data: ReportData) -> dict[str, fig.Figure]:
    """Element id → figure, in page order."""
    figures: dict[str, fig.Figure] = {}
    for i, bars in enumerate([*fig.comparison_bars(data), *queue_fig.queue_comparison_bars(data)]):
        figures[f"plot-compare-{i}"] = bars
    figures["plot-gpus"] = fig.gpu_allocation(data)
    figures["plot-utilization"] = fig.gpu_utilization(data)
    figures["plot-fragmentation"] = fig.fragmentation(data)
    figures["plot-queue"] = fig.queue_length(data)
    figures["plot-nodes"] = fig.node_count(data)
    figures["plot-cost"] = fig.cost(data)
    for i, variant in enumerate(data.variants):
        heatmap = fig.node_heatmap(variant)
        if heatmap is not None:
            figures[f"plot-heatmap-{i}"] = heatmap
    figures["plot-waiting"] = fig.latency_ecdf(data, "waiting_s")
    figures["plot-startup"] = fig.latency_ecdf(data, "startup_s")
    figures["plot-reasons"] = fig.wait_reason_bars(data, TOP_WAIT_REASONS)
    if queue_fig.has_queues(data):
        figures["plot-queues-pending"] = queue_fig.pending_workloads(data)
        figures["plot-queues-admitted"] = queue_fig.admitted_workloads(data)
        figures["plot-queues-admissions"] = queue_fig.admissions_and_preemptions(data)
        figures["plot-queues-borrowed"] = queue_fig.borrowed_quota(data)
        figures["plot-queues-waiting"] = queue_fig.waiting_times(data)
    return figures


def render_report(data: ReportData) -> str:
    """The page's HTML."""
    figures = build_figures(data)
    ids = list(figures)
    return _template().render(
        data=data,
        version=_version(),
        duration=_duration(data.duration_s),
        colours=[fig.colour(i) for i in range(len(data.variants))],
        summary_table=_summary_table(data),
        percentile_names=[f"p{p}" for p in PERCENTILES],
        latency_table=_latency_table(data),
        wait_reasons=[(v, fig.top_reasons(v, TOP_WAIT_REASONS)) for v in data.variants],
        comparison_ids=[i for i in ids if i.startswith("plot-compare-")],
        time_ids=["plot-gpus", "plot-utilization", "plot-fragmentation", "plot-queue", "plot-nodes", "plot-cost"],
        heatmap_ids=[i for i in ids if i.startswith("plot-heatmap-")],
        latency_ids=["plot-waiting", "plot-startup"],
        reasons_id="plot-reasons",
        queue_ids=[i for i in ids if i.startswith("plot-queues-")],
        queue_table=_queue_table(data),
        plot_library=plot_library_js(),
        heights={i: f["height"] for i, f in figures.items()},
        figures_json=_script_json(figures),
    )


def write_report(data: ReportData, path: Path) -> int:
    """Write the page to ``path``; returns its size in bytes."""
    text = render_report(data).encode("utf-8")
    path.write_bytes(text)
    return len(text)


def _script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: no "<" at all, so nothing can close or comment it out."""
    return msgspec.json.encode(value).decode("utf-8").replace("<", "\\u003c")


def _summary_table(data: ReportData) -> list[tuple[str, list[str]]]:
    queues = any(v.summary.queues is not None for v in data.variants)
    columns = [fig.summary_rows(v.summary, queues) for v in data.variants]
    if not columns:
        return []
    return [(label, [_cell(column[row][1]) for column in columns]) for row, (label, _) in enumerate(columns[0])]


def _latency_table(data: ReportData) -> list[list[str]]:
    rows = []
    for variant in data.variants:
        waiting = fig.latency_percentiles(variant.waiting_s)
        startup = fig.latency_percentiles(variant.startup_s)
        rows.append(
            [
                variant.name,
                str(len(variant.waiting_s)),
                *(_seconds(waiting[f"p{p}"]) for p in PERCENTILES),
                *(_seconds(startup[f"p{p}"]) for p in PERCENTILES),
            ]
        )
    return rows


def _queue_table(data: ReportData) -> list[list[str]]:
    """Per variant and ClusterQueue (first seed): admissions, preemptions, pending at the end, waiting
    percentiles, GPU-hours lost and the peak of each borrowed resource."""
    rows = []
    for variant in data.variants:
        for q in variant.queues:
            waits = [_seconds(w) if q.waiting_count else "n/a"
                     for w in (q.waiting_p50_s, q.waiting_p95_s, q.waiting_p99_s)]
            borrowed = ", ".join(f"{name} {max(series.values, default=0):g}" for name, series in q.borrowed) or "-"
            rows.append([variant.name, q.cluster_queue, f"{q.admitted_total:,}", f"{q.preempted_total:,}",
                         f"{q.pending_at_end:,}", *waits, f"{q.lost_gpu_hours:,.2f}", borrowed])
    return rows


def _cell(value: float) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}"


def _seconds(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.1f} s"


def _duration(seconds: float) -> str:
    days, rest = divmod(round(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    return " ".join(p for p in parts if p) or f"{seconds:g} s"


def _version() -> str:
    try:
        return version("dratwin")
    except PackageNotFoundError:
        return "unknown"

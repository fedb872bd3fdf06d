"""Which plotting library draws the report best offline: page weight and load time in headless Chromium.

The demo report's figures (``dratwin.report.demo_report`` → ``build_figures``, ECharts options) are drawn
by each candidate in one self-contained page: Apache ECharts (the report as dratwin writes it), plotly.js
and uPlot, the last two from their npm packages (``make vendor`` fetches ECharts)::

    make vendor && mkdir -p build/npm && (cd build/npm && npm pack plotly.js-dist-min@4.1.2 uplot@1.6.32 && \\
        for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done)
    .venv/bin/python bench/report_libraries.py --npm build/npm --repeats 5

Each page writes the same status element as the report (plots, plots rendered, milliseconds), read by
``dratwin.report.browser.check_page``. uPlot has no heatmap or bar series of its own: its page draws the
line plots only. Figures printed: bytes, the median Chromium wall time (start, load, render, dump), and
the median in-page time from navigation to the last plot drawn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dratwin.report import build_figures, demo_report, write_report
from dratwin.report.browser import PageCheck, check_page, find_chromium

STATUS = """
<output id="dratwin-render-status" data-state="loading" hidden></output>
<script>window.dratwinErrors = [];
window.addEventListener("error", function (e) { window.dratwinErrors.push(String(e.message)); });</script>
"""
FINISH = """
function finish(ids) {
  var s = document.getElementById("dratwin-render-status");
  s.dataset.plots = String(ids.length);
  s.dataset.rendered = String(ids.filter(function (id) {
    return document.getElementById(id).querySelector("canvas, svg") !== null; }).length);
  s.dataset.ms = String(Math.round(performance.now() - started));
  s.dataset.sinceNavigation = String(Math.round(performance.now()));
  s.dataset.errors = JSON.stringify(window.dratwinErrors);
  s.dataset.state = "done";
}
"""


def _divs(ids: list[str]) -> str:
    return "".join(f'<div id="{i}" style="width:560px;height:360px"></div>' for i in ids)


def _line_pairs(trace: dict[str, Any]) -> list[list[Any]]:
    return [[x, y] for x, y in zip(trace["x"], trace["y"], strict=True)]


def plotly_figure(figure: dict[str, Any]) -> dict[str, Any]:
    """The same figure for plotly.js (lines, heatmap, bars), from its ECharts option."""
    option = figure["option"]
    layout = {"title": {"text": option["title"]["text"]}, "height": figure["height"]}
    traces: list[dict[str, Any]] = []
    for series in option["series"]:
        if series["type"] == "heatmap":
            columns, rows = option["xAxis"]["data"], option["yAxis"]["data"]
            z: list[list[float | None]] = [[None] * len(columns) for _ in rows]
            for column, row, value in series["data"]:
                z[row][column] = value
            traces.append({"type": "heatmap", "x": columns, "y": rows, "z": z, "colorscale": "Viridis"})
        elif series["type"] == "bar":
            values = [d["value"] if isinstance(d, dict) else d for d in series["data"]]
            horizontal = option["yAxis"].get("type") == "category"
            categories = option["yAxis"]["data"] if horizontal else option["xAxis"]["data"]
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h" if horizontal else "v",
                    "name": series["name"],
                    "x": values if horizontal else categories,
                    "y": categories if horizontal else values,
                }
            )
        else:
            xs, ys = zip(*series["data"], strict=True) if series["data"] else ((), ())
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": series["name"],
                    "x": xs,
                    "y": ys,
                    "line": {"shape": "hv" if series["step"] else "linear"},
                }
            )
    return {"data": traces, "layout": layout}


def plotly_page(figures: dict[str, Any], library: str) -> str:
    specs = {i: plotly_figure(f) for i, f in figures.items()}
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{STATUS}</head><body>{_divs(list(specs))}"
        f"<script>{library}</script><script>var started = performance.now();{FINISH}"
        f"var specs = {json.dumps(specs)};"
        "Promise.all(Object.keys(specs).map(function (id) {"
        " return Plotly.newPlot(id, specs[id].data, specs[id].layout); }))"
        ".then(function () { finish(Object.keys(specs)); });</script></body></html>"
    )


def uplot_page(figures: dict[str, Any], library: str, css: str) -> str:
    lines = {i: f["option"] for i, f in figures.items() if all(s["type"] == "line" for s in f["option"]["series"])}
    data = {}
    for i, option in lines.items():
        # uPlot wants one x array shared by every series: the union of the series' x values.
        xs = sorted({x for s in option["series"] for x, _ in s["data"]})
        columns = [xs]
        for series in option["series"]:
            by_x = dict((x, y) for x, y in series["data"])
            columns.append([by_x.get(x) for x in xs])
        names = [s["name"] for s in option["series"]]
        data[i] = {"title": option["title"]["text"], "names": names, "columns": columns}
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style>{STATUS}</head><body>"
        f"{_divs(list(data))}<script>{library}</script><script>var started = performance.now();{FINISH}"
        f"var plots = {json.dumps(data)};"
        "Object.keys(plots).forEach(function (id) { var p = plots[id];"
        " var series = [{}].concat(p.names.map(function (n) { return {label: n, stroke: '#0072B2'}; }));"
        " new uPlot({title: p.title, width: 560, height: 320, scales: {x: {time: false}}, series: series},"
        " p.columns, document.getElementById(id)); });"
        "finish(Object.keys(plots));</script></body></html>"
    )


def measure(page: Path, chromium: str, repeats: int) -> tuple[list[PageCheck], float, float]:
    checks = [check_page(page, chromium) for _ in range(repeats)]
    return (
        checks,
        statistics.median(c.wall_s for c in checks),
        statistics.median(c.since_navigation_ms for c in checks),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--npm", type=Path, required=True, help="folder with the unpacked echarts and uplot packages")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=24, help="nodes in the demo (rows of each heatmap)")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium, or set DRATWIN_CHROMIUM")
    data = demo_report(nodes=args.nodes)
    figures = build_figures(data)
    plotly_js = next(args.npm.glob("plotly.js-dist-min*/package/plotly.min.js")).read_text(encoding="utf-8")
    uplot_dir = next(args.npm.glob("uplot*/package/dist"))
    builders: dict[str, Callable[[Path], object]] = {
        "ECharts (dratwin's report)": lambda p: write_report(data, p),
        "plotly.js": lambda p: p.write_text(plotly_page(figures, plotly_js), encoding="utf-8"),
        "uPlot (lines only)": lambda p: p.write_text(
            uplot_page(
                figures,
                (uplot_dir / "uPlot.iife.min.js").read_text(encoding="utf-8"),
                (uplot_dir / "uPlot.min.css").read_text(encoding="utf-8"),
            ),
            encoding="utf-8",
        ),
    }
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.html"
        empty.write_text(f"<!DOCTYPE html><html><body>{STATUS}<script>var started = 0;{FINISH}finish([]);</script>")
        _, empty_wall, _ = measure(empty, chromium, args.repeats)
        print(f"empty page: Chromium wall {empty_wall:.2f} s")
        print("| library | bytes | plots rendered | Chromium wall (s) | navigation to last plot (ms) | errors |")
        print("|---|---:|---:|---:|---:|---|")
        for name, build in builders.items():
            page = Path(folder) / "page.html"
            build(page)
            checks, wall, navigation = measure(page, chromium, args.repeats)
            last = checks[-1]
            errors = sorted({*last.errors, *last.console_messages})
            print(
                f"| {name} | {page.stat().st_size:,} | {last.rendered}/{last.plots} | {wall:.2f} | "
                f"{navigation:.0f} | {'; '.join(errors) or 'none'} |"
            )


if __name__ == "__main__":
    main()

"""The report page: self-contained, every plot there, the numbers and reasons shown, under its weight budget."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest
from tests.builders.report import report, variant
from tests.conftest import REPO

from dratwin.report import TimeSeries, build_figures, demo_report, render_report, write_report
from dratwin.report import page as page_module
from dratwin.report.figures import LINE_POINTS
from dratwin.report.page import ReportUnavailable, plot_library_js

# The demo (24 nodes, two variants, two simulated days) weighs about 1.45 MB, 1.12 MB of it ECharts.
DEMO_PAGE_BUDGET_BYTES = 2_000_000


class Elements(HTMLParser):
    """Every start tag's attributes, and the text of the figures' JSON script."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self._in_figures = False
        self.figures_text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags.append((tag, values))
        self._in_figures = values.get("id") == "dratwin-figures"

    def handle_data(self, data: str) -> None:
        if self._in_figures:
            self.figures_text += data

    def handle_endtag(self, tag: str) -> None:
        self._in_figures = False


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def demo_html() -> str:
    return render_report(demo_report())


def test_the_page_loads_nothing_from_elsewhere(demo_html: str) -> None:
    for tag, attrs in elements(demo_html).tags:
        for name in ("src", "href", "data", "srcset", "action"):
            value = attrs.get(name, "")
            assert not re.match(r"\s*(https?:)?//", value), f"<{tag} {name}={value!r}> needs the network"
        assert not (tag == "link" and attrs.get("rel") == "stylesheet"), "stylesheets are inlined"
    assert "@import" not in demo_html


def test_the_plotting_library_is_inlined(demo_html: str) -> None:
    scripts = [attrs for tag, attrs in elements(demo_html).tags if tag == "script"]
    assert all("src" not in attrs for attrs in scripts)
    assert plot_library_js() in demo_html
    assert "echarts" in plot_library_js()[:20_000]


def test_every_figure_has_its_element_and_every_plot_kind_is_there(demo_html: str) -> None:
    parsed = elements(demo_html)
    figures = json.loads(parsed.figures_text)
    ids = {attrs["id"] for _, attrs in parsed.tags if "id" in attrs}
    assert set(figures) <= ids
    expected = {
        "plot-gpus",
        "plot-utilization",
        "plot-fragmentation",
        "plot-queue",
        "plot-nodes",
        "plot-cost",
        "plot-heatmap-0",
        "plot-heatmap-1",
        "plot-waiting",
        "plot-startup",
        "plot-reasons",
        "plot-compare-0",
        "plot-compare-1",
        "plot-compare-2",
        "plot-compare-3",
        "plot-compare-4",
        "plot-compare-5",
    }
    assert set(figures) == expected
    kinds = {series["type"] for figure in figures.values() for series in figure["option"]["series"]}
    assert kinds == {"line", "heatmap", "bar"}
    heights = {attrs["id"]: attrs.get("style", "") for _, attrs in parsed.tags if attrs.get("id") in figures}
    assert all(heights[i] == f"height: {figures[i]['height']}px" for i in figures)


def test_the_demo_page_stays_under_its_weight_budget(tmp_path: Path) -> None:
    size = write_report(demo_report(), tmp_path / "report.html")
    assert size == (tmp_path / "report.html").stat().st_size
    assert size < DEMO_PAGE_BUDGET_BYTES, f"{size:,} bytes"


def test_the_latency_table_shows_p50_p95_p99_per_variant() -> None:
    html = render_report(report(variant("fast", waiting=[float(i) for i in range(1, 101)]), variant("slow")))
    cells = re.findall(r"<td>([^<]*)</td>", html)
    fast = cells[cells.index("fast") :][:8]
    assert fast == ["fast", "100", "50.5 s", "95.0 s", "99.0 s", "75.0 s", "88.5 s", "89.7 s"]


def test_wait_reasons_are_listed_most_pods_first_with_their_explanation() -> None:
    reasons = [("few", 2, "a rare reason"), ("many", 40, "the usual <reason> & more")]
    html = render_report(report(variant("dra", reasons=reasons)))
    assert html.index("<code>many</code>") < html.index("<code>few</code>")
    assert "the usual &lt;reason&gt; &amp; more" in html
    option = build_figures(report(variant("dra", reasons=reasons)))["plot-reasons"]["option"]
    assert (option["yAxis"]["data"], option["series"][0]["data"]) == (["many", "few"], [40, 2])


def test_the_reason_bars_share_one_axis_across_variants() -> None:
    first = variant("a", reasons=[("x", 5, ""), ("y", 1, "")])
    second = variant("b", reasons=[("y", 9, "")])
    option = build_figures(report(first, second))["plot-reasons"]["option"]
    assert option["yAxis"]["data"] == ["y", "x"]
    assert [s["data"] for s in option["series"]] == [[1, 5], [9, 0]]


def test_names_from_the_scenario_cannot_break_out_of_the_page() -> None:
    hostile = '</script><script>alert(1)</script>'
    html = render_report(report(variant(hostile, nodes=[hostile]), title=hostile))
    assert "<script>alert(1)" not in html
    figures = json.loads(elements(html).figures_text)
    assert figures["plot-heatmap-0"]["option"]["yAxis"]["data"] == [hostile]


def test_a_variant_without_per_node_data_gets_no_heatmap_and_a_note() -> None:
    html = render_report(report(variant("plain", nodes=[])))
    assert "No per-node data" in html
    assert not any(name.startswith("plot-heatmap") for name in build_figures(report(variant("plain", nodes=[]))))


def test_utilization_is_used_over_allocated_and_empty_where_nothing_is_allocated() -> None:
    base = variant("v")
    changed = msgspec.structs.replace(
        base,
        allocated_gpus=TimeSeries(times=(0.0, 3600.0), values=(0.0, 8.0)),
        used_gpus=TimeSeries(times=(0.0, 3600.0), values=(0.0, 6.0)),
    )
    figure = build_figures(report(changed))
    assert figure["plot-utilization"]["option"]["series"][0]["data"] == [[0.0, None], [1.0, 75.0]]


def test_the_demo_is_deterministic_for_a_seed() -> None:
    assert render_report(demo_report(seed=3)) == render_report(demo_report(seed=3))
    assert render_report(demo_report(seed=3)) != render_report(demo_report(seed=4))


def test_an_install_without_the_echarts_bundle_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_module, "VENDORED", "vendor/no-such-bundle.js")
    plot_library_js.cache_clear()
    try:
        with pytest.raises(ReportUnavailable, match="make vendor"):
            render_report(report(variant("a")))
    finally:
        plot_library_js.cache_clear()


def test_the_heatmap_leaves_nodes_that_did_not_exist_blank() -> None:
    option = build_figures(report(variant("v", nodes=["n1"])))["plot-heatmap-0"]["option"]
    assert option["series"][0]["data"] == [[0, 0, 50.0], [2, 0, 100.0]]


def test_a_long_series_is_thinned_on_the_page_but_keeps_its_peak() -> None:
    times = tuple(float(t) for t in range(50_000))
    values = tuple(100.0 if t == 12_345 else 1.0 for t in range(50_000))
    long = msgspec.structs.replace(variant("v"), pending_pods=TimeSeries(times=times, values=values))
    data = build_figures(report(long))["plot-queue"]["option"]["series"][0]["data"]
    assert len(data) <= LINE_POINTS
    assert max(y for _, y in data) == 100.0


def test_the_committed_echarts_bundle_is_the_one_the_makefile_pins() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    pinned = re.search(r"^ECHARTS_SHA256 := ([0-9a-f]{64})$", makefile, re.M)
    bundle = REPO / "src" / "dratwin" / "report" / "vendor" / "echarts.min.js"
    assert pinned is not None and hashlib.sha256(bundle.read_bytes()).hexdigest() == pinned.group(1)


# ---- Kueue's queues -------------------------------------------------------------------------------------

QUEUE_PLOTS = ["plot-queues-pending", "plot-queues-admitted", "plot-queues-admissions", "plot-queues-borrowed",
               "plot-queues-waiting"]


def test_the_queues_section_is_there_only_with_kueue() -> None:
    from tests.builders.kueue_report import kueue_report

    with_queues = render_report(kueue_report())
    assert '<h2 id="queues">' in with_queues and 'href="#queues"' in with_queues
    figures = build_figures(kueue_report())
    assert [i for i in figures if i.startswith("plot-queues-")] == QUEUE_PLOTS
    without = render_report(demo_report(nodes=4))
    assert 'id="queues"' not in without and "plot-queues-" not in without
    assert "Workloads preempted (Kueue)" not in without


def test_the_queue_figures_show_each_variant_and_cluster_queue() -> None:
    from tests.builders.kueue_report import kueue_outputs, kueue_report

    data = kueue_report()
    figures = build_figures(data)
    pending = figures["plot-queues-pending"]["option"]["series"]
    assert [s["name"] for s in pending] == ["default: team-a", "default: team-b", "seed-2: team-a", "seed-2: team-b"]
    first = kueue_outputs()[0].result.kueue
    assert first is not None
    team_a = first.cluster_queues[0]
    assert pending[0]["data"][-1] == [6.0, float(team_a.pending_at_end)]  # carried on to the end of the run
    admissions = figures["plot-queues-admissions"]["option"]["series"]
    assert sum(y for _, y in admissions[0]["data"]) == team_a.admissions
    assert sum(y for _, y in admissions[1]["data"]) == team_a.preemptions
    waiting = figures["plot-queues-waiting"]["option"]
    assert waiting["xAxis"]["data"] == ["default: team-a", "default: team-b", "seed-2: team-a", "seed-2: team-b"]
    assert waiting["series"][1]["data"][0] == round(team_a.waiting_seconds.p95 / 60, 2)
    borrowed = [s["name"] for s in figures["plot-queues-borrowed"]["option"]["series"]]
    assert "default: team-b: p5/nvidia.com/gpu" in borrowed
    bars = [f["option"]["title"]["text"] for i, f in figures.items() if i.startswith("plot-compare-")]
    assert bars[-3:] == ["Workloads preempted (Kueue)", "p95 wait for admission, worst ClusterQueue",
                         "GPU-hours lost to evictions (Kueue)"]
    html = render_report(data)
    assert "team-a" in html and "p5/nvidia.com/gpu 8" in html  # the queue table's borrowed peak

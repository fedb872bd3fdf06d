"""The report in a real headless Chromium, with no network: no console errors, every plot rendered.

Runs wherever Chromium is installed (``apt-get install chromium``; ``.ci/run`` installs it) or
``DRATWIN_CHROMIUM`` names one. Without one it is skipped, with the reason, except in CI, where it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dratwin.report import build_figures, demo_report, render_report, write_report
from dratwin.report.browser import check_page, find_chromium
from dratwin.report.page import plot_library_js

CHROMIUM = find_chromium()

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("CI"),
        reason="Chromium is not installed (apt-get install chromium, or set DRATWIN_CHROMIUM): the page is not "
        "loaded in a browser",
    ),
]


def chromium() -> str:
    assert CHROMIUM is not None, "CI runs the browser check: install Chromium (apt-get install chromium)"
    return CHROMIUM


def test_the_demo_report_renders_every_plot_offline_without_console_errors(tmp_path: Path) -> None:
    data = demo_report()
    page = tmp_path / "report.html"
    write_report(data, page)
    result = check_page(page, chromium())
    assert result.errors == ()
    assert result.console_messages == ()
    assert result.state == "done"
    assert result.plots == len(build_figures(data)) == 17  # 6 bars, 6 curves, 2 heatmaps, 2 latencies, reasons
    assert result.rendered == result.plots


def test_a_page_that_needs_the_network_is_caught(tmp_path: Path) -> None:
    html = render_report(demo_report(nodes=4)).replace(plot_library_js(), "")
    html = html.replace("<script>\n\n</script>", '<script src="https://cdn.jsdelivr.net/npm/echarts@6/dist/echarts.min.js"></script>')
    assert 'src="https://cdn.jsdelivr.net/' in html
    page = tmp_path / "online.html"
    page.write_text(html, encoding="utf-8")
    result = check_page(page, chromium())
    assert not result.ok
    assert result.rendered == 0
    assert any("echarts is not defined" in message for message in (*result.errors, *result.console_messages))


def test_a_report_with_kueue_renders_its_queue_plots(tmp_path: Path) -> None:
    from tests.builders.kueue_report import kueue_report

    data = kueue_report()
    page = tmp_path / "queues.html"
    write_report(data, page)
    result = check_page(page, chromium())
    assert (result.errors, result.console_messages, result.state) == ((), (), "done")
    figures = build_figures(data)
    assert sum(i.startswith("plot-queues-") for i in figures) == 5
    assert result.plots == len(figures) == 17 + 3 + 5  # the queue bars in the comparison, the Queues section
    assert result.rendered == result.plots

"""The simulation report: one self-contained HTML page (``--report out.html``) built from ``ReportData``."""

from __future__ import annotations

from dratwin.report.demo import demo_report
from dratwin.report.model import NodeMatrix, ReportData, Summary, TimeSeries, Variant, WaitReason
from dratwin.report.page import build_figures, render_report, write_report

__all__ = [
    "NodeMatrix",
    "ReportData",
    "Summary",
    "TimeSeries",
    "Variant",
    "WaitReason",
    "build_figures",
    "demo_report",
    "render_report",
    "write_report",
]

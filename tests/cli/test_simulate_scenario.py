"""``dratwin simulate`` on a ``kind: Scenario`` file: the comparison table, ``-o json``, parallel runs, bad
files, and the report and metrics files.

The golden table is ``tests/golden/simulate/small-scenario.out``; when the output changes on purpose,
regenerate it with ``DRATWIN_UPDATE_GOLDEN=1`` and read the diff before committing.
"""

from __future__ import annotations

import csv
import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from tests.builders.scenarios import write
from tests.builders.simulate_cli import SMALL, simulate, small_scenario

from dratwin.cli.simulate_scenario import BatchLine, is_scenario_file
from dratwin.report.browser import check_page, find_chromium

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "simulate" / "small-scenario.out"


def test_the_comparison_table_is_the_golden_one(tmp_path: Path) -> None:
    outcome = simulate(small_scenario(tmp_path), "--jobs", "1")
    assert outcome.code == 1  # some training pods are still pending when the 12 hours end
    if os.environ.get("DRATWIN_UPDATE_GOLDEN"):
        GOLDEN.write_text(outcome.out, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert outcome.out == expected, "".join(difflib.unified_diff(
        expected.splitlines(keepends=True), outcome.out.splitlines(keepends=True), "golden", "now"))


def _json(tmp_path: Path, *args: str) -> dict[str, Any]:
    outcome = simulate(small_scenario(tmp_path), "-o", "json", *args)
    assert outcome.code in (0, 1), outcome.err
    document: dict[str, Any] = json.loads(outcome.out)
    return document


def test_json_has_every_run_and_the_comparison(tmp_path: Path) -> None:
    document = _json(tmp_path, "--jobs", "1")
    assert set(document) == {"scenario", "path", "comparison", "runs", "files"}
    assert document["scenario"] == "small"
    assert [(r["variant"], r["seed"]) for r in document["runs"]] == [
        ("dra", 7), ("dra", 8), ("device-plugin", 7), ("device-plugin", 8)]
    run = document["runs"][0]
    for key in ("events", "waiting_seconds", "startup_seconds", "gpu_hours_allocated", "never_placed",
                "nodes_over_time", "cost_usd", "cost_by_instance_type", "notes"):
        assert key in run
    assert [c["variant"] for c in document["comparison"]] == ["dra", "device-plugin"]
    assert document["files"] == {}


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 6)


@dataclass(frozen=True)
class Column:
    name: str
    of_run: Any


COLUMNS = [
    Column("gpu_hours_allocated", lambda r: r["gpu_hours_allocated"]),
    Column("gpu_hours_idle", lambda r: r["gpu_hours_idle"]),
    Column("waiting_p50_seconds", lambda r: r["waiting_seconds"]["p50"]),
    Column("waiting_p95_seconds", lambda r: r["waiting_seconds"]["p95"]),
    Column("waiting_p99_seconds", lambda r: r["waiting_seconds"]["p99"]),
    Column("startup_p95_seconds", lambda r: r["startup_seconds"]["p95"]),
    Column("pods_never_placed", lambda r: r["pods_pending_at_end"]),
    Column("nodes_peak", lambda r: max(c["nodes"] for c in r["nodes_over_time"])),
    Column("cost_usd", lambda r: r["cost_usd"]),
]


@pytest.mark.parametrize("column", COLUMNS, ids=[c.name for c in COLUMNS])
def test_each_comparison_value_is_the_mean_of_its_runs(column: Column, tmp_path: Path) -> None:
    document = _json(tmp_path, "--jobs", "1")
    for row in document["comparison"]:
        runs = [r for r in document["runs"] if r["variant"] == row["variant"]]
        assert row["runs"] == len(runs) == 2
        assert row[column.name] == _mean([column.of_run(r) for r in runs])


def test_the_allocated_share_is_allocated_over_present_gpu_hours(tmp_path: Path) -> None:
    dra = _json(tmp_path, "--jobs", "1")["comparison"][0]
    present = dra["gpu_hours_allocated"] + dra["gpu_hours_idle"]
    assert present > 0
    assert dra["gpu_allocated_share"] == round(dra["gpu_hours_allocated"] / present, 6)


def test_runs_in_parallel_processes_give_the_serial_bytes(tmp_path: Path) -> None:
    path = small_scenario(tmp_path)
    serial = simulate(path, "-o", "json", "--jobs", "1")
    parallel = simulate(path, "-o", "json", "--jobs", "2")
    assert parallel.code == serial.code
    assert parallel.out == serial.out


def test_seed_and_until_replace_the_files(tmp_path: Path) -> None:
    document = _json(tmp_path, "--jobs", "1", "--seed", "3", "--until", "2h")
    assert [(r["variant"], r["seed"], r["until_seconds"]) for r in document["runs"]] == [
        ("dra", 3, 7200.0), ("device-plugin", 3, 7200.0)]


@dataclass(frozen=True)
class BadCase:
    name: str
    old: str
    new: str
    line: int
    says: str


BAD = [
    BadCase("unreadable duration", "duration: 12h", "duration: 12 hours", 6, "duration"),
    BadCase("unknown field", "  seeds: [7, 8]\n", "  seeds: [7, 8]\n  seedz: 3\n", 8, "seedz"),
]


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_a_bad_scenario_exits_2_with_file_and_line(case: BadCase, tmp_path: Path) -> None:
    assert SMALL.count(case.old) == 1
    path = small_scenario(tmp_path, SMALL.replace(case.old, case.new))
    outcome = simulate(path, "--jobs", "1")
    assert outcome.code == 2
    assert outcome.out == ""
    assert f"{path}:{case.line}" in outcome.err
    assert case.says in outcome.err
    assert "Traceback" not in outcome.err


@pytest.mark.parametrize("option", [["--provisioner", "karpenter"], ["--events", "events.jsonl"]],
                         ids=["provisioner", "events"])
def test_options_of_the_bare_form_are_refused_with_what_to_do(option: list[str], tmp_path: Path) -> None:
    outcome = simulate(small_scenario(tmp_path), "--jobs", "1", *option)
    assert outcome.code == 2
    assert outcome.err.startswith(f"dratwin simulate: {option[0]}: ")
    assert outcome.out == ""


def test_the_report_metrics_and_table_are_written_and_read_back(tmp_path: Path) -> None:
    report, metrics, table = tmp_path / "out" / "report.html", tmp_path / "sim.prom", tmp_path / "sim.csv"
    outcome = simulate(small_scenario(tmp_path), "--jobs", "1", "--report", str(report),
                       "--metrics", str(metrics), "--table", str(table))
    assert outcome.code == 1
    for path in (report, metrics, table):
        assert f"wrote {path}: " in outcome.out
    page = report.read_text(encoding="utf-8")
    assert "<html" in page and "dratwin-render-status" in page and "small" in page
    families = {f.name: f for f in text_string_to_metric_families(metrics.read_text(encoding="utf-8"))}
    assert {"dratwin_allocated_gpus", "dratwin_gpus", "dratwin_pending_pods", "dratwin_running_pods",
            "dratwin_nodes", "dratwin_cost_dollars", "dratwin_device_allocated", "dratwin_used_gpus",
            "dratwin_fragmented_gpu_share", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_SM_ACTIVE",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"} <= set(families)
    variants = {s.labels["variant"] for s in families["dratwin_nodes"].samples}
    assert variants == {"dra", "device-plugin"}
    for variant in variants:  # two p5.48xlarge of 8 GPUs, whether DRA or the device plugin hands them out
        devices = {(s.labels["Hostname"], s.labels["gpu"]) for s in families["dratwin_device_allocated"].samples
                   if s.labels["variant"] == variant}
        assert len(devices) == 16
    held = [s for s in families["dratwin_device_allocated"].samples if "pod" in s.labels]
    assert held and all(s.value == 1 and s.labels["namespace"] == "ml" for s in held)
    assert all(s.value == 0 for s in families["dratwin_device_allocated"].samples if "pod" not in s.labels)
    allocated: dict[tuple[str, str, str], float] = {}
    for s in families["dratwin_device_allocated"].samples:
        moment = (s.labels["variant"], s.labels["seed"], str(s.timestamp))
        allocated[moment] = allocated.get(moment, 0.0) + s.value
    assert allocated == {(s.labels["variant"], s.labels["seed"], str(s.timestamp)): s.value
                         for s in families["dratwin_allocated_gpus"].samples}
    gpus = [s.value for s in families["dratwin_gpus"].samples]
    assert len(gpus) == 4 * (12 * 12 + 1) and set(gpus) == {16.0}  # 2 x 2 runs, every 5 min of 12 h, both ends
    with table.open(encoding="utf-8") as rows:
        read = list(csv.DictReader(rows))
    assert {"time_s", "timestamp", "metric", "value", "Hostname", "variant", "seed"} <= set(read[0])
    assert {row["metric"] for row in read} == set(families)


def test_the_bare_form_still_runs_manifests_and_writes_a_report(tmp_path: Path) -> None:
    report = tmp_path / "bare.html"
    outcome = simulate("examples/simulate/training.yaml", "--until", "2h", "--report", str(report))
    assert outcome.code in (0, 1)
    assert outcome.out.startswith("simulated 2.0h (2 h) of examples/simulate/training.yaml, seed 0:")
    assert report.stat().st_size > 0


@dataclass(frozen=True)
class Detection:
    name: str
    text: str | None  # None: a directory
    scenario: bool


DETECTIONS = [
    Detection("a scenario", SMALL, True),
    Detection("manifests", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", False),
    Detection("a scenario after a comment document", "---\n# x\n---\n" + SMALL, True),
    Detection("not YAML", "kind: [Scenario\n", False),
    Detection("a directory", None, False),
    Detection("a scenario in JSON", json.dumps({"apiVersion": "dratwin.io/v1alpha1", "kind": "Scenario"}), True),
    Detection("Scenario only in a comment", "# kind: Scenario\napiVersion: v1\nkind: Node\n", False),
]


@pytest.mark.parametrize("case", DETECTIONS, ids=[c.name for c in DETECTIONS])
def test_scenario_files_are_told_apart_by_their_kind(case: Detection, tmp_path: Path) -> None:
    path = str(tmp_path) if case.text is None else write(tmp_path, case.text)
    assert is_scenario_file(path) is case.scenario


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@dataclass(frozen=True)
class _Spec:
    variant: str
    seed: int
    until_seconds: float


def test_the_progress_line_shows_the_run_simulated_time_and_events_per_second() -> None:
    terminal = _Terminal()
    ticks = iter([0.0, 2.0])
    line = BatchLine(terminal, [_Spec("dra", 7, 43200.0), _Spec("dra", 8, 43200.0)], clock=lambda: next(ticks))
    line.during(1, 21600.0, 5000)
    assert terminal.text == "\r\033[Krun 2/2 (dra, seed 8): simulated 6.0h of 12.0h, 2,500 events/s"


def test_nothing_but_the_results_is_written_when_not_on_a_terminal(tmp_path: Path) -> None:
    outcome = simulate(small_scenario(tmp_path), "--jobs", "1")
    assert "\r" not in outcome.err and "\r" not in outcome.out
    assert outcome.err == ""


@pytest.mark.browser
@pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                    reason="Chromium is not installed (apt-get install chromium, or set DRATWIN_CHROMIUM)")
def test_the_scenario_report_renders_every_plot_in_a_browser(tmp_path: Path) -> None:
    chromium = find_chromium()
    assert chromium is not None, "CI runs the browser check: install Chromium (apt-get install chromium)"
    report = tmp_path / "report.html"
    assert simulate(small_scenario(tmp_path), "--jobs", "1", "--report", str(report)).code == 1
    result = check_page(report, chromium)
    assert result.errors == () and result.console_messages == ()
    assert result.state == "done"
    assert result.plots > 0 and result.rendered == result.plots

"""``dratwin simulate`` on a ``kind: Sweep`` file: the comparison grouped by the axes, ``-o json``, the same
results in one process and in several, the executor options, and bad files."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.builders.scenarios import write
from tests.builders.simulate_cli import REPO, dratwin, simulate, small_scenario
from tests.builders.sweeps import tiny_sweep

# SMALL's two variants (dra, device-plugin) x two scoring strategies, one seed, two simulated hours
TWO_AXES = "    scoring: [LeastAllocated, MostAllocated]\n"


def _sweep(tmp_path: Path, axes: str = TWO_AXES) -> str:
    return write(tmp_path, tiny_sweep(small_scenario(tmp_path), axes), "sweep.yaml")


def _json(*args: str) -> dict[str, Any]:
    outcome = simulate(*args, "--until", "2h", "-o", "json")
    assert outcome.code in (0, 1), outcome.err
    document: dict[str, Any] = json.loads(outcome.out)
    return document


def test_the_table_has_a_column_per_axis_and_each_axis_on_its_own(tmp_path: Path) -> None:
    outcome = simulate(_sweep(tmp_path), "--until", "2h", "--jobs", "1")
    assert outcome.code in (0, 1), outcome.err
    lines = outcome.out.splitlines()
    assert lines[0].startswith("sweep tiny of scenario small: 4 combination(s) x 1 seed(s) (7), 2.0h simulated each")
    assert lines[2].split()[:4] == ["variant", "scoring", "RUNS", "GPU-h"]
    assert [line.split()[:3] for line in lines[3:7]] == [
        ["dra", "LeastAllocated", "1"], ["dra", "MostAllocated", "1"],
        ["device-plugin", "LeastAllocated", "1"], ["device-plugin", "MostAllocated", "1"]]
    by_scoring = lines.index("by scoring (means over every run with the value):")
    assert [line.split()[:2] for line in lines[by_scoring + 2:by_scoring + 4]] == [
        ["LeastAllocated", "2"], ["MostAllocated", "2"]]


def test_json_has_every_run_its_axis_values_and_the_means_by_axis(tmp_path: Path) -> None:
    document = _json(_sweep(tmp_path), "--jobs", "1")
    assert set(document) == {"sweep", "path", "scenario", "axes", "fixed", "comparison", "by_axis", "runs", "files"}
    assert (document["sweep"], document["scenario"], document["axes"]) == ("tiny", "small", ["variant", "scoring"])
    assert [c["axes"] for c in document["comparison"]][:2] == [
        {"variant": "dra", "scoring": "LeastAllocated"}, {"variant": "dra", "scoring": "MostAllocated"}]
    assert [r["variant"] for r in document["runs"]] == [
        "dra/LeastAllocated", "dra/MostAllocated", "device-plugin/LeastAllocated", "device-plugin/MostAllocated"]
    dra = [r for r in document["runs"] if r["variant"].startswith("dra/")]
    mean = sum(r["gpu_hours_allocated"] for r in dra) / len(dra)
    assert document["by_axis"]["variant"][0]["gpu_hours_allocated"] == pytest.approx(mean, abs=1e-6)
    assert [g["runs"] for g in document["by_axis"]["scoring"]] == [2, 2]


def test_runs_in_processes_give_the_same_results_as_in_one_process(tmp_path: Path) -> None:
    path = _sweep(tmp_path)
    assert _json(path, "--jobs", "3") == _json(path, "--jobs", "1")


def test_the_report_and_metrics_hold_every_combination(tmp_path: Path) -> None:
    metrics = tmp_path / "sweep.prom"
    outcome = simulate(_sweep(tmp_path), "--until", "2h", "--jobs", "1", "--metrics", str(metrics),
                       "--report", str(tmp_path / "sweep.html"))
    assert outcome.code in (0, 1), outcome.err
    text = metrics.read_text(encoding="utf-8")
    for name in ("dra/LeastAllocated", "dra/MostAllocated", "device-plugin/LeastAllocated"):
        assert f'variant="{name}"' in text
    page = (tmp_path / "sweep.html").read_text(encoding="utf-8")
    assert "device-plugin/MostAllocated" in page


ERRORS = [
    ("ray asked without ray installed", ("--executor", "ray"), "pip install 'dratwin[ray]'"),
    ("an address without ray", ("--address", "ray://head:10001"), "it goes with --executor ray"),
]


@pytest.mark.parametrize(("args", "message"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_executor_options_that_cannot_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
                                          message: str) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed: importing it fails
    outcome = simulate(_sweep(tmp_path), "--until", "1h", *args)
    assert outcome.code == 2 and outcome.out == ""
    assert message in outcome.err and "Traceback" not in outcome.err


def test_the_bare_form_refuses_an_executor(tmp_path: Path) -> None:
    manifests = write(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: "
                      "[{name: c, image: i}]\n", "pod.yaml")
    outcome = simulate(manifests, "--executor", "ray")
    assert outcome.code == 2 and "kind: Sweep" in outcome.err


def test_an_error_in_a_worker_is_one_line_with_its_reason(tmp_path: Path) -> None:
    outcome = simulate(_sweep(tmp_path), "--until", "1h", "--jobs", "2", "--feature-gates", "NoSuchGate=true")
    assert outcome.code == 2 and "unknown feature gate 'NoSuchGate'" in outcome.err
    assert "Traceback" not in outcome.err


def test_a_bad_sweep_gets_every_problem_and_exit_status_2(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "    scoring: [LeastAllocated, MostAlocated]\n    arrivalRateScale: [0]\n")
    outcome = simulate(path, "--until", "1h")
    assert outcome.code == 2
    assert f"{path}:9" in outcome.err and 'did you mean "MostAllocated"?' in outcome.err
    assert f"{path}:10" in outcome.err and "spec.axes.arrivalRateScale[0]" in outcome.err
    assert f"`dratwin validate -f {path}` checks it" in outcome.err


def test_validate_checks_a_sweep(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "    scorring: [LeastAllocated]\n")
    outcome = dratwin("validate", "-f", path)
    assert outcome.code == 1 and f"{path}:9" in outcome.out and 'did you mean "scoring"?' in outcome.out


def test_the_sweep_of_the_help_is_a_valid_sweep(tmp_path: Path) -> None:
    from dratwin.cli.simulate_cmd import EPILOG
    from dratwin.scenario.sweep import check

    shutil.copytree(REPO / "examples", tmp_path / "examples")
    block = EPILOG[EPILOG.index("    spec:\n"):EPILOG.index("\n\n", EPILOG.index("    spec:\n"))]
    text = "apiVersion: dratwin.io/v1alpha1\nkind: Sweep\nmetadata: {name: help}\n" + textwrap.dedent(block) + "\n"
    path = write(tmp_path / "examples" / "simulate", text, "help-sweep.yaml")
    sweep, runs, problems = check(path, seeds=[1])
    assert sweep is not None, [str(p) for p in problems]
    assert len(sweep.axes) == 7 and sweep.fixed == (("fleet", "small"),) and len(runs) == 2 ** 7

"""`dratwin bench`: table, JSON, the record file, exit status."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dratwin.benchmarks import BenchResult
from dratwin.cli import bench_cmd

RESULTS = [
    BenchResult("alloc.fast", 42.25, "µs", 200.0, "prebuilt allocator"),
    BenchResult("alloc.slow", 2500.0, "µs", 2000.0),
    BenchResult("alloc.info", 0.5, "µs"),
]


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="dratwin")
    bench_cmd.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["bench", *argv])


@pytest.fixture(autouse=True)
def fixed_results(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    selections: list[list[str] | None] = []

    def fake_collect(selected: list[str] | None, skip_month: bool = False) -> list[BenchResult]:
        selections.append(selected)
        return list(RESULTS)

    monkeypatch.setattr(bench_cmd, "collect", fake_collect)
    return selections


def test_skip_month_reaches_collect_and_the_recorded_command(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[bool] = []

    def fake_collect(selected: list[str] | None, skip_month: bool = False) -> list[BenchResult]:
        asked.append(skip_month)
        return list(RESULTS)

    monkeypatch.setattr(bench_cmd, "collect", fake_collect)
    bench_cmd.run(_parse(["simulate", "--skip-month", "-o", "json"]))
    command = json.loads(capsys.readouterr().out)["environment"]["command"]
    bench_cmd.run(_parse(["simulate"]))
    assert asked == [True, False]
    assert command == "dratwin bench simulate -o json --skip-month"


def test_table_shows_median_target_and_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_cmd.run(_parse([])) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAME", "MEDIAN", "UNIT", "TARGET", "STATUS"]
    assert out[1].split() == ["alloc.fast", "42.2", "µs", "<=", "200", "ok"]
    assert out[2].split() == ["alloc.slow", "2500", "µs", "<=", "2000", "MISSED"]
    assert out[3].split() == ["alloc.info", "0.5", "µs", "-", "-"]
    assert "alloc.fast: prebuilt allocator" in out


def test_names_are_passed_to_collect(fixed_results: list[list[str] | None]) -> None:
    bench_cmd.run(_parse(["allocator"]))
    bench_cmd.run(_parse([]))
    assert fixed_results == [["allocator"], None]


def test_json_output_has_environment_and_results(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_cmd.run(_parse(["-o", "json"])) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["environment"]) >= {"date", "cores", "cpu", "python", "command"}
    assert data["environment"]["command"] == "dratwin bench -o json"
    assert [(r["name"], r["ok"]) for r in data["results"]] == [
        ("alloc.fast", True),
        ("alloc.slow", False),
        ("alloc.info", None),
    ]
    assert data["results"][0] == {
        "name": "alloc.fast",
        "value": 42.25,
        "unit": "µs",
        "target": 200.0,
        "ok": True,
        "detail": "prebuilt allocator",
    }


def test_strict_fails_on_a_missed_target() -> None:
    assert bench_cmd.run(_parse(["--strict"])) == 1


def test_record_appends_dated_sections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "RESULTS.md"
    assert bench_cmd.run(_parse(["allocator", "--record", str(target)])) == 0
    assert bench_cmd.run(_parse(["--record", str(target)])) == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results\n")
    assert text.count("\n## ") == 2
    assert f"- command: `dratwin bench allocator --record {target}`" in text
    assert "- cores: " in text and "- CPU: " in text and "- Python: " in text
    assert "| `alloc.slow` | 2500 | µs | <= 2000 | MISSED |  |" in text
    assert f"recorded in {target}" in capsys.readouterr().out


def test_record_keeps_what_the_file_already_says(tmp_path: Path) -> None:
    target = tmp_path / "RESULTS.md"
    target.write_text("# Mine\n\nintro", encoding="utf-8")
    bench_cmd.run(_parse(["-o", "json", "--record", str(target)]))
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Mine\n\nintro\n\n## ")


def test_cpu_model_reads_proc_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC 7R13 Processor\n", encoding="utf-8")
    assert bench_cmd.cpu_model(cpuinfo) == "AMD EPYC 7R13 Processor"
    assert bench_cmd.cpu_model(tmp_path / "absent")  # falls back to what platform knows


def test_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parse(["--help"])
    out = capsys.readouterr().out
    assert "dratwin bench --record bench/RESULTS.md" in out
    assert "allocator" in out and "-o {table,json}" in out

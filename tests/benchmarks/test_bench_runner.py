"""The timing helpers and the lazy registry behind `dratwin bench`."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from dratwin.benchmarks import BenchResult, runner
from dratwin.benchmarks.runner import (
    Timing,
    UnknownBenchmarkError,
    calibrate,
    collect,
    format_value,
    resolve,
    result_us,
    time_per_call,
)


def test_time_per_call_runs_warmup_then_repeats_of_number_calls() -> None:
    calls: list[None] = []
    timing = time_per_call(lambda: calls.append(None), repeats=3, number=5, warmup=2)
    assert len(calls) == 2 + 3 * 5
    assert timing.repeats == 3 and timing.number == 5
    assert all(sample > 0 for sample in timing.per_call_ns)
    assert timing.min_us <= timing.median_us <= timing.max_us


def test_time_per_call_rejects_empty_runs() -> None:
    with pytest.raises(ValueError):
        time_per_call(lambda: None, repeats=0, number=1)
    with pytest.raises(ValueError):
        time_per_call(lambda: None, repeats=1, number=0)


def test_calibrate_grows_the_loop_until_it_lasts_long_enough() -> None:
    assert calibrate(lambda: None, 0.0) == 1
    number = calibrate(lambda: None, 0.002)
    assert number >= 10 and str(number).strip("0") == "1"  # a power of ten


def test_timing_median_and_description() -> None:
    timing = Timing((3_000.0, 1_000.0, 2_000.0), 10)
    assert timing.median_us == 2.0
    assert timing.describe() == "median of 3 repeats x 10 calls, range 1.00-3.00 µs"
    result = result_us("x", timing, target_us=5.0, detail="shape")
    assert (result.value, result.unit, result.target, result.meets_target) == (2.0, "µs", 5.0, True)
    assert result.detail.startswith("shape; median of 3 repeats")


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (0.09144, "0.0914"), (1.523, "1.52"), (48.71, "48.7"), (193.4, "193"), (12345.6, "12346")],
)
def test_format_value(value: float, text: str) -> None:
    assert format_value(value) == text


def test_resolve_accepts_short_module_and_dotted_names_in_registry_order() -> None:
    assert resolve(None) == list(runner.BENCHMARK_MODULES)
    assert resolve(["allocator_bench", "cel"]) == ["cel", "allocator"]
    assert resolve(["dratwin.benchmarks.allocator_bench"]) == ["allocator"]
    with pytest.raises(UnknownBenchmarkError, match="unknown benchmark 'celery'; known: cel, allocator"):
        resolve(["celery"])


@pytest.fixture
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("dratwin.benchmarks.fake_bench")

    def run() -> list[BenchResult]:
        return [BenchResult("fake.one", 1.5, "µs", 2.0), BenchResult("fake.two", 3.0, "µs")]

    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dratwin.benchmarks.fake_bench", module)
    monkeypatch.setattr(
        runner,
        "BENCHMARK_MODULES",
        {"fake": "dratwin.benchmarks.fake_bench", "missing": "dratwin.benchmarks.not_written_yet_bench"},
    )


@pytest.mark.usefixtures("fake_registry")
def test_collect_runs_selected_modules_and_skips_missing_ones_with_a_note() -> None:
    notes: list[str] = []
    results = collect(None, note=notes.append)
    assert [r.name for r in results] == ["fake.one", "fake.two"]
    assert len(notes) == 1 and "'missing'" in notes[0] and "does not exist yet" in notes[0]
    assert collect(["missing"], note=notes.append) == []


def _registry_of_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    (tmp_path / "bench_under_test_xq.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bench_under_test_xq", raising=False)
    monkeypatch.setattr(runner, "BENCHMARK_MODULES", {"file": "bench_under_test_xq"})


def test_collect_propagates_import_errors_of_third_party_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _registry_of_files(tmp_path, monkeypatch, "import no_such_third_party_package_xq\n")
    with pytest.raises(ModuleNotFoundError, match="no_such_third_party_package_xq"):
        collect(None, note=lambda _: None)


def test_collect_skips_a_module_whose_dratwin_dependency_is_not_written_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _registry_of_files(tmp_path, monkeypatch, "from dratwin.benchmarks import NotWrittenYet\n")
    notes: list[str] = []
    assert collect(None, note=notes.append) == []
    assert "cannot import name 'NotWrittenYet'" in notes[0]

"""Timing helpers for the benchmarks, and the registry that ``dratwin bench`` runs.

A figure is the **median** over several repeats of the time per call, each repeat timing a loop of
``number`` calls with :func:`time.perf_counter_ns` (so that timer resolution and loop overhead are
negligible). ``number`` is calibrated so that one repeat lasts at least ``min_repeat_s``. The garbage
collector stays enabled: the cost of the garbage a hot path makes is part of its cost.

Benchmark modules are imported lazily, only when selected; each exposes ``run() -> list[BenchResult]``.
"""

from __future__ import annotations

import gc
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from dratwin.benchmarks import BenchResult
from dratwin.errors import DratwinError

# Short name (what `dratwin bench NAME` takes) -> module with a run() -> list[BenchResult].
BENCHMARK_MODULES: dict[str, str] = {
    "cel": "dratwin.benchmarks.cel_bench",
    "allocator": "dratwin.benchmarks.allocator_bench",
    "scheduler": "dratwin.benchmarks.scheduler_bench",
    "provisioner": "dratwin.benchmarks.provisioner_bench",
    "schema": "dratwin.benchmarks.schema_bench",
    "load": "dratwin.benchmarks.load_bench",
    "upstream": "dratwin.benchmarks.upstream_bench",
    "models": "dratwin.benchmarks.models_bench",
    "engine": "dratwin.benchmarks.engine_bench",
    "simulate": "dratwin.benchmarks.simulate_bench",
    "kueue": "dratwin.benchmarks.kueue_bench",
    "kueue-tas": "dratwin.benchmarks.kueue_tas_bench",

    "trace": "dratwin.benchmarks.trace_bench",
}

DEFAULT_REPEATS = 7
DEFAULT_MIN_REPEAT_S = 0.05
_MAX_NUMBER = 1_000_000


class UnknownBenchmarkError(DratwinError):
    """A benchmark name that is not in the registry."""


@dataclass(frozen=True)
class Timing:
    """Time per call of one callable: one figure per repeat, each the mean over ``number`` calls."""

    per_call_ns: tuple[float, ...]
    number: int

    @property
    def repeats(self) -> int:
        return len(self.per_call_ns)

    @property
    def median_ns(self) -> float:
        return statistics.median(self.per_call_ns)

    @property
    def median_us(self) -> float:
        return self.median_ns / 1_000

    @property
    def min_us(self) -> float:
        return min(self.per_call_ns) / 1_000

    @property
    def max_us(self) -> float:
        return max(self.per_call_ns) / 1_000

    def describe(self) -> str:
        """``median of 7 repeats x 2000 calls, range 101.2-109.8 µs``, for a result's detail."""
        return (
            f"median of {self.repeats} repeats x {self.number} calls, "
            f"range {format_value(self.min_us)}-{format_value(self.max_us)} µs"
        )


def time_per_call(
    fn: Callable[[], object],
    *,
    repeats: int = DEFAULT_REPEATS,
    number: int | None = None,
    min_repeat_s: float = DEFAULT_MIN_REPEAT_S,
    warmup: int = 1,
) -> Timing:
    """Time ``fn()``: ``warmup`` untimed calls, then ``repeats`` loops of ``number`` calls each.

    With ``number`` unset, it is calibrated (powers of ten) so that a loop takes at least
    ``min_repeat_s`` seconds.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        fn()
    if number is None:
        number = calibrate(fn, min_repeat_s)
    if number < 1:
        raise ValueError("number must be at least 1")
    samples: list[float] = []
    for _ in range(repeats):
        gc.collect()
        samples.append(_loop_ns(fn, number) / number)
    return Timing(tuple(samples), number)


def calibrate(fn: Callable[[], object], min_repeat_s: float) -> int:
    """The smallest power of ten of calls that takes at least ``min_repeat_s`` (at most 10**6)."""
    budget_ns = min_repeat_s * 1e9
    number = 1
    while number < _MAX_NUMBER:
        elapsed = _loop_ns(fn, number)
        if elapsed >= budget_ns:
            break
        # Jump straight to the estimated count, rounded up to a power of ten, to save calibration time.
        estimate = budget_ns / max(elapsed, 1) * number
        while number < estimate and number < _MAX_NUMBER:
            number *= 10
    return min(number, _MAX_NUMBER)


def _loop_ns(fn: Callable[[], object], number: int) -> int:
    counter = time.perf_counter_ns
    start = counter()
    for _ in range(number):
        fn()
    return counter() - start


def result_us(name: str, timing: Timing, *, target_us: float | None = None, detail: str = "") -> BenchResult:
    """A :class:`BenchResult` in microseconds per call, the timing's shape appended to ``detail``."""
    full = f"{detail}; {timing.describe()}" if detail else timing.describe()
    return BenchResult(name=name, value=timing.median_us, unit="µs", target=target_us, detail=full)


def format_value(value: float) -> str:
    """Three significant figures or more for display: 0.0914, 1.52, 48.7, 193, 12345."""
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def resolve(selected: list[str] | None) -> list[str]:
    """Short names of the selected benchmark modules, in registry order; every one by default.

    A name may be the short name (``allocator``), the module's name (``allocator_bench``) or its
    full dotted name. Raises :class:`UnknownBenchmarkError` for any other name.
    """
    if not selected:
        return list(BENCHMARK_MODULES)
    aliases: dict[str, str] = {}
    for short, module in BENCHMARK_MODULES.items():
        aliases.update({short: short, module: short, module.rsplit(".", 1)[-1]: short})
    unknown = [name for name in selected if name not in aliases]
    if unknown:
        known = ", ".join(BENCHMARK_MODULES)
        raise UnknownBenchmarkError(f"unknown benchmark {', '.join(map(repr, unknown))}; known: {known}")
    chosen = {aliases[name] for name in selected}
    return [short for short in BENCHMARK_MODULES if short in chosen]


def load(short: str, note: Callable[[str], None]) -> ModuleType | None:
    """Import one benchmark module; ``None`` (after a note) if it, or the dratwin code it measures,
    does not exist yet. Import errors from anything outside dratwin propagate."""
    module_name = BENCHMARK_MODULES[short]
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        missing = error.name or ""
        if missing != module_name and not missing.startswith("dratwin"):
            raise
        what = "it does not exist yet" if missing == module_name else f"{error}"
        note(f"note: skipping benchmark {short!r} ({module_name}): {what}")
        return None


def collect(selected: list[str] | None, *, note: Callable[[str], None] | None = None,
            skip_month: bool = False) -> list[BenchResult]:
    """Run the selected benchmark modules (all by default) and gather their results in order.

    A module that does not exist yet is skipped with a note (on standard error by default). With
    ``skip_month``, the simulate benchmarks leave out the month (the one that runs for many minutes).
    """
    report = note or _note_to_stderr
    results: list[BenchResult] = []
    for short in resolve(selected):
        module = load(short, report)
        if module is None:
            continue
        if short == "simulate" and skip_month:
            results.extend(module.run(skip_month=True))
            continue
        run: Callable[[], list[BenchResult]] = module.run
        results.extend(run())
    return results


def _note_to_stderr(message: str) -> None:
    print(message, file=sys.stderr)

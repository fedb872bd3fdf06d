"""``dratwin simulate SCENARIO`` for a ``kind: Scenario`` file: every variant x seed run, compared side by side,
and the files asked for (report, metrics, table)."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import msgspec
import yaml

from dratwin.errors import InputError
from dratwin.sim.compare import compare

if TYPE_CHECKING:
    from dratwin.scenario import ScenarioError
    from dratwin.scenario.model import RunSpec
    from dratwin.sim.batch import RunOutput
    from dratwin.sim.compare import VariantSummary
    from dratwin.sim.outcomes import RunResult

EXIT_OK, EXIT_UNPLACED, EXIT_BAD_INPUT = 0, 1, 2


def _kind_line(kind: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*kind:\s*[\"']?{kind}[\"']?\s*(#.*)?$" rf'|"kind"\s*:\s*"{kind}"', re.M)


KIND_LINES = {kind: _kind_line(kind) for kind in ("Scenario", "Sweep")}


def is_scenario_file(path: str) -> bool:
    """Whether ``path`` is a file with a ``kind: Scenario`` document (else it is read as manifests)."""
    return has_kind(path, "Scenario")


def has_kind(path: str, kind: str) -> bool:
    """Whether ``path`` is a file with a document of ``kind`` (``Scenario`` or ``Sweep``)."""
    file = Path(path)
    if not file.is_file():
        return False
    try:
        text = file.read_text(encoding="utf-8")
        if not KIND_LINES[kind].search(text):  # a large dump of manifests is not parsed twice
            return False
        documents = list(yaml.safe_load_all(text))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False  # the manifest reader says what is wrong with it
    return any(isinstance(d, dict) and d.get("kind") == kind for d in documents)


def run_scenario(args: argparse.Namespace, until: float | None) -> int:
    from dratwin import scenario

    _refuse_bare_only(args)
    seeds = None if args.seed is None else (args.seed,)
    try:
        loaded, runs = scenario.load(args.scenario, seeds=seeds, until_seconds=until)
    except scenario.ScenarioError as error:
        return print_problems(error, args.scenario)
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    outputs = run_batch(args, runs, until)
    written = write_files(args, loaded.name, outputs)
    results = [o.result for o in outputs]
    if args.output == "json":
        sys.stdout.write(render_json(loaded.name, args.scenario, results, written))
    else:
        sys.stdout.write(render_comparison(loaded.name, results, workloads=getattr(args, "workloads", False)))
        for line in written_lines(written):
            print(line)
    if args.output == "json":
        for line in written_lines(written):
            print(line, file=sys.stderr)
    return EXIT_UNPLACED if any(r.pods_pending_at_end for r in results) else EXIT_OK


def print_problems(error: ScenarioError, path: str) -> int:
    for problem in error.problems:
        print(problem, file=sys.stderr)
    errors = sum(p.is_error for p in error.problems)
    print(f"dratwin simulate: {errors} error{'s' * (errors != 1)} in {path}; "
          f"`dratwin validate -f {path}` checks it", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_batch(args: argparse.Namespace, runs: Sequence[RunSpec], until: float | None,
              *, sweep: bool = False) -> list[RunOutput]:
    """Every run, with the executor of ``--executor`` and a progress line on a terminal."""
    from dratwin.sim.batch import BatchRequest, run_all
    from dratwin.sim.executors import make_executor
    from dratwin.sim.timeline import DEFAULT_SAMPLE_SECONDS

    seeds = None if args.seed is None else (args.seed,)
    # Always sampled: fragmentation is measured at the samples (the series are kept only for the files).
    request = BatchRequest(args.scenario, seeds, until, args.feature_gates, DEFAULT_SAMPLE_SECONDS, sweep=sweep)
    progress = BatchLine(sys.stderr, runs) if sys.stderr.isatty() else None
    executor = make_executor(args.executor, len(runs), jobs=args.jobs, address=args.address,
                             on_progress=progress.during if progress else None)
    outputs = run_all(request, runs, executor=executor, on_done=progress.done_one if progress else None)
    if progress is not None:
        progress.clear()
    return outputs


def _refuse_bare_only(args: argparse.Namespace) -> None:
    """Options of the bare form that a scenario file says itself, or that it does not do yet."""
    if args.provisioner is not None:
        raise InputError(f"--provisioner: {args.scenario} is a scenario file, which says who launches nodes "
                         "itself (spec.cluster.nodePools or autoMode); drop the option or edit the file")
    if args.events is not None:
        raise InputError("--events: the event log is written for the bare form (one run) only; for a scenario "
                         "use -o json, --metrics or --table")


def write_files(args: argparse.Namespace, name: str, outputs: Sequence[RunOutput]) -> dict[str, str]:
    """The files asked for, written; what each holds, by path."""
    from dratwin.metrics import write_openmetrics, write_table
    from dratwin.report import write_report
    from dratwin.sim.exports import metrics_sets, report_data

    written: dict[str, str] = {}
    if args.report is not None:
        size = _write(args.report, "--report", lambda p: write_report(report_data(name, outputs), p))
        written[args.report] = f"report ({size / 1024:,.0f} KiB, open it in a browser)"
    if args.metrics is not None or args.table is not None:
        sets = metrics_sets(outputs)
        if args.metrics is not None:
            _write(args.metrics, "--metrics", lambda p: write_openmetrics(sets, p))
            written[args.metrics] = ("OpenMetrics: DCGM fields per GPU and pod, and the cluster's series, "
                                      "for `promtool tsdb create-blocks-from openmetrics`")
        if args.table is not None:
            _write(args.table, "--table", lambda p: write_table(sets, p))
            written[args.table] = "metrics table, a row per sample"
    return written


def _write(path: str, option: str, writer: Callable[[Path], int]) -> int:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return writer(target)
    except OSError as error:
        raise InputError(f"{option} {path}: cannot write: {error.strerror}; choose a writable path") from None


def written_lines(written: dict[str, str]) -> list[str]:
    return [f"wrote {path}: {what}" for path, what in written.items()]


def render_json(name: str, path: str, results: Sequence[RunResult], written: dict[str, str]) -> str:
    document: dict[str, Any] = {"scenario": name, "path": path, "comparison": compare(results),
                                "runs": list(results), "files": written}
    return msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"


COLUMNS = ("VARIANT", "RUNS", "GPU-h ALLOC", "GPU-h USED", "GPU-h IDLE", "ALLOC %", "USED %", "FRAG %", "WAIT p50",
           "WAIT p95", "WAIT p99", "START p95", "NEVER PLACED", "NODES", "COST USD")


def render_comparison(name: str, results: Sequence[RunResult], *, workloads: bool = False) -> str:
    from dratwin.cli.simulate_cmd import format_duration

    summaries = compare(results)
    seeds = sorted({r.seed for r in results})
    until = results[0].until_seconds if results else 0.0
    lines = [f"scenario {name}: {len(summaries)} variant(s) x {len(seeds)} seed(s) "
             f"({', '.join(map(str, seeds))}), {format_duration(until)} simulated each, "
             f"{sum(r.events for r in results):,} events", ""]
    rows = [list(COLUMNS)] + [_row(s, format_duration) for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    lines += ["", "means over the seeds; ALLOC %: GPU-hours allocated over GPU-hours present; USED %: GPU-hours used "
              "over GPU-hours allocated; FRAG %: FGD's fragmented share of the free GPUs, mean over the samples; "
              "NODES: the most at once"]
    lines += _queues(summaries, results, workloads, format_duration)
    lines += _notes(results)
    return "\n".join(lines) + "\n"


def _row(summary: VariantSummary, duration: Callable[[float], str]) -> list[str]:
    fragmentation = "-" if summary.fragmentation is None else f"{100 * summary.fragmentation:.1f}"
    return [summary.variant, str(summary.runs), f"{summary.gpu_hours_allocated:,.2f}",
            f"{summary.gpu_hours_used:,.2f}", f"{summary.gpu_hours_idle:,.2f}",
            f"{100 * summary.gpu_allocated_share:.1f}", f"{100 * summary.gpu_used_share:.1f}", fragmentation,
            duration(summary.waiting_p50_seconds), duration(summary.waiting_p95_seconds),
            duration(summary.waiting_p99_seconds), duration(summary.startup_p95_seconds),
            _mean_text(summary.pods_never_placed), _mean_text(summary.nodes_peak), f"{summary.cost_usd:,.2f}"]


def _queues(summaries: Sequence[VariantSummary], results: Sequence[RunResult], workloads: bool,
            duration: Callable[[float], str]) -> list[str]:
    """The Queues block (means over the seeds) and, asked for, the first seed's Workloads of each variant."""
    from dratwin.cli.simulate_queues import queue_lines, workload_lines

    lines = queue_lines([(s.variant, q) for s in summaries for q in s.queues], duration, variants=True)
    if workloads:
        first: dict[str, RunResult] = {}
        for result in results:
            first.setdefault(result.variant, result)
        for variant, result in first.items():
            if result.kueue is not None:
                lines += ["", f"workloads of {variant}, seed {result.seed}:", *workload_lines(result.kueue)]
    return lines


EXPANSION = re.compile(r"(Job|ReplicaSet|Deployment|StatefulSet|DaemonSet) [^ /]+/[^ ]+: ")
SHOWN_NOTES = 10


def _notes(results: Sequence[RunResult]) -> list[str]:
    """Each run's notes once, with the variants they came from; how the controllers expanded each
    workload (one note per Job) only counted: ``-o json`` has them all."""
    variants: dict[str, list[str]] = {}
    for result in results:
        for note in result.notes:
            seen = variants.setdefault(note, [])
            if result.variant not in seen:
                seen.append(result.variant)
    everyone = list(dict.fromkeys(r.variant for r in results))
    lines = [f"note ({_who(names, everyone)}): {note}" for note, names in variants.items()
             if not EXPANSION.match(note)]
    expansions = sum(1 for note in variants if EXPANSION.match(note))
    if len(lines) > SHOWN_NOTES:
        lines = [*lines[:SHOWN_NOTES], f"... and {len(lines) - SHOWN_NOTES} more notes"]
    if expansions:
        lines.append(f"{expansions} notes on how the workload controllers expanded the workloads: -o json has them")
    return lines


def _who(names: list[str], everyone: list[str]) -> str:
    return "all variants" if names == everyone else ", ".join(names)


def _mean_text(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


class BatchLine:
    """One status line on a terminal across the runs: the run, simulated time reached, events per second."""

    def __init__(self, out: TextIO, runs: Sequence[Any], clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.runs, self.clock = out, runs, clock
        self.started = clock()
        self.events_done = 0

    def during(self, index: int, now: float, events: int) -> None:
        from dratwin.cli.simulate_cmd import format_duration

        spec = self.runs[index]
        rate = (self.events_done + events) / max(self.clock() - self.started, 1e-9)
        self._show(f"run {index + 1}/{len(self.runs)} ({spec.variant}, seed {spec.seed}): simulated "
                   f"{format_duration(now)} of {format_duration(spec.until_seconds)}, {rate:,.0f} events/s")

    def done_one(self, done: int, total: int, output: RunOutput) -> None:
        self.events_done += output.result.events
        rate = self.events_done / max(self.clock() - self.started, 1e-9)
        self._show(f"{done}/{total} runs done, {rate:,.0f} events/s")

    def _show(self, text: str) -> None:
        self.out.write(f"\r\033[K{text}")
        self.out.flush()

    def clear(self) -> None:
        self.out.write("\r\033[K")
        self.out.flush()

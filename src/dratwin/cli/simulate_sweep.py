"""``dratwin simulate SWEEP`` for a ``kind: Sweep`` file: every combination of the axes x seed run, and the
comparison grouped by the axes' values (a row per combination, then each axis on its own)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import msgspec

from dratwin.cli.simulate_scenario import (
    COLUMNS,
    EXIT_OK,
    EXIT_UNPLACED,
    _notes,
    _refuse_bare_only,
    _row,
    print_problems,
    run_batch,
    write_files,
    written_lines,
)
from dratwin.sim.compare import VariantSummary, compare

if TYPE_CHECKING:
    from dratwin.scenario.sweep import Sweep
    from dratwin.sim.outcomes import RunResult


def run_sweep(args: argparse.Namespace, until: float | None) -> int:
    from dratwin.scenario import ScenarioError, sweep

    _refuse_bare_only(args)
    seeds = None if args.seed is None else (args.seed,)
    try:
        loaded, runs = sweep.load(args.scenario, seeds=seeds, until_seconds=until)
    except ScenarioError as error:
        return print_problems(error, args.scenario)
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    outputs = run_batch(args, runs, until, sweep=True)
    written = write_files(args, loaded.name, outputs)
    results = [o.result for o in outputs]
    if args.output == "json":
        sys.stdout.write(render_json(loaded, results, written))
        for line in written_lines(written):
            print(line, file=sys.stderr)
    else:
        sys.stdout.write(render_comparison(loaded, results))
        for line in written_lines(written):
            print(line)
    return EXIT_UNPLACED if any(r.pods_pending_at_end for r in results) else EXIT_OK


def by_axis(sweep: Sweep, results: Sequence[RunResult]) -> dict[str, list[VariantSummary]]:
    """For each axis, the means over every run with each of its values (whatever the other axes are)."""
    grouped: dict[str, list[VariantSummary]] = {}
    for position, axis in enumerate(sweep.axes):
        relabelled = [replace(r, variant=sweep.values[r.variant][position]) for r in results]
        grouped[axis] = compare(relabelled)
    return grouped


def render_json(sweep: Sweep, results: Sequence[RunResult], written: dict[str, str]) -> str:
    comparison = [{**asdict(s), "axes": dict(zip(sweep.axes, sweep.values[s.variant], strict=True))}
                  for s in compare(results)]
    document: dict[str, Any] = {"sweep": sweep.name, "path": sweep.path, "scenario": sweep.scenario.name,
                                "axes": list(sweep.axes), "fixed": dict(sweep.fixed), "comparison": comparison,
                                "by_axis": by_axis(sweep, results), "runs": list(results), "files": written}
    return msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"


def render_comparison(sweep: Sweep, results: Sequence[RunResult]) -> str:
    from dratwin.cli.simulate_cmd import format_duration
    from dratwin.cli.simulate_queues import queue_lines

    summaries = compare(results)
    seeds = sorted({r.seed for r in results})
    until = results[0].until_seconds if results else 0.0
    lines = [f"sweep {sweep.name} of scenario {sweep.scenario.name}: {len(summaries)} combination(s) x "
             f"{len(seeds)} seed(s) ({', '.join(map(str, seeds))}), {format_duration(until)} simulated each, "
             f"{sum(r.events for r in results):,} events"]
    if sweep.fixed:
        lines.append("every run: " + ", ".join(f"{axis} {value}" for axis, value in sweep.fixed))
    lines.append("")
    heads = list(sweep.axes) or [COLUMNS[0]]
    rows = [[*heads, *COLUMNS[1:]]]
    for summary in summaries:
        values = list(sweep.values[summary.variant]) or [summary.variant]
        rows.append([*values, *_row(summary, format_duration)[1:]])
    lines += _aligned(rows, len(heads))
    if len(sweep.axes) > 1:
        for axis, groups in by_axis(sweep, results).items():
            lines += ["", f"by {axis} (means over every run with the value):"]
            lines += _aligned([[axis, *COLUMNS[1:]], *(_row(g, format_duration) for g in groups)], 1)
    lines += ["", "means over the seeds; ALLOC %: GPU-hours allocated over GPU-hours present; NODES: the most at once"]
    lines += queue_lines([(" ".join(sweep.values[s.variant]) or s.variant, q) for s in summaries for q in s.queues],
                         format_duration, variants=True)
    lines += _notes(results)
    return "\n".join(lines) + "\n"


def _aligned(rows: Sequence[Sequence[str]], left: int) -> list[str]:
    """Rows as columns: the first ``left`` cells flush left (names), the figures flush right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) if i < left else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip() for row in rows]

"""`dratwin bench`: run the benchmarks, print the figures against their targets, optionally record them."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
from pathlib import Path
from typing import Any

from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.runner import BENCHMARK_MODULES, collect, format_value
from dratwin.errors import InputError

EPILOG = f"""\
benchmarks: {", ".join(BENCHMARK_MODULES)} (all by default)

examples:
  dratwin bench                                 run every benchmark, print a table
  dratwin bench allocator                       only the allocator benchmarks
  dratwin bench -o json                         figures for machines (with the environment)
  dratwin bench --record bench/RESULTS.md       also append a dated section to the record
  dratwin bench --strict                        exit 1 when a figure misses its target
  dratwin bench simulate --skip-month           the simulate benchmarks without the month

Each figure is the median over several repeats of the time per call. STATUS is ok when the median
is within the target, MISSED when not, and - for figures without a target.
"""

RECORD_HEADING = "# Benchmark results\n\nSections appended by `dratwin bench --record FILE`, newest last.\n"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bench",
        help="run the benchmarks and print the figures",
        description="Run dratwin's benchmarks and compare each figure with its target.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    parser.add_argument(
        "-o", "--output", choices=("table", "json"), default="table", help="output format (default: table)"
    )
    parser.add_argument(
        "--record", metavar="FILE", help="append a dated section with the environment and the table to FILE"
    )
    parser.add_argument("--strict", action="store_true", help="exit status 1 when a figure misses its target")
    parser.add_argument("--skip-month", action="store_true",
                        help="leave out the simulated month of `simulate` (it runs for many minutes)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    results = collect(list(args.names) or None, skip_month=args.skip_month)
    environment = describe_environment(_command_line(args))
    if args.output == "json":
        print(json.dumps({"environment": environment, "results": [_as_json(r) for r in results]}, indent=2))
    else:
        print(render_table(results))
        notes = render_details(results)
        if notes:
            print()
            print(notes)
    if args.record:
        record(Path(args.record), results, environment)
        if args.output != "json":
            print(f"\nrecorded in {args.record}")
    missed = any(r.meets_target is False for r in results)
    return 1 if args.strict and missed else 0


# ---- rendering ----------------------------------------------------------------------------------


def status_of(result: BenchResult) -> str:
    met = result.meets_target
    return "-" if met is None else ("ok" if met else "MISSED")


def _row(result: BenchResult) -> list[str]:
    sign = ">=" if result.higher_is_better else "<="
    target = "-" if result.target is None else f"{sign} {format_value(result.target)}"
    return [result.name, format_value(result.value), result.unit, target, status_of(result)]


_HEADERS = ["NAME", "MEDIAN", "UNIT", "TARGET", "STATUS"]


def render_table(results: list[BenchResult]) -> str:
    """A plain-text table, numbers right-aligned; a line saying so when nothing ran."""
    if not results:
        return "no benchmark ran"
    rows = [_HEADERS, *(_row(r) for r in results)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADERS))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if column == 1 else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def render_details(results: list[BenchResult]) -> str:
    return "\n".join(f"{r.name}: {r.detail}" for r in results if r.detail)


def render_markdown(results: list[BenchResult]) -> str:
    lines = ["| benchmark | median | unit | target | status | detail |", "|---|---:|---|---|---|---|"]
    for result in results:
        name, value, unit, target, status = _row(result)
        detail = result.detail.replace("|", "\\|")
        lines.append(f"| `{name}` | {value} | {unit} | {target} | {status} | {detail} |")
    return "\n".join(lines)


def _as_json(result: BenchResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "value": result.value,
        "unit": result.unit,
        "target": result.target,
        "ok": result.meets_target,
        "detail": result.detail,
    }


# ---- environment and record ---------------------------------------------------------------------


def describe_environment(command: str) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "command": command,
    }


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name from /proc/cpuinfo; what ``platform`` knows elsewhere."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def record(path: Path, results: list[BenchResult], environment: dict[str, Any]) -> None:
    """Append a dated section (environment, then the table) to ``path``; create it with a heading."""
    section = "\n".join(
        [
            f"## {environment['date']}",
            "",
            f"- cores: {environment['cores']} (`os.cpu_count()`)",
            f"- CPU: {environment['cpu']}",
            f"- Python: {environment['python']} on {environment['platform']}",
            f"- command: `{environment['command']}`",
            "",
            render_markdown(results) if results else "No benchmark ran.",
            "",
        ]
    )
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else RECORD_HEADING
        separator = "" if existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
        path.write_text(existing + separator + section, encoding="utf-8")
    except OSError as error:
        raise InputError(f"{path}: cannot record the results: {error}") from error


def _command_line(args: argparse.Namespace) -> str:
    words = ["dratwin", "bench", *args.names]
    if args.output != "table":
        words += ["-o", args.output]
    if args.record:
        words += ["--record", args.record]
    if args.strict:
        words.append("--strict")
    if args.skip_month:
        words.append("--skip-month")
    return shlex.join(words)

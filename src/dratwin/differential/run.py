"""``python -m dratwin.differential`` (``make differential``): dratwin against upstream on random cases.

1. Generate N cases (or read case files), write them as JSON lines.
2. Start the Go oracle on them (a separate process, so it runs beside step 3).
3. Answer every case with dratwin in this process, through the code path of
   ``dratwin allocate -o json`` (:func:`dratwin.cli.allocate_cmd.json_answer`), each bounded by
   the same timeout as upstream's Allocate.
4. Judge each case against the variant upstream picks. Where upstream picked the stable variant and
   dratwin disagrees, ask the oracle again with many more pool orders (``--recheck-runs``): stable
   visits pools in Go map order, and an answer that few of its orders give can hide in a short run.
5. Write every disagreement as a case file, print the summary by category. Exit status 1 when
   anything disagrees, 2 when the run failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.cli.allocate_cmd import json_answer
from dratwin.differential import oracle
from dratwin.differential.casefile import Case, feature_gates, load_case
from dratwin.differential.compare import TIMEOUT
from dratwin.differential.coverage import TAGS, count
from dratwin.differential.generator import generate
from dratwin.differential.judge import CRASH, judge
from dratwin.differential.report import (
    DISAGREEMENTS,
    ORDER_DEPENDENT_DIR,
    Tally,
    summary_lines,
    write_finding,
    write_summary,
)
from dratwin.errors import DratwinError

EPILOG = """\
examples:
  python -m dratwin.differential                       10,000 random cases, seed 1
  python -m dratwin.differential -n 500 --seed 7       a quick run with another seed
  python -m dratwin.differential build/differential/disagreements/
                                                       rerun case files (e.g. the last disagreements)

Each disagreement is written as a conformance-format case (expect = upstream's answer) under
OUT/disagreements/<category>/; cases whose upstream answer depends on stable's random pool order
go to OUT/order-dependent/. OUT/summary.json has the counts and the case names.
exit status: 0 no disagreement, 1 disagreements, 2 the run itself failed (no Go, bad input)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dratwin.differential",
        description="Run random allocator cases through dratwin and through the upstream Kubernetes 1.36 "
        "allocator (the Go oracle in tools/oracle), and list where they disagree.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", help="case files or folders to run instead of random cases")
    parser.add_argument("-n", "--cases", type=int, default=10_000, help="number of random cases (default 10000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--out", type=Path, default=Path("build/differential"), help="output folder")
    parser.add_argument("--oracle", help="a built oracle binary (default: build tools/oracle with go)")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds for one allocation on either side, like DRASchedulerFilterTimeout (default 10)")
    parser.add_argument("--stable-runs", type=int, default=8,
                        help="pool orders tried on upstream's stable variant (default 8)")
    parser.add_argument("--recheck-runs", type=int, default=1024,
                        help="pool orders tried again on stable's disagreeing cases before they count (default 1024)")
    parser.add_argument("--jobs", type=int, default=1, help="oracle worker threads (default 1)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (DratwinError, OSError, ValueError) as error:
        print(f"differential: {error}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    binary = _oracle_binary(args.oracle)
    module = oracle.module_version(binary)
    cases = _read_cases(args.paths) if args.paths else list(generate(args.seed, args.cases))
    out: Path = args.out
    for stale in (out / DISAGREEMENTS, out / ORDER_DEPENDENT_DIR):
        shutil.rmtree(stale, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    cases_file = out / "cases.jsonl"
    with cases_file.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(case, separators=(",", ":")) + "\n" for case in cases)
    started = time.perf_counter()
    with (out / "upstream.jsonl").open("w", encoding="utf-8") as answers_file:
        process = oracle.start(binary, cases_file, answers_file, timeout_s=args.timeout,
                               stable_runs=args.stable_runs, jobs=args.jobs)
        dratwin = {case["name"]: answer_with_dratwin(case, args.timeout) for case in _progress(cases)}
        oracle.finish(process)
    with (out / "upstream.jsonl").open(encoding="utf-8") as answers_file:
        upstream = oracle.read_answers(answers_file)
    upstream.update(_recheck_stable(binary, cases, upstream, dratwin, out, args))
    tally = _judge_all(cases, upstream, dratwin, out, module)
    what = f"{len(cases)} case files" if args.paths else f"{len(cases)} random cases (seed {args.seed})"
    header = f"differential: {what}, dratwin vs {module or 'upstream'}, in {time.perf_counter() - started:.0f} s"
    print("\n".join(summary_lines(tally, header, out)))
    extra: dict[str, Any] = {"module": module, "seed": args.seed, "cases": len(cases)}
    if not args.paths:
        extra["coverage"] = dict(sorted(count(cases).items()))
        print(_coverage_line(extra["coverage"]))
    write_summary(out / "summary.json", tally, extra)
    return 1 if tally.disagreements else 0


def _recheck_stable(
    binary: Path, cases: list[Case], upstream: Mapping[str, Mapping[str, Any]],
    dratwin: Mapping[str, Mapping[str, Any]], out: Path, args: argparse.Namespace,
) -> dict[str, dict[str, Any]]:
    """The oracle's answers, with ``--recheck-runs`` pool orders, for stable's cases that disagree."""
    doubtful = [
        case for case in cases
        if (record := upstream.get(case["name"])) is not None and record.get("variant") == "stable"
        and judge(record, dratwin[case["name"]]).is_disagreement
    ]
    if not doubtful or args.recheck_runs <= args.stable_runs:
        return {}
    recheck_file = out / "recheck.jsonl"
    with recheck_file.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(case, separators=(",", ":")) + "\n" for case in doubtful)
    with (out / "upstream-recheck.jsonl").open("w", encoding="utf-8") as answers_file:
        process = oracle.start(binary, recheck_file, answers_file, timeout_s=args.timeout,
                               stable_runs=args.recheck_runs, jobs=args.jobs)
        oracle.finish(process)
    with (out / "upstream-recheck.jsonl").open(encoding="utf-8") as answers_file:
        rechecked = oracle.read_answers(answers_file)
    print(f"  upstream: {len(doubtful)} stable cases that disagree asked again with {args.recheck_runs} pool orders",
          file=sys.stderr)
    return rechecked


def _oracle_binary(explicit: str | None) -> Path:
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise oracle.OracleError(f"{path}: no oracle binary there (make oracle builds build/oracle/oracle)")
        return path
    if shutil.which("go"):
        return oracle.build()
    found = oracle.locate()
    if found is None:
        return oracle.build()  # raises, saying that Go is needed
    return found


def _read_cases(paths: list[str]) -> list[Case]:
    files: list[Path] = []
    for path in map(Path, paths):
        files += sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    cases = [load_case(file) for file in files]
    names = [case.get("name") for case in cases]
    if len(set(names)) != len(names):
        raise ValueError("two case files have the same name; the oracle's answers are matched by name")
    return cases


def _progress(cases: list[Case]) -> Iterator[Case]:
    start = time.perf_counter()
    for index, case in enumerate(cases, start=1):
        yield case
        if index % 1000 == 0:
            print(f"  dratwin: {index}/{len(cases)} cases in {time.perf_counter() - start:.0f} s", file=sys.stderr)


def _judge_all(
    cases: list[Case], upstream: Mapping[str, Mapping[str, Any]], dratwin: Mapping[str, Mapping[str, Any]],
    out: Path, module: str,
) -> Tally:
    tally = Tally()
    for case in cases:
        name = case["name"]
        record = upstream.get(name, {"error": "the oracle printed no answer for this case"})
        judgement = judge(record, dratwin[name])
        tally.add(name, judgement, dratwin[name])
        write_finding(out, case, judgement, dratwin[name], module)
    return tally


def _coverage_line(counts: Mapping[str, int]) -> str:
    least = sorted(TAGS, key=lambda tag: counts.get(tag, 0))[:3]
    return "coverage: " + ", ".join(f"{tag} {counts.get(tag, 0)}" for tag in least) + " (least covered features)"


class _Deadline(BaseException):
    """Raised into the allocation when its time is up; a BaseException so no handler swallows it."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (a timer signal; only in the main thread, else unbounded)."""
    usable = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Deadline

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def answer_with_dratwin(case: Case, timeout_s: float) -> dict[str, Any]:
    """``dratwin allocate -o json``'s answer for the case (without the explanation), plus ``seconds``."""
    objects = [LoadedObject(raw, SourceLocation(str(case["name"]), index)) for index, raw in enumerate(case["objects"])]
    claims = [f"default/{name}" for name in case.get("allocate") or []]
    start = time.perf_counter()
    try:
        with deadline(timeout_s):
            body = json_answer(objects, case["node"], claims, feature_gates(case.get("features") or []),
                               explain_failure=False)
    except _Deadline:
        body = {"result": TIMEOUT, "error": f"no answer in {timeout_s:g} s"}
    except Exception as error:  # a bug in dratwin: recorded as such, the run goes on
        body = {"result": CRASH, "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    body["seconds"] = time.perf_counter() - start
    return body

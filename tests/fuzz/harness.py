"""Run one fuzz input through the command line in-process and check the contract every input must keep.

The contract, whatever the input: the command returns an exit status (0, 1 or 2) and never lets an
exception other than its own error handling escape (no traceback); it answers within a time bound (no
hang); ``-o json`` prints one JSON document. An input that breaks it is written, in the corpus format,
to ``build/fuzz/crashes/`` so that it can be replayed and kept in ``tests/fuzz/corpus/``.

A corpus entry is YAML: ``argv`` (a list, where ``{name}`` stands for the path of the file ``name`` and
``{repo}`` for the repository),
``files`` (name → text) and optionally ``stdin``, ``why`` (what it once broke) and ``seconds`` (a time
bound tighter than the default, for inputs that once searched for too long).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import signal
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import yaml

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
CRASHES = REPO / "build" / "fuzz" / "crashes"
# Far above any legitimate answer on these small inputs. The slowest legitimate one is the partitions
# reproducer (corpus/partitions-search.yaml): the step budget of upstream's 10 s filter timeout costs 38 s
# of CPU on a slow 2-core machine, so a bound of 30 s called it a hang there.
TIME_LIMIT_S = 90.0


@dataclass
class Tally:
    """What the fuzz campaign did, for the closing summary."""

    inputs: int = 0
    by_command: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


TALLY = Tally()


@dataclass(frozen=True)
class FuzzInput:
    argv: tuple[str, ...]
    files: Mapping[str, str]
    stdin: str = ""
    why: str = ""
    seconds: float = 0.0  # a tighter time bound than TIME_LIMIT_S for this input (0: the default)

    def to_yaml(self) -> str:
        data: dict[str, object] = {"argv": list(self.argv), "files": dict(self.files)}
        if self.stdin:
            data["stdin"] = self.stdin
        if self.why:
            data["why"] = self.why
        if self.seconds:
            data["seconds"] = self.seconds
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)

    @classmethod
    def from_yaml(cls, text: str) -> FuzzInput:
        data = yaml.safe_load(text)
        return cls(tuple(data["argv"]), dict(data.get("files") or {}), data.get("stdin", ""), data.get("why", ""),
                   float(data.get("seconds", 0.0)))


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str


class Hang(Exception):
    """The command ran past the time limit."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Bound the block's CPU time (the process's, as ITIMER_PROF counts it), not its wall time: a
    command that loops forever uses CPU all the while, and a busy shared machine must not make a slow
    but finite input look like a hang."""
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {seconds:.0f} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def run(case: FuzzInput, time_limit: float = TIME_LIMIT_S) -> Outcome:
    """Run ``case`` and assert the contract; on a breach, save the case and fail with what broke."""
    time_limit = case.seconds or time_limit
    TALLY.inputs += 1
    command = case.argv[0] if case.argv else ""
    TALLY.by_command[command] = TALLY.by_command.get(command, 0) + 1
    with tempfile.TemporaryDirectory() as folder:
        paths = {name: Path(folder) / name for name in case.files}
        for name, text in case.files.items():
            paths[name].write_text(text, encoding="utf-8", errors="surrogatepass")
        argv = [_substitute(part, paths) for part in case.argv]
        out, err = io.StringIO(), io.StringIO()
        status: int | None = None
        problem = ""
        try:
            with _time_limit(time_limit), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                    _stdin(case.stdin):
                status = main(argv)
        except SystemExit as exit_:  # argparse refuses the arguments: fine, that is a usage error
            status = exit_.code if isinstance(exit_.code, int) else 2
        except Hang as hang:
            problem = f"hang: {hang}"
        except BaseException as error:  # anything else is a traceback the user would see
            problem = f"traceback: {type(error).__name__}: {str(error)[:200]}\n" + traceback.format_exc(limit=-8)
    if not problem and status not in (0, 1, 2):
        problem = f"exit status {status!r}"
    # validate prints JSON whatever happens; the other commands when they get as far as an answer.
    if not problem and _wants_json(case.argv) and (status != 2 or case.argv[:1] == ("validate",)):
        problem = _json_problem(out.getvalue())
    if problem:
        saved = _save(case, problem)
        TALLY.failures.append(f"{' '.join(case.argv)}: {problem.splitlines()[0]} ({saved})")
        raise AssertionError(f"{' '.join(argv)}\n{problem}\nstderr: {err.getvalue()[-2000:]}\nsaved as {saved}")
    return Outcome(int(status or 0), out.getvalue(), err.getvalue())


def _substitute(part: str, paths: Mapping[str, Path]) -> str:
    part = part.replace("{repo}", str(REPO))
    if paths:  # {dir}: the folder the input files were written to (a trace folder)
        part = part.replace("{dir}", str(next(iter(paths.values())).parent))
    for name, path in paths.items():
        part = part.replace("{" + name + "}", str(path))
    return part


def _wants_json(argv: Sequence[str]) -> bool:
    return any(a == "json" and i > 0 and argv[i - 1] in ("-o", "--output") for i, a in enumerate(argv))


def _json_problem(stdout: str) -> str:
    try:
        json.loads(stdout)
    except ValueError as error:
        return f"-o json printed no JSON document ({error}): {stdout[:200]!r}"
    return ""


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def _save(case: FuzzInput, problem: str) -> Path:
    CRASHES.mkdir(parents=True, exist_ok=True)
    text = case.to_yaml()
    path = CRASHES / f"{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}.yaml"
    body = FuzzInput(case.argv, case.files, case.stdin, problem.splitlines()[0][:300]).to_yaml()
    path.write_text(body, encoding="utf-8", errors="surrogatepass")
    return path

"""The Go oracle (``tools/oracle``): building it, and running it on cases or on a benchmark spec.

The oracle is a small Go program linked against ``k8s.io/dynamic-resource-allocation`` (the code
kube-scheduler runs); building it needs Go 1.26 and the Go module proxy. It is only needed by
``make differential`` and by the benchmark group that measures upstream beside dratwin; dratwin
itself and ``make test`` need Python only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from dratwin.errors import DratwinError

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "tools" / "oracle"
DEFAULT_BINARY = REPO / "build" / "oracle" / "oracle"
ENVIRONMENT_VARIABLE = "DRATWIN_ORACLE"
_NEEDS_GO = (
    "the upstream oracle needs Go 1.26 and the Go module proxy to build (tools/oracle links "
    "k8s.io/dynamic-resource-allocation); install Go, or point {variable} at a built oracle"
)


class OracleError(DratwinError):
    """The oracle cannot be built or run, or printed something that is not its answer."""


def locate(explicit: str | None = None) -> Path | None:
    """The oracle binary: ``explicit``, else $DRATWIN_ORACLE, else build/oracle/oracle; None if absent."""
    for candidate in (explicit, os.environ.get(ENVIRONMENT_VARIABLE), str(DEFAULT_BINARY)):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def build(output: Path = DEFAULT_BINARY) -> Path:
    """``go build`` the oracle into ``output``; OracleError with what to do when that cannot work."""
    go = shutil.which("go")
    if go is None:
        raise OracleError("go is not installed: " + _NEEDS_GO.format(variable=ENVIRONMENT_VARIABLE))
    if not (SOURCE / "go.mod").is_file():
        raise OracleError(f"{SOURCE}: no go.mod; the oracle's source is not in this checkout")
    output.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([go, "build", "-o", str(output.resolve()), "."], cwd=SOURCE, capture_output=True, text=True)
    if done.returncode != 0:
        raise OracleError(f"go build in {SOURCE} failed: {done.stderr.strip()[-2000:]}\n" + _NEEDS_GO.format(
            variable=ENVIRONMENT_VARIABLE))
    return output


def module_version(binary: Path) -> str:
    """``k8s.io/dynamic-resource-allocation vX.Y.Z``, as built into the binary (empty if unknown)."""
    done = subprocess.run([str(binary), "-version"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def start(
    binary: Path, cases: Path, answers: IO[str], *, timeout_s: float, stable_runs: int, jobs: int
) -> subprocess.Popen[str]:
    """Start answering the JSON-lines case file ``cases``; the answers go to ``answers``."""
    command = [
        str(binary), "-jsonl", str(cases), "-timeout", f"{timeout_s}s", "-stable-runs", str(stable_runs),
        "-j", str(jobs),
    ]
    return subprocess.Popen(command, stdout=answers, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str]) -> None:
    _, errors = process.communicate()
    if process.returncode != 0:
        raise OracleError(f"the oracle exited with status {process.returncode}: {(errors or '').strip()[-2000:]}")


def read_answers(lines: Iterator[str] | IO[str]) -> dict[str, dict[str, Any]]:
    """The oracle's answers by case name."""
    answers: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as error:
            raise OracleError(f"oracle output line {number} is not JSON: {error}") from error
        answers[str(answer.get("name"))] = answer
    return answers


def bench(binary: Path, spec: Mapping[str, Any], timeout_s: float = 600) -> dict[str, Any]:
    """Run ``oracle bench`` on ``spec`` and return its figures."""
    try:
        done = subprocess.run(
            [str(binary), "bench"], input=json.dumps(spec), capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired as error:
        raise OracleError(f"oracle bench gave no answer in {timeout_s:.0f} s") from error
    if done.returncode != 0:
        raise OracleError(f"oracle bench failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result

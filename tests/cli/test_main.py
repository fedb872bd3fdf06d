"""``dratwin`` as a program: it ends the process itself after a command (cli.main.console), and still writes
all of its output and exits with the command's status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dratwin.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Case:
    id: str
    args: list[str]
    status: int
    json_out: bool = False  # standard output is one whole JSON document


CASES = [
    Case("schedule-json", ["schedule", "-f", str(EXAMPLES), "-o", "json"], 0, json_out=True),
    Case("validate-json", ["validate", "-f", str(EXAMPLES), "-o", "json"], 0, json_out=True),
    Case("pending-pod", ["schedule", "-f", str(EXAMPLES), "-f", str(EXAMPLES / "missing-deviceclass")], 1),
    Case("unreadable-file", ["schedule", "-f", str(EXAMPLES / "no-such-file.yaml")], 2),
    Case("no-command", [], 2),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_program_writes_everything_and_exits_with_the_status(case: Case) -> None:
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output waits for the flush
    done = subprocess.run([sys.executable, "-m", "dratwin.cli.main", *case.args], capture_output=True, text=True,
                          timeout=120, env=buffered)
    assert done.returncode == case.status, done.stderr
    assert done.stdout or done.stderr
    if case.json_out:
        json.loads(done.stdout)


def test_the_same_run_in_process_returns_its_status() -> None:
    assert main(["schedule", "-f", str(EXAMPLES), "-f", str(EXAMPLES / "missing-deviceclass")]) == 1

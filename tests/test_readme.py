"""The README's console examples are real: each ``$ dratwin ...`` block is run and must print what it shows."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
CONSOLE = re.compile(r"```console\n\$ (dratwin [^\n]+)\n(.*?)```", re.S)
YAML_FILE = re.compile(r"\(`([\w.-]+\.yaml)`\):\n\n```yaml\n(.*?)```", re.S)
EXAMPLES = [(command, output) for command, output in CONSOLE.findall(README) if output.strip()]


def test_readme_has_examples_with_output() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example(command: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    for name, text in YAML_FILE.findall(README):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(shlex.split(command)[1:])
    assert out.getvalue() == expected
    assert os.getcwd() == str(tmp_path)

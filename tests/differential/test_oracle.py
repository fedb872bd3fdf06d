"""The oracle adapter: finding the binary, reading its answers, saying what is missing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dratwin.differential import oracle


def test_answers_are_read_by_case_name() -> None:
    lines = io.StringIO('{"name": "a", "variant": "stable"}\n\n{"name": "b", "error": "bad"}\n')
    assert oracle.read_answers(lines) == {"a": {"name": "a", "variant": "stable"}, "b": {"name": "b", "error": "bad"}}


def test_output_that_is_not_json_names_its_line() -> None:
    with pytest.raises(oracle.OracleError, match="line 2 is not JSON"):
        oracle.read_answers(io.StringIO('{"name": "a"}\npanic: boom\n'))


def test_locate_prefers_the_explicit_path_then_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit, from_environment = tmp_path / "a", tmp_path / "b"
    explicit.write_text("", encoding="utf-8")
    from_environment.write_text("", encoding="utf-8")
    monkeypatch.setenv(oracle.ENVIRONMENT_VARIABLE, str(from_environment))
    assert oracle.locate(str(explicit)) == explicit
    assert oracle.locate(str(tmp_path / "missing")) == from_environment


def test_building_without_go_says_what_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(oracle.OracleError, match=r"needs Go 1\.26 and the Go module proxy"):
        oracle.build()

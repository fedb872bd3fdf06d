"""Replay every input that once broke the command-line contract (tests/fuzz/corpus/), as a regression test."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fuzz.harness import FuzzInput, run

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.yaml"))


def test_the_corpus_holds_the_known_breakers() -> None:
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_input_keeps_the_contract(path: Path) -> None:
    case = FuzzInput.from_yaml(path.read_text())
    assert case.why, f"{path.name}: say what the input once broke"
    run(case)

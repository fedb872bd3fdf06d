"""Scoring names: upstream's NodeResourcesFit strategies and the FGD paper's opt-in policies."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dratwin.scheduler.plugins.node_resources import ScoringStrategy
from dratwin.scheduler.scoring import Scoring, opt_in_note, scoring_named


@dataclass(frozen=True)
class NameCase:
    name: str
    expected: Scoring


CASES = [
    NameCase("LeastAllocated", Scoring(ScoringStrategy.LEAST_ALLOCATED)),
    NameCase("MostAllocated", Scoring(ScoringStrategy.MOST_ALLOCATED)),
    NameCase("FGD", Scoring(policy="fgd")),
    NameCase("GpuPacking", Scoring(policy="gpupacking")),
    NameCase("Random", Scoring(policy="random")),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_name_reads_back_as_itself(case: NameCase) -> None:
    scoring = scoring_named(case.name)
    assert scoring == case.expected
    assert scoring.name == case.name
    assert (opt_in_note(scoring) is None) is scoring.upstream is (case.expected.policy is None)


@pytest.mark.parametrize("name", ["fgd", "leastAllocated", "RequestedToCapacityRatio", ""])
def test_other_names_are_refused_with_the_known_ones(name: str) -> None:
    with pytest.raises(ValueError, match="upstream: LeastAllocated, MostAllocated; opt-in policies of the FGD paper"):
        scoring_named(name)

"""Judging a case: dratwin against the variant upstream picked; stable's order-dependent answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders import answer, result

from dratwin.differential.compare import AGREE, DEVICES, OUTCOME
from dratwin.differential.judge import CRASH, ORACLE_FAILED, ORDER_DEPENDENT, distinct_answers, judge

DEV_1 = answer(claims={"claim-0": [result("req-0", "driver-a", "pool-1", "dev-1")]})
DEV_2 = answer(claims={"claim-0": [result("req-0", "driver-a", "pool-2", "dev-1")]})
BOTH = answer(claims={"claim-0": [result("req-0", "driver-a", "pool-1", "dev-1"),
                                   result("req-0", "driver-a", "pool-2", "dev-1")]})
BOTH_REVERSED = answer(claims={"claim-0": [result("req-0", "driver-a", "pool-2", "dev-1"),
                                            result("req-0", "driver-a", "pool-1", "dev-1")]})


def record(variant: str, answers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"name": "c", "variant": variant, "answers": answers}


def with_alternatives(first: dict[str, Any], *others: dict[str, Any]) -> dict[str, Any]:
    return {**first, "orderDependent": True, "alternatives": [first, *others], "runs": 8}


@dataclass(frozen=True)
class Case:
    name: str
    record: dict[str, Any]
    dratwin: dict[str, Any]
    category: str
    matches_one: bool = False
    variants_disagree: tuple[str, ...] = field(default=())


CASES = [
    Case("same answer", record("incubating", {"incubating": DEV_1, "experimental": DEV_1}), DEV_1, AGREE),
    Case("judged against the picked variant only", record("stable", {"stable": DEV_1, "incubating": DEV_2}),
         DEV_1, AGREE, variants_disagree=("incubating",)),
    Case("another device", record("incubating", {"incubating": DEV_1}), DEV_2, DEVICES),
    Case("unsatisfiable", record("incubating", {"incubating": DEV_1}), answer("unsatisfiable"), OUTCOME),
    Case("order-dependent, dratwin gives one of the answers",
         record("stable", {"stable": with_alternatives(DEV_1, DEV_2)}), DEV_2, ORDER_DEPENDENT, True),
    Case("order-dependent, dratwin gives none of them",
         record("stable", {"stable": with_alternatives(DEV_1, DEV_2)}), answer("unsatisfiable"), ORDER_DEPENDENT),
    Case("answers differing only in device order are one answer",
         record("stable", {"stable": with_alternatives(BOTH, BOTH_REVERSED)}), BOTH, AGREE),
    Case("error messages differing with the order are one answer",
         record("stable", {"stable": with_alternatives(answer("error", error="a"), answer("error", error="b"))}),
         answer("error", error="ours"), AGREE),
    Case("dratwin raised an exception", record("incubating", {"incubating": DEV_1}),
         {"result": CRASH, "error": "KeyError: 'x'"}, CRASH),
    Case("the oracle could not read the case", {"name": "c", "error": "bad yaml"}, DEV_1, ORACLE_FAILED),
    Case("no answer from the picked variant", record("stable", {"incubating": DEV_1}), DEV_1, ORACLE_FAILED),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_judge(case: Case) -> None:
    judgement = judge(case.record, case.dratwin)
    assert judgement.category == case.category, judgement.problems
    assert judgement.dratwin_matches_one == case.matches_one
    assert judgement.variants_disagree == case.variants_disagree
    assert judgement.is_disagreement == (case.category not in (AGREE, ORDER_DEPENDENT))


def test_distinct_answers_keep_the_first_of_each() -> None:
    assert distinct_answers([DEV_1, BOTH, DEV_1, BOTH_REVERSED, DEV_2]) == [DEV_1, BOTH, DEV_2]

"""Judging one case: dratwin's answer against the answer of the variant upstream picks.

Pure: it takes the oracle's record of a case and dratwin's answer and returns a :class:`Judgement`.
Where upstream picked ``stable`` and its answers depend on the pool order (Go map order, random),
the case is ``order-dependent``: it is not counted as a disagreement, but the judgement says
whether dratwin's answer is one of the answers upstream gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.differential.compare import AGREE, Verdict, compare, expect_from_answer

ORDER_DEPENDENT = "order-dependent"
ORACLE_FAILED = "oracle failed"
CRASH = "dratwin crashed"  # an exception that is no DratwinError: a traceback for the user

Answer = Mapping[str, Any]


@dataclass(frozen=True)
class Judgement:
    category: str
    problems: tuple[str, ...] = ()
    variant: str = ""
    upstream: Answer = field(default_factory=dict)
    alternatives: tuple[Answer, ...] = ()
    dratwin_matches_one: bool = False
    variants_disagree: tuple[str, ...] = ()

    @property
    def is_disagreement(self) -> bool:
        return self.category not in (AGREE, ORDER_DEPENDENT)


def same_answer(first: Answer, second: Answer) -> bool:
    """Equal by the comparison rules (each taken as the other's expectation)."""
    return compare(expect_from_answer(first), second).agrees


def distinct_answers(answers: Sequence[Answer]) -> list[Answer]:
    kept: list[Answer] = []
    for answer in answers:
        if not any(same_answer(seen, answer) for seen in kept):
            kept.append(answer)
    return kept


def judge(record: Mapping[str, Any], dratwin: Answer) -> Judgement:
    """``record``: the oracle's line for the case; ``dratwin``: ``dratwin allocate -o json``'s answer."""
    variant = str(record.get("variant") or "")
    answers: Mapping[str, Answer] = record.get("answers") or {}
    if record.get("error") or variant not in answers:
        return Judgement(ORACLE_FAILED, (str(record.get("error") or f"no answer from variant {variant!r}"),))
    upstream = answers[variant]
    if dratwin.get("result") == CRASH:
        return Judgement(CRASH, (str(dratwin.get("error")),), variant, upstream)
    others = tuple(name for name, other in answers.items() if name != variant and not same_answer(upstream, other))
    alternatives = tuple(distinct_answers(upstream.get("alternatives") or [upstream]))
    if len(alternatives) > 1:
        matches = any(same_answer(alternative, dratwin) for alternative in alternatives)
        return Judgement(ORDER_DEPENDENT, (), variant, upstream, alternatives, matches, others)
    verdict: Verdict = compare(expect_from_answer(upstream), dratwin)
    return Judgement(verdict.category, verdict.problems, variant, upstream, alternatives, False, others)

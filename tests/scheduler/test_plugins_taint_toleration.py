"""TaintToleration: the toleration matching rules, the Filter on NoSchedule/NoExecute taints and the
PreferNoSchedule score with its reversed normalization."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.builders import Wire, convert, taint, toleration
from tests.builders.scheduler import STANDARD, info, make_node, make_pod, node_info

from dratwin.api.core import Taint, Toleration
from dratwin.scheduler.framework import SUCCESS, CycleState, Status, unresolvable
from dratwin.scheduler.plugins.taint_toleration import TaintToleration, toleration_tolerates_taint

UNTOLERATED = "node(s) had untolerated taint(s)"


@dataclass
class MatchCase:
    name: str
    toleration: Wire
    taint: Wire
    expect: bool


MATCH_CASES = [
    MatchCase("equal-same-value", toleration("gpu", "Equal", "a100", "NoSchedule"), taint("gpu", "a100"), True),
    MatchCase("empty-operator-is-equal", toleration("gpu", value="a100"), taint("gpu", "a100"), True),
    MatchCase("equal-other-value", toleration("gpu", "Equal", "h100"), taint("gpu", "a100"), False),
    MatchCase("equal-empty-value", toleration("gpu", "Equal"), taint("gpu"), True),
    MatchCase("exists-ignores-value", toleration("gpu", "Exists"), taint("gpu", "a100"), True),
    MatchCase("exists-other-key", toleration("gpu", "Exists"), taint("tpu", "v5"), False),
    MatchCase("empty-key-exists-tolerates-all", toleration(operator="Exists"), taint("any", "x", "NoExecute"), True),
    MatchCase("effect-must-match", toleration("gpu", "Exists", effect="NoExecute"), taint("gpu"), False),
    MatchCase("empty-effect-matches-any", toleration("gpu", "Exists"), taint("gpu", effect="PreferNoSchedule"), True),
    MatchCase("unknown-operator", toleration("gpu", "Gt", "1"), taint("gpu", "2"), False),
]


@pytest.mark.parametrize("case", MATCH_CASES, ids=lambda c: c.name)
def test_toleration_matching(case: MatchCase) -> None:
    assert toleration_tolerates_taint(convert(case.toleration, Toleration), convert(case.taint, Taint)) is case.expect


@dataclass
class FilterCase:
    name: str
    taints: list[Wire]
    tolerations: list[Wire]
    expect: Status


FILTER_CASES = [
    FilterCase("no-taints", [], [], SUCCESS),
    FilterCase(
        "no-schedule",
        [taint("gpu", "a100")],
        [],
        unresolvable(UNTOLERATED, details=Taint(key="gpu", value="a100", effect="NoSchedule")),
    ),
    FilterCase(
        "no-execute",
        [taint("maintenance", effect="NoExecute")],
        [],
        unresolvable(UNTOLERATED, details=Taint(key="maintenance", effect="NoExecute")),
    ),
    FilterCase("prefer-no-schedule-ignored", [taint("spot", effect="PreferNoSchedule")], [], SUCCESS),
    FilterCase("tolerated", [taint("gpu", "a100")], [toleration("gpu", "Exists")], SUCCESS),
    FilterCase(
        "first-untolerated-in-details",
        [taint("gpu", "a100"), taint("zone", "b"), taint("team", "x")],
        [toleration("gpu", "Exists")],
        unresolvable(UNTOLERATED, details=Taint(key="zone", value="b", effect="NoSchedule")),
    ),
    FilterCase(
        "no-execute-needs-matching-effect",
        [taint("maintenance", effect="NoExecute")],
        [toleration("maintenance", "Exists", effect="NoSchedule")],
        unresolvable(UNTOLERATED, details=Taint(key="maintenance", effect="NoExecute")),
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter(case: FilterCase) -> None:
    pod = info(make_pod("p", tolerations=case.tolerations))
    node = node_info(make_node("n1", STANDARD, taints=case.taints))
    assert TaintToleration().filter(CycleState(), pod, node) == case.expect


@dataclass
class ScoreCase:
    name: str
    nodes: dict[str, list[Wire]]  # node -> taints
    tolerations: list[Wire]
    raw: dict[str, int]
    normalized: dict[str, int]


SOFT = "PreferNoSchedule"

SCORE_CASES = [
    ScoreCase(
        # raw = untolerated PreferNoSchedule taints; normalized = 100 - 100 * raw // max(raw)
        "counts-and-reverses",
        {
            "n1": [taint("a", effect=SOFT), taint("b", effect=SOFT)],
            "n2": [taint("a", effect=SOFT), taint("c", effect=SOFT)],
            "n3": [taint("b", effect="NoSchedule")],
        },
        [toleration("c", "Exists", effect=SOFT)],
        {"n1": 2, "n2": 1, "n3": 0},
        {"n1": 0, "n2": 50, "n3": 100},
    ),
    ScoreCase(
        # a toleration for another effect does not tolerate a PreferNoSchedule taint
        "no-schedule-toleration-does-not-count",
        {"n1": [taint("a", effect=SOFT)], "n2": []},
        [toleration("a", "Exists", effect="NoSchedule")],
        {"n1": 1, "n2": 0},
        {"n1": 0, "n2": 100},
    ),
    ScoreCase(
        "empty-effect-toleration-counts",
        {"n1": [taint("a", effect=SOFT)], "n2": []},
        [toleration("a", "Exists")],
        {"n1": 0, "n2": 0},
        {"n1": 100, "n2": 100},
    ),
    ScoreCase(
        # 100 * 1 // 3 = 33 -> 67; 100 * 2 // 3 = 66 -> 34
        "integer-division",
        {
            "n1": [taint("a", effect=SOFT)],
            "n2": [taint("a", effect=SOFT), taint("b", effect=SOFT)],
            "n3": [taint("a", effect=SOFT), taint("b", effect=SOFT), taint("c", effect=SOFT)],
        },
        [],
        {"n1": 1, "n2": 2, "n3": 3},
        {"n1": 67, "n2": 34, "n3": 0},
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.name)
def test_score(case: ScoreCase) -> None:
    plugin = TaintToleration()
    state = CycleState()
    pod = info(make_pod("p", tolerations=case.tolerations))
    raw = {
        name: plugin.score(state, pod, node_info(make_node(name, STANDARD, taints=taints)))
        for name, taints in case.nodes.items()
    }
    assert raw == case.raw
    plugin.normalize(state, pod, raw)
    assert raw == case.normalized
    assert plugin.weight == 3

"""NodeAffinity: nodeSelector and required affinity (PreFilter, Filter), preferred affinity (Score)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders import Wire, convert
from tests.builders.scheduler import STANDARD, info, make_node, make_pod, node_info

from dratwin.api import core
from dratwin.scheduler.framework import SUCCESS, Code, CycleState, Status, unresolvable
from dratwin.scheduler.plugins.node_affinity import NodeAffinity

NO_MATCH = unresolvable("node(s) didn't match Pod's node affinity/selector")
ENFORCED = unresolvable("node(s) didn't match scheduler-enforced node affinity")
CONFLICT = unresolvable("pod affinity terms conflict")


def req(key: str, operator: str, *values: str) -> Wire:
    return {"key": key, "operator": operator, "values": list(values)}


def term(*expressions: Wire, fields: tuple[Wire, ...] = ()) -> Wire:
    return {"matchExpressions": list(expressions), "matchFields": list(fields)}


def required(*terms: Wire) -> Wire:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def preferred(*weighted: tuple[int, Wire]) -> Wire:
    terms = [{"weight": w, "preference": t} for w, t in weighted]
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}


def affinity_pod(affinity: Wire | None = None, selector: Mapping[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {}
    if affinity is not None:
        spec["affinity"] = affinity
    if selector is not None:
        spec["nodeSelector"] = dict(selector)
    return info(make_pod("p", **spec))


GPU_NODE = {"zone": "a", "gpu": "a100", "gpu-count": "8"}


@dataclass
class FilterCase:
    name: str
    affinity: Wire | None = None
    selector: dict[str, str] | None = None
    labels: dict[str, str] = field(default_factory=lambda: dict(GPU_NODE))
    expect: Status = SUCCESS


FILTER_CASES = [
    FilterCase("nothing-required"),
    FilterCase("selector-matches", selector={"zone": "a", "gpu": "a100"}),
    FilterCase("selector-other-value", selector={"zone": "b"}, expect=NO_MATCH),
    FilterCase("selector-missing-label", selector={"rack": "1"}, expect=NO_MATCH),
    FilterCase("selector-empty-value-needs-the-label", selector={"rack": ""}, expect=NO_MATCH),
    FilterCase("in", required(term(req("gpu", "In", "h100", "a100")))),
    FilterCase("in-no-match", required(term(req("gpu", "In", "h100"))), expect=NO_MATCH),
    FilterCase("not-in", required(term(req("gpu", "NotIn", "h100")))),
    FilterCase("not-in-missing-label", required(term(req("rack", "NotIn", "1")))),
    FilterCase("exists", required(term(req("gpu", "Exists")))),
    FilterCase("does-not-exist", required(term(req("gpu", "DoesNotExist"))), expect=NO_MATCH),
    FilterCase("gt", required(term(req("gpu-count", "Gt", "4")))),
    FilterCase("lt", required(term(req("gpu-count", "Lt", "4"))), expect=NO_MATCH),
    FilterCase("expressions-anded", required(term(req("zone", "In", "a"), req("gpu", "In", "h100"))), expect=NO_MATCH),
    FilterCase("terms-ored", required(term(req("zone", "In", "b")), term(req("gpu", "Exists")))),
    FilterCase("no-terms-matches-nothing", required(), expect=NO_MATCH),
    FilterCase("empty-term-matches-nothing", required(term()), expect=NO_MATCH),
    FilterCase("bad-term-alone", required(term(req("gpu", "Like", "a"))), expect=NO_MATCH),
    FilterCase(
        "bad-term-does-not-hide-good-one", required(term(req("gpu", "Like", "a")), term(req("zone", "In", "a")))
    ),
    FilterCase("match-fields-name", required(term(fields=(req("metadata.name", "In", "n1"),)))),
    FilterCase("match-fields-other-name", required(term(fields=(req("metadata.name", "In", "n2"),))), expect=NO_MATCH),
    FilterCase("match-fields-unknown-key", required(term(fields=(req("spec.x", "In", "n1"),))), expect=NO_MATCH),
    FilterCase(
        "selector-and-affinity-both-needed",
        required(term(req("gpu", "Exists"))),
        selector={"zone": "b"},
        expect=NO_MATCH,
    ),
    FilterCase("preferred-does-not-filter", preferred((5, term(req("zone", "In", "b"))))),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter(case: FilterCase) -> None:
    pod = affinity_pod(case.affinity, case.selector)
    node = node_info(make_node("n1", STANDARD, labels=case.labels))
    assert NodeAffinity().filter(CycleState(), pod, node) == case.expect


def test_added_affinity_is_enforced_first() -> None:
    added = convert(required(term(req("pool", "In", "batch")))["nodeAffinity"], core.NodeAffinity)
    plugin = NodeAffinity(added_affinity=added)
    pod = affinity_pod(selector={"zone": "b"})
    assert plugin.filter(CycleState(), pod, node_info(make_node("n1", STANDARD, labels={"zone": "a"}))) == ENFORCED
    batch = node_info(make_node("n1", STANDARD, labels={"zone": "a", "pool": "batch"}))
    assert plugin.filter(CycleState(), pod, batch) == NO_MATCH
    assert plugin.filter(CycleState(), affinity_pod(), batch) == SUCCESS


@dataclass
class PreFilterCase:
    name: str
    affinity: Wire | None = None
    selector: dict[str, str] | None = None
    expect: Status = SUCCESS


def names(*values: str) -> Status:
    return Status(Code.SUCCESS, details=frozenset(values))


def name_in(*values: str) -> Wire:
    return req("metadata.name", "In", *values)


PRE_FILTER_CASES = [
    PreFilterCase("nothing-to-do", expect=Status(Code.SKIP)),
    PreFilterCase("only-preferred", preferred((1, term(req("zone", "In", "a")))), expect=Status(Code.SKIP)),
    PreFilterCase("selector-only", selector={"zone": "a"}),
    PreFilterCase("labels-only", required(term(req("zone", "In", "a")))),
    PreFilterCase("one-term-names", required(term(fields=(name_in("n1", "n2"),))), expect=names("n1", "n2")),
    PreFilterCase(
        "terms-union",
        required(term(fields=(name_in("n1"),)), term(req("zone", "In", "a"), fields=(name_in("n3"),))),
        expect=names("n1", "n3"),
    ),
    PreFilterCase(
        "requirements-intersect",
        required(term(fields=(name_in("n1", "n2"), name_in("n2", "n3")))),
        expect=names("n2"),
    ),
    PreFilterCase(
        "a-term-without-names-allows-all",
        required(term(fields=(name_in("n1"),)), term(req("zone", "In", "a"))),
    ),
    PreFilterCase("conflict", required(term(fields=(name_in("n1"), name_in("n2")))), expect=CONFLICT),
    PreFilterCase("not-in-does-not-narrow", required(term(fields=(req("metadata.name", "NotIn", "n1"),)))),
]


@pytest.mark.parametrize("case", PRE_FILTER_CASES, ids=lambda c: c.name)
def test_pre_filter(case: PreFilterCase) -> None:
    pod = affinity_pod(case.affinity, case.selector)
    assert NodeAffinity().pre_filter(CycleState(), pod, []) == case.expect


@dataclass
class ScoreCase:
    name: str
    affinity: Wire | None
    raw: dict[str, int]
    normalized: dict[str, int]
    added: Wire | None = None


NODES = {
    "a-gpu": {"zone": "a", "gpu": "a100"},
    "a": {"zone": "a"},
    "b": {"zone": "b"},
}

SCORE_CASES = [
    ScoreCase(
        # raw = sum of matching weights; normalized = 100 * raw // max(raw): 500 // 8 = 62
        "weights-summed-and-scaled",
        preferred((5, term(req("zone", "In", "a"))), (3, term(req("gpu", "Exists")))),
        {"a-gpu": 8, "a": 5, "b": 0},
        {"a-gpu": 100, "a": 62, "b": 0},
    ),
    ScoreCase(
        "zero-weight-and-empty-terms-ignored",
        preferred((0, term(req("zone", "In", "b"))), (7, term()), (2, term(req("zone", "In", "b")))),
        {"a-gpu": 0, "a": 0, "b": 2},
        {"a-gpu": 0, "a": 0, "b": 100},
    ),
    ScoreCase("no-preferences", None, {"a-gpu": 0, "a": 0, "b": 0}, {"a-gpu": 0, "a": 0, "b": 0}),
    ScoreCase(
        "added-preferences-count-too",
        preferred((1, term(req("zone", "In", "a")))),
        {"a-gpu": 1, "a": 1, "b": 4},
        {"a-gpu": 25, "a": 25, "b": 100},
        added=preferred((4, term(req("zone", "In", "b")))),
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.name)
def test_score(case: ScoreCase) -> None:
    added = convert(case.added["nodeAffinity"], core.NodeAffinity) if case.added else None
    plugin = NodeAffinity(added_affinity=added)
    state = CycleState()
    pod = affinity_pod(case.affinity)
    raw = {
        name: plugin.score(state, pod, node_info(make_node(name, STANDARD, labels=labels)))
        for name, labels in NODES.items()
    }
    assert raw == case.raw
    plugin.normalize(state, pod, raw)
    assert raw == case.normalized
    assert plugin.weight == 2

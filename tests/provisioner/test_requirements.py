"""Karpenter's requirements algebra: operators, intersection, compatibility reasons, pods, minValues."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders import convert, wire

from dratwin.api.core import NodeSelectorRequirement, Pod
from dratwin.api.karpenter import NodeSelectorRequirementWithMinValues
from dratwin.provisioner.requirements import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    MinValuesShortfall,
    Requirement,
    RequirementError,
    Requirements,
)

KEY = "key"
ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"


def req(operator: str, *values: str, key: str = KEY, min_values: int | None = None) -> Requirement:
    return Requirement.create(key, operator, values, min_values)


def reqs(*items: Requirement) -> Requirements:
    return Requirements(items)


# The requirements of upstream's requirement_test.go, by name.
R = {
    "exists": req("Exists"),
    "doesNotExist": req("DoesNotExist"),
    "inA": req("In", "A"),
    "inB": req("In", "B"),
    "inAB": req("In", "A", "B"),
    "notInA": req("NotIn", "A"),
    "in1": req("In", "1"),
    "in9": req("In", "9"),
    "in19": req("In", "1", "9"),
    "notIn12": req("NotIn", "1", "2"),
    "gt1": req("Gt", "1"),
    "gt9": req("Gt", "9"),
    "lt1": req("Lt", "1"),
    "lt9": req("Lt", "9"),
}
# Values to probe membership with: strings, integers around every bound, a non-integer.
PROBES = ["A", "B", "C", "-1", "0", "1", "2", "3", "8", "9", "10", "11", "1.5", ""]


# ---- one requirement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class OperatorCase:
    name: str
    requirement: Requirement
    expect_str: str
    expect_operator: str
    allowed: frozenset[str]  # of PROBES


OPERATOR_CASES = [
    OperatorCase("in", req("In", "A", "B"), "key In [A B]", "In", frozenset({"A", "B"})),
    OperatorCase("not-in", req("NotIn", "A"), "key NotIn [A]", "NotIn", frozenset(PROBES) - {"A"}),
    OperatorCase("exists", req("Exists"), "key Exists", "Exists", frozenset(PROBES)),
    OperatorCase("exists-ignores-values", req("Exists", "A"), "key Exists", "Exists", frozenset(PROBES)),
    OperatorCase("does-not-exist", req("DoesNotExist"), "key DoesNotExist", "DoesNotExist", frozenset()),
    OperatorCase("gt", req("Gt", "1"), "key Exists >=2", "Exists", frozenset({"2", "3", "8", "9", "10", "11"})),
    OperatorCase("gte", req("Gte", "2"), "key Exists >=2", "Exists", frozenset({"2", "3", "8", "9", "10", "11"})),
    OperatorCase("lt", req("Lt", "1"), "key Exists <=0", "Exists", frozenset({"-1", "0"})),
    OperatorCase("lte", req("Lte", "8"), "key Exists <=8", "Exists", frozenset({"-1", "0", "1", "2", "3", "8"})),
    OperatorCase("min-values", req("In", *"abcdefg", min_values=3), "key In [a b c d e and 2 others] minValues 3",
                 "In", frozenset()),
]


@pytest.mark.parametrize("case", OPERATOR_CASES, ids=lambda c: c.name)
def test_operator(case: OperatorCase) -> None:
    assert str(case.requirement) == case.expect_str
    assert case.requirement.operator == case.expect_operator
    assert {v for v in PROBES if case.requirement.has(v)} == case.allowed


def test_exists_is_the_complement_of_the_empty_set_and_does_not_exist_the_empty_set() -> None:
    assert R["exists"] == Requirement(KEY, True, frozenset())
    assert R["doesNotExist"] == Requirement(KEY, False, frozenset())
    assert len(R["doesNotExist"]) == 0 and len(R["inAB"]) == 2
    assert len(R["exists"]) == 2**63 - 1 and len(R["notIn12"]) == 2**63 - 3


def test_gte_and_lte_are_gt_and_lt_shifted_by_one() -> None:
    assert req("Gte", "2") == req("Gt", "1")
    assert req("Lte", "8") == req("Lt", "9")


def test_deprecated_keys_are_normalized() -> None:
    assert req("In", "a", key="failure-domain.beta.kubernetes.io/zone").key == ZONE
    assert req("In", "x", key="beta.kubernetes.io/instance-type").key == TYPE


@pytest.mark.parametrize(
    ("operator", "values", "expect_error"),
    [
        ("Equals", ["a"], 'operator "Equals" is not one of'),
        ("in", ["a"], 'operator "in"'),
        ("Gt", [], "exactly one integer value"),
        ("Gt", ["1", "2"], "exactly one integer value"),
        ("Lt", ["1.5"], "exactly one integer value"),
        ("Gte", ["x"], "exactly one integer value"),
    ],
)
def test_unreadable_requirements_raise(operator: str, values: list[str], expect_error: str) -> None:
    with pytest.raises(RequirementError, match=expect_error):
        req(operator, *values)


@pytest.mark.parametrize(
    ("requirement", "expect"),
    [
        (R["inAB"], "A"), (R["in19"], "1"), (R["notInA"], "0"), (R["notIn12"], "0"), (req("NotIn", "0", "1"), "2"),
        (R["exists"], "0"), (R["gt1"], "2"), (R["gt9"], "10"), (R["lt1"], "0"), (R["lt9"], "0"),
        (req("Gt", "-5"), "0"), (R["doesNotExist"], None), (req("Lt", "0"), None),
        (R["gt1"].intersection(R["lt9"]).intersection(req("NotIn", "2", "3")), "4"),
    ],
)
def test_any_is_the_smallest_allowed_value(requirement: Requirement, expect: str | None) -> None:
    assert requirement.any() == expect
    if expect is not None:
        assert requirement.has(expect)


# ---- intersection of every operator pair ---------------------------------------------------------

# Expected results from upstream's "should intersect two requirements" table (existing, incoming).
INTERSECTIONS = [
    ("exists", "exists", "key Exists"), ("exists", "doesNotExist", "key DoesNotExist"),
    ("exists", "inAB", "key In [A B]"), ("exists", "lt1", "key Exists <=0"),
    ("doesNotExist", "inA", "key DoesNotExist"), ("doesNotExist", "gt1", "key DoesNotExist"),
    ("inA", "inAB", "key In [A]"), ("inA", "in19", "key DoesNotExist"), ("inA", "lt1", "key DoesNotExist"),
    ("inB", "inA", "key DoesNotExist"), ("inAB", "notInA", "key In [B]"),
    ("notInA", "inA", "key DoesNotExist"), ("notInA", "in1", "key In [1]"), ("notInA", "gt1", "key Exists >=2"),
    ("notInA", "notIn12", "key NotIn [1 2 A]"),
    ("in1", "in19", "key In [1]"), ("in1", "lt1", "key DoesNotExist"), ("in9", "gt1", "key In [9]"),
    ("notIn12", "inA", "key In [A]"), ("notIn12", "in1", "key DoesNotExist"),
    ("notIn12", "gt1", "key NotIn [2] >=2"),
    ("gt1", "inAB", "key DoesNotExist"), ("gt1", "in19", "key In [9]"), ("gt1", "lt1", "key DoesNotExist"),
    ("gt9", "gt1", "key Exists >=10"), ("lt1", "lt9", "key Exists <=0"), ("lt9", "in1", "key In [1]"),
    ("lt9", "gt1", "key Exists >=2 <=8"), ("gt9", "lt1", "key DoesNotExist"),
]


@pytest.mark.parametrize(("existing", "incoming", "expect"), INTERSECTIONS, ids=lambda v: str(v))
def test_intersection(existing: str, incoming: str, expect: str) -> None:
    assert str(R[existing].intersection(R[incoming])) == expect


@pytest.mark.parametrize(("a", "b"), list(itertools.product(R, R)))
def test_intersection_allows_exactly_what_both_allow(a: str, b: str) -> None:
    both = R[a].intersection(R[b])
    assert [v for v in PROBES if both.has(v)] == [v for v in PROBES if R[a].has(v) and R[b].has(v)]
    assert R[a].has_intersection(R[b]) == (len(both) > 0)
    assert {v for v in PROBES if both.has(v)} == {v for v in PROBES if R[b].intersection(R[a]).has(v)}


def test_bounds_with_no_integer_between_are_empty() -> None:
    assert str(req("Gt", "1").intersection(req("Lt", "2"))) == "key DoesNotExist"
    assert str(req("Gt", "1").intersection(req("Lt", "3"))) == "key Exists >=2 <=2"


def test_intersection_keeps_the_larger_min_values() -> None:
    a, b = req("In", "a", "b", "c", min_values=2), req("In", "b", "c", "d", min_values=3)
    assert a.intersection(b) == Requirement(KEY, False, frozenset({"b", "c"}), min_values=3)
    assert str(req("Gt", "9", min_values=1).intersection(req("Lt", "1"))) == "key DoesNotExist minValues 1"


def test_intersection_of_different_keys_is_a_bug() -> None:
    with pytest.raises(ValueError, match="different keys"):
        req("Exists").intersection(req("Exists", key="other"))


@pytest.mark.parametrize(
    ("requirement", "expect"),
    [
        (R["inAB"], [("In", ["A", "B"])]), (R["notInA"], [("NotIn", ["A"])]), (R["exists"], [("Exists", [])]),
        (R["doesNotExist"], [("DoesNotExist", [])]), (R["gt1"], [("Gte", ["2"])]), (R["lt9"], [("Lte", ["8"])]),
        (R["gt1"].intersection(R["lt9"]), [("Gte", ["2"]), ("Lte", ["8"])]),
    ],
)
def test_node_selector_requirements_as_written_on_a_nodeclaim(
    requirement: Requirement, expect: list[tuple[str, list[str]]]
) -> None:
    assert [(r.operator, r.values) for r in requirement.node_selector_requirements()] == expect


# ---- Requirements: building and adding -----------------------------------------------------------


def test_requirements_intersect_per_key_and_are_immutable() -> None:
    base = reqs(req("In", "a", "b", key=ZONE))
    added = base.add(req("NotIn", "a", key=ZONE)).add(reqs(req("Exists", key="team")))
    assert str(base) == "topology.kubernetes.io/zone In [a b]"
    assert str(added) == "team Exists, topology.kubernetes.io/zone In [b]"
    assert list(added) == ["team", ZONE]
    assert reqs(req("In", "a", key=ZONE), req("In", "b", key=ZONE))[ZONE] == req("DoesNotExist", key=ZONE)
    assert added.for_key("absent") == Requirement.exists("absent")
    assert hash(added) == hash(reqs(req("Exists", key="team"), req("In", "b", key=ZONE)))


def test_from_node_selector_reads_min_values_and_core_requirements() -> None:
    nodepool = Requirements.from_node_selector([
        NodeSelectorRequirementWithMinValues(key=TYPE, operator="In", values=["a", "b"], min_values=2),
        NodeSelectorRequirement(key=ZONE, operator="NotIn", values=["z"]),
    ])
    assert str(nodepool) == f"{TYPE} In [a b] minValues 2, {ZONE} NotIn [z]"
    assert nodepool.has_min_values and not Requirements.from_labels({ZONE: "a"}).has_min_values


def test_labels_are_the_single_valued_in_requirements() -> None:
    requirements = Requirements.from_labels({"team": "ml", "kubernetes.io/hostname": "h"}).add(
        reqs(req("In", "a", "b", key=ZONE), req("Exists", key="x"), req("In", "spot", key="karpenter.sh/capacity-type"))
    )
    assert requirements.labels() == {"karpenter.sh/capacity-type": "spot", "team": "ml"}
    assert "hostname" not in str(requirements)


# ---- compatibility and intersection reasons ------------------------------------------------------


@dataclass(frozen=True)
class CompatCase:
    name: str
    node: Requirements
    pod: Requirements
    allow_undefined: frozenset[str] = field(default_factory=frozenset)
    expect_error: str | None = None  # the whole reason


COMPAT_CASES = [
    CompatCase("same-value", reqs(req("In", "a", key=ZONE)), reqs(req("In", "a", "b", key=ZONE))),
    CompatCase("disjoint-values", reqs(req("In", "a", key=ZONE)), reqs(req("In", "b", key=ZONE)),
               expect_error=f"key {ZONE}, {ZONE} In [b] not in {ZONE} In [a]"),
    CompatCase("well-known-undefined-is-allowed", reqs(), reqs(req("In", "b", key=ZONE)), ALLOW_UNDEFINED_WELL_KNOWN),
    CompatCase("well-known-undefined-strict", reqs(), reqs(req("In", "b", key=ZONE)),
               expect_error=f'label "{ZONE}" does not have known values'),
    CompatCase("custom-undefined", reqs(), reqs(req("In", "ml", key="team")), ALLOW_UNDEFINED_WELL_KNOWN,
               expect_error='label "team" does not have known values'),
    CompatCase("custom-undefined-but-only-excluded", reqs(), reqs(req("NotIn", "ml", key="team"),
                                                                   req("DoesNotExist", key="gpu"))),
    CompatCase("exists-on-undefined-custom", reqs(), reqs(req("Exists", key="team")),
               expect_error='label "team" does not have known values'),
    CompatCase("both-only-exclude", reqs(req("DoesNotExist", key="team")), reqs(req("NotIn", "a", key="team"))),
    CompatCase("exists-vs-does-not-exist", reqs(req("DoesNotExist", key="team")), reqs(req("Exists", key="team")),
               expect_error="key team, team Exists not in team DoesNotExist"),
    CompatCase("bounds", reqs(req("In", "4", "8", key="gpus")), reqs(req("Gt", "4", key="gpus"))),
    CompatCase("bounds-disjoint", reqs(req("In", "1", "2", key="gpus")), reqs(req("Gt", "4", key="gpus")),
               expect_error="key gpus, gpus Exists >=5 not in gpus In [1 2]"),
    CompatCase("every-disjoint-key-is-reported",
               reqs(req("In", "a", key=ZONE), req("In", "spot", key="karpenter.sh/capacity-type")),
               reqs(req("In", "b", key=ZONE), req("In", "on-demand", key="karpenter.sh/capacity-type")),
               expect_error="key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [on-demand] not in "
               f"karpenter.sh/capacity-type In [spot]; key {ZONE}, {ZONE} In [b] not in {ZONE} In [a]"),
    CompatCase("first-undefined-key-in-order", reqs(), reqs(req("In", "x", key="b"), req("In", "x", key="a")),
               expect_error='label "a" does not have known values'),
    CompatCase("many-values-are-shortened", reqs(req("In", "z", key=TYPE)), reqs(req("In", *"abcdefg", key=TYPE)),
               expect_error=f"key {TYPE}, {TYPE} In [a b c d e and 2 others] not in {TYPE} In [z]"),
]


@pytest.mark.parametrize("case", COMPAT_CASES, ids=lambda c: c.name)
def test_compatible(case: CompatCase) -> None:
    assert case.node.compatible(case.pod, case.allow_undefined) == case.expect_error
    assert case.node.is_compatible(case.pod, case.allow_undefined) == (case.expect_error is None)


@pytest.mark.parametrize(
    ("node_keys", "pod_key", "expect_hint"),
    [
        ((), "zone", ' (typo of "topology.kubernetes.io/zone"?)'),
        ((), "topology.kubernetes.io/zonee", ' (typo of "topology.kubernetes.io/zone"?)'),
        ((), "instance-type", ' (typo of "node.kubernetes.io/instance-type"?)'),
        ((), "karpenter.k8s.aws/instance-gpu", ' (typo of "karpenter.k8s.aws/instance-gpu-count"?)'),
        ((), "karpenter.k8s.aws/instance-gpu-nme", ' (typo of "karpenter.k8s.aws/instance-gpu-name"?)'),
        (("example.com/team",), "team", ' (typo of "example.com/team"?)'),
        (("example.com/team",), "example.com/teams", ' (typo of "example.com/team"?)'),
        ((), "a", ""),
        ((), "example.com/gpu-class", ""),
    ],
)
def test_unknown_keys_get_a_typo_hint(node_keys: tuple[str, ...], pod_key: str, expect_hint: str) -> None:
    node = reqs(*(req("Exists", key=k) for k in node_keys))
    reason = node.compatible(reqs(req("In", "x", key=pod_key)), ALLOW_UNDEFINED_WELL_KNOWN)
    assert reason == f'label "{pod_key}" does not have known values{expect_hint}'


def test_intersects_ignores_keys_of_one_side() -> None:
    assert reqs(req("In", "a", key=ZONE)).intersects(reqs(req("In", "x", key="team"))) is None


# ---- pods ----------------------------------------------------------------------------------------


def pod(node_selector: dict[str, str] | None = None, required: list[list[tuple[str, str, list[str]]]] | None = None,
        preferred: list[tuple[int, list[tuple[str, str, list[str]]]]] | None = None) -> Pod:
    def term(expressions: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
        return {"matchExpressions": [{"key": k, "operator": o, "values": v} for k, o, v in expressions]}

    affinity: dict[str, Any] = {}
    if required is not None:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term(t) for t in required]}
    if preferred is not None:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": term(t)} for w, t in preferred]
    spec: dict[str, Any] = {"nodeSelector": node_selector or {}, "containers": [{"name": "c"}]}
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    return convert({"metadata": {"name": "p"}, "spec": spec}, Pod)


@dataclass(frozen=True)
class PodCase:
    name: str
    pod: Pod
    expect: list[str]  # str() of each alternative
    expect_preferred: list[str] = field(default_factory=list)
    expect_relaxations: list[str] | None = None  # None: same as expect


POD_CASES = [
    PodCase("nothing", pod(), [""]),
    PodCase("node-selector", pod({ZONE: "a", "beta.kubernetes.io/arch": "arm64"}),
            [f"kubernetes.io/arch In [arm64], {ZONE} In [a]"]),
    PodCase("terms-are-alternatives-each-anded-with-the-node-selector",
            pod({"team": "ml"}, required=[[(ZONE, "In", ["a"])],
                                          [(TYPE, "In", ["p5.48xlarge"]), (ZONE, "NotIn", ["b"])]]),
            [f"team In [ml], {ZONE} In [a]", f"{TYPE} In [p5.48xlarge], team In [ml], {ZONE} NotIn [b]"]),
    PodCase("a-term-that-contradicts-the-node-selector", pod({ZONE: "a"}, required=[[(ZONE, "In", ["b"])]]),
            [f"{ZONE} DoesNotExist"]),
    PodCase("empty-term-constrains-nothing", pod({"team": "ml"}, required=[[]]), ["team In [ml]"]),
    PodCase("preferences-heaviest-first-ties-in-order",
            pod(required=[[(ZONE, "In", ["a", "b"])], [(ZONE, "In", ["c"])]],
                preferred=[(1, [(ZONE, "In", ["b"])]), (50, [(TYPE, "In", ["g6e.xlarge"])]),
                           (1, [(ZONE, "In", ["a"])])]),
            [f"{ZONE} In [a b]", f"{ZONE} In [c]"],
            [f"{TYPE} In [g6e.xlarge]", f"{ZONE} In [b]", f"{ZONE} In [a]"],
            [f"{TYPE} In [g6e.xlarge], {ZONE} In [a b]", f"{TYPE} In [g6e.xlarge], {ZONE} In [c]",
             f"{ZONE} DoesNotExist", f"{ZONE} DoesNotExist", f"{ZONE} In [c]"]),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.name)
def test_pod_requirements(case: PodCase) -> None:
    before = convert(wire(case.pod), Pod)
    assert [str(r) for r in Requirements.from_pod(case.pod)] == case.expect
    assert [str(r) for r in Requirements.from_pod(case.pod.spec)] == case.expect
    assert [str(r) for r in Requirements.preferred_of(case.pod)] == case.expect_preferred
    relaxed = [str(r) for r in Requirements.relaxations(case.pod)]
    assert relaxed == (case.expect if case.expect_relaxations is None else case.expect_relaxations)
    assert [str(r) for r in Requirements.relaxations(case.pod, respect_preferences=False)] == case.expect
    assert case.pod == before  # the pod was not mutated (upstream sorts its preferences in place)


def test_pod_with_a_bad_operator_raises() -> None:
    with pytest.raises(RequirementError, match='operator "Equal"'):
        Requirements.from_pod(pod(required=[[(ZONE, "Equal", ["a"])]]))


# ---- minValues -----------------------------------------------------------------------------------


def instance_type(name: str, family: str) -> Requirements:
    return Requirements.from_labels({TYPE: name, "karpenter.k8s.aws/instance-family": family})


CHEAPEST_FIRST = [instance_type("c4.large", "c4"), instance_type("c4.xlarge", "c4"), instance_type("c5.large", "c5"),
                  instance_type("m4.large", "m4")]
NODEPOOL = Requirements.from_node_selector([
    NodeSelectorRequirementWithMinValues(key=TYPE, operator="Exists", min_values=3),
    NodeSelectorRequirementWithMinValues(key="karpenter.k8s.aws/instance-family", operator="Exists", min_values=3),
])


def test_min_values_problems_name_each_key_short_of_values() -> None:
    assert NODEPOOL.min_values_problems(CHEAPEST_FIRST) == []
    problems = NODEPOOL.min_values_problems(CHEAPEST_FIRST[:3])
    assert problems == [MinValuesShortfall("karpenter.k8s.aws/instance-family", 3, 2)]
    assert str(problems[0]) == ('minValues requirement is not met for label "karpenter.k8s.aws/instance-family": '
                                "the instance types offer 2 distinct values, 3 are required")
    assert NODEPOOL.min_values_problems([]) == [MinValuesShortfall("karpenter.k8s.aws/instance-family", 3, 0),
                                                MinValuesShortfall(TYPE, 3, 0)]


def test_min_values_needed_counts_the_cheapest_types_that_meet_every_min_values() -> None:
    assert NODEPOOL.min_values_needed(CHEAPEST_FIRST) == 4
    assert NODEPOOL.min_values_needed(CHEAPEST_FIRST[:3]) is None
    assert Requirements.from_labels({ZONE: "a"}).min_values_needed(CHEAPEST_FIRST) == 0

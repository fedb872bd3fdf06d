"""NodeResourcesFit: every shortfall with upstream's reason and code, and the LeastAllocated /
MostAllocated scores computed by hand with upstream's integer formulas."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.scheduler import STANDARD, busy, container, info, make_node, make_pod, node_info

from dratwin.scheduler.framework import SUCCESS, Code, CycleState, PodInfo
from dratwin.scheduler.plugins.node_resources import (
    InsufficientResource,
    NodeResourcesFit,
    ScoringStrategy,
    least_requested_score,
    most_requested_score,
)
from dratwin.scheduler.resources import add_pod

Mi = 1024**2
Gi = 1024**3


def pod_with(requests: Mapping[str, Any] | None = None, name: str = "p") -> PodInfo:
    return info(make_pod(name, container(requests)))


@dataclass
class FilterCase:
    name: str
    pod: Mapping[str, Any]
    allocatable: Mapping[str, Any]
    booked: list[Mapping[str, Any]] = field(default_factory=list)  # requests of pods already there
    expect_code: Code = Code.SUCCESS
    expect_reasons: tuple[str, ...] = ()
    plugin: dict[str, Any] = field(default_factory=dict)


FILTER_CASES = [
    FilterCase("fits", {"cpu": "2", "memory": "4Gi"}, STANDARD, [{"cpu": "2", "memory": "4Gi"}]),
    FilterCase(
        "insufficient-cpu",
        {"cpu": "2"},
        STANDARD,
        [{"cpu": "3"}],
        Code.UNSCHEDULABLE,
        ("Insufficient cpu",),
    ),
    FilterCase(
        "all-shortfalls-reported-in-order",
        {"cpu": "2", "memory": "5Gi", "ephemeral-storage": "2Gi", "nvidia.com/gpu": 1, "example.com/nic": 1},
        {**STANDARD, "ephemeral-storage": "10Gi", "nvidia.com/gpu": 1, "example.com/nic": 1, "pods": 1},
        [{"cpu": "3", "memory": "4Gi", "ephemeral-storage": "9Gi", "nvidia.com/gpu": 1, "example.com/nic": 1}],
        Code.UNSCHEDULABLE,
        (
            "Too many pods",
            "Insufficient cpu",
            "Insufficient memory",
            "Insufficient ephemeral-storage",
            "Insufficient example.com/nic",
            "Insufficient nvidia.com/gpu",
        ),
    ),
    FilterCase(
        "more-than-the-whole-node-is-unresolvable",
        {"cpu": "8", "memory": "1Gi"},
        STANDARD,
        [{"memory": "8Gi"}],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("Insufficient cpu", "Insufficient memory"),
    ),
    FilterCase(
        "extended-resource-missing-on-node",
        {"nvidia.com/gpu": 1},
        STANDARD,
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("Insufficient nvidia.com/gpu",),
    ),
    FilterCase(
        "extended-resource-in-use",
        {"nvidia.com/gpu": 2},
        {**STANDARD, "nvidia.com/gpu": 8},
        [{"nvidia.com/gpu": 7}],
        Code.UNSCHEDULABLE,
        ("Insufficient nvidia.com/gpu",),
    ),
    FilterCase("too-many-pods", {}, {**STANDARD, "pods": 1}, [{}], Code.UNSCHEDULABLE, ("Too many pods",)),
    FilterCase("no-pods-allocatable", {"cpu": "1"}, {"cpu": "4"}, [], Code.UNSCHEDULABLE, ("Too many pods",)),
    FilterCase("best-effort-on-full-node", {}, STANDARD, [{"cpu": "4", "memory": "8Gi"}]),
    FilterCase(
        "hugepages",
        {"hugepages-2Mi": "4Mi"},
        {**STANDARD, "hugepages-2Mi": "2Mi"},
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("Insufficient hugepages-2Mi",),
    ),
    FilterCase("ignored-resource", {"nvidia.com/gpu": 1}, STANDARD, plugin={"ignored_resources": {"nvidia.com/gpu"}}),
    FilterCase(
        "ignored-resource-group", {"nvidia.com/gpu": 1}, STANDARD, plugin={"ignored_resource_groups": {"nvidia.com"}}
    ),
    FilterCase(
        "dra-extended-resource-left-to-dra",
        {"nvidia.com/gpu": 1},
        STANDARD,
        plugin={"dra_extended_resources": {"nvidia.com/gpu"}},
    ),
    FilterCase(
        "dra-extended-resource-advertised-is-checked",
        {"nvidia.com/gpu": 2},
        {**STANDARD, "nvidia.com/gpu": 1},
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("Insufficient nvidia.com/gpu",),
        plugin={"dra_extended_resources": {"nvidia.com/gpu"}},
    ),
    FilterCase("exactly-full", {"cpu": "1"}, STANDARD, [{"cpu": "3"}]),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter(case: FilterCase) -> None:
    node = node_info(make_node("n1", case.allocatable), *(pod_with(r, name=f"b{i}") for i, r in enumerate(case.booked)))
    requested_before = dict(node.requested)
    status = NodeResourcesFit(**case.plugin).filter(CycleState(), pod_with(case.pod), node)
    assert (status.code, status.reasons) == (case.expect_code, case.expect_reasons)
    assert node.requested == requested_before, "Filter must not change the node"


def test_filter_details_carry_the_numbers() -> None:
    node = node_info(make_node("n1", STANDARD), busy("b", "3"))
    status = NodeResourcesFit().filter(CycleState(), pod_with({"cpu": "2"}), node)
    assert status.details == (InsufficientResource("cpu", "Insufficient cpu", 2000, 3000, 4000, False),)
    assert NodeResourcesFit().filter(CycleState(), pod_with({"cpu": "1"}), node) == SUCCESS


@pytest.mark.parametrize(
    ("requested", "capacity", "least", "most"),
    [
        (0, 4000, 100, 0),
        (1000, 4000, 75, 25),
        (1100, 4000, 72, 27),  # 72.5 and 27.5 truncate
        (4000, 4000, 0, 100),
        (5000, 4000, 0, 100),  # over capacity: least 0, most counts as full
        (10, 0, 0, 0),
    ],
)
def test_resource_scores(requested: int, capacity: int, least: int, most: int) -> None:
    assert least_requested_score(requested, capacity) == least
    assert most_requested_score(requested, capacity) == most


@dataclass
class ScoreCase:
    name: str
    pod: Mapping[str, Any] | None
    allocatable: Mapping[str, Any]
    booked: list[Mapping[str, Any] | None]
    least: int
    most: int
    resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


SCORE_CASES = [
    ScoreCase(
        # cpu 2000/4000, memory 4Gi/8Gi: least (50+50)//2, most (50+50)//2
        "half-full",
        {"cpu": "1", "memory": "2Gi"},
        STANDARD,
        [{"cpu": "1", "memory": "2Gi"}],
        50,
        50,
    ),
    ScoreCase(
        # pod without requests counts 100m/200Mi: cpu 3900*100//4000 = 97, memory 7992*100//8192 = 97
        "best-effort-pod-on-empty-node",
        None,
        STANDARD,
        [],
        97,
        2,  # cpu 100*100//4000 = 2, memory 200*100//8192 = 2
    ),
    ScoreCase(
        # booked pod without requests counts 100m/200Mi: cpu 1100 -> least 72, most 27;
        # memory 1224Mi -> least 6968*100//8192 = 85, most 122400//8192 = 14; (72+85)//2 = 78, (27+14)//2 = 20
        "booked-best-effort-counts-defaults",
        {"cpu": "1", "memory": "1Gi"},
        STANDARD,
        [None],
        78,
        20,
    ),
    ScoreCase(
        # no memory on the node: only cpu counts (3000*100//4000 = 75)
        "resource-missing-on-node-skipped",
        {"cpu": "1", "memory": "1Gi"},
        {"cpu": "4", "pods": "110"},
        [],
        75,
        25,
    ),
    ScoreCase(
        # gpu: (8-4)*100//8 = 50 (weight 3); cpu: the booked pod counts 100m, 1100 -> 72 (weight 1):
        # (150+72)//4 = 55; most: gpu 50*3 + cpu 27 = 177//4 = 44
        "extended-resource-weighted",
        {"cpu": "1", "nvidia.com/gpu": 2},
        {**STANDARD, "nvidia.com/gpu": 8},
        [{"nvidia.com/gpu": 2}],
        55,
        44,
        (("nvidia.com/gpu", 3), ("cpu", 1)),
    ),
    ScoreCase(
        # the pod does not request gpus: the gpu resource is left out, cpu alone decides (1100 of 4000)
        "extended-resource-not-requested",
        {"cpu": "1"},
        {**STANDARD, "nvidia.com/gpu": 8},
        [{"nvidia.com/gpu": 2}],
        72,
        27,
        (("nvidia.com/gpu", 3), ("cpu", 1)),
    ),
    ScoreCase(
        # ephemeral-storage uses plain requests: (100-30)*100//100 = 70
        "ephemeral-storage",
        {"ephemeral-storage": "10Gi"},
        {**STANDARD, "ephemeral-storage": "100Gi"},
        [{"ephemeral-storage": "20Gi"}],
        70,
        30,
        (("ephemeral-storage", 1),),
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.name)
def test_score(case: ScoreCase) -> None:
    node = node_info(make_node("n1", case.allocatable), *(pod_with(r, name=f"b{i}") for i, r in enumerate(case.booked)))
    pod = pod_with(case.pod)
    for strategy, expect in (
        (ScoringStrategy.LEAST_ALLOCATED, case.least),
        (ScoringStrategy.MOST_ALLOCATED, case.most),
    ):
        plugin = NodeResourcesFit(strategy, case.resources)
        state = CycleState()
        assert plugin.score(state, pod, node) == expect, strategy
        scores = {"n1": expect}
        plugin.normalize(state, pod, scores)
        assert scores == {"n1": expect}, "scores are already 0..100"


def test_score_sees_pods_added_during_the_cycle() -> None:
    # The per-cycle cache of a node's non-zero requests is keyed by its generation.
    plugin = NodeResourcesFit()
    state = CycleState()
    node = node_info(make_node("n1", STANDARD))
    pod = pod_with({"cpu": "1", "memory": "2Gi"})
    assert plugin.score(state, pod, node) == 75  # cpu 75, memory 75
    add_pod(node, pod_with({"cpu": "1", "memory": "2Gi"}, name="other"))
    assert plugin.score(state, pod, node) == 50


def test_default_weight_and_name() -> None:
    plugin = NodeResourcesFit()
    assert (plugin.name, plugin.weight, plugin.strategy) == ("NodeResourcesFit", 1, ScoringStrategy.LEAST_ALLOCATED)
    with pytest.raises(ValueError, match="positive weights"):
        NodeResourcesFit(resources=(("cpu", 0),))

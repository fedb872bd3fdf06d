"""DefaultPreemption: eligibility, victim selection with reprieve, the node-choice order, the dry-run
bound, and the FailedScheduling message when preemption cannot help."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders import taint
from tests.builders.scheduler import STANDARD, busy, container, info, make_node, make_pod, node_info

from dratwin.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    Status,
    unschedulable,
)
from dratwin.scheduler.plugins.node_resources import NodeResourcesFit
from dratwin.scheduler.plugins.taint_toleration import TaintToleration
from dratwin.scheduler.preemption import (
    PreemptionResult,
    find_preemption,
    fit_error_message,
    no_victims_message,
    num_candidates,
    preemption_message,
    select_victims_on_node,
    why_no_preemption,
)

FILTERS = (TaintToleration(), NodeResourcesFit())  # the default profile runs TaintToleration first


def fits(pod: PodInfo, node: NodeInfo) -> Status:
    for plugin in FILTERS:
        status = plugin.filter(CycleState(), pod, node)
        if not status.ok:
            return status
    return SUCCESS


def filter_statuses(pod: PodInfo, nodes: list[NodeInfo]) -> dict[str, Status]:
    return {n.name: s for n in nodes if not (s := fits(pod, n)).ok}


def preemptor(cpu: str, priority: int = 100, **spec: Any) -> PodInfo:
    return info(make_pod("incoming", container({"cpu": cpu}), priority=priority, **spec), order=1000)


def node(name: str, *pods: PodInfo, taints: list[dict[str, str]] | None = None) -> NodeInfo:
    return node_info(make_node(name, STANDARD, taints=taints or []), *pods)


def keys(victims: list[PodInfo]) -> list[str]:
    return [v.key.split("/")[1] for v in victims]


# ---- victims on one node --------------------------------------------------------------------------


@dataclass
class VictimCase:
    name: str
    pods: list[PodInfo]
    cpu: str
    expect_victims: list[str]
    expect_code: Code = Code.SUCCESS
    expect_reasons: tuple[str, ...] = ()


VICTIM_CASES = [
    VictimCase(
        # remove a, b, c; give back c (3: fits), b (2: 1+2+2 > 4, victim), a (1: fits)
        "reprieve-most-important-first",
        [busy("a", "1", priority=1), busy("b", "2", priority=2), busy("c", "1", priority=3)],
        "2",
        ["b"],
    ),
    VictimCase(
        "victims-listed-most-important-first",
        [busy("a", "2", priority=1), busy("b", "2", priority=2)],
        "4",
        ["b", "a"],
    ),
    VictimCase(
        # equal priority: the pod that started earlier (lower order) is reprieved first
        "earlier-start-reprieved-first",
        [busy("late", "2", priority=1, order=5), busy("early", "2", priority=1, order=2)],
        "2",
        ["late"],
    ),
    VictimCase(
        "higher-and-equal-priority-are-safe",
        [busy("high", "2", priority=200), busy("same", "2", priority=100)],
        "2",
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("No preemption victims found for incoming pod",),
    ),
    VictimCase(
        # without "low" 3 of 4 cpus stay booked by "high": the Filter status explains the node
        "still-too-small-without-victims",
        [busy("high", "3", priority=200), busy("low", "1", priority=1)],
        "2",
        [],
        Code.UNSCHEDULABLE,
        ("Insufficient cpu",),
    ),
]


@pytest.mark.parametrize("case", VICTIM_CASES, ids=lambda c: c.name)
def test_select_victims_on_node(case: VictimCase) -> None:
    target = node("n1", *case.pods)
    before = (list(target.pods), dict(target.requested), target.generation)
    victims, status = select_victims_on_node(preemptor(case.cpu), target, fits)
    assert (keys(victims), status.code, status.reasons) == (case.expect_victims, case.expect_code, case.expect_reasons)
    assert (target.pods, target.requested, target.generation) == before, "the node must not be modified"


# ---- choosing the node ----------------------------------------------------------------------------

LOW = -(2**31) + 5  # with the MaxInt32+1 offset, makes two victim sets of different size sum alike


@dataclass
class PickCase:
    name: str
    nodes: list[NodeInfo]
    cpu: str
    expect_node: str
    expect_victims: list[str]
    expect_reason: str


PICK_CASES = [
    PickCase(
        "only-candidate",
        [node("n1", busy("high", "4", priority=200)), node("n2", busy("low", "4", priority=1))],
        "2",
        "n2",
        ["low"],
        "only candidate",
    ),
    PickCase(
        "lowest-highest-victim-priority",
        [node("n1", busy("a", "4", priority=5)), node("n2", busy("b", "4", priority=3))],
        "2",
        "n2",
        ["b"],
        "lowest highest-victim priority",
    ),
    PickCase(
        "smallest-priority-sum",
        [
            node("n1", busy("a1", "2", priority=5), busy("a2", "2", priority=4)),
            node("n2", busy("b1", "2", priority=5), busy("b2", "2", priority=1)),
        ],
        "4",
        "n2",
        ["b1", "b2"],
        "smallest sum of victim priorities",
    ),
    PickCase(
        # sums are equal once each victim counts MaxInt32+1: 20 + 2*2^31 == 10 + LOW + 5 + 3*2^31
        "fewest-victims",
        [
            node("n1", busy("a1", "2", priority=10), busy("a2", "2", priority=10)),
            node("n2", busy("b1", "2", priority=10), busy("b2", "1", priority=LOW), busy("b3", "1", priority=5)),
        ],
        "4",
        "n1",
        ["a1", "a2"],
        "fewest victims",
    ),
    PickCase(
        "latest-start",
        [node("n1", busy("old", "4", priority=5, order=1)), node("n2", busy("new", "4", priority=5, order=7))],
        "2",
        "n2",
        ["new"],
        "latest start of its highest-priority victims",
    ),
    PickCase(
        # the earliest start among the highest-priority victims counts: n1's is 3, n2's is 2
        "latest-start-looks-at-highest-priority-victims",
        [
            node("n1", busy("a1", "2", priority=5, order=3), busy("a2", "2", priority=1, order=0)),
            node("n2", busy("b1", "2", priority=5, order=2), busy("b2", "2", priority=1, order=9)),
        ],
        "4",
        "n1",
        ["a1", "a2"],
        "latest start of its highest-priority victims",
    ),
    PickCase(
        "first-in-order",
        [node("n1", busy("a", "4", priority=5)), node("n2", busy("b", "4", priority=5))],
        "2",
        "n1",
        ["a"],
        "first candidate in search order",
    ),
]


@pytest.mark.parametrize("case", PICK_CASES, ids=lambda c: c.name)
def test_find_preemption_picks_the_node(case: PickCase) -> None:
    pod = preemptor(case.cpu)
    statuses = filter_statuses(pod, case.nodes)
    before = [(list(n.pods), dict(n.requested), n.generation) for n in case.nodes]
    result = find_preemption(pod, case.nodes, statuses, fits)
    assert result is not None
    assert (result.node_name, keys(result.victims), result.reason) == (
        case.expect_node,
        case.expect_victims,
        case.expect_reason,
    )
    assert [(n.pods, n.requested, n.generation) for n in case.nodes] == before, "nodes must not be modified"


def test_unresolvable_nodes_are_not_candidates() -> None:
    pod = preemptor("2")
    nodes = [
        node("tainted", busy("a", "4", priority=1), taints=[taint("gpu", "a100")]),
        node("free-later", busy("b", "4", priority=50)),
    ]
    statuses = filter_statuses(pod, nodes)
    assert statuses["tainted"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    result = find_preemption(pod, nodes, statuses, fits)
    assert result == PreemptionResult("free-later", [nodes[1].pods[0]], "only candidate")


def test_nodes_without_a_status_are_not_candidates() -> None:
    pod = preemptor("2")
    nodes = [node("n1", busy("a", "4", priority=1))]
    assert find_preemption(pod, nodes, {}, fits) is None


def test_preemption_policy_never() -> None:
    pod = preemptor("2", preemptionPolicy="Never")
    nodes = [node("n1", busy("a", "4", priority=1))]
    statuses = filter_statuses(pod, nodes)
    assert find_preemption(pod, nodes, statuses, fits) is None
    assert why_no_preemption(pod, nodes, statuses, fits) == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: Preemptor couldn't preempt other victims because of preemptionPolicy: never"
    )
    assert find_preemption(preemptor("2", preemptionPolicy="PreemptLowerPriority"), nodes, statuses, fits) is not None


def test_dra_devices_are_only_freed_if_fits_says_so() -> None:
    # A filter that, like 1.36's DynamicResources, does not see devices of victims as released.
    def fits_with_devices(pod: PodInfo, target: NodeInfo) -> Status:
        status = fits(pod, target)
        return status if not status.ok else unschedulable("cannot allocate all claims")

    pod = preemptor("1")
    nodes = [node("n1", busy("holder", "1", priority=1))]
    statuses = {"n1": unschedulable("cannot allocate all claims")}
    assert find_preemption(pod, nodes, statuses, fits_with_devices) is None
    assert preemption_message(pod, nodes, statuses, fits_with_devices) == (
        "preemption: 0/1 nodes are available: 1 cannot allocate all claims."
    )


# ---- the dry-run bound ----------------------------------------------------------------------------


@pytest.mark.parametrize(("nodes", "expect"), [(1, 1), (50, 50), (100, 100), (150, 100), (1000, 100), (2500, 250)])
def test_num_candidates(nodes: int, expect: int) -> None:
    assert num_candidates(nodes) == expect


def test_dry_run_stops_after_enough_candidates_from_a_random_offset() -> None:
    nodes = [node(f"n{i:03}", busy(f"v{i:03}", "4", priority=1)) for i in range(150)]
    pod = preemptor("2")
    statuses = filter_statuses(pod, nodes)
    visited: list[str] = []

    def counting(p: PodInfo, target: NodeInfo) -> Status:
        visited.append(target.name)
        return fits(p, target)

    result = find_preemption(pod, nodes, statuses, counting)
    assert result is not None and result.node_name == "n000"
    assert len(set(visited)) == 100, "upstream stops once max(10%, 100) candidates are found"

    seeded = [find_preemption(pod, nodes, statuses, fits, rng=random.Random(seed)) for seed in (1, 2)]
    again = [find_preemption(pod, nodes, statuses, fits, rng=random.Random(seed)) for seed in (1, 2)]
    assert [r.node_name for r in seeded if r] == [r.node_name for r in again if r]
    offset = random.Random(1).randrange(150)
    assert seeded[0] is not None and seeded[0].node_name == f"n{offset:03}"


# ---- the message when preemption cannot help ------------------------------------------------------


def test_message_when_no_node_has_victims() -> None:
    pod = preemptor("2")
    nodes = [node(f"n{i}", busy(f"same{i}", "4", priority=100)) for i in range(1, 4)]
    statuses = filter_statuses(pod, nodes)
    assert why_no_preemption(pod, nodes, statuses, fits) == (
        "0/3 nodes are available: 3 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_message_mixes_reasons_per_node() -> None:
    pod = preemptor("2")
    nodes = [
        node("tainted", taints=[taint("gpu")]),
        node("same", busy("same", "4", priority=100)),
        node("high", busy("high", "3", priority=200), busy("low", "1", priority=1)),
    ]
    statuses = filter_statuses(pod, nodes)
    assert why_no_preemption(pod, nodes, statuses, fits, other_post_filter_reasons=["no new claims to deallocate"]) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def test_message_without_preemption_part_when_preemption_helps() -> None:
    pod = preemptor("2")
    nodes = [node("n1", busy("low", "4", priority=1))]
    statuses = filter_statuses(pod, nodes)
    assert why_no_preemption(pod, nodes, statuses, fits) == "0/1 nodes are available: 1 Insufficient cpu."


def test_fit_error_message_forms() -> None:
    statuses = {"a": unschedulable("Insufficient cpu", "Insufficient memory"), "b": unschedulable("Insufficient cpu")}
    assert fit_error_message(3, statuses) == "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
    assert fit_error_message(3, statuses, absent_reason="node(s) didn't satisfy plugin(s) [NodeAffinity]") == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't satisfy plugin(s) [NodeAffinity], "
        "2 Insufficient cpu."
    )
    assert fit_error_message(3, statuses, pre_filter_msg="pod affinity terms conflict", post_filter_msg="x") == (
        "0/3 nodes are available: pod affinity terms conflict. x"
    )
    assert fit_error_message(0, {}) == "0/0 nodes are available:"


def test_inputs_are_not_modified() -> None:
    pod = preemptor("2")
    nodes = [node("n1", busy("a", "4", priority=1)), node("n2", busy("b", "2", priority=1), busy("c", "2", priority=2))]
    statuses = filter_statuses(pod, nodes)
    snapshot = copy.deepcopy((pod, nodes, statuses))
    find_preemption(pod, nodes, statuses, fits)
    why_no_preemption(pod, nodes, statuses, fits)
    assert (pod, nodes, statuses) == snapshot


@pytest.mark.parametrize(
    ("name", "nodes"),
    [
        ("every node full of equal-priority pods", [node("n1", busy("a", "4", priority=100)),
                                                     node("n2", busy("b", "4", priority=100))]),
        ("one node tainted (unresolvable), one full", [node("n1", busy("a", "4", priority=100)),
                                                        node("n2", taints=[taint("k", "v", "NoSchedule")])]),
        ("no pods at all, nothing fits", [node("n1", taints=[taint("k", "v", "NoSchedule")])]),
    ],
)
def test_without_lower_priority_pods_the_counted_message_is_the_dry_runs(name: str, nodes: list[NodeInfo]) -> None:
    pod = preemptor("3")
    statuses = filter_statuses(pod, nodes)
    unschedulable_nodes = sum(s.code is Code.UNSCHEDULABLE for s in statuses.values())
    assert no_victims_message(len(nodes), unschedulable_nodes) == preemption_message(pod, nodes, statuses, fits)

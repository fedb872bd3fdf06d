"""Fair-sharing preemption: targets by the dominant resource shares, the two strategies and the reasons
(pkg/scheduler/preemption/preemption.go fairPreemptions, fairsharing/ at Kueue ff69552; concepts:
site/content/en/docs/concepts/preemption.md "Fair Sharing"). The cases follow the semantics of
pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions, named after its cases."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import (
    cluster_queue,
    cohort,
    cpu_workload,
    flavor_quotas,
    group,
    holding,
    kueue_snapshot,
    preempting_assignment,
    preemption_policy,
    preemption_state,
    preemptor,
    queued,
    quota,
)

from dratwin.kueue.cycle import CycleOptions, scheduling_cycle
from dratwin.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    AdmittedWorkload,
    State,
    targets,
)

CPU = ("default", "cpu")
BOTH = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


def _queue(name: str, cpus: Any, cohort_name: str = "all", weight: str | None = None, **policy: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"preemption": preemption_policy(**policy)} if policy else {}
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return cluster_queue(name, group(["cpu"], flavor_quotas("default", quota("cpu", cpus))), cohort=cohort_name, **spec)


POLICY = {"within": "LowerPriority", "reclaim": "Any", "borrow": "LowerPriority", "threshold": -3}
BASE = [_queue("a", 3, **POLICY), _queue("b", 3, **POLICY), _queue("c", 3, **POLICY), _queue("preemptible", 0)]


def _units(cq: str, *names: str, priority: int = 0) -> list[AdmittedWorkload]:
    return [holding(n, cq, {CPU: 1000}, priority=priority) for n in names]


def _sized(cq: str, **cpus: float) -> list[AdmittedWorkload]:
    return [holding(n, cq, {CPU: int(c * 1000)}) for n, c in cpus.items()]


@dataclass(frozen=True)
class Case:
    name: str
    admitted: list[AdmittedWorkload]
    cq: str
    cpus: float
    want: set[tuple[str, str]] = field(default_factory=set)
    strategies: tuple[str, ...] = BOTH
    queues: list[dict[str, Any]] = field(default_factory=lambda: BASE)
    cohorts: list[dict[str, Any]] = field(default_factory=list)
    priority: int = 0


CASES = [
    Case("reclaim nominal from user using the most",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5") + _units("c", "c1"), "c", 1,
         {("b1", IN_COHORT_RECLAMATION)}),
    Case("can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",
         _sized("a", a1=3, a2=1) + _sized("b", b1=2, b2=3), "c", 3, {("a1", IN_COHORT_RECLAMATION)}),
    Case("reclaim borrowable quota from user using the most",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5") + _units("c", "c1"), "a", 1,
         {("b1", IN_COHORT_FAIR_SHARING)}),
    Case("preempt one from each CQ borrowing", _sized("a", a1=0.5, a2=0.5, a3=3) + _sized("b", b1=0.5, b2=0.5, b3=3),
         "c", 2, {("a1", IN_COHORT_RECLAMATION), ("b1", IN_COHORT_RECLAMATION)}),
    Case("can't preempt when everyone under nominal",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3") + _units("c", "c1", "c2", "c3"), "c", 1),
    Case("can't preempt when it would switch the imbalance",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5"), "a", 2),
    Case("can preempt lower priority workloads from same CQ",
         _units("a", "a1_low", "a2_low", priority=-1) + _units("a", "a3", "a4")
         + _units("b", "b1", "b2", "b3", "b4", "b5"), "a", 2,
         {("a1_low", IN_CLUSTER_QUEUE), ("a2_low", IN_CLUSTER_QUEUE)}),
    Case("can preempt a combination of same CQ and highest user",
         _units("a", "a_low", priority=-1) + _units("a", "a2", "a3")
         + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"), "a", 2,
         {("a_low", IN_CLUSTER_QUEUE), ("b1", IN_COHORT_FAIR_SHARING)}),
    Case("preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
         _sized("b", b1=9), "a", 2, {("b1", IN_COHORT_RECLAMATION)}),
    Case("can't preempt huge workload if the incoming is also huge", _sized("a", a1=2) + _sized("b", b1=7), "a", 5),
    Case("can't preempt 2 smaller workloads if the incoming is huge", _sized("b", b1=2, b2=2, b3=3), "a", 6),
    Case("preempt from target and others even if over nominal",
         [holding("a1_low", "a", {CPU: 2000}, priority=-1), holding("a2_low", "a", {CPU: 1000}, priority=-1),
          *_sized("b", b1=3, b2=3)], "a", 4, {("a1_low", IN_CLUSTER_QUEUE), ("b1", IN_COHORT_FAIR_SHARING)}),
    Case("prefer to preempt workloads that don't make the target CQ have the biggest share",
         _sized("b", b1=2, b2=1, b3=2) + _sized("c", c1=1), "a", 3.5, {("b2", IN_COHORT_FAIR_SHARING)}),
    Case("preempt from different cluster queues if the end result has a smaller max share",
         _sized("b", b1=2, b2=2.5) + _sized("c", c1=2, c2=2.5), "a", 3.5,
         {("b1", IN_COHORT_FAIR_SHARING), ("c1", IN_COHORT_FAIR_SHARING)}),
    Case("scenario above does not flap", _sized("a", a1=3.5) + _sized("b", b2=2.5) + _sized("c", c2=2.5), "b", 2),
    Case("cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
         _sized("b", b1=3, b2=3) + _sized("c", c1=3), "a", 4),
    Case("workloads under priority threshold not capriciously preempted (borrowWithinCohort plays no part)",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3")
         + _units("preemptible", "preemptible1", "preemptible2", "preemptible3", priority=-3), "a", 2),
    Case("preempt lower priority first, even if big (LessThanInitialShare only)",
         [*_sized("a", a1=3), holding("b_low", "b", {CPU: 5000}), holding("b_high", "b", {CPU: 1000}, priority=1)],
         "a", 1, {("b_low", IN_COHORT_FAIR_SHARING)}, strategies=("LessThanInitialShare",)),
    Case("preempt workload that doesn't transfer the imbalance, even if high priority (LessThanOrEqualToFinalShare)",
         [*_sized("a", a1=3), holding("b_low", "b", {CPU: 5000}), holding("b_high", "b", {CPU: 1000}, priority=1)],
         "a", 1, {("b_high", IN_COHORT_FAIR_SHARING)}, strategies=("LessThanOrEqualToFinalShare",)),
    Case("CQ with higher weight can preempt more",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"), "a", 2,
         {("b1", IN_COHORT_FAIR_SHARING), ("b2", IN_COHORT_FAIR_SHARING)},
         queues=[_queue("a", 3, weight="2", within="LowerPriority", reclaim="Any"),
                 _queue("b", 3, within="LowerPriority", reclaim="Any"),
                 _queue("c", 3, within="LowerPriority", reclaim="Any")]),
    Case("can preempt anything borrowing from CQ with 0 weight",
         _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"), "a", 3,
         {("b1", IN_COHORT_FAIR_SHARING), ("b2", IN_COHORT_FAIR_SHARING), ("b3", IN_COHORT_FAIR_SHARING)},
         queues=[_queue("a", 3, within="LowerPriority", reclaim="Any"),
                 _queue("b", 3, weight="0", within="LowerPriority", reclaim="Any"),
                 _queue("c", 3, within="LowerPriority", reclaim="Any")]),
    Case("can preempt within cluster queue when no cohort", _units("a", "a1"), "a", 1, {("a1", IN_CLUSTER_QUEUE)},
         queues=[_queue("a", 1, cohort_name="", within="LowerPriority")], priority=1000),
]


def _weighted(wire: dict[str, Any], weight: str) -> dict[str, Any]:
    wire["spec"]["fairSharing"] = {"weight": weight}
    return wire


def _hierarchy() -> Case:
    """preemption_fair_test.go 'hierarchical preemption': ROOT (5) over LEFT (5, weight 2: a weight 2, b),
    c, and RIGHT (5: d, e weight 0.99); each ClusterQueue 1, every other one holding 5 units."""
    queues = [_queue("a", 1, "LEFT", weight="2", reclaim="Any"), _queue("b", 1, "LEFT"), _queue("c", 1, "ROOT"),
              _queue("d", 1, "RIGHT"), _queue("e", 1, "RIGHT", weight="0.99")]
    five = group(["cpu"], flavor_quotas("default", quota("cpu", 5)))
    cohorts = [cohort("ROOT", five), _weighted(cohort("LEFT", five, parent="ROOT"), "2"),
               cohort("RIGHT", five, parent="ROOT")]
    admitted = [holding(f"{q}{i}", q, {CPU: 1000}, priority=i) for q in "bcde" for i in range(1, 6)]
    return Case("hierarchical preemption", admitted, "a", 5,
                {(n, IN_COHORT_FAIR_SHARING) for n in ("b1", "b2", "c1", "c2", "e1")}, queues=queues, cohorts=cohorts)


CASES.append(_hierarchy())


def _usage(state: State) -> dict[str, dict[tuple[str, str], int]]:
    return {k: {fr: a for fr, a in n.usage.items() if a} for k, n in state.tree.nodes.items()}


def _state(case: Case) -> State:
    state = preemption_state(case.queues, case.cohorts, case.admitted)
    state.fair_sharing = case.strategies
    return state


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fair_targets(case: Case) -> None:
    state = _state(case)
    before = _usage(state)
    found = targets(state, preemptor("in", case.cq, case.priority), preempting_assignment({CPU: int(case.cpus * 1000)}))
    assert {(t.victim.workload.metadata.name, t.reason) for t in found} == case.want
    assert _usage(state) == before  # the simulation is undone


def test_the_fair_sharing_message() -> None:
    """preemption.go HumanReadablePreemptionReasons: InCohortFairSharing is 'Fair Sharing within the cohort'."""
    [case] = [c for c in CASES if c.name == "reclaim borrowable quota from user using the most"]
    [target] = targets(_state(case), preemptor("in", "a"), preempting_assignment({CPU: 1000}))
    assert target.message == ("Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to Fair Sharing "
                              "within the cohort; preemptor path: /all/a; preemptee path: /all/b")


def test_the_cycle_preempts_by_shares_with_fair_sharing_on() -> None:
    """scheduler.go with fair sharing (CycleOptions from a Configuration with a fairSharing stanza): the same
    head preempts by the shares (rule S2-b, InCohortFairSharing), where classical preemption preempts
    nothing: a is over its nominal quota and, without borrowWithinCohort, may only reclaim to end within it."""
    queues = [_queue("a", 3, within="LowerPriority", reclaim="LowerPriority"), _queue("b", 3), _queue("c", 3)]
    admitted = [holding("a1", "a", {CPU: 3500}), *_units("b", "b1", "b2", "b3", "b4", "b5", priority=-1)]
    wire = cpu_workload("in", 1)
    for fair, want in [(False, []), (True, [("b1", IN_COHORT_FAIR_SHARING)])]:
        snapshot = kueue_snapshot(queues, admitted=admitted)
        result = scheduling_cycle(snapshot, [queued(wire, "a")], CycleOptions(fair_sharing=fair))
        got = [(t.victim.workload.metadata.name, t.reason) for p in result.preemptions for t in p.targets]
        assert got == want, fair

"""Kueue's classical preemption targets: candidates, ordering, the greedy fill and the minimal set
(pkg/scheduler/preemption/preemption.go classicalPreemptions, classical/, common/ at Kueue ff69552;
concepts: site/content/en/docs/concepts/preemption.md). The cases follow the semantics of
pkg/scheduler/preemption/preemption_test.go TestPreemption (named after its cases), in GPUs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import (
    cluster_queue,
    cohort,
    flavor_quotas,
    group,
    holding,
    preempting_assignment,
    preemption_policy,
    preemption_state,
    preemptor,
    quota,
)

from dratwin.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    AdmittedWorkload,
    ordering_key,
    preemption_message,
    targets,
)

GPU = "example.com/gpu"
CPU = "cpu"
DEFAULT = ("default", GPU)


def _queue(name: str, nominal: int, borrowing: int | None = None, lending: int | None = None, cohort: str = "",
           **policy: Any) -> dict[str, Any]:
    return cluster_queue(name, group([GPU], flavor_quotas("default", quota(GPU, nominal, borrowing, lending))),
                         cohort=cohort, preemption=preemption_policy(**policy))


# The ClusterQueues of upstream's TestPreemption, with GPUs for cpu.
QUEUES = [
    _queue("standalone", 6, within="LowerPriority"),
    _queue("c1", 6, 6, cohort="cohort", within="LowerPriority", reclaim="LowerPriority"),
    _queue("c2", 6, 6, cohort="cohort", within="Never", reclaim="Any"),
    _queue("preventStarvation", 6, within="LowerOrNewerEqualPriority"),
    _queue("a_standard", 1, 12, cohort="with_shared_cq", within="Never", reclaim="LowerPriority",
           borrow="LowerPriority", threshold=0),
    _queue("b_standard", 1, 12, cohort="with_shared_cq", within="LowerPriority", reclaim="Any",
           borrow="LowerPriority", threshold=0),
    _queue("a_best_effort", 1, 12, cohort="with_shared_cq", within="Never", reclaim="LowerPriority",
           borrow="LowerPriority", threshold=0),
    _queue("b_best_effort", 0, 13, cohort="with_shared_cq", within="Never", reclaim="LowerPriority",
           borrow="LowerPriority", threshold=0),
    _queue("shared", 10, cohort="with_shared_cq"),
    _queue("lend1", 6, lending=4, cohort="cohort-lend", within="LowerPriority", reclaim="LowerPriority"),
    _queue("lend2", 6, lending=2, cohort="cohort-lend", within="LowerPriority", reclaim="LowerPriority"),
    cluster_queue("two-flavors",
                  group([GPU], flavor_quotas("alpha", quota(GPU, 3)), flavor_quotas("beta", quota(GPU, 3))),
                  preemption=preemption_policy(within="LowerPriority")),
]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    admitted: list[AdmittedWorkload]
    cq: str
    needs: dict[tuple[str, str], int]
    priority: int = 0
    timestamp: float = 0.0
    want: list[tuple[str, str]] = field(default_factory=list)  # (victim, reason), in Kueue's target order
    queues: list[dict[str, Any]] = field(default_factory=lambda: QUEUES)
    cohorts: list[dict[str, Any]] = field(default_factory=list)


def _three_in_standalone() -> list[AdmittedWorkload]:
    return [holding("low", "standalone", {DEFAULT: 2}, priority=-1), holding("mid", "standalone", {DEFAULT: 2}),
            holding("high", "standalone", {DEFAULT: 2}, priority=1)]


CASES = [
    Case("preempt lowest priority", "preemption_test.go 'preempt lowest priority'",
         _three_in_standalone(), "standalone", {DEFAULT: 2}, priority=1, want=[("low", IN_CLUSTER_QUEUE)]),
    Case("preempt multiple", "preemption_test.go 'preempt multiple'",
         _three_in_standalone(), "standalone", {DEFAULT: 3}, priority=1,
         want=[("low", IN_CLUSTER_QUEUE), ("mid", IN_CLUSTER_QUEUE)]),
    Case("no preemption for low priority", "preemption_test.go 'no preemption for low priority'",
         _three_in_standalone(), "standalone", {DEFAULT: 2}, priority=-1),
    Case("not enough low priority workloads", "preemption_test.go 'not enough low priority workloads'",
         [holding("low", "standalone", {DEFAULT: 3}, priority=-1),
          holding("high", "standalone", {DEFAULT: 3}, priority=1)],
         "standalone", {DEFAULT: 4}),
    Case("some free quota, preempt low priority", "preemption_test.go 'some free quota, preempt low priority'",
         [holding("low", "standalone", {DEFAULT: 1}, priority=-1), holding("mid", "standalone", {DEFAULT: 1}),
          holding("high", "standalone", {DEFAULT: 3}, priority=1)],
         "standalone", {DEFAULT: 2}, priority=1, want=[("low", IN_CLUSTER_QUEUE)]),
    Case("minimal set excludes low priority", "preemption_test.go 'minimal set excludes low priority': the reverse "
         "pass gives back the first target, which the preemptor no longer needs",
         [holding("low", "standalone", {DEFAULT: 1}, priority=-1), holding("mid", "standalone", {DEFAULT: 5})],
         "standalone", {DEFAULT: 5}, priority=1, want=[("mid", IN_CLUSTER_QUEUE)]),
    Case("the newest reservation goes first among equals", "common/ordering.go CandidatesOrdering: admitted more "
         "recently first",
         [holding("old", "standalone", {DEFAULT: 3}, reserved_at=1),
          holding("new", "standalone", {DEFAULT: 3}, reserved_at=2)],
         "standalone", {DEFAULT: 3}, priority=1, want=[("new", IN_CLUSTER_QUEUE)]),
    Case("an evicted workload is taken first", "common/ordering.go CandidatesOrdering: already marked for preemption "
         "first, whatever its priority",
         [holding("low", "standalone", {DEFAULT: 3}, priority=-1),
          holding("going", "standalone", {DEFAULT: 3}, evicted=True)],
         "standalone", {DEFAULT: 3}, priority=1, want=[("going", IN_CLUSTER_QUEUE)]),
    Case("only preempt workloads using the chosen flavor", "preemption_test.go 'only preempt workloads using the "
         "chosen flavor'",
         [holding("alpha-low", "two-flavors", {("alpha", GPU): 3}, priority=-1),
          holding("beta-mid", "two-flavors", {("beta", GPU): 3})],
         "two-flavors", {("beta", GPU): 3}, priority=1, want=[("beta-mid", IN_CLUSTER_QUEUE)]),
    Case("reclaim quota from borrower", "preemption_test.go 'reclaim quota from borrower': the preemptor's own nominal "
         "quota is taken back (hierarchical advantage)",
         [holding("c1-low", "c1", {DEFAULT: 3}, priority=-1), holding("c2-mid", "c2", {DEFAULT: 3}),
          holding("c2-high", "c2", {DEFAULT: 6}, priority=1)],
         "c1", {DEFAULT: 3}, priority=1, want=[("c2-mid", IN_COHORT_RECLAMATION)]),
    Case("no workloads borrowing", "preemption_test.go 'no workloads borrowing'",
         [holding("c1-high", "c1", {DEFAULT: 4}, priority=1), holding("c2-low-1", "c2", {DEFAULT: 4}, priority=-1)],
         "c1", {DEFAULT: 4}, priority=1),
    Case("not enough workloads borrowing", "preemption_test.go 'not enough workloads borrowing'",
         [holding("c1-high", "c1", {DEFAULT: 4}, priority=1), holding("c2-low-1", "c2", {DEFAULT: 4}, priority=-1),
          holding("c2-low-2", "c2", {DEFAULT: 4}, priority=-1)],
         "c1", {DEFAULT: 4}, priority=1),
    Case("do not reclaim borrowed quota from same priority for reclaimWithinCohort=LowerPriority",
         "preemption_test.go 'do not reclaim borrowed quota from same priority for "
         "withinCohort=ReclaimFromLowerPriority'",
         [holding("c1", "c1", {DEFAULT: 2}), holding("c2-1", "c2", {DEFAULT: 4}), holding("c2-2", "c2", {DEFAULT: 4})],
         "c1", {DEFAULT: 4}),
    Case("reclaim borrowed quota from same priority for reclaimWithinCohort=Any",
         "preemption_test.go 'reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny'",
         [holding("c1-1", "c1", {DEFAULT: 4}), holding("c1-2", "c1", {DEFAULT: 4}, reserved_at=2),
          holding("c2", "c2", {DEFAULT: 2})],
         "c2", {DEFAULT: 4}, want=[("c1-2", IN_COHORT_RECLAMATION)]),
    Case("can't preempt workloads in ClusterQueue for withinClusterQueue=Never",
         "preemption_test.go \"can't preempt workloads in ClusterQueue for withinClusterQueue=Never\"",
         [holding("c2-low", "c2", {DEFAULT: 12}, priority=-1)], "c2", {DEFAULT: 4}, priority=1),
    Case("preempt newer workloads with the same priority", "preemption_test.go 'preempt newer workloads with the same "
         "priority' (LowerOrNewerEqualPriority compares the queue-order timestamps)",
         [holding("older", "preventStarvation", {DEFAULT: 3}, queued_at=1),
          holding("newer", "preventStarvation", {DEFAULT: 3}, queued_at=5)],
         "preventStarvation", {DEFAULT: 3}, timestamp=2, want=[("newer", IN_CLUSTER_QUEUE)]),
    Case("borrowWithinCohort: preempt a lower-priority workload of another ClusterQueue while borrowing",
         "preemption_test.go 'use BorrowWithinCohort; allow preempting a lower-priority workload from another "
         "ClusterQueue while borrowing'",
         [holding("a_best_effort_low", "a_best_effort", {DEFAULT: 10}, priority=-1),
          holding("b_best_effort_low", "b_best_effort", {DEFAULT: 1}, priority=-1)],
         "a_standard", {DEFAULT: 10}, want=[("a_best_effort_low", IN_COHORT_RECLAIM_WHILE_BORROWING)]),
    Case("borrowWithinCohort: not above maxPriorityThreshold while still borrowing",
         "preemption_test.go \"use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority "
         "above MaxPriorityThreshold, if borrowing is required even after the preemption\"",
         [holding("b_standard", "b_standard", {DEFAULT: 10}, priority=1)], "a_standard", {DEFAULT: 10}, priority=2),
    Case("borrowWithinCohort: above maxPriorityThreshold when no borrowing is left",
         "preemption_test.go 'use BorrowWithinCohort; allow preempting a lower-priority workload with priority above "
         "MaxPriorityThreshold, if borrowing is not required after the preemption'",
         [holding("b_standard", "b_standard", {DEFAULT: 13}, priority=1)], "a_standard", {DEFAULT: 1}, priority=2,
         want=[("b_standard", IN_COHORT_RECLAMATION)]),
    Case("borrowWithinCohort: never from the same ClusterQueue under withinClusterQueue=Never",
         "preemption_test.go \"use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the "
         "same ClusterQueue\"",
         [holding("a_standard", "a_standard", {DEFAULT: 13}, priority=1)], "a_standard", {DEFAULT: 1}, priority=2),
    Case("reclaim quota from lender", "preemption_test.go 'reclaim quota from lender': lend2 uses what lend1 lends",
         [holding("lend1-low", "lend1", {DEFAULT: 3}, priority=-1), holding("lend2-mid", "lend2", {DEFAULT: 3}),
          holding("lend2-high", "lend2", {DEFAULT: 4}, priority=1)],
         "lend1", {DEFAULT: 3}, priority=1, want=[("lend2-mid", IN_COHORT_RECLAMATION)]),
    Case("cannot preempt beyond the requestable quota, lending limit included",
         "preemption_test.go 'cannot preempt from other ClusterQueues if exceeds requestable quota including lending "
         "limit'",
         [holding("lend2-low", "lend2", {DEFAULT: 10}, priority=-1)], "lend1", {DEFAULT: 9}, priority=1),
]


# The trees of preemption_hierarchical_test.go: Cohort c (2 GPUs of its own) under the root r.
ANY = {"within": "LowerPriority", "reclaim": "Any"}
TREE = [cohort("r"), cohort("c", group([GPU], flavor_quotas("default", quota(GPU, 2))), parent="r")]
CASES += [
    Case("preempt with hierarchical advantage", "preemption_hierarchical_test.go 'preempt with hierarchical "
         "advantage': c's quota is the preemptor's side of the tree, q_borrowing uses it",
         [holding("admitted2", "q_borrowing", {DEFAULT: 2})], "q", {DEFAULT: 2},
         want=[("admitted2", IN_COHORT_RECLAMATION)], cohorts=TREE,
         queues=[_queue("q", 0, cohort="c", **ANY), _queue("q_borrowing", 0, cohort="r", **ANY)]),
    Case("prefer to preempt hierarchical candidate", "preemption_hierarchical_test.go 'prefer to preempt "
         "hierarchical candidate': before a lower-priority Workload of its own ClusterQueue",
         [holding("admitted_borrowing", "q_borrowing", {DEFAULT: 1}, priority=1),
          holding("admitted_same_queue", "q", {DEFAULT: 1}, priority=-2)], "q", {DEFAULT: 1},
         want=[("admitted_borrowing", IN_COHORT_RECLAMATION)], cohorts=TREE,
         queues=[_queue("q", 0, cohort="c", **ANY), _queue("q_borrowing", 0, cohort="r", **ANY)]),
    Case("forced to preempt priority candidate", "preemption_hierarchical_test.go 'forced to preempt priority "
         "candidate': q_nominal is within its quota, so only the sibling below the threshold can go, while borrowing",
         [holding("admitted_nominal", "q_nominal", {DEFAULT: 2}, priority=-10),
          holding("admitted_same_cohort", "q_same_cohort", {DEFAULT: 2}, priority=-1)], "q", {DEFAULT: 2},
         want=[("admitted_same_cohort", IN_COHORT_RECLAIM_WHILE_BORROWING)], cohorts=TREE,
         queues=[_queue("q", 0, cohort="c", borrow="LowerPriority", threshold=0, **ANY),
                 _queue("q_nominal", 2, cohort="r", **ANY), _queue("q_same_cohort", 0, cohort="c", **ANY)]),
    Case("avoid queues within nominal quota", "preemption_hierarchical_test.go 'avoid queues within nominal quota': "
         "a ClusterQueue within its nominal quota holds no candidates, whatever their priority",
         [holding("within", "q_nominal", {DEFAULT: 2}, priority=-10),
          holding("higher", "q_other", {DEFAULT: 2}, priority=5)], "q", {DEFAULT: 2}, cohorts=TREE,
         queues=[_queue("q", 0, cohort="c", within="LowerPriority", reclaim="LowerPriority", borrow="LowerPriority"),
                 _queue("q_nominal", 2, cohort="r", **ANY), _queue("q_other", 0, cohort="c", **ANY)]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_targets(case: Case) -> None:
    state = preemption_state(case.queues, case.cohorts, case.admitted)
    before = {k: dict(n.usage) for k, n in state.tree.nodes.items()}
    wanted = preemptor("in", case.cq, case.priority, case.timestamp)
    found = targets(state, wanted, preempting_assignment(case.needs))
    assert [(t.victim.workload.metadata.name, t.reason) for t in found] == case.want, case.cite
    assert {k: dict(n.usage) for k, n in state.tree.nodes.items()} == before  # the simulation is undone
    assert not state.workloads.removed


def test_the_message_names_the_preemptor_and_both_paths() -> None:
    """preemption_test.go 'preempt lowest priority' and the BorrowWithinCohort cases: the Evicted and Preempted
    conditions carry the same message (preemption.go preemptionMessage, buildCQPath)."""
    victim = holding("a_best_effort_low", "a_best_effort", {DEFAULT: 10}, priority=-1)
    state = preemption_state(QUEUES, admitted=[victim])
    [target] = targets(state, preemptor("in", "a_standard"), preempting_assignment({DEFAULT: 10}))
    message = ("Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort "
               "while borrowing; preemptor path: /with_shared_cq/a_standard; "
               "preemptee path: /with_shared_cq/a_best_effort")
    assert target.message == message
    now = "2026-01-01T00:00:00Z"
    assert target.conditions(now) == [
        {"type": "Evicted", "status": "True", "reason": "Preempted", "message": message, "lastTransitionTime": now},
        {"type": "Preempted", "status": "True", "reason": IN_COHORT_RECLAIM_WHILE_BORROWING, "message": message,
         "lastTransitionTime": now}]
    standalone = preemption_message(preemptor("in", "standalone"), IN_CLUSTER_QUEUE, "/standalone", "/standalone")
    assert standalone.endswith("due to prioritization in the ClusterQueue; preemptor path: /standalone; "
                               "preemptee path: /standalone")


@dataclass(frozen=True)
class OrderCase:
    name: str
    cite: str
    first: AdmittedWorkload
    second: AdmittedWorkload


ORDER_CASES = [
    OrderCase("evicted workload first", "preemption_test.go TestCandidatesOrdering 'evicted workload first'",
              holding("evicted", "self", {DEFAULT: 1}, priority=5, evicted=True),
              holding("other", "self", {DEFAULT: 1})),
    OrderCase("workload from different CQ first", "TestCandidatesOrdering 'workload from different CQ first'",
              holding("elsewhere", "other", {DEFAULT: 1}, priority=5), holding("own", "self", {DEFAULT: 1})),
    OrderCase("lower priority first", "TestCandidatesOrdering 'workloads sorted by priority'",
              holding("low", "self", {DEFAULT: 1}, priority=-1), holding("high", "self", {DEFAULT: 1}, priority=1)),
    OrderCase("old workloads last", "TestCandidatesOrdering 'old workloads last'",
              holding("new", "self", {DEFAULT: 1}, reserved_at=9), holding("old", "self", {DEFAULT: 1}, reserved_at=1)),
    OrderCase("the uid breaks the last tie", "common/ordering.go CandidatesOrdering: UID, for a deterministic order",
              holding("a", "self", {DEFAULT: 1}), holding("b", "self", {DEFAULT: 1})),
]


@pytest.mark.parametrize("case", ORDER_CASES, ids=lambda c: c.name)
def test_candidates_ordering(case: OrderCase) -> None:
    assert ordering_key(case.first, "self") < ordering_key(case.second, "self"), case.cite


def test_two_resources_each_needing_preemption() -> None:
    """preemption_test.go 'preemptions from cq when target queue is exhausted for two requested resources': a
    candidate counts when it uses any of the flavor-resources that need preemption."""
    cq = cluster_queue("both", group([CPU, GPU], flavor_quotas("default", quota(CPU, 4), quota(GPU, 4))),
                       preemption=preemption_policy(within="LowerPriority"))
    cpu, gpu = ("default", CPU), ("default", GPU)
    admitted = [holding("cpu-only", "both", {cpu: 4000}, priority=-1),
                holding("gpu-only", "both", {gpu: 4}, priority=-1)]
    state = preemption_state([cq], admitted=admitted)
    found = targets(state, preemptor("in", "both"), preempting_assignment({cpu: 1000, gpu: 1}))
    assert sorted(t.victim.workload.metadata.name for t in found) == ["cpu-only", "gpu-only"]


def test_without_borrow_within_cohort_reclaim_first_tries_not_borrowing() -> None:
    """preemption.go classicalPreemptions: borrowWithinCohort forbidden, no hierarchical candidate and the
    ClusterQueue under nominal quota: the attempt without borrowing comes first, where another ClusterQueue's
    borrower may go (InCohortReclamation) together with the preemptor's own lower-priority Workload;
    allowing borrowing, that candidate is not valid (candidateIsValid, ReclaimWithoutBorrowing)."""
    queues = [_queue("p", 4, cohort="k", within="LowerPriority", reclaim="LowerPriority"), _queue("o", 4, cohort="k")]
    admitted = [holding("p-low", "p", {DEFAULT: 2}, priority=-1), holding("o-low", "o", {DEFAULT: 6}, priority=-1)]
    state = preemption_state(queues, admitted=admitted)
    found = targets(state, preemptor("in", "p"), preempting_assignment({DEFAULT: 4}))
    assert [(t.victim.workload.metadata.name, t.reason) for t in found] == [
        ("o-low", IN_COHORT_RECLAMATION), ("p-low", IN_CLUSTER_QUEUE)]


def test_a_borrowing_preemptor_without_borrow_within_cohort_takes_only_its_own() -> None:
    """preemption.go classicalPreemptions: borrowWithinCohort forbidden and the preemptor's ClusterQueue above
    its nominal quota: only the attempt that allows borrowing is made, where another ClusterQueue's
    lower-priority borrower is no valid candidate (candidateIsValid, ReclaimWithoutBorrowing), though it
    comes first in the order; the preemptor's own lower-priority Workload goes."""
    queues = [_queue("p", 4, cohort="k", within="LowerPriority", reclaim="Any"),
              _queue("o", 4, cohort="k", within="LowerPriority", reclaim="Any"), _queue("lender", 8, cohort="k")]
    admitted = [holding("p-low", "p", {DEFAULT: 6}, priority=-1), holding("o-low", "o", {DEFAULT: 6}, priority=-1),
                holding("lender-high", "lender", {DEFAULT: 4}, priority=1)]
    state = preemption_state(queues, admitted=admitted)
    found = targets(state, preemptor("in", "p"), preempting_assignment({DEFAULT: 4}))
    assert [(t.victim.workload.metadata.name, t.reason) for t in found] == [("p-low", IN_CLUSTER_QUEUE)]
    # within nominal quota (p holding 2, asking for 2), o's borrower uses p's quota and goes first
    admitted[0] = holding("p-low", "p", {DEFAULT: 2}, priority=-1)
    admitted[2] = holding("lender-high", "lender", {DEFAULT: 8}, priority=1)
    state = preemption_state(queues, admitted=admitted)
    found = targets(state, preemptor("in", "p"), preempting_assignment({DEFAULT: 2}))
    assert [(t.victim.workload.metadata.name, t.reason) for t in found] == [("o-low", IN_COHORT_RECLAMATION)]

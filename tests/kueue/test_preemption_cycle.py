"""Preemption in the scheduling cycle: the oracle the flavor assigner asks, the preemptor's targets and the
condition it waits with, targets not claimed twice, the quota a preemptor holds within its cycle
(pkg/scheduler/scheduler.go processEntry, getInitialAssignments, markPreemptionOutcome,
reserveCapacityForUnreclaimablePreempt; pkg/scheduler/preemption/preemption_oracle.go;
pkg/scheduler/flavorassigner fitsResourceQuota, at Kueue ff69552)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.kueue import (
    cluster_queue,
    flavor_quotas,
    gpu_queue,
    gpu_workload,
    group,
    holding,
    kueue_snapshot,
    preemption_policy,
    queued,
    quota,
    resource_flavor,
)

from dratwin.kueue.cycle import (
    DEFERRED_FIT,
    NO_LONGER_FITS,
    WAITING_FOR_PREEMPTED,
    Queues,
    run_until_settled,
    scheduling_cycle,
)
from dratwin.kueue.flavors import NoCandidates
from dratwin.kueue.preemption import IN_CLUSTER_QUEUE, IN_COHORT_RECLAMATION

GPU = "example.com/gpu"
H100 = ("h100", GPU)
FLAVORS = [resource_flavor("h100"), resource_flavor("a100")]
LOWER = preemption_policy(within="LowerPriority", reclaim="LowerPriority")


def _usage(snapshot: Any) -> dict[str, dict[tuple[str, str], int]]:
    return {k: dict(n.usage) for k, n in snapshot.tree.nodes.items()}


@dataclass(frozen=True)
class WaitCase:
    name: str
    cite: str
    victim_priority: int
    reason: str
    message: str
    victims: list[str]


WAIT_CASES = [
    WaitCase("a preemptor waits for its targets", "scheduler.go processEntry (Preempt with targets) and "
             "markPreemptionOutcome: WaitingForPreemptedWorkloads, '. Pending the preemption of N workload(s)'",
             -1, WAITING_FOR_PREEMPTED, "couldn't assign flavors to pod set main: insufficient unused quota for "
             "example.com/gpu in flavor h100, 2 more needed. Pending the preemption of 1 workload(s)", ["low"]),
    WaitCase("no candidates: the Workload waits for quota", "scheduler.go processEntry: Preempt mode without targets "
             "is RequeueReasonPreemptionNoCandidates, WaitingForQuota", 1, "WaitingForQuota",
             "couldn't assign flavors to pod set main: insufficient unused quota for example.com/gpu in flavor h100, "
             "2 more needed", []),
]


@pytest.mark.parametrize("case", WAIT_CASES, ids=lambda c: c.name)
def test_a_head_that_needs_preemption(case: WaitCase) -> None:
    snapshot = kueue_snapshot([gpu_queue(preemption=LOWER)], flavors=FLAVORS,
                              admitted=[holding("low", "cq", {H100: 6}, priority=case.victim_priority)])
    before = _usage(snapshot)
    result = scheduling_cycle(snapshot, [queued(gpu_workload("in", 4), "cq")])
    [pending] = result.pending
    assert (pending.reason, pending.message) == (case.reason, case.message), case.cite
    assert [t.victim.workload.metadata.name for p in result.preemptions for t in p.targets] == case.victims
    assert not result.admitted
    assert _usage(snapshot) == before  # what the preemptor held counts within the cycle only
    assert pending.retry_now == bool(case.victims)  # RequeueReasonPendingPreemption: back to the queue at once


def test_the_oracle_steers_the_flavor_to_where_preemption_can_make_room() -> None:
    """flavorassigner fitsResourceQuota asks preemption_oracle.go SimulatePreemption: h100 holds only a
    higher-priority Workload (NoCandidates), a100 a lower one (Preempt), so a100 is chosen; without the oracle
    the first flavor is kept and nothing is preempted."""
    cq = cluster_queue("cq", group([GPU], flavor_quotas("h100", quota(GPU, 4)), flavor_quotas("a100", quota(GPU, 4))),
                       preemption=LOWER)
    admitted = [holding("h100-high", "cq", {H100: 4}, priority=5),
                holding("a100-low", "cq", {("a100", GPU): 4}, priority=-1)]
    snapshot = kueue_snapshot([cq], flavors=FLAVORS, admitted=admitted)
    result = scheduling_cycle(snapshot, [queued(gpu_workload("in", 4), "cq")])
    [preemption] = result.preemptions
    assert [(t.victim.workload.metadata.name, t.reason) for t in preemption.targets] == [("a100-low", IN_CLUSTER_QUEUE)]
    blind = kueue_snapshot([cq], flavors=FLAVORS, admitted=admitted)
    blind = type(blind)(blind.cluster_queues, blind.flavors, blind.tree, blind.admitted, NoCandidates())
    assert scheduling_cycle(blind, [queued(gpu_workload("in", 4), "cq")]).preemptions == []


def _pool(**b_spec: Any) -> list[dict[str, Any]]:
    return [gpu_queue("a", 4, "pool", preemption=LOWER), gpu_queue("b", 4, "pool", **b_spec),
            gpu_queue("borrower", 0, "pool")]


def test_two_preemptors_do_not_claim_the_same_targets() -> None:
    """scheduler.go processEntry with RecomputeAssignmentUponPreemptionTargetsOverlap (on by default): b's only
    target is already a's; assigned again as if it were gone, b fits, and waits for it (DeferredFit)."""
    snapshot = kueue_snapshot(_pool(preemption=LOWER), flavors=FLAVORS,
                              admitted=[holding("borrowed", "borrower", {H100: 8}, priority=-1)])
    heads = [queued(gpu_workload("first", 4), "a", timestamp=1), queued(gpu_workload("second", 4), "b", timestamp=2)]
    result = scheduling_cycle(snapshot, heads)
    assert [(p.entry.workload.metadata.name, [(t.victim.workload.metadata.name, t.reason) for t in p.targets])
            for p in result.preemptions] == [("first", [("borrowed", IN_COHORT_RECLAMATION)])]
    by_name = {p.entry.workload.metadata.name: (p.reason, p.message) for p in result.pending}
    assert by_name["second"] == (WAITING_FOR_PREEMPTED, DEFERRED_FIT)


def test_a_head_that_fits_counts_the_claimed_victims_as_gone() -> None:
    """scheduler.go fits(): the usage of every Workload preempted in the cycle is removed before the check, so
    b, which fits at nomination, is admitted after a preempted the borrower and held its quota."""
    victim = holding("borrowed", "borrower", {H100: 6}, priority=-1)
    snapshot = kueue_snapshot(_pool(), flavors=FLAVORS, admitted=[victim])
    heads = [queued(gpu_workload("preemptor", 4, priority=1), "a"), queued(gpu_workload("fits", 2), "b")]
    result = scheduling_cycle(snapshot, heads)
    assert [p.entry.workload.metadata.name for p in result.preemptions] == ["preemptor"]
    assert [a.entry.workload.metadata.name for a in result.admitted] == ["fits"]


@dataclass(frozen=True)
class HoldCase:
    name: str
    cite: str
    reclaim: str | None
    admitted: list[str]
    pending: dict[str, str]


HOLD_CASES = [
    HoldCase("a preemptor without candidates holds its nominal quota",
             "scheduler.go reserveCapacityForUnreclaimablePreempt, quotaResourcesToReserve: up to the unused nominal",
             None, [], {"x-head": "insufficient unused quota for example.com/gpu in flavor h100, 2 more needed",
                        "y-head": NO_LONGER_FITS}),
    HoldCase("not when reclaimWithinCohort is Any", "preemption/policy.go CanAlwaysReclaim", "Any", ["y-head"],
             {"x-head": "insufficient unused quota for example.com/gpu in flavor h100, 2 more needed"}),
]


@pytest.mark.parametrize("case", HOLD_CASES, ids=lambda c: c.name)
def test_a_preemptor_without_candidates_holds_quota_in_its_cycle(case: HoldCase) -> None:
    x = gpu_queue("x", 4, "pool", preemption=preemption_policy(reclaim=case.reclaim))
    snapshot = kueue_snapshot([x, gpu_queue("y", 0, "pool")], flavors=FLAVORS,
                              admitted=[holding("x-own", "x", {H100: 2}, priority=9)])
    heads = [queued(gpu_workload("x-head", 4), "x"), queued(gpu_workload("y-head", 2), "y")]
    result = scheduling_cycle(snapshot, heads)
    assert [a.entry.workload.metadata.name for a in result.admitted] == case.admitted, case.cite
    got = {p.entry.workload.metadata.name: p.message.split(": ", 1)[-1] for p in result.pending}
    assert got == case.pending


def test_cycles_stop_while_a_preemptor_waits() -> None:
    """The preemptor comes back at once (RequeueReasonPendingPreemption) and finds the same targets until the
    caller evicts them: the cycles stop there instead of repeating, and the last word is the wait."""
    snapshot = kueue_snapshot([gpu_queue(preemption=LOWER)], flavors=FLAVORS,
                              admitted=[holding("low", "cq", {H100: 8}, priority=-1)])
    queues = Queues.of(snapshot.cluster_queues.values())
    queues.push(queued(gpu_workload("in", 4), "cq"))
    admitted, last = run_until_settled(snapshot, queues, max_cycles=50)
    assert admitted == []
    assert last["team/in"].reason == WAITING_FOR_PREEMPTED
    assert [e.workload.metadata.name for e in queues.heads()] == ["in"]


@pytest.mark.parametrize(("strategy", "head"), [("BestEffortFIFO", "preemptor"), ("StrictFIFO", "urgent")])
def test_a_preemptor_stays_the_head_under_best_effort_fifo(strategy: str, head: str) -> None:
    """pkg/cache/queue/cluster_queue.go requeueIfNotPresent: a Workload pending preemption becomes the sticky
    preemptor workload of a BestEffortFIFO queue (baseCompareFunc puts it first) until it is admitted; under
    StrictFIFO the usual order (priority, then time) holds."""
    snapshot = kueue_snapshot([gpu_queue(preemption=LOWER, queueingStrategy=strategy)], flavors=FLAVORS,
                              admitted=[holding("low", "cq", {H100: 8}, priority=-1)])
    queues = Queues.of(snapshot.cluster_queues.values())
    queues.push(queued(gpu_workload("preemptor", 4), "cq"))
    queues.settle(scheduling_cycle(snapshot, queues.heads()))
    queues.push(queued(gpu_workload("urgent", 4, priority=5), "cq", timestamp=1))
    assert [e.workload.metadata.name for e in queues.heads()] == [head]


def test_reclaiming_is_preferred_to_preempting_in_the_own_queue() -> None:
    """flavorassigner isPreferred over the oracle's answers (preemption_oracle.go: Preempt when a target is in
    the preemptor's ClusterQueue, Reclaim when all are elsewhere): a100, where only a borrower has to go, is
    chosen over h100, where the ClusterQueue's own Workload would."""
    def two(name: str, gpus: int) -> dict[str, Any]:
        return cluster_queue(name, group([GPU], flavor_quotas("h100", quota(GPU, gpus)),
                                         flavor_quotas("a100", quota(GPU, gpus))), cohort="k", preemption=LOWER)
    admitted = [holding("own", "p", {H100: 4}, priority=-1), holding("borrower", "o", {("a100", GPU): 4}, priority=-1)]
    snapshot = kueue_snapshot([two("p", 4), two("o", 0)], flavors=FLAVORS, admitted=admitted)
    [preemption] = scheduling_cycle(snapshot, [queued(gpu_workload("in", 4), "p")]).preemptions
    assert [(t.victim.workload.metadata.name, t.reason) for t in preemption.targets] == [
        ("borrower", IN_COHORT_RECLAMATION)]

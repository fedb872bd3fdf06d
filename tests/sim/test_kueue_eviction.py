"""Kueue's evictions in a run over time: preemption targets (hand-made, and the cycle's own from the
preemption core), the PodsReady timeout with its requeue backoff and backoffLimitCount, the Job suspended and its
pods' work lost, the Workload requeued.

Kueue at ff69552: pkg/workload/evict/evict.go (Evict, prepareForEviction), pkg/controller/jobframework/
reconciler.go (step 6, handle eviction: stopJob, Requeued, UnsetQuotaReservationWithCondition),
pkg/controller/core/workload_controller.go (reconcileNotReadyTimeout, triggerDeactivation, the backoff),
pkg/workload/workload.go (UpdateRequeueState, SetQuotaReservation resetActiveCondition, GetQueueOrderTimestamp),
site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import configuration, local_queue, resource_flavor
from tests.builders.kueue_sim import KueueRig, cpu_queue, kueue_basics, kueue_rig, queued_job
from tests.builders.manifests import node

from dratwin.sim.invariants import InvariantError
from dratwin.sim.kueue_records import Preempted

Raw = dict[str, Any]
PREEMPTED_MESSAGE = "Preempted to accommodate a workload due to prioritization in the ClusterQueue"
HIGH = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "high"},
        "value": 1000}


def _urgent(name: str, cpu: str, **args: Any) -> Raw:
    """A queued Job of the WorkloadPriorityClass ``high``: the preemptor a real cycle would pick the victim for."""
    raw = queued_job(name, cpu, **args)
    raw["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    return raw


def _conditions(raw: Raw) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in raw["status"]["conditions"]}


@dataclass(frozen=True)
class PreemptCase:
    name: str
    cite: str
    objects: list[Raw]
    preempt_at: str
    victim: str
    admitted_at: dict[str, float | None]  # job -> when admitted last (None: waiting at the end)
    work_lost: float
    until: str = "1h"
    conditions: dict[str, tuple[str, str]] = field(default_factory=dict)  # on the victim at the end


PREEMPT_CASES = [
    PreemptCase("victim-requeued-and-admitted-before-the-set-aside-waiter",
                "workload_controller.go Update: the evicted Workload is requeued at once (Requeued=True Preempted), "
                "the set-aside ones in the cohort's batch 1 s later, so the victim takes its quota back first",
                [*kueue_basics(4), HIGH, queued_job("a", "4"), _urgent("b", "4", at="1s")],
                "5m", "a", {"a": 300.0, "b": 901.0}, 300.0,
                conditions={"Evicted": ("False", "QuotaReserved"), "Preempted": ("False", "QuotaReserved"),
                            "Requeued": ("True", "Preempted"), "QuotaReserved": ("True", "QuotaReserved"),
                            "Admitted": ("True", "Admitted"), "Finished": ("True", "Succeeded")},
                until="2h"),
    PreemptCase("waiter-waits-while-the-victim-takes-the-quota-back",
                "evict.go; workload_controller.go Update requeues the victim at once, the waiter in the 1 s batch",
                [*kueue_basics(4), HIGH, queued_job("a", "4"), _urgent("b", "4", at="1s", run_for="2h")],
                "10m", "a", {"a": 600.0, "b": 1201.0}, 600.0,
                conditions={"Evicted": ("False", "QuotaReserved"), "Preempted": ("False", "QuotaReserved"),
                            "Requeued": ("True", "Preempted"), "QuotaReserved": ("True", "QuotaReserved"),
                            "Admitted": ("True", "Admitted")}),
    PreemptCase("completions-carry-over", "jobs/job: status.succeeded survives suspension; the rest run again",
                [*kueue_basics(4), HIGH, queued_job("a", "4", completions=3), _urgent("b", "4", at="1s")],
                "15m", "a", {"a": 900.0, "b": 2101.0}, 300.0, until="3h"),
]


@pytest.mark.parametrize("case", PREEMPT_CASES, ids=lambda c: c.name)
def test_preemption_targets_are_evicted(case: PreemptCase) -> None:
    rig = kueue_rig(case.objects)
    rig.at(case.preempt_at, lambda: rig.kueue.preempt([Preempted(rig.key(case.victim), "InClusterQueue",
                                                                 PREEMPTED_MESSAGE)]))
    rig.run(case.until)
    last = {w.key: w.admitted_at for w in rig.kueue.view().workloads}
    assert {job: last[rig.key(job)] for job in case.admitted_at} == case.admitted_at
    assert rig.kueue.work_lost_seconds == case.work_lost
    assert rig.kueue.evicted["Preempted"] == 1
    found = _conditions(rig.workload(case.victim))
    assert {kind: found.get(kind) for kind in case.conditions} == case.conditions


def test_preempted_job_loses_its_pods_and_runs_again() -> None:
    """stopJob: the Job is suspended, its pods deleted (not counted as Job failures); started again on
    re-admission, it runs its whole time again."""
    rig = kueue_rig([*kueue_basics(4), queued_job("a", "2", parallelism=2)])
    rig.at("5m", lambda: rig.kueue.preempt([Preempted(rig.key("a"), "InClusterQueue", PREEMPTED_MESSAGE)]))
    rig.run("1h")
    view = rig.kueue.view().workloads[0]
    assert (view.admitted_at, view.finished_at, view.evictions) == (300.0, 900.0, 1)
    assert rig.kueue.work_lost_seconds == 600.0  # two pods, 5 minutes each
    assert rig.workload("a")["status"]["accumulatedPastExecutionTimeSeconds"] == 300


def _pods_ready(timeout: str = "5m", limit: int | None = None, base: int | None = None) -> Raw:
    strategy: Raw = {}
    if limit is not None:
        strategy["backoffLimitCount"] = limit
    if base is not None:
        strategy["backoffBaseSeconds"] = base
    wait: Raw = {"timeout": timeout}
    if strategy:
        wait["requeuingStrategy"] = strategy
    return configuration(waitForPodsReady=wait)


def _never_ready(config: Raw) -> list[Raw]:
    """Quota for 4 cpu, a node of 2: a Job of two 2-cpu pods is admitted, but one pod never runs."""
    return [node("n1", cpu="2"), resource_flavor("default"), cpu_queue("cq", 4),
            local_queue("lq", "cq", namespace="default"), config, queued_job("a", "2", parallelism=2, run_for="1h")]


@dataclass(frozen=True)
class ReadyCase:
    name: str
    cite: str
    objects: list[Raw]
    until: str
    evictions: int
    requeue_state: Raw | None
    conditions: dict[str, tuple[str, str]]
    active: bool = True


READY_CASES = [
    ReadyCase("pods-ready-started", "reconciler.go generatePodsReadyCondition: Started once every pod is ready",
              [*kueue_basics(4), _pods_ready(), queued_job("a", "2", parallelism=2)], "1m", 0, None,
              {"PodsReady": ("True", "Started"), "Admitted": ("True", "Admitted")}),
    ReadyCase("timeout-evicts-and-backs-off", "reconcileNotReadyTimeout; UpdateRequeueState (60 s × 2^(n-1))",
              _never_ready(_pods_ready()), "5m30s", 1, {"count": 1, "requeueAt": "2026-01-01T00:06:00Z"},
              {"Evicted": ("True", "PodsReadyTimeout"), "Requeued": ("False", "PodsReadyTimeout"),
               "QuotaReserved": ("False", "PendingEvaluation"), "PodsReady": ("False", "WaitForStart")}),
    ReadyCase("backoff-finished-readmitted", "workload_controller.go: Requeued=True BackoffFinished after the wait",
              _never_ready(_pods_ready()), "6m30s", 1, {"count": 1},
              {"Requeued": ("True", "BackoffFinished"), "QuotaReserved": ("True", "QuotaReserved"),
               "Evicted": ("False", "QuotaReserved")}),
    ReadyCase("backoff-doubles", "UpdateRequeueState: the second wait is 120 s (base 60 s)",
              _never_ready(_pods_ready()), "11m30s", 2, {"count": 2, "requeueAt": "2026-01-01T00:13:00Z"},
              {"Evicted": ("True", "PodsReadyTimeout")}),
    ReadyCase("limit-deactivates", "triggerDeactivation: count + 1 > backoffLimitCount -> spec.active false",
              _never_ready(_pods_ready(limit=1)), "1h", 2, None,
              {"Evicted": ("True", "DeactivatedDueToRequeuingLimitExceeded"),
               "Requeued": ("False", "DeactivatedDueToRequeuingLimitExceeded"),
               "QuotaReserved": ("False", "PendingEvaluation")}, active=False),
    ReadyCase("limit-zero-first-timeout", "backoffLimitCount 0: deactivated at the first timeout",
              _never_ready(_pods_ready(limit=0)), "1h", 1, None,
              {"Evicted": ("True", "DeactivatedDueToRequeuingLimitExceeded")}, active=False),
]


@pytest.mark.parametrize("case", READY_CASES, ids=lambda c: c.name)
def test_wait_for_pods_ready(case: ReadyCase) -> None:
    rig = kueue_rig(case.objects)
    rig.run(case.until)
    raw = rig.workload("a")
    view = rig.kueue.view().workloads[0]
    assert view.evictions == case.evictions
    assert raw["status"].get("requeueState") == case.requeue_state
    found = _conditions(raw)
    assert {kind: found.get(kind) for kind in case.conditions} == case.conditions
    assert view.active == case.active
    assert (raw["spec"].get("active") is not False) == case.active


def test_evicted_by_timeout_queues_behind_by_eviction_time() -> None:
    """GetQueueOrderTimestamp with requeuingStrategy.timestamp Eviction: after a PodsReady timeout the Workload
    is ordered by its eviction time, so one created later but before the eviction goes first."""
    objects = [node("n1", cpu="2"), resource_flavor("default"), cpu_queue("cq", 4),
               local_queue("lq", "cq", namespace="default"), _pods_ready(base=1),
               queued_job("a", "2", parallelism=2, run_for="1h"), queued_job("b", "4", at="10s", run_for="1h")]
    rig = kueue_rig(objects)
    rig.run("6m")
    last = {w.key: (w.admitted_at, w.evictions) for w in rig.kueue.view().workloads}
    assert last[rig.key("b")] == (301.0, 0)  # admitted in the 1 s batch after a's quota was freed
    assert last[rig.key("a")] == (None, 1)  # behind b: waits for its quota


@dataclass(frozen=True)
class BrokenCase:
    name: str
    cite: str
    objects: list[Raw]
    message: str


def _overspend(rig: KueueRig) -> None:
    rig.kueue.tree.nodes["cq:cq"].usage[("default", "cpu")] = 5000  # nominal 4, no cohort


def _unadmit(rig: KueueRig) -> None:
    rig.kueue.records[rig.key("a")].admitted = None  # its pod keeps running


BROKEN_CASES = [
    (BrokenCase("cluster-queue-over-its-quota", "cluster_queue.md: usage never beyond nominal + borrowingLimit",
                [*kueue_basics(4), queued_job("a", "2")], "ClusterQueue cq uses 5000 of cpu in flavor default"),
     _overspend),
    (BrokenCase("running-pod-without-admission", "reconciler.go: a Job runs only while its Workload is admitted",
                [*kueue_basics(4), queued_job("a", "2")], "runs but its Workload"), _unadmit),
]


@pytest.mark.parametrize(("case", "breakage"), BROKEN_CASES, ids=lambda c: getattr(c, "name", ""))
def test_invariants_catch_a_broken_queue(case: BrokenCase, breakage: Callable[[KueueRig], None]) -> None:
    """The invariants added for Kueue fail when their rule is broken (so the runs that pass them mean it)."""
    rig = kueue_rig(case.objects)
    rig.run("1m")
    breakage(rig)
    with pytest.raises(InvariantError, match=case.message):
        rig.checker()


def test_cycle_preemption_evicts_the_lower_priority_workload() -> None:
    """The cycle's own targets (kueue/preemption, withinClusterQueue: LowerPriority, preemption.md "Preemption
    within a ClusterQueue"): the high-priority Job arriving at 5m preempts the running one at once, which is
    requeued, set aside, and admitted again in the cohort's 1 s batch after the preemptor finishes; the victim's
    5 minutes of work are lost."""
    queue = cpu_queue("cq", 4, preemption={"withinClusterQueue": "LowerPriority"})
    objects = [node("n1", cpu="8"), resource_flavor("default"), queue, local_queue("lq", "cq", namespace="default"),
               HIGH, queued_job("a", "4"), _urgent("b", "4", at="5m")]
    rig = kueue_rig(objects)
    rig.run("1h")
    last = {w.key: w.admitted_at for w in rig.kueue.view().workloads}
    assert (last[rig.key("a")], last[rig.key("b")]) == (901.0, 300.0)
    assert rig.kueue.evicted["Preempted"] == 1
    assert rig.kueue.work_lost_seconds == 300.0
    found = _conditions(rig.workload("a"))
    assert found["Requeued"] == ("True", "Preempted")


def test_no_preemption_without_a_policy() -> None:
    """withinClusterQueue defaults to Never: the high-priority Job waits for the quota instead."""
    rig = kueue_rig([*kueue_basics(4), HIGH, queued_job("a", "4"), _urgent("b", "4", at="5m")])
    rig.run("1h")
    last = {w.key: w.admitted_at for w in rig.kueue.view().workloads}
    assert (last[rig.key("a")], last[rig.key("b")]) == (0.0, 601.0)  # b set aside: the 1 s batch
    assert rig.kueue.evicted["Preempted"] == 0

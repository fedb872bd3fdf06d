"""Kueue's queues through a run (sim/kueue_history.py): per ClusterQueue the Workloads pending and admitted over
time, admissions, preemptions with the GPU time they throw away, borrowed quota, and waiting times, on a run
small enough to follow by hand.

The run: two ClusterQueues of 4 example.com/gpu each in cohort ``research`` (each may borrow 4 more), one node
of 8. a1 (0 s) and a2 (1 s) of team a take 4 GPUs each for 1 h, a2 borrowing b's idle quota. b1 (4 GPUs, 30 min)
arrives at 600 s: b's quota is lent, so Kueue reclaims it (reclaimWithinCohort: Any): a2 is preempted, its pod
ran 599 s on 4 GPUs; b1 admitted at 600 s, done at 2400 s; a2 admitted again then (it waited 1800 s since its
requeue, as kueue_admission_wait_time_seconds counts), runs its whole hour again, done at 6000 s.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.builders.kueue import cluster_queue, flavor_quotas, group, local_queue, quota, resource_flavor
from tests.builders.kueue_sim import queued_job, simulate_objects
from tests.builders.manifests import node

from dratwin.kueue.quota import QuotaTree
from dratwin.sim.kueue_history import KueueHistory, bin_seconds, per_bin
from dratwin.sim.kueue_records import ADMITTED, CREATED, EVICTED, FINISHED, QUEUED, RESERVED, KueueEvent
from dratwin.sim.kueue_view import KueueView
from dratwin.sim.outcomes import ClusterQueueOutcome, KueueSummary

Raw = dict[str, Any]
GPU = "example.com/gpu"


def _team(name: str) -> Raw:
    return cluster_queue(name, group([GPU], flavor_quotas("default", quota(GPU, 4, borrowing=4))),
                         cohort="research", preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "Never"})


def _gpu_job(name: str, queue: str, at: str, run_for: str) -> Raw:
    raw = queued_job(name, queue=queue, at=at, run_for=run_for)
    raw["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {GPU: "4"}, "limits": {GPU: "4"}}
    return raw


def _run() -> KueueSummary:
    objects = [node("n1", extended={GPU: "8"}), resource_flavor("default"), _team("team-a"), _team("team-b"),
               local_queue("a", "team-a", namespace="default"), local_queue("b", "team-b", namespace="default"),
               _gpu_job("a1", "a", "0s", "1h"), _gpu_job("a2", "a", "1s", "1h"), _gpu_job("b1", "b", "10m", "30m")]
    sim = simulate_objects(objects, until="2h")
    assert sim.result.kueue is not None
    return sim.result.kueue


@pytest.fixture(scope="module")
def summary() -> KueueSummary:
    return _run()


def _queue(summary: KueueSummary, name: str) -> ClusterQueueOutcome:
    return next(q for q in summary.cluster_queues if q.name == name)


def test_counts_per_cluster_queue(summary: KueueSummary) -> None:
    a, b = _queue(summary, "team-a"), _queue(summary, "team-b")
    assert (a.cohort, a.workloads, a.admissions, a.preemptions, a.evictions, a.finished) == ("research", 2, 3, 1, 1, 2)
    assert (b.workloads, b.admissions, b.preemptions, b.finished) == (1, 1, 0, 1)
    assert (a.pending_at_end, a.admitted_at_end, b.pending_at_end, b.admitted_at_end) == (0, 0, 0, 0)
    assert (summary.admissions, summary.preemptions) == (4, 1)


def test_pending_and_admitted_over_time(summary: KueueSummary) -> None:
    a, b = _queue(summary, "team-a"), _queue(summary, "team-b")
    assert a.at_seconds == (0.0, 1.0, 600.0, 2401.0, 3600.0, 6001.0)  # a2 back in the 1 s batch after b1 ends
    assert a.pending == (0, 0, 1, 0, 0, 0)
    assert a.admitted == (1, 2, 1, 2, 1, 0)
    assert (b.at_seconds, b.pending, b.admitted) == ((0.0, 600.0, 2400.0), (0, 0, 0), (0, 1, 0))


def test_borrowed_quota_over_time(summary: KueueSummary) -> None:
    """a borrows b's 4 GPUs while a2 holds them, gives them back when preempted and when a1 ends."""
    (borrowed,) = _queue(summary, "team-a").borrowed
    assert (borrowed.flavor, borrowed.resource, borrowed.peak) == ("default", GPU, 4)
    assert tuple(zip(borrowed.at_seconds, borrowed.amounts, strict=True)) == (
        (0.0, 0), (1.0, 4), (600.0, 0), (2401.0, 4), (3600.0, 0))
    assert _queue(summary, "team-b").borrowed == ()


def test_waiting_time_from_creation_or_requeue_to_admission(summary: KueueSummary) -> None:
    waiting = _queue(summary, "team-a").waiting_seconds
    assert (waiting.count, waiting.p50, waiting.p95, waiting.max) == (3, 0.0, 1801.0, 1801.0)
    assert _queue(summary, "team-b").waiting_seconds.max == 0.0


def test_preemption_costs_the_gpu_time_the_victim_ran(summary: KueueSummary) -> None:
    a = _queue(summary, "team-a")
    assert a.lost_gpu_hours == pytest.approx(599 * 4 / 3600, abs=1e-6)
    assert summary.lost_gpu_hours == a.lost_gpu_hours
    assert a.bin_seconds == 300.0  # 2 h in at most 96 bins
    assert a.admissions_per_bin[:3] == (2, 0, 0) and a.admissions_per_bin[8] == 1  # 0 s, 1 s; 2401 s
    assert a.preemptions_per_bin[2] == 1 and sum(a.preemptions_per_bin) == 1


def test_workloads_with_kueue_print_columns(summary: KueueSummary) -> None:
    """A finished Workload keeps its admission (RESERVED IN) and its conditions."""
    assert [w.queue for w in summary.workloads] == ["a", "a", "b"]  # in creation order
    a2 = next(w for w in summary.workloads if w.name.startswith("job-a2-"))
    assert (a2.namespace, a2.reserved_in, a2.admitted, a2.finished) == ("default", "team-a", "True", "True")
    assert (a2.created_seconds, a2.admitted_seconds, a2.finished_seconds) == (1.0, 2401.0, 6001.0)
    assert (a2.evictions, a2.preemptions, a2.age_seconds) == (1, 1, 7199.0)
    assert a2.reserved_seconds == 2401.0 and [(e.at_seconds, e.reason) for e in a2.evicted] == [(600.0, "Preempted")]


def test_no_kueue_objects_no_summary() -> None:
    sim = simulate_objects([node("n1"), queued_job("plain")], until="10m")
    assert sim.result.kueue is None


def _event(time: float, type_: str, **details: Any) -> KueueEvent:
    return KueueEvent(time, type_, "ns/w", "cq", **details)


def test_the_recorder_on_hand_made_events() -> None:
    """A Workload reserved twice: deactivated after its second eviction, it waits no more and holds nothing."""
    history = KueueHistory(QuotaTree({}), {"cq": ""})
    for event in [_event(0, CREATED), _event(10, RESERVED, usage={("f", "nvidia.com/gpu"): 8, ("f", "cpu"): 4000},
                                                    pods=2),
                  _event(12, ADMITTED), _event(100, EVICTED, reason="PodsReadyTimeout", lost_pod_seconds=176.0),
                  _event(160, QUEUED), _event(170, RESERVED, usage={("f", "nvidia.com/gpu"): 8}, pods=2),
                  _event(175, ADMITTED), _event(200, EVICTED, reason="Deactivated", requeued=False),
                  _event(300, FINISHED)]:
        history.on_event(event)
    queue = history.queues["cq"]
    assert queue.waits == [12.0, 15.0]
    assert queue.lost_gpu_seconds == 176.0 * 4  # two pods on 8 GPUs: 4 each
    assert (queue.times, queue.pendings, queue.holdings) == (
        [0.0, 10.0, 100.0, 170.0, 200.0], [1, 0, 1, 0, 0], [0, 1, 0, 1, 0])  # 300 s: nothing changes
    assert (queue.pending, queue.holding, queue.evictions, queue.preemptions) == (0, 0, 2, [])
    summary = history.summary(400.0, KueueView([], []), {})
    assert summary.cluster_queues[0].waiting_seconds.count == 2


@pytest.mark.parametrize(("until", "width"), [(600.0, 60.0), (7200.0, 300.0), (86400.0, 900.0),
                                              (30 * 86400.0, 43200.0), (365 * 86400.0, 86400.0)])
def test_bins(until: float, width: float) -> None:
    assert bin_seconds(until) == width


def test_per_bin_puts_the_end_in_the_last_bin() -> None:
    assert per_bin([0.0, 59.9, 60.0, 120.0], 120.0, 60.0) == (2, 2)


def test_the_teams_example_borrows_and_reclaims_through_the_day() -> None:
    """examples/simulate/kueue-teams.yaml (make demo's queues page): both teams borrow the other's idle GPUs
    at some point of the day, and the lender takes them back by preemption, with GPU time lost."""
    from tests.conftest import EXAMPLES

    from dratwin.scenario.document import check, load
    from dratwin.sim.run import SimOptions, simulate

    path = str(EXAMPLES / "simulate" / "kueue-teams.yaml")
    assert check(path)[2] == []
    _, runs = load(path)
    result = simulate(runs[0], SimOptions()).result
    assert result.kueue is not None and result.until_seconds == 86400.0
    queues = {q.name: q for q in result.kueue.cluster_queues}
    assert set(queues) == {"team-a", "team-b"}
    assert all(q.cohort == "research" and q.admissions > 10 for q in queues.values())
    assert all(any(b.resource == "nvidia.com/gpu" and b.peak > 0 for b in q.borrowed) for q in queues.values())
    assert result.kueue.preemptions >= 2 and result.kueue.lost_gpu_hours > 0

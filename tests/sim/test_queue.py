"""kube-scheduler's queue: backoff 1 s doubling to 10 s, the pool moved by events and after 5 minutes."""

from __future__ import annotations

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node
from tests.builders.scheduler import make_pod
from tests.builders.sim import job, simulate_text, template, times

from dratwin.scheduler.resources import make_pod_info
from dratwin.sim.queue import SchedulingQueue


def _queue(pop_from_backoff: bool = False) -> SchedulingQueue:
    queue = SchedulingQueue(pop_from_backoff=pop_from_backoff)
    queue.add(make_pod_info(make_pod("p"), 0))
    return queue


@pytest.mark.parametrize(
    ("name", "failures", "moved_at", "back_in_active_at"),
    [
        ("first failure: 1 s", 1, 0.5, 1.0),
        ("second failure: 2 s", 2, 0.5, 2.0),
        ("fourth failure: 8 s", 4, 0.5, 8.0),
        ("fifth failure: capped at 10 s", 5, 0.5, 10.0),
        ("moved after its backoff: straight to activeQ", 1, 3.0, 3.0),
    ],
)
def test_backoff_after_failures(name: str, failures: int, moved_at: float, back_in_active_at: float) -> None:
    queue = _queue()
    assert queue.pop(0.0) is not None
    for _ in range(failures):  # each failed cycle counts one more attempt, the last one at time 0
        queue.failed("default/p", 0.0)
    queue.move_all(moved_at)
    just_before = back_in_active_at - 0.001
    if just_before >= moved_at:
        queue.flush_backoff(just_before)
        assert queue.pop(just_before) is None
    queue.flush_backoff(back_in_active_at)
    popped = queue.pop(back_in_active_at)
    assert popped is not None and popped.key == "default/p"


def test_without_an_event_the_pool_is_flushed_after_five_minutes() -> None:
    queue = _queue()
    queue.pop(0.0)
    queue.failed("default/p", 0.0)
    queue.flush_leftover(299.0)
    assert queue.pop(299.0) is None
    queue.flush_leftover(300.0)
    assert queue.pop(300.0) is not None


def test_each_pod_leaves_the_pool_after_its_own_five_minutes() -> None:
    # a fails at 0, b at 100, c at 150; an event moves a alone at 200 and it fails again (its five minutes
    # start over): each flush moves exactly the pods whose own five minutes are up.
    queue = SchedulingQueue(pop_from_backoff=False)
    for name in ("a", "b", "c"):
        queue.add(make_pod_info(make_pod(name), 0))
    for name, at in (("a", 0.0), ("b", 100.0), ("c", 150.0), ("a", 200.0)):
        if at == 200.0:
            queue.move({"default/a"}, at)
        popped = queue.pop(at)
        assert popped is not None and popped.key == f"default/{name}"
        queue.failed(popped.key, at)
    moved_by_flush = {}
    for at in (330.0, 420.0, 450.0, 510.0):
        queue.flush_leftover(at)
        moved_by_flush[at] = [p.key for p in iter(lambda t=at: queue.pop(t), None)]
    assert moved_by_flush == {330.0: [], 420.0: ["default/b"], 450.0: ["default/c"], 510.0: ["default/a"]}


def test_pop_from_backoff_when_active_is_empty() -> None:
    queue = _queue(pop_from_backoff=True)
    queue.pop(0.0)
    queue.failed("default/p", 0.0)
    queue.move_all(0.2)  # still backing off: to backoffQ; activeQ is empty, so it is popped anyway
    assert queue.pop(0.2) is not None


def test_an_unschedulable_pod_is_retried_on_the_30s_tick_after_5_minutes_without_events() -> None:
    text = manifest(gpu_class(), node("n1"), gpu_slice("n1", 1), template("two", 2), job("big", "two", at="20s"))
    sim = simulate_text(text, until="12m")
    # 20 s + 5 min = 320 s, seen by the check every 30 s at 330 s; then again 5 min after that
    assert times(sim, "FailedScheduling", "Pod") == [20.0, 330.0, 630.0]


def test_a_pod_waiting_for_devices_is_retried_when_they_are_freed() -> None:
    text = manifest(gpu_class(), node("n1"), gpu_slice("n1", 1), template("one", 1),
                    job("a", "one", run_for="100s"), job("b", "one", at="10s"))
    sim = simulate_text(text, until="1h")
    assert times(sim, "FailedScheduling", "Pod", "default/b-") == [10.0]
    assert times(sim, "Scheduled", "Pod", "default/b-") == [100.0]


@pytest.mark.parametrize(
    ("name", "other", "failed_at"),
    [
        # A Job's new claim (from its template) holds nothing yet: DynamicResources' hint skips the waiting pod.
        # Retried only 5 minutes later (at the 30 s tick after 310 s).
        ("another pod's new claim", job("c", "one", at="60s"), [10.0, 330.0]),
        # A bound pod's end frees its devices: the waiting pod is retried at once.
        ("a bound pod finishing", job("c", "one", at="0s", run_for="60s"), [10.0, 60.0, 360.0]),
    ],
)
def test_only_events_that_may_help_move_the_waiting_pod(name: str, other: dict[str, object],
                                                        failed_at: list[float]) -> None:
    text = manifest(gpu_class(), node("n1"), gpu_slice("n1", 2), template("one", 1), template("two", 2),
                    job("a", "one", run_for="1h"), job("b", "two", at="10s"), other)
    sim = simulate_text(text, until="6m")
    assert times(sim, "FailedScheduling", "Pod", "default/b-") == failed_at


def test_a_pod_taken_out_of_active_q_comes_back_at_its_new_place() -> None:
    # a gang's cycle takes its other members out of activeQ; when one of them comes back (moved from the
    # pool after its backoff), it queues behind the pods that entered activeQ before it came back.
    queue = SchedulingQueue(pop_from_backoff=False)
    for name in ("a", "b"):
        queue.add(make_pod_info(make_pod(name), 0))
    assert queue.take("default/a") is not None
    queue.failed("default/a", 0.0)
    queue.move_all(20.0)
    popped = [queue.pop(20.0), queue.pop(20.0), queue.pop(20.0)]
    assert [info.key if info is not None else None for info in popped] == ["default/b", "default/a", None]


def test_a_pod_backing_off_again_waits_for_its_new_backoff() -> None:
    # p backs off until 1 s; taken at 0.6 s and failed again (2 s from then), it waits until 2.6 s, not 1 s.
    queue = _queue()
    queue.pop(0.0)
    queue.failed("default/p", 0.0)
    queue.move_all(0.5)
    assert queue.take("default/p") is not None
    queue.failed("default/p", 0.6)
    queue.move_all(0.7)
    queue.flush_backoff(1.0)
    assert queue.pop(1.0) is None
    assert queue.next_backoff_end() == pytest.approx(2.6)
    queue.flush_backoff(2.6)
    popped = queue.pop(2.6)
    assert popped is not None and popped.key == "default/p"

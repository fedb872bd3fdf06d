"""activeQ's and backoffQ's runs (a pool moved at once, as one heap entry) and the head's pieces (``head_keys``,
``fail_head``, from backoffQ too when activeQ is empty) against the queue that pushes, pops and fails one pod
at a time: any sequence of adds, failures, moves, flushes, deletions and gang takes gives the same pods popped
in the same order and the same queue."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.builders.scheduler import make_pod

from dratwin.scheduler.resources import make_pod_info
from dratwin.sim.queue import SchedulingQueue


class OneByOne(SchedulingQueue):
    """The queue without runs: every pod moved is pushed on its own."""

    def _move_each(self, moving: list[str], now: float) -> None:
        for key in moving:
            self._move_one_by_one([key], now)


def state(queue: SchedulingQueue) -> tuple[Any, ...]:
    pods = {k: (q.attempts, q.last_attempt, q.unschedulable_since) for k, q in queue.pods.items()}
    return pods, list(queue.unschedulable), sorted(queue._in_active), sorted(queue._in_backoff)


NAMES = [f"p{i}" for i in range(12)]
# Weighted towards what makes runs: pods added and failing, time passing past their backoffs, the pool moved.
OPS = ["add"] * 3 + ["cycle"] * 4 + ["fail_piece", "move_all", "wait"] * 2 + [
    "move", "leftover", "backoff", "delete", "take"]
STEPS = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 11), st.integers(0, 12)), min_size=20, max_size=100)


def apply(queue: SchedulingQueue, steps: list[tuple[str, int, int]], priorities: list[int],
          by_pieces: bool) -> list[tuple[float, str | None]]:
    """The steps on one queue; a pod popped fails unless told otherwise. ``fail_piece`` fails the next pods
    ``pop`` gives: by ``head_keys`` and ``fail_head`` when ``by_pieces``, else one pop and failure each."""
    now, popped = 0.0, []
    for op, index, count in steps:
        name = NAMES[index]
        key = f"default/{name}"
        if op == "add" and key not in queue.pods:
            pod = make_pod(name, priority=priorities[index % len(priorities)])
            queue.add(make_pod_info(pod, index))
        elif op == "cycle":
            info = queue.pop(now)
            popped.append((now, info.key if info is not None else None))
            if info is not None and count % 4:  # a quarter of them is bound: gone from the queue
                queue.failed(info.key, now)
            elif info is not None:
                queue.delete(info.key)
        elif op == "fail_piece":
            left = count
            while left and by_pieces and (keys := queue.head_keys(left)):
                queue.fail_head(keys, now)
                popped.extend((now, k) for k in keys)
                left -= len(keys)
            while left and not by_pieces and (info := queue.pop(now)) is not None:
                queue.failed(info.key, now)
                popped.append((now, info.key))
                left -= 1
        elif op == "move_all":
            queue.move_all(now)
        elif op == "move":
            queue.move({f"default/{n}" for n in NAMES[index : index + count]}, now)
        elif op == "leftover":
            queue.flush_leftover(now)
        elif op == "backoff":
            queue.flush_backoff(now)
        elif op == "delete":
            queue.delete(key)
        elif op == "take":
            queue.take(key)
        elif op == "wait":
            now += (0.5, 11.0, 11.0, 301.0)[count % 4]
    return popped


@settings(max_examples=300, deadline=None)
@given(STEPS, st.sampled_from([[0], [0], [0, 5], [7, 0, 3]]), st.booleans())
def test_runs_and_pieces_pop_and_fail_as_one_pod_at_a_time(steps: list[tuple[str, int, int]],
                                                           priorities: list[int], from_backoff: bool) -> None:
    runs, reference = SchedulingQueue(pop_from_backoff=from_backoff), OneByOne(pop_from_backoff=from_backoff)
    assert apply(runs, steps, priorities, by_pieces=True) == apply(reference, steps, priorities, by_pieces=False)
    assert state(runs) == state(reference)


def test_a_pool_moved_at_once_is_one_entry_taken_in_the_pool_order() -> None:
    queue = SchedulingQueue()
    for index, name in enumerate(["a", "b", "c", "d"]):
        queue.add(make_pod_info(make_pod(name), index))
    for name in ["a", "b", "c", "d"]:
        info = queue.pop(0.0)
        assert info is not None and info.key == f"default/{name}"
        queue.failed(info.key, 0.0)
    queue.delete("default/b")  # bound meanwhile: skipped
    queue.move_all(20.0)  # every backoff over
    assert len(queue._active) == 1, "one heap entry for the pool"
    assert queue.head_keys(10) == ["default/a", "default/c", "default/d"]
    queue.fail_head(["default/a"], 20.0)
    assert [info.key for info in iter(lambda: queue.pop(20.0), None)] == ["default/c", "default/d"]
    assert list(queue.unschedulable) == ["default/a"]
    assert queue.pods["default/a"].attempts == 2


def test_a_piece_failed_across_a_stale_pod_leaves_the_rest_of_the_run_in_order() -> None:
    queue = SchedulingQueue()
    names = ["a", "b", "c", "d", "e"]
    for index, name in enumerate(names):
        queue.add(make_pod_info(make_pod(name), index))
    for _ in names:
        info = queue.pop(0.0)
        assert info is not None
        queue.failed(info.key, 0.0)
    queue.flush_leftover(300.0)  # all five, as one run
    queue.take("default/b")  # a gang's member, scheduled with its gang: stale within the run
    keys = queue.head_keys(3)  # at most three places of the run: b's is one
    assert keys == ["default/a", "default/c"]
    queue.fail_head(keys, 300.0)
    assert list(queue.unschedulable) == ["default/a", "default/c"]
    queue.move_all(400.0)  # a and c again, behind what is left of the first run
    assert [info.key for info in iter(lambda: queue.pop(400.0), None)] == ["default/d", "default/e", "default/a",
                                                                           "default/c"]


def test_pods_backing_off_until_the_same_time_are_one_backoff_entry_popped_in_order() -> None:
    # a, b, c have failed five times, last at 0 s (10 s backoffs, all ending at 10 s); moved at 5 s they back
    # off as one entry; with activeQ empty, PopFromBackoffQ takes them in order, and the pieces from there.
    queue = SchedulingQueue()
    keys = [f"default/{name}" for name in ("a", "b", "c")]
    for index, name in enumerate(["a", "b", "c"]):
        queue.add(make_pod_info(make_pod(name), index))
    for key in keys:
        assert queue.pop(0.0) is not None
        for _ in range(5):
            queue.failed(key, 0.0)
    queue.move_all(5.0)
    assert len(queue._backoff) == 1 and queue.active_count() == 0
    assert queue.next_backoff_end() == 10.0
    assert queue.head_keys(10) == keys
    queue.fail_head(keys[:2], 5.0)
    info = queue.pop(5.0)
    assert info is not None and info.key == "default/c"
    assert list(queue.unschedulable) == keys[:2] and queue.pods[keys[0]].attempts == 6
    assert queue.next_backoff_end() is None

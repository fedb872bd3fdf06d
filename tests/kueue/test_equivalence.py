"""Scheduling equivalence hashing and the cohort's requeue, as Kueue's queue manager does them
(pkg/cache/queue/cluster_queue.go requeueIfNotPresent / handleInadmissibleHash / PushOrUpdate,
inadmissible_workloads.go queueInadmissibleWorkloads, pkg/workload/workload.go computeSchedulingHash,
at Kueue ff69552)."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pytest
from tests.builders.kueue import container, pod_set, pod_spec, workload

from dratwin.api.kueue import Workload
from dratwin.kueue.cycle import CycleResult, Entry, Pending
from dratwin.kueue.equivalence import EquivalentQueues, scheduling_hash
from dratwin.kueue.usage import WorkloadUsage, workload_usage


def _entry(name: str, cpu: str = "1", priority: int = 0, timestamp: float = 0.0, cq: str = "cq") -> Entry:
    spec = pod_spec(container({"cpu": cpu}))
    wl = msgspec.convert(workload(name, pod_set(spec=spec), priority=priority), Workload)
    usage = workload_usage(wl)
    assert isinstance(usage, WorkloadUsage)
    return Entry(wl, cq, usage, timestamp)


def _set_aside(queues: EquivalentQueues, head: Entry, retry_now: bool = False) -> None:
    queues.settle(CycleResult(pending=[Pending(head, "WaitingForQuota", "", retry_now=retry_now)]))


@dataclass(frozen=True)
class HashCase:
    name: str
    a: Entry
    b: Entry
    equivalent: bool


HASH_CASES = [
    HashCase("same shape and priority, other name and time", _entry("a"), _entry("b", timestamp=5), True),
    HashCase("other request", _entry("a"), _entry("b", cpu="2"), False),
    HashCase("other priority", _entry("a"), _entry("b", priority=5), False),
]


@pytest.mark.parametrize("case", HASH_CASES, ids=lambda c: c.name)
def test_the_hash_covers_priority_and_pod_sets_not_the_name(case: HashCase) -> None:
    # computeSchedulingHash: effective priority, and per PodSet name, spec, count, requests, topology
    assert (scheduling_hash(case.a) == scheduling_hash(case.b)) is case.equivalent


def _queues(strategy: str = "BestEffortFIFO") -> EquivalentQueues:
    return EquivalentQueues({"cq": strategy, "other": strategy})


def test_a_head_that_does_not_fit_takes_its_equivalents_out_of_the_queue() -> None:
    # handleInadmissibleHash: every heap Workload with the head's hash is bulk-moved to inadmissible
    queues = _queues()
    small = [_entry(f"small-{i}", timestamp=i) for i in range(3)]
    big = _entry("big", cpu="5", timestamp=10)
    for entry in [*small, big]:
        queues.push(entry)
    _set_aside(queues, small[0])
    assert queues.heads() == [big]
    assert [e.key for e in queues.inadmissible["cq"]] == ["team/small-0", "team/small-1", "team/small-2"]


def test_a_new_workload_of_a_set_aside_shape_goes_straight_to_the_inadmissible() -> None:
    # PushOrUpdate: skip to inadmissible when the hash was already bulk-moved (BestEffortFIFO)
    queues = _queues()
    queues.push(first := _entry("small-0"))
    _set_aside(queues, first)
    queues.push(_entry("small-1", timestamp=1))
    assert queues.heads() == [] and len(queues.inadmissible["cq"]) == 2


def test_strict_fifo_keeps_its_order_and_moves_nothing() -> None:
    # handleInadmissibleHash applies only to BestEffortFIFO queues
    queues = _queues("StrictFIFO")
    small = [_entry(f"small-{i}", timestamp=i) for i in range(2)]
    for entry in small:
        queues.push(entry)
    _set_aside(queues, small[0])
    assert queues.heads() == [small[0]] and not queues.inadmissible


def test_a_retried_head_sets_nothing_aside() -> None:
    # "no longer fits after processing another workload": back to the queue at once, never set aside
    queues = _queues()
    small = [_entry(f"small-{i}", timestamp=i) for i in range(2)]
    for entry in small:
        queues.push(entry)
    _set_aside(queues, small[0], retry_now=True)
    assert queues.heads() == [small[0]] and not queues.set_aside_hashes


def test_the_requeue_restores_the_order_and_forgets_the_hashes_of_its_queues_only() -> None:
    # queueInadmissibleWorkloads: inadmissible back to the heap, hashToBulkMoveReason cleared
    queues = _queues()
    small = [_entry(f"small-{i}", timestamp=i) for i in range(3)]
    elsewhere = _entry("elsewhere", cq="other")
    for entry in [*small, elsewhere]:
        queues.push(entry)
    _set_aside(queues, small[0])
    _set_aside(queues, elsewhere)
    assert queues.heads() == []
    queues.requeue_cluster_queues(["cq"])
    assert queues.heads() == [small[0]] and queues.pending["cq"] == small
    assert "cq" not in queues.set_aside_hashes and "other" in queues.set_aside_hashes

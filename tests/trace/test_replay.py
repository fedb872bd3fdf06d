"""The paper's protocol: the tuned, shuffled arrivals of a seed, the replay loop and the figure it reads."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest
from tests.builders.gpu_trace import gpu_node, task
from tests.conftest import DATA

from dratwin.gpushare.fragmentation import TargetWorkload
from dratwin.gpushare.policies import POLICY_NAMES, make_policy
from dratwin.trace.alibaba import read_nodes, read_pods
from dratwin.trace.replay import ReplayResult, replay, run_protocol, tuned_arrivals
from dratwin.trace.tasks import task_from_pod

TRACE = DATA / "trace"
TASKS = [task(f"t{i:02d}", share=500 if i % 2 else 1000) for i in range(10)]  # 7.5 GPUs in all


def test_a_seed_gives_the_same_arrivals_every_time() -> None:
    first = tuned_arrivals(TASKS, 10_000, seed=42)
    assert first == tuned_arrivals(TASKS, 10_000, seed=42)
    # the trace is shuffled from name order: its file order changes only which tasks are drawn afterwards
    assert first[:10] == tuned_arrivals(list(reversed(TASKS)), 10_000, seed=42)[:10]
    assert [t.name for t in first] != [t.name for t in tuned_arrivals(TASKS, 10_000, seed=43)]


def test_tuning_up_appends_draws_until_the_next_would_pass_the_target() -> None:
    arrivals = tuned_arrivals(TASKS, 10_000, seed=7)  # target 13,000 milli
    assert sorted(t.name for t in arrivals[:10]) == [t.name for t in TASKS]  # the whole trace first, shuffled
    total = sum(t.gpu_total_milli for t in arrivals)
    assert 13_000 - 1000 < total <= 13_000


def test_tuning_down_removes_random_tasks_until_the_total_fits() -> None:
    arrivals = tuned_arrivals(TASKS, 4000, seed=7)  # target 5,200 milli of the 7,500 asked for
    assert sum(t.gpu_total_milli for t in arrivals) <= 5200
    assert len({t.name for t in arrivals}) == len(arrivals)
    assert sum(t.gpu_total_milli for t in arrivals) > 5200 - 1000


def test_tuning_compares_the_share_of_one_gpu_as_the_papers_simulator() -> None:
    # Only 4-GPU tasks: the running total plus the drawn task's share (1000, not 4000) is compared
    # with the target, so the tuned total can pass it by up to three GPUs.
    four = [task(f"f{i}", share=1000, gpus=4) for i in range(2)]
    arrivals = tuned_arrivals(four, 10_000, seed=1)  # target 13,000
    assert sum(t.gpu_total_milli for t in arrivals) == 16_000


@dataclass(frozen=True)
class ReadCase:
    name: str
    arrived: list[int]
    allocated: list[int]
    at: int
    expected: float | None


# capacity 10,000 milli: 1% = 100 milli
READS = [
    ReadCase("mean of the records rounding to the arrival", [9940, 9960, 10040, 10060], [9000, 9100, 9200, 9300], 100,
             91.5),  # 99.6 and 100.4 round to 100; 99.4 and 100.6 do not
    ReadCase("within one point when none rounds to it", [9900, 10100], [9000, 9400], 100, 92.0),
    ReadCase("two points away is too far", [9800, 10200], [9000, 9400], 100, None),
    ReadCase("nothing near the arrival", [5000], [5000], 100, None),
]


@pytest.mark.parametrize("case", READS, ids=lambda c: c.name)
def test_allocation_at_an_arrival(case: ReadCase) -> None:
    result = ReplayResult("p", 1, 10_000, np.array(case.arrived), np.array(case.allocated))
    assert result.allocation_pct_at(case.at) == case.expected
    assert result.unallocated_pct_at(case.at) == (None if case.expected is None else round(100 - case.expected, 2))


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_a_replay_is_deterministic_and_never_overfills(policy: str) -> None:
    tasks = [task_from_pod(p) for p in read_pods(TRACE / "pod_list.csv")]
    nodes = read_nodes(TRACE / "node_list.csv")
    first = run_protocol(nodes, tasks, policy, 42)
    again = run_protocol(nodes, tasks, policy, 42)
    assert first.failed == again.failed
    assert first.allocated_milli.tolist() == again.allocated_milli.tolist()
    assert first.allocated_milli[-1] <= first.capacity_milli == 25_000
    assert np.all(np.diff(first.arrived_milli) >= 0) and np.all(first.allocated_milli <= first.arrived_milli)


def test_a_task_that_fits_nowhere_fails_and_the_rest_go_on() -> None:
    nodes = [gpu_node("t4", "T4", 2, cpu=16_000).node]
    arrivals = [
        task("v100", share=500, models=["V100M16"]),  # no such model
        task("big", cpu=32_000, share=1000),  # not enough CPU
        task("fits", share=1000),
        task("three", share=1000, gpus=3),  # not enough GPUs
    ]
    result = replay(nodes, arrivals, make_policy("bestfit", TargetWorkload((), ())), seed=1)
    assert result.failed == ["v100", "big", "three"]
    assert result.allocated_milli.tolist() == [0, 0, 1000, 1000]
    assert result.arrived_milli.tolist() == [500, 1500, 2500, 5500]


def test_ties_go_to_the_first_node_of_the_seeds_order() -> None:
    nodes = [gpu_node(f"n{i}").node for i in range(6)]
    arrivals = [task(f"t{i}", cpu=1000, share=1000) for i in range(3)]
    policy = make_policy("gpupacking", TargetWorkload((), ()))
    # GpuPacking: once a node is used, its idle GPUs score above idle nodes: every task lands on one node
    for seed in (1, 2, 3):
        result = replay(nodes, arrivals, policy, seed)
        assert result.failed == [] and result.allocated_milli[-1] == 3000


def test_one_random_source_serves_the_run_in_the_artifacts_order() -> None:
    # CPU-only tasks tie on every node under GpuPacking, so the first lands on the first node of the
    # node order: the order drawn after the shuffle and the tuning, from the same source.
    nodes = [gpu_node(f"n{i}").node for i in range(8)]
    tasks = [task(f"c{i}", cpu=1000) for i in range(3)] + [task("g", share=1000)]
    for seed in range(42, 52):
        source = random.Random(seed)
        tuned_arrivals(tasks, 8 * 8000, source)
        order = source.sample(range(len(nodes)), len(nodes))
        first = nodes[order.index(0)].name
        result = run_protocol(nodes, tasks, "gpupacking", seed)
        assert result.placements[0] == first, seed

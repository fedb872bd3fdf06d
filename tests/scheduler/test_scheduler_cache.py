"""The scheduler's cached outcomes change nothing: every cycle decides as if it filtered and scored each node
anew (same nodes, messages, victims and objects), whatever changed in between (pods bound or evicted,
devices taken on one node or in a pool shared by all of them)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from tests.builders.manifests import (
    GPU_DRIVER,
    claim_template,
    gpu_class,
    gpu_request,
    gpu_slice,
    load,
    manifest,
    node,
    pod,
    priority_class,
)

from dratwin.scheduler.framework import PodInfo
from dratwin.scheduler.scheduler import Attempt, Scheduler
from dratwin.twin.schedule import Options, StateBinder, default_profile

Raw = dict[str, Any]


class Forgetful(Scheduler):
    """The reference: drops every cached outcome before each cycle, so that each node is filtered and
    scored again, as kube-scheduler does."""

    def schedule_one(self, pod: PodInfo) -> Attempt:
        self._tables.clear()  # the outcomes per node and the last failure of each shape
        self.profile.dra._pre_filtered.clear()  # each pod's PreFilter
        return super().schedule_one(pod)


def shared_slice(count: int) -> Raw:
    """Network-attached devices any node can use: one pool for all nodes (each allocation moves the
    cluster-wide DRA version)."""
    devices = [{"name": f"net-{i}", "attributes": {"index": {"int": i}}} for i in range(count)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
            "spec": {"driver": GPU_DRIVER, "allNodes": True, "pool": {"name": "fabric", "generation": 1,
                                                                      "resourceSliceCount": 1},
                     "devices": devices}}


def bound(name: str, node_name: str, cpu: str) -> Raw:
    raw = pod(name, cpu=cpu)
    raw["spec"]["nodeName"] = node_name
    raw["status"] = {"phase": "Running"}
    return raw


@dataclass
class Case:
    id: str
    objects: list[Raw]
    percentage: int = 0


def _fill_up() -> list[Raw]:
    nodes = [node(f"n{i}", zone=f"z{i % 3}") for i in range(12)]
    slices = [gpu_slice(f"n{i}", 2) for i in range(12)]
    pods = [pod(f"p{i}", cpu=("1", "500m", "2")[i % 3], templates={"gpu": "one"}) for i in range(30)]
    return [gpu_class(), *nodes, *slices, claim_template("one", gpu_request()), *pods]


def _mixed() -> list[Raw]:
    nodes = [node(f"n{i}", cpu=("4", "8", "16")[i % 3], zone=f"z{i % 2}") for i in range(9)]
    slices = [gpu_slice(f"n{i}", 1 + i % 3) for i in range(9)]
    pods = []
    for i in range(40):
        templates = {"gpu": "two" if i % 5 == 0 else "one"} if i % 4 else None
        pods.append(pod(f"p{i}", cpu=("100m", "1", "3")[i % 3], memory=("1Gi", "4Gi")[i % 2], templates=templates))
    return [gpu_class(), *nodes, *slices, claim_template("one", gpu_request()),
            claim_template("two", gpu_request(count=2)), *pods]


def _preemption() -> list[Raw]:
    nodes = [node(f"n{i}", cpu="4") for i in range(6)]
    running = [bound(f"low{i}", f"n{i % 6}", "2") for i in range(12)]
    urgent = [pod(f"hi{i}", cpu="3", priority_class="high") for i in range(5)]
    return [priority_class("high", 1000), *nodes, *running, *urgent]


def _shared_pool() -> list[Raw]:
    """Half the nodes have no GPU of their own: they stay feasible only while the shared pool has devices."""
    nodes = [node(f"n{i}") for i in range(10)]
    slices = [gpu_slice(f"n{i}", 1) for i in range(5)]
    pods = [pod(f"p{i}", cpu="1", templates={"gpu": "one"}) for i in range(12)]
    return [gpu_class(), *nodes, *slices, shared_slice(4), claim_template("one", gpu_request()), *pods]


def _many_nodes() -> list[Raw]:
    """More than 100 nodes: a cycle stops after the feasible nodes it needs, and the next starts after them."""
    nodes = [node(f"n{i}", cpu="2") for i in range(130)]
    pods = [pod(f"p{i}", cpu="1") for i in range(270)]
    return [*nodes, *pods]


def _reasons_change_later() -> list[Raw]:
    """A pod fails for want of devices; then a pod without a claim takes a node's cpu, so the next pod of the
    first one's shape fails there for cpu: the first failure's diagnosis still says devices."""
    nodes = [node(f"n{i}", cpu="4") for i in range(2)]
    slices = [gpu_slice(f"n{i}", 1) for i in range(2)]
    with_gpu = [pod(f"g{i}", cpu="1", templates={"gpu": "one"}) for i in range(3)]
    return [gpu_class(), *nodes, *slices, claim_template("one", gpu_request()), *with_gpu,
            pod("cpu-only", cpu="3"), pod("g3", cpu="1", templates={"gpu": "one"})]


CASES = [
    Case("fill-up-until-nothing-fits", _fill_up()),
    Case("mixed-shapes-and-scores", _mixed()),
    Case("preemption", _preemption()),
    Case("pool-shared-by-all-nodes", _shared_pool()),
    Case("more-nodes-than-a-cycle-looks-at", _many_nodes()),
    Case("a-tenth-of-the-nodes", _many_nodes(), percentage=10),
    Case("reasons-change-after-a-failure", _reasons_change_later()),
]


def decisions(objects: list[Raw], scheduler: type[Scheduler], seed: int, percentage: int) -> tuple[Any, ...]:
    loaded = load(manifest(objects), seed=seed)
    options = Options(seed, percentage_of_nodes_to_score=percentage)
    run = scheduler(loaded.state, default_profile(loaded.state, options), random.Random(seed),
                    StateBinder(loaded.state))
    # Each failed attempt's per-node statuses are read after the whole run: what later cycles store must not
    # change what an earlier diagnosis recorded.
    attempts = [(a.pod, a.node, a.message, a.victims, a.nominated_node, _per_node(a)) for a in run.run(loaded.pending)]
    stored = [r.raw for r in loaded.state.pods.values()] + [r.raw for r in loaded.state.claims.values()]
    return attempts, stored, run.next_start_node


def _per_node(attempt: Attempt) -> list[tuple[str, tuple[str, ...]]] | None:
    if attempt.diagnosis is None:
        return None
    return [(name, status.reasons) for name, status in attempt.diagnosis.nodes.items()]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("seed", [0, 5])
def test_cached_outcomes_decide_as_filtering_every_node_again(case: Case, seed: int) -> None:
    cached = decisions(case.objects, Scheduler, seed, case.percentage)
    reference = decisions(case.objects, Forgetful, seed, case.percentage)
    assert cached == reference
    attempts = cached[0]
    assert any(node is not None for _, node, *_ in attempts), "the case schedules something"


def test_the_cases_reach_what_they_are_named_for() -> None:
    """The table is only as good as its cases: each meets the situation it names."""
    by_id = {c.id: decisions(c.objects, Scheduler, 0, c.percentage) for c in CASES}
    assert any(node is None for _, node, *_ in by_id["fill-up-until-nothing-fits"][0])
    attempts = {a[0]: a for a in by_id["reasons-change-after-a-failure"][0]}
    first, later = attempts["default/g2"][-1], attempts["default/g3"][-1]
    assert first is not None and later is not None and first != later  # the same node, other reasons
    attempts, stored, _ = by_id["preemption"]
    left = {raw["metadata"]["name"] for raw in stored}
    assert all(node is not None for _, node, *_ in attempts) and len(left & {f"low{i}" for i in range(12)}) < 12
    assert sum(node is None for _, node, *_ in by_id["pool-shared-by-all-nodes"][0]) == 3  # 9 devices, 12 pods
    spread = [node for _, node, *_ in by_id["more-nodes-than-a-cycle-looks-at"][0]]
    assert len(set(spread) - {None}) == 130 and spread.count(None) == 10  # every node filled, 10 pods left over


def test_a_label_set_on_a_node_ends_the_failed_verdict_of_a_shape() -> None:
    """A pod that fails for want of a label fits once the node gets it: the label is a node change like any
    other, so the shape's last failed cycle is not reused and the node's cached outcome is filtered again."""
    loaded = load(manifest([node("n0"), pod("p0", cpu="1", node_selector={"domain": "a"}),
                            pod("p1", cpu="1", node_selector={"domain": "a"})]), seed=0)
    state = loaded.state
    run = Scheduler(state, default_profile(state, Options(0)), random.Random(0), StateBinder(state))
    first, second = loaded.pending
    assert run.schedule_one(first).node is None
    state.label_node("n0", "domain", "a")
    assert run.schedule_one(second).node == "n0"


def _two_waiting() -> tuple[Any, Scheduler, PodInfo, PodInfo]:
    """One node with one GPU taken by a bound pod, two pods that want a GPU: both fail."""
    loaded = load(manifest([gpu_class(), node("n0"), gpu_slice("n0", 1), claim_template("one", gpu_request()),
                            pod("a", templates={"gpu": "one"}), pod("b", templates={"gpu": "one"}),
                            pod("c", templates={"gpu": "one"})]), seed=0)
    state = loaded.state
    run = Scheduler(state, default_profile(state, Options(0)), random.Random(0), StateBinder(state))
    first, second, third = loaded.pending
    assert run.schedule_one(first).node == "n0"
    return state, run, second, third


def test_a_failed_pod_meets_its_shapes_stamped_failure_again_while_nothing_changed() -> None:
    _, run, second, third = _two_waiting()
    failed = run.schedule_one(second)
    assert failed.node is None
    certain = run.certain_failure(second)
    assert certain is not None and certain[1] == failed.message and certain[2] is failed.diagnosis
    known = run.known_failure(second)
    assert known is not None and (known.message, known.diagnosis) == (failed.message, failed.diagnosis)
    # a pod of the same shape that has had no cycle yet: its PreFilter has not run, nothing is certain
    assert run.certain_failure(third) is None


def test_nothing_is_certain_once_the_cluster_the_pod_or_its_claim_changed() -> None:
    state, run, second, _ = _two_waiting()
    run.schedule_one(second)
    state.label_node("n0", "domain", "a")  # a node change moves the stamp
    assert run.certain_failure(second) is None
    run.schedule_one(second)
    assert run.certain_failure(second) is not None
    [claim_key] = [k for k in state.claims if k.startswith("default/b-")]
    state.update_claim(claim_key, state.claims[claim_key].raw)  # the same content, a new object
    assert run.certain_failure(second) is None
    run.schedule_one(second)
    assert run.certain_failure(second) is not None
    record = state.pods[second.key]
    state.update_pod(second.key, record.raw, msgspec.structs.replace(record.pod))  # a new pod object
    assert run.certain_failure(state.pods[second.key].info) is None

"""Karpenter in the simulation: the batching window, the launch latency, emptiness through the disruption loop."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from tests.builders.manifests import claim_template, device_class, gpu_request, manifest
from tests.builders.plan import ec2_node_class, nodepool
from tests.builders.sim import job, simulate_text, times

GPU = "gpu.nvidia.com"
CLASS = device_class(GPU, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")
ONE_GPU = claim_template("one", gpu_request(device_class_name=GPU))


def _pool(consolidate_after: str | None = "0s") -> dict[str, object]:
    raw = nodepool("gpu", requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                         "values": ["g6.xlarge"]}])
    if consolidate_after is not None:
        raw["spec"]["disruption"] = {"consolidateAfter": consolidate_after}  # type: ignore[index]
    return raw


@pytest.mark.parametrize(
    ("name", "arrivals", "launched_at"),
    [
        # one pod at 10 s: the window closes 1 s later (idle)
        ("one pod: the idle second", ["10s"], 11.0),
        # a pod every 0.5 s keeps the window open until its 10 s maximum
        ("a stream of pods: the 10 s maximum", [f"{10 + i * 0.5}s" for i in range(30)], 20.0),
    ],
)
def test_karpenter_launches_after_the_batching_window(name: str, arrivals: list[str], launched_at: float) -> None:
    jobs = [job(f"j{i}", "one", at=at, run_for="10m") for i, at in enumerate(arrivals)]
    sim = simulate_text(manifest(CLASS, ONE_GPU, ec2_node_class("default"), _pool(), *jobs), until="1h",
                        launch_seconds=45.0)
    assert times(sim, "Launched", "NodeClaim")[0] == launched_at


def test_the_pod_binds_when_the_node_is_ready_and_the_empty_node_is_consolidated() -> None:
    text = manifest(CLASS, ONE_GPU, ec2_node_class("default"), _pool("30s"), job("a", "one", at="10s", run_for="10m"))
    sim = simulate_text(text, until="1h", launch_seconds=45.0)
    assert times(sim, "Launched", "NodeClaim") == [11.0]
    assert times(sim, "Added", "Node") == [56.0]  # 11 s + 45 s of launch latency
    assert times(sim, "Scheduled", "Pod", "default/a-") == [56.0]
    assert times(sim, "Deleted", "Pod", "default/a-") == [656.0]
    # empty at 656 s, Consolidatable 30 s later (686 s); the disruption controller's next pass (every 10 s
    # from 0) finds it at 690 s, and deletes it after the 15 s validation wait
    assert times(sim, "Consolidated", "Node") == [705.0]
    result = sim.result
    [cost] = result.cost_by_instance_type
    assert cost.instance_type == "g6.xlarge" and cost.nodes == 1
    assert cost.hours == pytest.approx((705 - 56) / 3600, abs=1e-6)
    assert result.cost_usd == pytest.approx(cost.hours * (cost.usd_per_hour or 0), abs=1e-5)
    assert [(n.at_seconds, n.nodes) for n in result.nodes_over_time] == [(0.0, 0), (56.0, 1), (705.0, 0)]
    assert result.gpu_hours_allocated == pytest.approx(600 / 3600, abs=1e-6)
    assert result.gpu_hours_idle == pytest.approx(49 / 3600, abs=1e-6)


def test_consolidate_after_never_keeps_the_node() -> None:
    text = manifest(CLASS, ONE_GPU, ec2_node_class("default"), _pool("Never"), job("a", "one", at="10s", run_for="5m"))
    sim = simulate_text(text, until="1h", launch_seconds=45.0)
    assert times(sim, "Consolidated", "Node") == []
    assert sim.result.nodes_over_time[-1].nodes == 1


@pytest.mark.parametrize("seed", [4, 9])
def test_invariants_hold_at_every_event_with_karpenter_launching_and_consolidating(seed: int) -> None:
    rng = random.Random(seed)
    two = claim_template("two", gpu_request(device_class_name=GPU, count=2))
    pool = nodepool("gpu", requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                          "values": ["g6.xlarge", "g6.12xlarge"]}])
    pool["spec"]["disruption"] = {"consolidateAfter": "2m"}  # type: ignore[index]
    jobs = [job(f"j{i}", rng.choice(["one", "two"]), at=f"{rng.randrange(0, 7200)}s",
                run_for=f"{rng.randrange(60, 1800)}s") for i in range(25)]
    sim = simulate_text(manifest(CLASS, ONE_GPU, two, ec2_node_class("default"), pool, *jobs), until="4h",
                        seed=seed)
    result = sim.result
    assert sim.invariant_checks == result.events
    assert result.pods_succeeded == 25 and result.pods_pending_at_end == 0
    assert times(sim, "Consolidated", "Node")
    # underused nodes were deleted or replaced with their pods evicted, and the invariants held through it
    assert result.disruptions.nodes_underutilized and result.disruptions.replacements_launched
    assert result.disruptions.pods_evicted
    assert result.nodes_over_time[-1].nodes == 0  # everything done, every node consolidated


def test_a_node_launched_for_a_pod_is_not_consolidated_before_the_pod_binds() -> None:
    # consolidateAfter 0s: the new node is empty for an instant, but its pod is nominated to it
    text = manifest(CLASS, ONE_GPU, ec2_node_class("default"), _pool("0s"), job("a", "one", at="10s", run_for="10m"))
    sim = simulate_text(text, until="1h", launch_seconds=45.0)
    assert times(sim, "Launched", "NodeClaim") == [11.0]
    assert times(sim, "Scheduled", "Pod", "default/a-") == [56.0]
    # the pod leaves at 656 s: the pass at 660 s finds the node empty, 15 s of validation
    assert times(sim, "Consolidated", "Node") == [675.0]


@dataclass
class RoundCase:
    name: str
    objects: list[dict[str, object]]
    launches: int
    note: str  # a note of the run that says why nothing or something was launched


MISSING_CLASS = claim_template("ghost", gpu_request(device_class_name="no-such-class"))
ROUND_CASES = [
    RoundCase("a claim of a DeviceClass that does not exist: nothing launched, said once",
              [CLASS, MISSING_CLASS, ec2_node_class("default"), _pool(),
               job("a", "ghost", at="10s", run_for="10m"), job("b", "ghost", at="20s", run_for="10m")],
              0, "DeviceClass no-such-class does not exist"),
    RoundCase("a NodePool of EKS Auto Mode's NodeClass is not self-managed Karpenter's",
              [CLASS, ONE_GPU, ec2_node_class("default"), nodepool("auto", auto_mode=True),
               _pool(), job("a", "one", at="10s", run_for="10m")],
              1, "NodePool auto is not managed by self-managed Karpenter"),
]


@pytest.mark.parametrize("case", ROUND_CASES, ids=lambda c: c.name)
def test_a_round_takes_the_pods_and_nodepools_plan_would(case: RoundCase) -> None:
    sim = simulate_text(manifest(*case.objects), until="1h", launch_seconds=45.0)
    assert len(times(sim, "Launched", "NodeClaim")) == case.launches
    assert len([n for n in sim.result.notes if case.note in n]) == 1, sim.result.notes

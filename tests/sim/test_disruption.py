"""Karpenter's disruption controller in the simulation: underused nodes replaced or deleted, empty fleets
consolidated within their budgets, do-not-disrupt and the consolidation policy respected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.builders.manifests import claim_template, device_class, gpu_request, manifest
from tests.builders.plan import ec2_node_class
from tests.builders.sim import (
    changes,
    gpu_nodepool,
    job,
    karpenter_nodes,
    simulate_text,
    times,
    with_pod_annotations,
)

from dratwin.catalog import load_catalog

GPU = "gpu.nvidia.com"
CLASS = device_class(GPU, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")
ONE = claim_template("one", gpu_request(device_class_name=GPU))
TWO = claim_template("two", gpu_request(device_class_name=GPU, count=2))
BOTH_TYPES = ("g6.xlarge", "g6.12xlarge")  # 1 L4 at $0.80/h, 4 L4 at $4.60/h


def _underused(pool: dict[str, Any], small: dict[str, Any] | None = None) -> str:
    """A 2-GPU pod and a 1-GPU pod arrive together: one g6.12xlarge takes both; the 2-GPU pod ends after
    10 minutes (at 656 s) and leaves the 1-GPU pod alone on a 4-GPU node for three hours."""
    big = job("big", "two", at="10s", run_for="10m")
    return manifest(CLASS, ONE, TWO, ec2_node_class("default"), pool, big,
                    small or job("small", "one", at="10s", run_for="3h"))


def test_an_underused_node_is_replaced_by_a_cheaper_one_ready_before_the_drain() -> None:
    sim = simulate_text(_underused(gpu_nodepool(BOTH_TYPES, consolidate_after="1m")), until="5h",
                        launch_seconds=45.0)
    # 656 s + consolidateAfter 1m = 716 s; the pass at 720 s finds it; validated 15 s later
    assert times(sim, "Disrupting", "Node")[0] == 735.0
    launched = changes(sim, "NodeClaim")
    assert [(c.time, c.message.split(" ")[0]) for c in launched] == [(11.0, "g6.12xlarge"), (735.0, "g6.xlarge")]
    nodes = [(c.time, c.type, c.key) for c in changes(sim, "Node") if c.type in ("Added", "Deleted")]
    # the replacement registers (45 s of launch latency) before the old node is drained and deleted
    assert nodes[:3] == [(56.0, "Added", "gpu-00001-1"), (780.0, "Added", "gpu-00002-1"),
                         (780.0, "Deleted", "gpu-00001-1")]
    assert times(sim, "Evicted", "Pod", "default/small-") == [780.0]
    # the Job replaces its evicted pod after its 10 s pod failure backoff; it lands on the new node
    [rescheduled] = [c for c in changes(sim, "Pod", "default/small-") if c.type == "Scheduled"][1:]
    assert rescheduled.time == 790.0 and rescheduled.message.endswith("gpu-00002-1")
    result = sim.result
    d = result.disruptions
    assert (d.nodes_underutilized, d.nodes_empty, d.replacements_launched, d.pods_evicted) == (1, 1, 1, 1)
    assert d.work_lost_seconds == 780.0 - 56.0  # the 1-GPU pod had run since 56 s
    first = d.commands[0]
    assert (first.reason, first.method, first.decision, first.nodes, first.replacements) == (
        "Underutilized", "single-node", "replace", ("gpu-00001-1",), ("g6.xlarge",))
    assert result.pods_succeeded == 2 and result.pods_pending_at_end == 0
    by_type = {c.instance_type: c for c in result.cost_by_instance_type}
    assert by_type["g6.12xlarge"].hours == pytest.approx((780 - 56) / 3600, abs=1e-6)


@pytest.mark.parametrize(
    ("name", "pool", "small"),
    [
        ("WhenEmpty leaves an underused node",
         gpu_nodepool(BOTH_TYPES, consolidate_after="1m", policy="WhenEmpty"), None),
        ("consolidateAfter Never", gpu_nodepool(BOTH_TYPES, consolidate_after="Never"), None),
        ("a budget of no nodes", gpu_nodepool(BOTH_TYPES, consolidate_after="1m", budgets=[{"nodes": "0"}]), None),
        ("a budget of no nodes for Underutilized only",
         gpu_nodepool(BOTH_TYPES, consolidate_after="1m", budgets=[{"nodes": "0", "reasons": ["Underutilized"]}]),
         None),
        ("a do-not-disrupt pod",
         gpu_nodepool(BOTH_TYPES, consolidate_after="1m"),
         with_pod_annotations(job("small", "one", at="10s", run_for="3h"), {"karpenter.sh/do-not-disrupt": "true"})),
    ],
)
def test_the_underused_node_is_kept(name: str, pool: dict[str, Any], small: dict[str, Any] | None) -> None:
    sim = simulate_text(_underused(pool, small), until="4h", launch_seconds=45.0)
    d = sim.result.disruptions
    assert d.nodes_underutilized == 0 and d.pods_evicted == 0 and d.work_lost_seconds == 0
    assert times(sim, "Evicted", "Pod") == []
    assert [c.nodes for c in sim.result.cost_by_instance_type] == [1]
    assert sim.result.pods_succeeded == 2


def _night(budgets: list[dict[str, Any]] | None) -> str:
    """Four 1-GPU pods arriving 100 s apart, each on its own g6.xlarge, all ending at 3056 s (the night)."""
    jobs = [job(f"day{i}", "one", at=f"{10 + 100 * i}s", run_for=f"{3000 - 100 * i}s") for i in range(4)]
    return manifest(CLASS, ONE, ec2_node_class("default"),
                    gpu_nodepool(["g6.xlarge"], consolidate_after="1m", budgets=budgets), *jobs)


@pytest.mark.parametrize(
    ("name", "budgets", "deleted_at", "commands"),
    [
        # 10% of 4 nodes, rounded up: one at a time. The pass right after a command still counts its node as
        # disrupting (nothing allowed); the node's deletion is a change: the next pass (10 s later) finds the
        # next node, validated 15 s later
        ("the default budget (10%)", None, [3135.0, 3160.0, 3185.0, 3210.0], 4),
        ("two at a time", [{"nodes": "2"}], [3135.0, 3135.0, 3160.0, 3160.0], 2),
        ("all at once", [{"nodes": "100%"}], [3135.0] * 4, 1),
    ],
)
def test_a_fleet_that_empties_at_night_is_consolidated_within_its_budget(
        name: str, budgets: list[dict[str, Any]] | None, deleted_at: list[float], commands: int) -> None:
    sim = simulate_text(_night(budgets), until="2h", launch_seconds=45.0)
    result = sim.result
    assert len(times(sim, "Added", "Node")) == 4
    # every pod ends at 3056 s; Consolidatable at 3116 s; found at 3120 s; validated at 3135 s
    assert times(sim, "Deleted", "Node") == deleted_at
    assert result.disruptions.nodes_empty == 4 and len(result.disruptions.commands) == commands
    assert {c.reason for c in result.disruptions.commands} == {"Empty"}
    assert result.nodes_over_time[-1].nodes == 0 and result.disruptions.pods_evicted == 0


def test_an_underused_node_whose_pod_fits_elsewhere_is_deleted() -> None:
    # two g6.12xlarge, each left with one 1-GPU pod once its 2-GPU pod ends: one node takes both pods
    jobs = [job("big-a", "two", at="10s", run_for="10m"), job("small-a", "one", at="10s", run_for="3h"),
            job("big-b", "two", at="100s", run_for="10m"), job("small-b", "one", at="100s", run_for="3h")]
    text = manifest(CLASS, ONE, TWO, ec2_node_class("default"),
                    gpu_nodepool(["g6.12xlarge"], consolidate_after="1m", budgets=[{"nodes": "100%"}]), *jobs)
    sim = simulate_text(text, until="4h", launch_seconds=45.0)
    d = sim.result.disruptions
    deletes = [c for c in d.commands if c.reason == "Underutilized"]
    assert [(c.decision, len(c.nodes), c.replacements, c.pods_evicted) for c in deletes] == [("delete", 1, (), 1)]
    [gone] = deletes[0].nodes
    [kept] = {c.key for c in changes(sim, "Node") if c.type == "Added"} - {gone}
    moved = [c for c in changes(sim, "Pod") if c.type == "Scheduled" and c.time > deletes[0].at_seconds]
    assert [c.message.rsplit(" ", 1)[1] for c in moved] == [kept]
    assert sim.result.pods_succeeded == 4


@pytest.mark.parametrize(
    ("name", "first_runs", "evictions"),
    [
        # node A's four GPUs stay taken: B's pod has no device to move to, and no type is cheaper than B
        ("no free GPU elsewhere: kept", ["5h"] * 4, 0),
        # one of A's pods ends at 20 min: its device is free, B's pod moves there and B is deleted
        ("a GPU freed elsewhere: moved, node deleted", ["20m", "5h", "5h", "5h"], 1),
    ],
)
def test_a_pod_moves_only_where_its_claim_can_be_allocated(name: str, first_runs: list[str], evictions: int) -> None:
    first = [job(f"a{i}", "one", at="10s", run_for=run) for i, run in enumerate(first_runs)]  # one 4-GPU node
    second = [job("big", "two", at="100s", run_for="10m"), job("small", "one", at="100s", run_for="5h")]
    text = manifest(CLASS, ONE, TWO, ec2_node_class("default"),
                    gpu_nodepool(["g6.12xlarge"], consolidate_after="1m"), *first, *second)
    sim = simulate_text(text, until="3h", launch_seconds=45.0)
    d = sim.result.disruptions
    assert d.pods_evicted == evictions and d.nodes_underutilized == evictions
    assert [c.decision for c in d.commands] == ["delete"] * evictions
    if evictions:
        [moved] = [c for c in changes(sim, "Pod", "default/small-") if c.type == "Scheduled"][1:]
        assert moved.message.endswith("gpu-00001-1")  # onto A, where a0's GPU was freed


@pytest.mark.parametrize(
    ("name", "user_catalog", "capacity_type", "usd_per_hour", "noted"),
    [
        # the packaged catalog has no spot prices: on-demand, and the run says why
        ("no spot prices", None, "on-demand", 0.8048, True),
        ("a user catalog with a spot price", "prices: {g6.xlarge: {spot: 0.31}}\n", "spot", 0.31, False),
    ],
)
def test_a_nodepool_that_allows_spot_launches_spot_where_the_catalog_prices_it(
        tmp_path: Path, name: str, user_catalog: str | None, capacity_type: str, usd_per_hour: float,
        noted: bool) -> None:
    pool = gpu_nodepool(["g6.xlarge"], consolidate_after="1m")
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]})
    catalog = None
    if user_catalog is not None:
        (tmp_path / "prices.yaml").write_text(user_catalog)
        catalog = load_catalog([tmp_path / "prices.yaml"])
    text = manifest(CLASS, ONE, ec2_node_class("default"), pool, job("a", "one", at="10s", run_for="1h"))
    sim = simulate_text(text, until="2h", launch_seconds=45.0, catalog=catalog)
    [cost] = sim.result.cost_by_instance_type
    assert (cost.instance_type, cost.capacity_type, cost.usd_per_hour) == ("g6.xlarge", capacity_type, usd_per_hour)
    # launched at 56 s, the pod ends at 3656 s, the empty node goes at 3735 s (1m, the next pass, 15 s)
    assert cost.usd == pytest.approx((3735 - 56) / 3600 * usd_per_hour, abs=1e-6)
    assert any("allows spot, but the catalog has no spot prices" in n for n in sim.result.notes) == noted


def test_underused_nodes_that_become_candidates_together_are_consolidated_by_one_multi_node_command() -> None:
    # three g6.12xlarge, each a 3-GPU pod and a 1-GPU pod; the 3-GPU pods all end at 856 s: three nodes with one
    # GPU taken. Two of them move onto the third (multi-node delete); all three onto one new node of the same
    # type is no saving (filterOutSameInstanceType)
    three = claim_template("three", gpu_request(device_class_name=GPU, count=3))
    jobs = []
    for i, (at, run) in enumerate([("10s", "800s"), ("100s", "710s"), ("200s", "610s")]):
        jobs += [job(f"big{i}", "three", at=at, run_for=run), job(f"small{i}", "one", at=at, run_for="3h")]
    text = manifest(CLASS, ONE, three, ec2_node_class("default"),
                    gpu_nodepool(["g6.12xlarge"], consolidate_after="1m", budgets=[{"nodes": "100%"}]), *jobs)
    sim = simulate_text(text, until="4h", launch_seconds=45.0)
    first = sim.result.disruptions.commands[0]
    # Consolidatable at 916 s, found at 920 s, validated 15 s later
    assert (first.at_seconds, first.method, first.decision, first.nodes, first.pods_evicted) == (
        935.0, "multi-node", "delete", ("gpu-00001-1", "gpu-00002-1"), 2)
    moved = [c for c in changes(sim, "Pod", "default/small") if c.type == "Scheduled" and c.time > 935.0]
    assert len(moved) == 2 and all(c.message.endswith("gpu-00003-1") for c in moved)
    assert sim.result.pods_succeeded == 6


def test_a_node_drifted_at_the_start_is_replaced_before_its_pods_are_evicted() -> None:
    # a g6.12xlarge launched by NodePool gpu, which now allows only g6.xlarge (RequirementsDrifted); its
    # consolidation is off, and drift goes on regardless
    text = manifest(CLASS, ONE, ec2_node_class("default"), gpu_nodepool(["g6.xlarge"], consolidate_after="Never"),
                    *karpenter_nodes("gpu", "g6.12xlarge"), job("long", "one", at="0s", run_for="3h"))
    sim = simulate_text(text, until="4h", launch_seconds=45.0)
    d = sim.result.disruptions
    [command] = d.commands
    # the first pass (0 s, before the scheduler's cycle) finds it empty: a drift delete, no longer valid at
    # 15 s (the pod is on it); the pass at 25 s finds the replace, validated at 40 s; Ready 45 s later
    assert d.commands_invalidated == 1
    assert (command.at_seconds, command.reason, command.method, command.decision, command.replacements) == (
        40.0, "Drifted", "drift", "replace", ("g6.xlarge",))
    assert command.drained_at_seconds == 85.0 and d.nodes_drifted == 1 and d.pods_evicted == 1
    [moved] = [c for c in changes(sim, "Pod", "default/long-") if c.type == "Scheduled"][1:]
    assert moved.time == 95.0 and moved.message.endswith("gpu-00001-1")
    assert sim.result.pods_succeeded == 1

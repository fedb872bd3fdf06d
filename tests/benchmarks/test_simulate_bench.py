"""The engine and simulate benchmarks run once on small inputs and report what they measure."""

from __future__ import annotations

import sys

import pytest

from dratwin.benchmarks import engine_bench, simulate_bench
from dratwin.benchmarks.runner import collect, resolve
from dratwin.sim.run import simulate


def test_engine_and_simulate_benchmarks_are_registered() -> None:
    assert {"engine", "simulate"} <= set(resolve(None))


def test_both_loops_run_the_same_number_of_events() -> None:
    assert engine_bench.run_engine(5_000) == engine_bench.run_simpy(5_000) == 5_000 + engine_bench.TIMERS - 1


def test_without_simpy_only_the_engine_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_bench, "EVENTS", 2_000)
    monkeypatch.setattr(engine_bench, "REPEATS", 1)
    monkeypatch.setitem(sys.modules, "simpy", None)
    results = engine_bench.run()
    assert [r.name for r in results] == ["engine.heapq_us_per_event", "engine.simpy_us_per_event"]
    assert "not installed" in results[1].detail


def test_the_week_shape_has_its_fleet_and_jobs() -> None:
    spec = simulate_bench.week_spec(nodes=4, jobs=30, until=86400.0)
    kinds = [o.kind for o in spec.objects]
    assert kinds.count("Node") == kinds.count("ResourceSlice") == 4
    assert len(spec.arrivals) == 30 and all(a.run_seconds and a.run_seconds >= 600 for a in spec.arrivals)
    result = simulate(spec).result
    assert result.pods_created == 30 and result.pods_started > 0


def test_the_month_shape_mixes_node_types_and_its_backlog_queues() -> None:
    spec = simulate_bench.month_spec(nodes=20, pods=200, until=2 * 86400.0)
    types = [o.raw["metadata"]["labels"]["node.kubernetes.io/instance-type"] for o in spec.objects if o.kind == "Node"]
    assert (types.count("p5.48xlarge"), types.count("g6e.12xlarge"), types.count("g6e.2xlarge")) == (8, 8, 4)
    within, in_all = simulate_bench.month_offered_load(spec, 20)
    assert 0 < within <= in_all
    result = simulate(spec).result
    assert result.pods_started > 0 and result.scheduling_attempts > result.pods_started  # some pods waited


def test_the_karpenter_shape_starts_empty_and_its_nodepool_can_turn_consolidation_off() -> None:
    spec = simulate_bench.karpenter_spec(jobs=20, hours=2)
    assert spec.provisioner == "karpenter"
    assert not [o for o in spec.objects if o.kind == "Node"]
    assert len(spec.arrivals) == 20 and all(a.at_seconds <= 0.75 * 2 * 3600 for a in spec.arrivals)
    [pool] = [o.raw for o in simulate_bench.karpenter_spec(consolidate_after="Never").objects if o.kind == "NodePool"]
    assert pool["spec"]["disruption"] == {"consolidateAfter": "Never"}


def test_the_disruption_benchmark_reports_its_run_beside_the_run_without_consolidation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(simulate_bench, "KARPENTER_JOBS", 20)
    monkeypatch.setattr(simulate_bench, "KARPENTER_HOURS", 2)
    monkeypatch.setattr(simulate_bench, "KARPENTER_REPEATS", 1)
    results = {r.name: r for r in simulate_bench._karpenter_disruption()}
    assert list(results) == ["simulate.karpenter_disruption_12h", "simulate.karpenter_disruption_12h.cpu",
                             "simulate.karpenter_disruption_12h.events_per_s",
                             "simulate.karpenter_disruption_12h.off.cpu",
                             "simulate.karpenter_disruption_12h.cpu_ratio"]
    ratio = results["simulate.karpenter_disruption_12h.cpu_ratio"]
    assert ratio.value == pytest.approx(results["simulate.karpenter_disruption_12h.cpu"].value
                                        / results["simulate.karpenter_disruption_12h.off.cpu"].value)
    assert ratio.target == simulate_bench.DISRUPTION_TARGET_RATIO
    assert "commands" in results["simulate.karpenter_disruption_12h"].detail


def test_skip_month_leaves_the_month_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick simulate benchmarks run alone: the month is not even started."""
    ran: list[str] = []
    for part in ("_jobs_only", "_jobs_and_service", "_karpenter_disruption", "_month"):
        monkeypatch.setattr(simulate_bench, part, lambda part=part: ran.append(part) or [])
    collect(["simulate"], skip_month=True)
    assert ran == ["_jobs_only", "_jobs_and_service", "_karpenter_disruption"]
    collect(["simulate"])
    assert ran[-1] == "_month"

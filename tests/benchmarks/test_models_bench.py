"""The model benchmarks run once, quickly, on a fleet that serves traffic."""

from __future__ import annotations

from dratwin.benchmarks import models_bench


def test_each_model_benchmark_runs_once() -> None:
    results = models_bench.run(repeats=1, min_repeat_s=0.0)
    assert [r.name for r in results] == [
        "models.serving_interval_1000",
        "models.serving_snapshot_1000",
        "models.hpa_reconcile_50",
        "models.cold_start",
    ]
    assert all(r.unit == "µs" and r.value > 0 for r in results)


def test_the_benchmark_fleet_serves_every_service() -> None:
    model, replicas = models_bench.fleet()
    snapshot = model.snapshot(3600, replicas)
    assert len(snapshot.replicas) == models_bench.FLEET
    assert all(s.served_rps > 0 and s.ready_replicas > 0 for s in snapshot.services)

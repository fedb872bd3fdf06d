"""Kueue's ``tas`` shape through the controller (benchmarks/kueue_tas_bench.py): a cut copy runs to its end,
every gang admitted with a topology assignment of its rack-level request.

Kueue at ff69552: test/performance/scheduler/configs/tas (generator.yaml: 640 nodes, 10 racks; gangs of 2, 4
and 8 pods asking for a rack), site/content/en/docs/concepts/topology_aware_scheduling.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from dratwin.benchmarks import kueue_bench, kueue_shapes, kueue_tas_bench
from dratwin.benchmarks.kueue_bench import Run
from dratwin.benchmarks.kueue_shapes import TAS
from dratwin.kueue.equivalence import REQUEUE_BATCH_SECONDS
from dratwin.sim.kueue import KueueController


def test_a_small_tas_shape_admits_and_finishes_every_gang() -> None:
    shape = kueue_shapes.scaled(TAS, cohorts=1, queues=2, workloads=0.02)
    run = kueue_bench.run_shape(shape)
    assert len(run.workloads) == shape.workload_count
    assert all(r.admitted is not None and r.finished is not None for r in run.workloads.values())
    assert run.figures().usage_pct["cq"] > 0


def test_the_bench_reports_every_class_of_the_shape() -> None:
    names = [r.name for r in kueue_tas_bench.run(0.01)]
    assert names[0] == "kueue.tas-scaled.wall_s"
    assert {f"kueue.tas-scaled.admission.{c}" for c in TAS.published.time_to_admission_ms} <= set(names)
    assert "kueue.tas-scaled.not_admitted" not in names


def _run_keeping_the_controller(monkeypatch: pytest.MonkeyPatch, batch: float) -> tuple[Run, KueueController]:
    made: list[KueueController] = []

    def controller(*args: Any, **kwargs: Any) -> KueueController:
        made.append(KueueController(*args, **{**kwargs, "requeue_batch_seconds": batch}))
        return made[-1]

    monkeypatch.setattr(kueue_bench, "KueueController", controller)
    run = kueue_bench.run_shape(kueue_shapes.scaled(TAS, cohorts=1, queues=6, workloads=0.1))
    return run, made[0]


def test_the_tas_shape_s_usage_is_set_by_the_requeue_batch_not_by_the_topology(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the shape's ClusterQueue usage reads below Kueue's (bench/RESULTS.md): each finished gang's pods
    leave their domains (nothing stays booked in the TAS cache), and the idle quota is the 1 s batch of the
    inadmissible Workloads' requeue, which Kueue has too: without it the quota is almost always in use."""
    run, kueue = _run_keeping_the_controller(monkeypatch, REQUEUE_BATCH_SECONDS)
    cache = kueue.tas._cache
    assert cache is not None and not kueue.tas._stale  # built once, kept by booking and unbooking
    assert all(not any(u.values()) for f in cache.flavors.values() for u in f.tas_usage.values())
    assert all(node.usage.get(("tas-flavor", "cpu"), 0) == 0 for node in kueue.tree.nodes.values())
    batched = run.figures().usage_pct["cq"]
    unbatched = _run_keeping_the_controller(monkeypatch, 0.0)[0].figures().usage_pct["cq"]
    assert batched < 60 < 90 < unbatched

"""Kueue's ``tas`` shape through the controller (benchmarks/kueue_tas_bench.py): a cut copy runs to its end,
every gang admitted with a topology assignment of its rack-level request.

Kueue at ff69552: test/performance/scheduler/configs/tas (generator.yaml: 640 nodes, 10 racks; gangs of 2, 4
and 8 pods asking for a rack), site/content/en/docs/concepts/topology_aware_scheduling.md.
"""

from __future__ import annotations

from dratwin.benchmarks import kueue_bench, kueue_shapes, kueue_tas_bench
from dratwin.benchmarks.kueue_shapes import TAS


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

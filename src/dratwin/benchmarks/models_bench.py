"""Benchmarks of the pure models a simulation calls at every tick: load, autoscaling, cold start.

- ``models.serving_interval_1000``: :meth:`ServingModel.interval` over 60 s of a rising rate for 1,000
  ready replicas of 10 services (a third whole GPUs, a third 3g MIG slices, a third time-sliced four to a
  GPU), the same replica tuple each call (as while the placement does not change).
- ``models.serving_snapshot_1000``: :meth:`ServingModel.snapshot` (per-replica DCGM and CPU values) of the
  same fleet.
- ``models.hpa_reconcile_50``: one HPA sync over 50 pods' samples of a Pods metric.
- ``models.cold_start``: :meth:`ColdStartModel.start` for pods arriving one per second over 1,000 nodes
  and 5 images (parallel pulls).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from dratwin.autoscaling import HorizontalPodAutoscaler, HpaConfig, MetricSpec, PodSample
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.runner import DEFAULT_MIN_REPEAT_S, DEFAULT_REPEATS, Timing, result_us, time_per_call
from dratwin.coldstart import ColdStartModel, ColdStartSettings
from dratwin.scenario.model import RatePoint, ServiceSpec
from dratwin.serving import Replica, ServingModel

FLEET = 1000
SERVICES = 10


def fleet() -> tuple[ServingModel, tuple[Replica, ...]]:
    specs = [ServiceSpec(f"s{i}", (RatePoint(0, 10), RatePoint(86_400, 500)), 20.0) for i in range(SERVICES)]
    replicas: list[Replica] = []
    for i in range(FLEET):
        service = f"s{i % SERVICES}"
        if i % 3 == 0:
            replicas.append(Replica(f"r{i}", service, f"gpu-{i}"))
        elif i % 3 == 1:
            replicas.append(Replica(f"r{i}", service, f"mig-{i}", "mig", 3 / 7))
        else:
            replicas.append(Replica(f"r{i}", service, f"shared-{i // 12}", "time-sliced"))
    return ServingModel.from_specs(specs), tuple(replicas)


def run(*, repeats: int = DEFAULT_REPEATS, min_repeat_s: float = DEFAULT_MIN_REPEAT_S) -> list[BenchResult]:
    def timed(fn: Callable[[], object]) -> Timing:
        return time_per_call(fn, repeats=repeats, min_repeat_s=min_repeat_s)

    model, replicas = fleet()
    minutes = itertools.count()

    def interval() -> object:
        start = next(minutes) * 60.0
        return model.interval(start, start + 60.0, replicas)

    hpa = HorizontalPodAutoscaler(HpaConfig(MetricSpec("Pods", 60, cpu=False), 1, 100))
    pods = [PodSample(f"p{i}", 70.0 + i % 5) for i in range(50)]
    cold = ColdStartModel(
        ColdStartSettings(
            default_image_bytes=10**10,
            node_image_bandwidth=2e8,
            model_bytes={"ml/llm": 16 * 10**9},
            object_storage_bandwidth=1.25e9,
            gpu_load_bandwidth=3e10,
        )
    )
    arrivals = itertools.count()

    def start() -> object:
        k = next(arrivals)
        return cold.start(f"p{k}", f"image-{k % 5}", "ml/llm", f"n{k % FLEET}", float(k))

    shape = f"{FLEET} replicas of {SERVICES} services: whole GPUs, 3g slices, time-sliced GPUs"
    return [
        result_us("models.serving_interval_1000", timed(interval), detail=f"60 s; {shape}"),
        result_us(
            "models.serving_snapshot_1000", timed(lambda: model.snapshot(next(minutes) * 60.0, replicas)), detail=shape
        ),
        result_us(
            "models.hpa_reconcile_50",
            timed(lambda: hpa.reconcile(next(minutes) * 15.0, 50, pods=pods)),
            detail="Pods metric, 50 pods",
        ),
        result_us("models.cold_start", timed(start), detail=f"one pod per second over {FLEET} nodes, 5 images"),
    ]

"""Seeded runs with inference services, and what of their outcome is pinned.

Each case is a small run whose services' outcomes (requests, served, SLO misses, means, replica counts, scale
events, every utilization sample) are kept as a golden file (tests/golden/simulate/services/): a change to
how the services controller or the serving model computes must leave them as they are, or say why not.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import msgspec
from tests.builders.autoscaling import autoscaler
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node, resource_claim
from tests.builders.sim import deployment, inference, mig_slice, shared_deployment, simulate_text, template

from dratwin.benchmarks.simulate_bench import week_spec, with_service
from dratwin.catalog import load_catalog
from dratwin.scenario.model import RatePoint
from dratwin.sim.run import SimOptions, Simulation, simulate

Raw = dict[str, Any]
HOUR = 3600.0


def bench_shape() -> Simulation:
    """The service benchmark's shape, small: ml/serve (HPA on GPU util, cold starts) beside seeded Jobs on 6
    nodes of 8 GPUs, under a curve that rises past what the free GPUs hold, falls and rises again."""
    spec = with_service(week_spec(seed=2, nodes=6, jobs=40, until=4 * HOUR))
    curve = ((0.0, 50.0), (HOUR, 380.0), (2 * HOUR, 60.0), (3 * HOUR, 300.0), (4 * HOUR, 40.0))
    rate = tuple(RatePoint(t, r) for t, r in curve)
    services = tuple(dataclasses.replace(s, rate=rate) for s in spec.services)
    return simulate(dataclasses.replace(spec, services=services),
                    SimOptions(catalog=load_catalog(), keep_utilization=True))


def _with_cpu(raw: Raw, cpu: str) -> Raw:
    raw["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": cpu}
    return raw


def shared_and_mig() -> Simulation:
    """KEDA (down to zero) and a CPU HPA competing for 3 whole GPUs and 2 MIG slices; two plain services
    time-sliced on one shared GPU."""
    cluster = [gpu_class(), node("n1", cpu="64"), gpu_slice("n1", 3), node("n2", cpu="64"),
               mig_slice("n2", "3g.40gb", 2), template("one", 1),
               resource_claim("shared", {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}})]
    workloads = [deployment("keda", "one", 1), shared_deployment("plain", "shared", 2),
                 shared_deployment("side", "shared", 1), _with_cpu(deployment("cpu", "one", 1), "2")]
    services = [
        inference("keda", (0.0, 4.0), (1200.0, 25.0), (2400.0, 0.0), (3600.0, 0.0), (4200.0, 9.0),
                  autoscaler=autoscaler("keda", target=60, min_replicas=0, max_replicas=3)),
        inference("plain", (0.0, 3.0), (3600.0, 6.0)),
        inference("side", (0.0, 1.0), (1800.0, 5.0), (3600.0, 2.0)),
        inference("cpu", (0.0, 5.0), (1800.0, 40.0), (3600.0, 8.0), (5400.0, 30.0),
                  autoscaler=autoscaler(metric="cpu", target=50, min_replicas=1, max_replicas=5)),
    ]
    return simulate_text(manifest(*cluster, *workloads), until="2h", seed=5, check=False, events=False,
                         services=services)


def keda_on_gpus() -> Simulation:
    """KEDA on whole GPUs, to zero and back (activation on the request rate, the option)."""
    cluster = [gpu_class(), node("n1", cpu="64"), gpu_slice("n1", 4), template("one", 1)]
    service = inference("keda", (0.0, 4.0), (1200.0, 30.0), (2400.0, 0.0), (3600.0, 0.0), (4200.0, 20.0),
                        autoscaler=autoscaler("keda", target=60, min_replicas=0, max_replicas=4))
    return simulate_text(manifest(*cluster, deployment("keda", "one", 1)), until="2h", seed=7, check=False,
                         events=False, services=[service], keda_on_rate=True)


CASES: dict[str, Callable[[], Simulation]] = {"bench-shape": bench_shape, "shared-and-mig": shared_and_mig,
                                               "keda-on-gpus": keda_on_gpus}


def pinned(sim: Simulation) -> Raw:
    """The run's service outcomes as plain data: everything, the utilization samples as their count, a digest
    of all of them, and the first and last few (to read)."""
    result = sim.result
    services = []
    for outcome in result.services:
        raw = msgspec.to_builtins(outcome)
        samples = raw.pop("utilization")
        digest = hashlib.sha256(msgspec.json.encode(samples)).hexdigest()
        raw["utilization"] = {"samples": len(samples), "sha256": digest, "first": samples[:3], "last": samples[-3:]}
        services.append(raw)
    return {"events": result.events, "scheduling_attempts": result.scheduling_attempts,
            "pods_created": result.pods_created, "services": services}

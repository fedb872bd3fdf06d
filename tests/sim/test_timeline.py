"""The sampler behind ``--report`` and ``--metrics``: the cluster every few simulated minutes, without
changing the run."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node
from tests.builders.sim import job, template

from dratwin.api.loader import load_text
from dratwin.catalog import load_catalog
from dratwin.sim.quick_scenario import parse_duration, run_spec
from dratwin.sim.run import SimOptions, Simulation, simulate
from dratwin.sim.timeline import Timeline

CLUSTER = [gpu_class(), node("n1", labels={"node.kubernetes.io/instance-type": "p5.48xlarge"}), gpu_slice("n1", 2),
           template("one"), template("three", gpus=3)]
ONE_JOB = manifest(*CLUSTER, job("a", "one", at="10s", run_for="10m"))


def run(text: str, until: str = "30m", every: float | None = 300.0) -> Simulation:
    spec = run_spec(load_text(text, "cluster.yaml"), name="cluster.yaml", seed=0, until_seconds=parse_duration(until))
    return simulate(spec, SimOptions(catalog=load_catalog(), sample_every=every, check_invariants=True))


def timeline(sim: Simulation) -> Timeline:
    assert sim.timeline is not None
    return sim.timeline


def test_sampling_changes_nothing_in_the_run_but_adds_what_only_samples_measure() -> None:
    sampled = run(ONE_JOB).result
    assert sampled.fragmentation is not None
    assert dataclasses.replace(sampled, fragmentation=None) == run(ONE_JOB, every=None).result
    assert run(ONE_JOB, every=None).timeline is None


def test_samples_are_taken_at_every_interval_from_start_to_end_inclusive() -> None:
    assert timeline(run(ONE_JOB, until="30m")).times == [0.0, 300.0, 600.0, 900.0, 1200.0, 1500.0, 1800.0]


@dataclass(frozen=True)
class Series:
    name: str
    expected: list[float]


# The job arrives at 10 s, holds one of the two GPUs for 10 minutes once started, then succeeds.
SERIES = [
    Series("allocated_gpus", [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
    Series("capacity_gpus", [2.0] * 7),
    Series("running_pods", [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
    Series("pending_pods", [0.0] * 7),
    Series("nodes", [1.0] * 7),
]


@pytest.mark.parametrize("series", SERIES, ids=[s.name for s in SERIES])
def test_a_job_on_a_two_gpu_node_over_half_an_hour(series: Series) -> None:
    assert getattr(timeline(run(ONE_JOB)), series.name) == series.expected


def test_the_per_node_share_and_per_device_allocation_follow_the_claim() -> None:
    sampled = timeline(run(ONE_JOB))
    assert sampled.node_allocated_share == {"n1": [0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]}
    assert sorted(sampled.devices) == ["gpu.example.com/n1/gpu-0", "gpu.example.com/n1/gpu-1"]
    assert sum(v or 0.0 for values in sampled.device_allocated.values() for v in values) == 2.0
    assert {info.hostname for info in sampled.devices.values()} == {"n1"}
    held = [pods for pods in sampled.device_pod.values() if any(pods)]
    assert len(held) == 1  # one GPU, held by the job's pod while it runs
    [pods] = held
    assert pods[0] == "" and pods[3:] == [""] * 4
    assert pods[1] == pods[2] and pods[1] is not None and pods[1].startswith("default/a-")


def test_the_cost_so_far_grows_to_the_runs_cost() -> None:
    sim = run(ONE_JOB)
    cost = timeline(sim).cost_usd
    assert cost == sorted(cost) and cost[0] == 0.0
    assert cost[-1] == pytest.approx(sim.result.cost_usd) and sim.result.cost_usd > 0


def test_a_pod_that_cannot_fit_is_pending_with_the_schedulers_reason() -> None:
    sampled = timeline(run(manifest(*CLUSTER, job("big", "three", at="10s"))))
    assert sampled.pending_pods[1:] == [1.0] * 6
    [(reason, pods)] = sampled.wait_reasons.items()
    assert "0/1 nodes are available" in reason
    assert [pod.split("/")[1].startswith("big-") for pod in pods] == [True]


def test_latency_samples_are_the_runs_own() -> None:
    sim = run(ONE_JOB)
    assert len(timeline(sim).waiting_seconds) == sim.result.waiting_seconds.count == 1
    assert len(timeline(sim).startup_seconds) == sim.result.startup_seconds.count == 1

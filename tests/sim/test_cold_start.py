"""Cold start in the simulation: the kubelet waits for the image, the pod is Ready after weights, GPU load
and warm-up; the node's image cache and the cluster's model cache (LADF)."""

from __future__ import annotations

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node
from tests.builders.sim import bound_at, deployment, inference, job, simulate_text, template, times

from dratwin.scenario.model import ColdStartSpec

GB = 10**9
CLUSTER = [gpu_class(), node("n1"), gpu_slice("n1", 8), template("one", 1)]


def cold(**changes: object) -> ColdStartSpec:
    """busybox: 2 GB at 0.2 GB/s (10 s); 16 GB of weights for default/a and default/svc from object storage at
    1.6 GB/s (10 s) or from the cluster cache at 3.2 GB/s (5 s); into the GPU at 16 GB/s (1 s); 30 s warm-up."""
    values: dict[str, object] = {
        "image_bytes": {"busybox": 2 * GB}, "node_image_bandwidth": 0.2 * GB,
        "model_bytes": {"default/a": 16 * GB, "default/svc": 16 * GB}, "object_storage_bandwidth": 1.6 * GB,
        "cluster_cache_bandwidth": 3.2 * GB, "gpu_load_bandwidth": 16 * GB, "warm_up_seconds": 30.0,
    }
    values.update(changes)
    return ColdStartSpec(**values)  # type: ignore[arg-type]


def test_cold_start_delays_running_by_the_image_pull_and_ready_by_the_rest() -> None:
    sim = simulate_text(manifest(*CLUSTER, job("a", "one", run_for="10m")), until="1h", cold_start_spec=cold())
    assert bound_at(sim, "default/a-") == [0.0]
    assert sim.result.startup_seconds.max == 10.0  # bound -> containers running: the pull
    summary = sim.result.cold_start
    assert summary is not None
    assert (summary.image_pull_seconds.max, summary.weights_seconds.max, summary.gpu_load_seconds.max,
            summary.warm_up_seconds.max, summary.total_seconds.max) == (10.0, 10.0, 1.0, 30.0, 51.0)
    assert times(sim, "Deleted", "Pod", "default/a-") == [610.0]  # runs 10 min from its containers' start


def test_the_second_pod_on_a_node_finds_the_image_cached() -> None:
    text = manifest(*CLUSTER, job("a", "one", run_for="10m"), job("b", "one", at="1m", run_for="10m"))
    sim = simulate_text(text, until="1h", cold_start_spec=cold())
    summary = sim.result.cold_start
    assert summary is not None and summary.image_cache_hits == 1
    assert sim.result.startup_seconds.max == 10.0 and sim.result.startup_seconds.p50 == 0.0


def test_a_pod_becomes_ready_after_warm_up_and_only_then_serves() -> None:
    sim = simulate_text(manifest(*CLUSTER, deployment("svc", "one", 1)), until="2m", cold_start_spec=cold(),
                        services=[inference("svc", (0.0, 5.0))])
    result = sim.result.services[0]
    # Ready at 51 s: the 5/s before are all missed.
    assert result.slo_misses == pytest.approx(5 * 51)
    assert [(c.at_seconds, c.ready) for c in result.replicas_over_time] == [(15.0, 0), (60.0, 1)]


@pytest.mark.parametrize(
    ("name", "cluster_cache", "created", "weights"),
    [
        # LADF: the first ask starts the model's download (10 s); both pods are created when it is cached
        # and read it from the cache (5 s)
        ("with the cluster cache: created when cached", True, [10.0, 10.0], 5.0),
        ("without: created at once, each downloads", False, [0.0, 0.0], 10.0),
    ],
)
def test_ladf_creates_pods_when_their_model_is_cached(name: str, cluster_cache: bool, created: list[float],
                                                      weights: float) -> None:
    text = manifest(*CLUSTER, job("a", "one", completions=2, parallelism=2, run_for="10m"))
    sim = simulate_text(text, until="1h", cold_start_spec=cold(cluster_cache=cluster_cache))
    assert times(sim, "Added", "Pod", "default/a-") == created
    summary = sim.result.cold_start
    assert summary is not None and summary.weights_seconds.max == weights


def test_a_parallel_pull_on_the_node_delays_the_pod_already_pulling() -> None:
    # a pulls 2 GB alone for 2 s (0.4 GB), then shares the node's 0.2 GB/s with b's 1 GB image: b is done at
    # 12 s (1 GB at 0.1 GB/s), a has 0.6 GB left at the full rate: 15 s instead of the 10 s first answered.
    other = job("b", "one", at="2s", run_for="10m")
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    text = manifest(*CLUSTER, job("a", "one", run_for="10m"), other)
    sim = simulate_text(text, until="1h", cold_start_spec=cold(image_bytes={"busybox": 2 * GB, "other": 1 * GB}))
    started = {c.key.split("-")[0]: c.time for c in sim.events if c.type == "Started"}
    assert started == {"default/a": pytest.approx(15.0), "default/b": pytest.approx(12.0)}
    assert times(sim, "Deleted", "Pod", "default/a-") == [pytest.approx(615.0)]

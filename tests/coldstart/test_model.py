"""A pod's cold start: image pull with the node's image cache, weights from object storage or the cluster
cache (LADF), loading into GPU memory, warm-up.

Sources: the kubelet's image pulling (kubernetes.io/docs/concepts/containers/images/: an image present on
the node is not pulled again with IfNotPresent; ``serializeImagePulls`` in the KubeletConfiguration
reference, true by default; false in the EKS AMIs' nodeadm kubelet config), and the issue's description of
the LADF pattern (a pod is created once its model data is cached, the cache filled by one download per
model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from tests.builders.coldstart import GB, IMAGE, MODEL, cold_start_model

from dratwin.coldstart import ColdStart, ColdStartModel, suggested_bandwidths
from dratwin.scenario.model import ColdStartSpec


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[ColdStartModel], ColdStart]
    pull: float
    weights: float
    ready_at: float
    image_cached: bool = False


def _second(first_node: str, second_node: str, second_at: float) -> Callable[[ColdStartModel], ColdStart]:
    def run(model: ColdStartModel) -> ColdStart:
        model.start("a", IMAGE, MODEL, first_node, 0)
        return model.start("b", IMAGE, MODEL, second_node, second_at).cold_start

    return run


CASES = [
    # The four steps: 10 s pull, 10 s of weights from S3, 1 s into the GPU, 30 s warm-up.
    Case("four-steps", lambda m: m.start("a", IMAGE, MODEL, "n1", 0).cold_start, 10, 10, 51),
    # The image is on the node: no pull.
    Case("image-cache-hit", _second("n1", "n1", 100), 0, 10, 141, image_cached=True),
    # Another node has its own cache: it pulls.
    Case("other-node-pulls", _second("n1", "n2", 100), 10, 10, 151),
    # A pull in flight is joined, not repeated: the second pod's containers start with the first's.
    Case("joins-pull-in-flight", _second("n1", "n1", 4), 6, 10, 51, image_cached=True),
    # An image the scenario does not size takes the default size (1 GB: 5 s).
    Case("default-image-size", lambda m: m.start("a", "busybox", "none", "n1", 0).cold_start, 5, 0, 35),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cold_start(case: Case) -> None:
    start = case.run(cold_start_model())
    assert (start.image_pull_seconds, start.weights_seconds, start.ready_at) == pytest.approx(
        (case.pull, case.weights, case.ready_at)
    )
    assert start.image_cached is case.image_cached
    if start.weights_seconds:
        assert start.gpu_load_seconds == pytest.approx(1)


def test_parallel_pulls_share_the_node_bandwidth() -> None:
    # Two 2 GB images on one node, the second asked at 5 s: the first has 1 GB left and both then run at
    # 0.1 GB/s; the first ends at 15 s (its pod's plan is revised), the second at 15 + 1 GB / 0.2 GB/s = 20 s.
    model = cold_start_model(image_bytes={"a": 2 * GB, "b": 2 * GB})
    first = model.start("pa", "a", "none", "n1", 0)
    assert first.cold_start.containers_started_at == pytest.approx(10)
    second = model.start("pb", "b", "none", "n1", 5)
    assert second.cold_start.containers_started_at == pytest.approx(20)
    (revised,) = second.delayed
    assert (revised.pod, revised.containers_started_at) == ("pa", pytest.approx(15))


def test_serialized_pulls_queue() -> None:
    # serializeImagePulls: true (the kubelet's default): the second pull starts when the first ends.
    model = cold_start_model(image_bytes={"a": 2 * GB, "b": 2 * GB}, serialize_image_pulls=True)
    model.start("pa", "a", "none", "n1", 0)
    second = model.start("pb", "b", "none", "n1", 5)
    assert second.cold_start.containers_started_at == pytest.approx(20)
    assert second.delayed == ()


def test_ladf_waits_for_the_cache() -> None:
    # The cache is filled by one download per model (16 GB at 1.6 GB/s: 10 s); a pod is created when its
    # model is cached, and then reads it from the cache (5 s) instead of from S3 (10 s).
    model = cold_start_model(cluster_cache=True)
    assert model.model_cached_at(MODEL, 0) == pytest.approx(10)
    assert not model.is_model_cached(MODEL, 9)
    assert model.model_cached_at(MODEL, 3) == pytest.approx(10)  # the same download, not a second one
    start = model.start("a", IMAGE, MODEL, "n1", 10).cold_start
    assert (start.weights_source, start.weights_seconds, start.ready_at) == ("cluster-cache", pytest.approx(5), 56)
    # A pod of the same model on another node later: no download, only the cache read.
    later = model.start("b", IMAGE, MODEL, "n2", 100).cold_start
    assert later.weights_seconds == pytest.approx(5)


def test_cache_fill_started_by_an_early_pod_is_waited_for() -> None:
    # A pod started before anyone asked for its model starts the download when its containers start (10 s)
    # and waits for it (until 20 s) before reading from the cache.
    start = cold_start_model(cluster_cache=True).start("a", IMAGE, MODEL, "n1", 0).cold_start
    assert start.weights_seconds == pytest.approx(10 + 5)


def test_zero_bandwidths_take_no_time() -> None:
    # ColdStartSpec's defaults: every step is instant.
    model = ColdStartModel.from_spec(ColdStartSpec(image_bytes={IMAGE: 2 * GB}, model_bytes={MODEL: 16 * GB}))
    assert model.start("a", IMAGE, MODEL, "n1", 7).cold_start.ready_at == 7


def test_a_node_that_goes_takes_its_cache_with_it() -> None:
    model = cold_start_model()
    model.start("a", IMAGE, MODEL, "n1", 0)
    model.forget_node("n1")
    assert model.start("b", IMAGE, MODEL, "n1", 100).cold_start.image_pull_seconds == pytest.approx(10)


def test_node_bandwidth_override() -> None:
    start = cold_start_model().start("a", IMAGE, MODEL, "n1", 0, node_bandwidth=1 * GB).cold_start
    assert start.image_pull_seconds == pytest.approx(2)


SUGGESTED = [
    # g6.xlarge: 2.5 Gb/s baseline caps S3 at 0.3125 GB/s; an L4 loads over PCIe Gen4 at half of 31.5 GB/s.
    ("g6.xlarge", 2.5, "NVIDIA L4", 0.2e9, 0.3125e9, 15.75e9),
    # p5.48xlarge: 3200 Gb/s caps nothing; an H100 loads over Gen5 at half of 63 GB/s.
    ("p5.48xlarge", 3200, "NVIDIA H100 80GB HBM3", 0.2e9, 1.25e9, 31.5e9),
]


@pytest.mark.parametrize(
    ("gbps", "gpu", "image", "s3", "load"), [c[1:] for c in SUGGESTED], ids=[c[0] for c in SUGGESTED]
)
def test_suggested_bandwidths(gbps: float, gpu: str, image: float, s3: float, load: float) -> None:
    found = suggested_bandwidths(gbps, gpu)
    assert (found.image_pull, found.object_storage, found.gpu_load) == pytest.approx((image, s3, load))

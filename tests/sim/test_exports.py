"""Run outputs into the report's and the metrics' models: what each figure of the page is made of."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from tests.builders.simulate_cli import small_scenario

from dratwin import scenario
from dratwin.report import build_figures
from dratwin.sim.batch import BatchRequest, RunOutput, run_all
from dratwin.sim.compare import compare
from dratwin.sim.exports import MissingTimeline, metrics_sets, report_data
from dratwin.sim.outcomes import ServiceOutcome


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[RunOutput]:
    path = small_scenario(Path(tmp_path_factory.mktemp("exports")))
    runs = scenario.load(path)[1]
    return run_all(BatchRequest(path, None, None, sample_every=300.0), runs, jobs=1)


def test_the_report_has_each_variant_once_in_the_files_order(outputs: list[RunOutput]) -> None:
    data = report_data("small", outputs)
    assert [v.name for v in data.variants] == ["dra", "device-plugin"]
    assert data.seed == 7 and data.duration_s == 43200.0
    assert len(build_figures(data)) > 0


def test_gpu_hours_and_cost_are_the_comparisons_means(outputs: list[RunOutput]) -> None:
    means = {s.variant: s for s in compare([o.result for o in outputs])}
    for variant in report_data("small", outputs).variants:
        assert variant.summary.gpu_hours_allocated == means[variant.name].gpu_hours_allocated
        assert variant.summary.gpu_hours_idle == means[variant.name].gpu_hours_idle
        assert variant.summary.cost_dollars == means[variant.name].cost_usd
        assert variant.summary.gpu_hours_used == means[variant.name].gpu_hours_used > 0
        assert variant.summary.pods_never_placed == means[variant.name].pods_never_placed


def test_the_variants_count_their_gpus_on_the_same_footing(outputs: list[RunOutput]) -> None:
    """Two p5.48xlarge nodes of 8 GPUs for 12 hours, whether the device plugin or DRA hands them out."""
    for output in outputs:
        result = output.result
        assert result.gpu_hours_allocated + result.gpu_hours_idle == pytest.approx(2 * 8 * 12, abs=1e-4)
        assert 0 < result.gpu_hours_used <= result.gpu_hours_allocated


def test_the_page_says_which_numbers_are_means_over_which_seeds(outputs: list[RunOutput]) -> None:
    for variant in report_data("small", outputs).variants:
        assert variant.description.startswith("Summary numbers: means over seeds 7-8 (2 runs)")
        assert "seed 7." in variant.description


def test_slo_misses_are_the_means_over_the_seeds_as_in_the_table(outputs: list[RunOutput]) -> None:
    first = outputs[0]
    missed = dataclasses.replace(first.result, services=[
        ServiceOutcome("ml/serve", "hpa", "DCGM_FI_DEV_GPU_UTIL", requests=100.0, served=60.4, slo_misses=39.6),
        ServiceOutcome("ml/chat", "keda", "DCGM_FI_DEV_GPU_UTIL", requests=10.0, served=9.0, slo_misses=1.0),
    ])
    data = report_data("small", [RunOutput(missed, first.timeline), *outputs[1:]])
    assert data.variants[0].summary.slo_misses == pytest.approx(20.3)  # 39.6 + 1.0 in seed 7, none in seed 8
    assert report_data("small", outputs).variants[0].summary.slo_misses == 0  # the small scenario has no service


def test_series_and_latencies_are_the_first_seeds(outputs: list[RunOutput]) -> None:
    first = outputs[0]
    assert first.timeline is not None and first.result.seed == 7
    dra = report_data("small", outputs).variants[0]
    assert dra.allocated_gpus.values == tuple(first.timeline.allocated_gpus)
    assert dra.used_gpus.values == tuple(first.timeline.used_gpus)
    assert all(u <= a + 1e-9 for u, a in zip(dra.used_gpus.values, dra.allocated_gpus.values, strict=True))
    assert dra.cost_dollars.values[-1] == pytest.approx(first.result.cost_usd)
    assert len(dra.waiting_s) == first.result.waiting_seconds.count


def test_the_heatmap_covers_the_gpu_nodes_of_both_gpu_managers(outputs: list[RunOutput]) -> None:
    for variant in report_data("small", outputs).variants:
        assert variant.node_utilization is not None and len(variant.node_utilization.nodes) == 2
        assert all(0.0 <= v <= 1.0 for row in variant.node_utilization.values for v in row if v is not None)


def test_wait_reasons_are_the_schedulers_text_most_pods_first(outputs: list[RunOutput]) -> None:
    reasons = report_data("small", outputs).variants[0].wait_reasons
    assert reasons and all("nodes are available" in r.reason for r in reasons)
    assert [r.pods for r in reasons] == sorted((r.pods for r in reasons), reverse=True)
    assert all(r.example_pod.startswith("ml/train-") for r in reasons)


def test_one_metrics_set_per_run_labelled_with_variant_and_seed(outputs: list[RunOutput]) -> None:
    sets = metrics_sets(outputs)
    assert [dict(s.labels) for s in sets] == [
        {"variant": "dra", "seed": "7"}, {"variant": "dra", "seed": "8"},
        {"variant": "device-plugin", "seed": "7"}, {"variant": "device-plugin", "seed": "8"}]


def test_every_gpu_has_dcgms_four_fields_attributed_to_the_pods_that_held_it(outputs: list[RunOutput]) -> None:
    for metrics in metrics_sets(outputs):
        fields = {s.field for s in metrics.device_series}
        assert fields == {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_SM_ACTIVE",
                          "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}
        assert len({s.device.uuid for s in metrics.device_series}) == 16
        held = [s for s in metrics.device_series if s.pod is not None]
        assert held and all(s.pod is not None and s.pod.namespace == "ml" and s.pod.container == "c" for s in held)
        util = [x.value for s in metrics.device_series if s.field == "DCGM_FI_DEV_GPU_UTIL" for x in s.samples]
        assert set(util) <= {0.0, 80.0}  # training Jobs at the default utilization, free GPUs at 0


def test_a_run_without_samples_cannot_be_exported(outputs: list[RunOutput]) -> None:
    bare = RunOutput(outputs[0].result, None)
    with pytest.raises(MissingTimeline, match="dra/7"):
        metrics_sets([bare])

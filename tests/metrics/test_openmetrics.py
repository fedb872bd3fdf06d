"""OpenMetrics text: parsed back with prometheus_client's strict OpenMetrics parser, values and order kept."""

from __future__ import annotations

import math

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from tests.builders.metrics import START, busy_fleet, cluster, gpu_util, h100, metrics_set
from tests.builders.sim import simulated_metrics

from dratwin.metrics import PodRef, render_openmetrics
from dratwin.metrics.openmetrics import MetricsModelError, format_number


def parsed(text: str) -> dict[str, list[tuple[dict[str, str], float, float]]]:
    """Family name → (labels, value, unix timestamp) of each sample, in file order."""
    families: dict[str, list[tuple[dict[str, str], float, float]]] = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in families, f"family {family.name} written twice"
        families[family.name] = [
            (dict(s.labels), s.value, float(s.timestamp.sec + s.timestamp.nsec / 1e9)) for s in family.samples
        ]
    return families


def test_every_family_of_a_busy_fleet_parses_with_help_type_and_eof() -> None:
    text = render_openmetrics(busy_fleet())
    assert text.endswith("# EOF\n")
    types = {f.name: f.type for f in text_string_to_metric_families(text)}
    assert types == {
        "DCGM_FI_DEV_FB_USED": "gauge",
        "DCGM_FI_DEV_GPU_UTIL": "gauge",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "gauge",
        "DCGM_FI_PROF_SM_ACTIVE": "gauge",
        "dratwin_allocated_gpus": "gauge",
        "dratwin_cost_dollars": "counter",
        "dratwin_nodes": "gauge",
        "dratwin_pending_pods": "gauge",
    }
    for family in text_string_to_metric_families(text):
        assert family.documentation, family.name


ROUND_TRIP_CASES = {
    "integers and fractions": [(0, 0.0), (15, 12.5), (30, 100.0)],
    "sub-second times": [(0.25, 1.0), (0.5, 2.0), (1.75, 3.0)],
    "tiny and large values": [(0, 1e-9), (60, 81559.0), (120, 3.0e12)],
}


@pytest.mark.parametrize("points", ROUND_TRIP_CASES.values(), ids=ROUND_TRIP_CASES.keys())
def test_values_and_timestamps_round_trip(points: list[tuple[float, float]]) -> None:
    text = render_openmetrics(metrics_set(gpu_util(h100(0), points)))
    samples = parsed(text)["DCGM_FI_DEV_GPU_UTIL"]
    assert [(value, ts) for _, value, ts in samples] == [pytest.approx((v, START + t)) for t, v in points]


def test_samples_of_a_series_are_sorted_by_time_and_a_repeated_time_keeps_the_last_value() -> None:
    series = gpu_util(h100(0), [(120, 3.0), (0, 1.0), (60, 2.0), (60, 2.5)])
    samples = parsed(render_openmetrics(metrics_set(series)))["DCGM_FI_DEV_GPU_UTIL"]
    assert [(ts - START, value) for _, value, ts in samples] == [(0, 1.0), (60, 2.5), (120, 3.0)]


def test_series_of_one_labelset_given_twice_are_merged_into_one_group() -> None:
    first = gpu_util(h100(0), [(0, 1.0)])
    other_device = gpu_util(h100(1), [(0, 7.0)])
    again = gpu_util(h100(0), [(60, 2.0)])
    samples = parsed(render_openmetrics(metrics_set(first, other_device, again)))["DCGM_FI_DEV_GPU_UTIL"]
    assert [(labels["gpu"], value) for labels, value, _ in samples] == [("0", 1.0), ("0", 2.0), ("1", 7.0)]


def test_variants_in_one_file_share_each_family() -> None:
    text = render_openmetrics([busy_fleet(variant="device-plugin"), busy_fleet(variant="dra")])
    families = parsed(text)
    assert {labels["variant"] for labels, _, _ in families["DCGM_FI_DEV_GPU_UTIL"]} == {"device-plugin", "dra"}
    assert text.count("# TYPE DCGM_FI_DEV_GPU_UTIL ") == 1


def test_device_labels_are_dcgm_exporters() -> None:
    mig = h100(2, node="p5-node-9", mig_profile="1g.10gb")
    series = gpu_util(mig, [(0, 5.0)], pod=("ml", "infer-0", "vllm"))
    [(labels, _, _)] = parsed(render_openmetrics(metrics_set(series)))["DCGM_FI_DEV_GPU_UTIL"]
    assert labels == {
        "gpu": "2",
        "UUID": "GPU-p5-node-9-0002",
        "pci_bus_id": "00000000:55:00.0",
        "device": "nvidia2",
        "modelName": "NVIDIA H100 80GB HBM3",
        "GPU_I_PROFILE": "1g.10gb",
        "GPU_I_ID": "1",
        "Hostname": "p5-node-9",
        "pod": "infer-0",
        "namespace": "ml",
        "container": "vllm",
    }


def test_a_pod_without_a_container_name_gets_no_empty_container_label() -> None:
    assert PodRef(namespace="ml", pod="p").labels() == [("pod", "p"), ("namespace", "ml")]


ESCAPE_CASES = {
    "double quote": 'say "hi"',
    "backslash": "C:\\models\\llama",
    "line feed": "two\nlines",
    "all at once": 'a\\"b\n\\',
    "unicode": "モデル-α",
}


@pytest.mark.parametrize("value", ESCAPE_CASES.values(), ids=ESCAPE_CASES.keys())
def test_label_values_are_escaped_and_read_back_unchanged(value: str) -> None:
    text = render_openmetrics(metrics_set(cluster("dratwin_nodes", [(0, 1.0)], nodepool=value)))
    [(labels, _, _)] = parsed(text)["dratwin_nodes"]
    assert labels == {"nodepool": value}
    assert "\n" not in text.splitlines()[2]


def test_a_counter_family_has_total_samples() -> None:
    text = render_openmetrics(metrics_set(cluster("dratwin_cost_dollars", [(0, 0.0), (3600, 98.32)])))
    assert "# TYPE dratwin_cost_dollars counter\n" in text
    assert f"dratwin_cost_dollars_total 98.32 {int(START + 3600)}\n" in text


def test_the_same_model_gives_the_same_bytes() -> None:
    assert render_openmetrics(busy_fleet(variant="a")) == render_openmetrics(busy_fleet(variant="a"))


BAD_MODELS = {
    "unknown cluster field": (metrics_set(cluster("dratwin_gpus_typo", [(0, 1.0)])), "not a dratwin metric"),
    "bad label name": (metrics_set(cluster("dratwin_nodes", [(0, 1.0)], **{"node-pool": "x"})), "node-pool"),
    "reserved label name": (metrics_set(cluster("dratwin_nodes", [(0, 1.0)], __name__="x")), "__name__"),
    "label given twice": (metrics_set(gpu_util(h100(0), [(0, 1.0)]), Hostname="x"), "given twice"),
}


@pytest.mark.parametrize(("model", "message"), BAD_MODELS.values(), ids=BAD_MODELS.keys())
def test_a_model_openmetrics_cannot_express_is_refused_with_the_reason(model: object, message: str) -> None:
    with pytest.raises(MetricsModelError, match=message):
        render_openmetrics(model)  # type: ignore[arg-type]


NUMBER_CASES = {
    "integer": (3.0, "3"),
    "fraction": (0.125, "0.125"),
    "negative": (-2.5, "-2.5"),
    "not a number": (math.nan, "NaN"),
    "infinity": (math.inf, "+Inf"),
    "minus infinity": (-math.inf, "-Inf"),
    "unix time": (1767225600.5, "1767225600.5"),
}


@pytest.mark.parametrize(("number", "text"), NUMBER_CASES.values(), ids=NUMBER_CASES.keys())
def test_numbers_are_written_as_openmetrics_reads_them(number: float, text: str) -> None:
    assert format_number(number) == text


def test_a_simulated_runs_dcgm_fields_are_written_with_the_exporters_labels() -> None:
    text = render_openmetrics(simulated_metrics())
    families = {f.name: f for f in text_string_to_metric_families(text)}
    util = [s for s in families["DCGM_FI_DEV_GPU_UTIL"].samples if s.labels.get("pod", "").startswith("svc-")]
    assert util and {s.value for s in util} == {50.0}  # 5 of the 10 requests per second the GPU serves
    assert set(util[0].labels) >= {"gpu", "UUID", "device", "modelName", "Hostname", "pod", "namespace", "container"}
    tensor = {s.value for s in families["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"].samples
              if s.labels.get("pod", "").startswith("svc-")}
    assert tensor == {0.15}  # 0.30 of the busy time
    training = {s.value for s in families["DCGM_FI_DEV_GPU_UTIL"].samples
                if s.labels.get("pod", "").startswith("train-")}
    assert training == {80.0}

"""Loud warnings: one device family served by both managers, and GPUs shared by time-slicing."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec import convert
from tests.builders.manifests import manifest, node, pod, run

from dratwin.api.core import Node
from dratwin.cel import SelectorCompiler
from dratwin.cli.main import main
from dratwin.cluster.roles import time_slicing_replicas
from dratwin.twin.explain import explain_pod
from dratwin.twin.report import render_table, warnings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BOTH = ["-f", str(EXAMPLES / "deviceclasses.yaml"), "-f", str(EXAMPLES / "oversubscribed-node")]


def test_validate_fails_on_a_node_served_by_both_managers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *BOTH]) == 1
    out = capsys.readouterr().out
    assert "Node g6e-mixed-1: status.allocatable: Forbidden" in out
    assert "silent oversubscription" in out


def test_explain_of_a_pod_on_such_a_node_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "pod/default/dra-trainer", *BOTH]) == 0
    assert "note: node g6e-mixed-1: nvidia devices are served by both" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("labels", "replicas"),
    [
        ({}, 1),
        ({"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}, 4),
        ({"nvidia.com/gpu.replicas": "2"}, 2),
        ({"nvidia.com/gpu.replicas": "many"}, 1),
    ],
    ids=["not-shared", "time-slicing", "replicas-only", "bad-label"],
)
def test_time_slicing_replicas_from_the_gpu_feature_discovery_labels(labels: dict[str, str], replicas: int) -> None:
    assert time_slicing_replicas(convert(node("n", labels=labels), Node, strict=False)) == replicas


def test_time_sliced_node_is_flagged_with_the_pods_that_share_it() -> None:
    labels = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
    text = manifest(
        node("shared-t4", extended={"nvidia.com/gpu": "4"}, labels=labels),
        *[pod(f"infer-{i}", extended={"nvidia.com/gpu": "1"}) for i in range(3)],
    )
    report = run(text)
    assert all(a.scheduled for a in report.attempts)
    found = [w for w in warnings(report) if "time-slicing" in w]
    assert found == [
        "node shared-t4: time-slicing with 4 replicas per GPU: 3 pod(s) got nvidia.com/gpu there, up to 4 per "
        "physical GPU, with no memory isolation between them (one pod can take a GPU's whole memory and make its "
        "neighbours fail)"
    ]
    assert "WARNING: node shared-t4: time-slicing" in render_table(report, SelectorCompiler())
    assert explain_pod(report, "default/infer-0").status == "Scheduled"


def test_constraints_the_twin_does_not_model_are_stated_not_ignored_silently() -> None:
    spread = pod("spread", cpu="1")
    spread["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    ]
    apart = [pod(f"apart-{i}", cpu="1") for i in range(4)]
    for p in apart:
        p["spec"]["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"a": "b"}}}
                ]
            }
        }
    plain = pod("plain", cpu="1")
    report = run(manifest(node("n1"), spread, *apart, plain))
    found = [w for w in warnings(report) if "does not model it yet" in w]
    assert found == [
        "1 pod(s) set spec.topologySpreadConstraints (default/spread): dratwin does not model it yet and places "
        "them as if it were absent; a real cluster may place them differently or leave some Pending",
        "4 pod(s) set spec.affinity.podAntiAffinity (default/apart-0, default/apart-1, default/apart-2 and 1 more): "
        "dratwin does not model it yet and places them as if it were absent; a real cluster may place them "
        "differently or leave some Pending",
    ]
    assert not [w for w in warnings(run(manifest(node("n1"), plain))) if "does not model" in w]

"""`dratwin plan --optimal`: Karpenter's fleet beside the cost-optimal one for the same pods."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.builders.plan import CLASSES, launched, nodepool, pod, template_from_shared

from dratwin.allocator import Features
from dratwin.api.loader import load_paths, load_text
from dratwin.cli.main import main
from dratwin.twin.plan import PlanOptions, PlanReport, plan


def plan_with_optimal(*objects: dict[str, object]) -> PlanReport:
    loaded = load_paths([str(CLASSES)]) + load_text(yaml.safe_dump_all(list(objects)))
    return plan(loaded, Features(), PlanOptions(optimal_time_limit=20))


def test_karpenter_packs_small_gpu_pods_onto_one_large_node_the_optimum_spreads_them() -> None:
    # Karpenter keeps adding pending pods to an in-flight NodeClaim while some instance type still fits
    # them all, then launches the cheapest such type: eight 1-GPU pods become one 8-GPU node.
    report = plan_with_optimal(
        nodepool(), template_from_shared("single-gpu"), *[pod(f"p{i}", template="single-gpu") for i in range(8)]
    )
    assert [t for t, _ in launched(report)] == ["g4dn.metal"]
    optimal = report.optimal
    assert optimal is not None
    assert optimal.fleet.status == "optimal"
    assert optimal.nodes == {"g6f.large": 8}
    assert optimal.fleet.cost_per_hour == pytest.approx(8 * 0.202)
    assert optimal.ratio == pytest.approx(7.824 / (8 * 0.202))
    assert optimal.unverified == []
    assert "Karpenter's fleet: $7.8240/hour = 4.842 x the optimum" in "\n".join(optimal.lines())


def test_optimal_respects_what_only_the_allocator_knows() -> None:
    # gpu-efa-aligned needs a GPU and an EFA on one PCIe root: counting devices alone would allow types the
    # allocator rules out, so the options come from the same fit checks as Karpenter's simulation.
    report = plan_with_optimal(
        nodepool(), template_from_shared("gpu-efa-aligned"), pod("p", template="gpu-efa-aligned")
    )
    optimal = report.optimal
    assert optimal is not None
    assert optimal.nodes == {"g4dn.8xlarge": 1}
    assert optimal.ratio == pytest.approx(1.0)
    assert optimal.fleet.lower_bound <= optimal.fleet.cost_per_hour + 1e-9


def test_optimal_is_only_solved_when_asked() -> None:
    loaded = load_paths([str(CLASSES)]) + load_text(
        yaml.safe_dump_all([nodepool(), template_from_shared("single-gpu"), pod("p", template="single-gpu")])
    )
    assert plan(loaded, Features(), PlanOptions()).optimal is None


def test_cli_plan_optimal_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.yaml"
    objects = [nodepool(), template_from_shared("single-gpu"), *[pod(f"p{i}", template="single-gpu") for i in range(2)]]
    path.write_text(yaml.safe_dump_all(objects))
    assert main(["plan", "-f", str(CLASSES), "-f", str(path), "--optimal"]) == 0
    out = capsys.readouterr().out
    assert "COMPARED WITH THE COST-OPTIMAL FLEET" in out and "2 x g6f.large" in out
    assert main(["plan", "-f", str(CLASSES), "-f", str(path), "--optimal", "-o", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    optimal = body["optimal"]
    assert optimal["status"] == "optimal" and optimal["nodes"] == {"g6f.large": 2}
    assert optimal["karpenterOverOptimal"] >= 1.0
    assert body["costPerHour"] == pytest.approx(optimal["costPerHour"] * optimal["karpenterOverOptimal"], rel=1e-5)

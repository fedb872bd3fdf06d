"""DeviceTaintRules through every command that reads a cluster: schedule, explain, plan and allocate see
the same tainted devices when DRADeviceTaintRules is on, and are told that the rule is refused when it is
off (the 1.36 default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.builders.manifests import (
    GPU_DRIVER,
    bound_pod_with_claim,
    claim_template,
    device_taint_rule,
    gpu_class,
    gpu_request,
    gpu_slice,
    manifest,
    node,
    placements,
    pod,
    run,
)
from tests.builders.plan import nodepool

from dratwin.allocator.features import Features
from dratwin.api.loader import load_text
from dratwin.cli.main import main
from dratwin.twin.explain import explain_pod
from dratwin.twin.plan import PlanOptions, plan

GATE = "DRADeviceTaintRules=true"
MAINTENANCE = device_taint_rule("gpu-maintenance", pool="n0", driver=GPU_DRIVER)
TOLERATE = {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}


def two_nodes(*extra: Any, tolerations: list[dict[str, str]] | None = None, pods: int = 2) -> str:
    """n0 and n1 with one GPU each; the rule taints n0's; ``pods`` pods want one GPU each."""
    return manifest(
        gpu_class(), node("n0"), gpu_slice("n0", 1), node("n1"), gpu_slice("n1", 1), MAINTENANCE,
        claim_template("one-gpu", gpu_request(tolerations=tolerations or [])),
        [pod(f"p{i}", cpu="1", templates={"gpu": "one-gpu"}) for i in range(pods)], *extra,
    )


@pytest.mark.parametrize(("gates", "expected"), [
    ("", {"default/p0": "n0", "default/p1": "n1"}),
    (GATE, {"default/p0": "n1", "default/p1": None}),
], ids=["gate-off-rule-refused", "gate-on-rule-applied"])
def test_schedule_keeps_untolerating_claims_off_tainted_devices(gates: str, expected: dict[str, str | None]) -> None:
    report = run(two_nodes(), gates=gates)
    placed = placements(report)
    assert sorted(placed.values(), key=str) == sorted(expected.values(), key=str)
    if not gates:
        assert any(w.startswith("DeviceTaintRule gpu-maintenance (resource.k8s.io/v1beta2) is refused")
                   for w in report.loaded.unmodelled)
    else:
        assert set(placed.items()) == set(expected.items())
        assert any(n.startswith("DeviceTaintRule gpu-maintenance taints 1 device(s) with maintenance=true:NoSchedule")
                   for n in report.loaded.notes)


def test_a_tolerating_claim_gets_the_tainted_device() -> None:
    report = run(two_nodes(tolerations=[TOLERATE]), gates=GATE)
    assert sorted(str(n) for n in placements(report).values()) == ["n0", "n1"]


def test_explain_names_the_rule_behind_the_taint() -> None:
    report = run(two_nodes(), gates=GATE)
    explanation = explain_pod(report, "default/p1")
    lines = [line for g in explanation.groups for line in g.lines]
    expected = (
        "device gpu.example.com/n0/gpu-0 is tainted by DeviceTaintRule gpu-maintenance: maintenance=true:NoSchedule"
    )
    assert expected in lines


def test_no_execute_on_a_device_a_running_pod_holds_is_said() -> None:
    running = bound_pod_with_claim("old", "n0", ["gpu-0"])
    rule = device_taint_rule("gpu-fault", key="fault", value="ecc", effect="NoExecute", pool="n0")
    text = manifest(gpu_class(), node("n0"), gpu_slice("n0", 1), claim_template("one-gpu"), *running, rule)
    report = run(text, gates=GATE)
    assert report.state.pods["default/old"].pod.spec.node_name == "n0"  # kept: eviction is not modelled
    assert [w for w in report.loaded.unmodelled if "eviction" in w] == [
        "claim default/old-gpu-x7k2q (reserved for old) holds device gpu.example.com/n0/gpu-0, tainted "
        "fault=ecc:NoExecute (DeviceTaintRule gpu-fault), and does not tolerate it: kube-controller-manager's device "
        "taint eviction deletes the pods using it; dratwin does not model eviction and keeps them bound"
    ]


def test_plan_places_pods_on_the_tainted_view() -> None:
    objects = load_text(two_nodes(nodepool(), pods=1))
    placed = plan(objects, Features.from_gates(GATE), PlanOptions()).scheduled.attempts
    assert [(a.pod, a.node) for a in placed] == [("default/p0", "n1")]


@pytest.mark.parametrize(("gates", "result", "warned"), [
    ("", "allocated", True),
    (GATE, "unsatisfiable", False),
], ids=["gate-off", "gate-on"])
def test_allocate_sees_the_same_taints(
    gates: str, result: str, warned: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [gpu_request()]}}}
    path.write_text(manifest(gpu_class(), node("n0"), gpu_slice("n0", 1), MAINTENANCE, claim))
    args = ["allocate", "-f", str(path), "--node", "n0", "-o", "json"]
    main([*args, "--feature-gates", gates] if gates else args)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["result"] == result
    assert ("warning: DeviceTaintRule gpu-maintenance" in captured.err) is warned

"""What the twin does not model is said in every command that reads a cluster (schedule: table and JSON
warnings; explain: notes; plan: notes), once per kind, never dropped silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.builders.manifests import claim_template, gpu_class, gpu_slice, manifest, node, pod, run
from tests.builders.plan import nodepool, run_plan

from dratwin.cel import SelectorCompiler
from dratwin.cli.main import main
from dratwin.twin.explain import explain_claim, explain_pod
from dratwin.twin.report import render_json, render_table

Raw = dict[str, Any]

MPIJOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "allreduce", "namespace": "ml"}}
WORKLOAD = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": "train", "namespace": "ml"}, "spec": {}}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "ml"}}
MPIJOB_LINE = "MPIJob ml/allreduce (kubeflow.org/v2beta1) is not modelled: its pods are not created"
WORKLOAD_START = "Workload ml/train (scheduling.k8s.io/v1alpha2) is refused: "
CONFIGMAP_LINE = "skipped, not modelled by dratwin: ConfigMap ml/settings (v1)"


def cluster(*extra: Raw) -> str:
    return manifest(gpu_class(), node("n0"), gpu_slice("n0", 1), claim_template("one-gpu"),
                    pod("p", cpu="1", templates={"gpu": "one-gpu"}), *extra)


def test_schedule_warns_of_each_skipped_kind_once() -> None:
    report = run(cluster(MPIJOB, WORKLOAD, CONFIGMAP, {**CONFIGMAP, "metadata": {"name": "b", "namespace": "ml"}}))
    table = render_table(report, SelectorCompiler())
    warned = [line.removeprefix("WARNING: ") for line in table.splitlines() if line.startswith("WARNING: ")]
    assert len(warned) == 3
    assert warned[0].startswith(WORKLOAD_START)
    assert warned[1:] == [MPIJOB_LINE, "skipped, not modelled by dratwin: ConfigMap ml/settings, ml/b (v1)"]
    body = json.loads(render_json(report, SelectorCompiler()))
    assert body["warnings"] == warned


def test_explain_notes_them_for_a_pod_and_a_claim() -> None:
    report = run(cluster(MPIJOB, CONFIGMAP))
    for explanation in (explain_pod(report, "default/p"), explain_claim(report, "default/p-gpu-q7rcl")):
        assert explanation.notes[-2:] == [MPIJOB_LINE, CONFIGMAP_LINE]


def test_explain_cli_prints_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(cluster(MPIJOB))
    assert main(["explain", "pod/default/p", "-f", str(path)]) == 0
    assert capsys.readouterr().out.endswith(f"  note: {MPIJOB_LINE}\n")


def test_plan_notes_them() -> None:
    report = run_plan(nodepool(), MPIJOB, WORKLOAD, CONFIGMAP)
    assert MPIJOB_LINE in report.notes
    assert any(n.startswith(WORKLOAD_START) for n in report.notes)
    assert CONFIGMAP_LINE in report.notes


def test_pods_in_a_scheduling_group_are_named() -> None:
    grouped = pod("w", cpu="1")
    grouped["spec"]["schedulingGroup"] = {"podGroupName": "train-0"}
    report = run(manifest(node("n0"), grouped))
    assert report.attempts[0].scheduled  # on its own, as with GenericWorkload off
    assert any(w.startswith("1 pod(s) set spec.schedulingGroup (default/w): ") for w in report.loaded.unmodelled)


def test_nothing_to_say_for_modelled_input() -> None:
    assert run(cluster()).loaded.unmodelled == []

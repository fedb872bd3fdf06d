"""StatefulSets through ``schedule`` and ``explain``: with OrderedReady (the default) only the first pod
exists when the twin looks, and the report says why the others are missing; Parallel creates them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.builders.manifests import (
    claim_template,
    gpu_class,
    gpu_slice,
    manifest,
    node,
    placements,
    run,
    stateful_set,
)

from dratwin.cel import SelectorCompiler
from dratwin.cli.main import main
from dratwin.twin.explain import explain_pod
from dratwin.twin.report import objects, render_table


def cluster(policy: str = "") -> str:
    return manifest(
        gpu_class(), node("n0"), gpu_slice("n0", 4), claim_template("one-gpu"),
        stateful_set("db", 3, policy=policy, cpu="1", templates={"gpu": "one-gpu"}),
    )


@pytest.mark.parametrize(("policy", "scheduled", "waiting"), [
    ("", ["default/db-0"], {"default/db-1": "default/db-0", "default/db-2": "default/db-1"}),
    ("OrderedReady", ["default/db-0"], {"default/db-1": "default/db-0", "default/db-2": "default/db-1"}),
    ("Parallel", ["default/db-0", "default/db-1", "default/db-2"], {}),
], ids=["default", "ordered-ready", "parallel"])
def test_only_the_pods_the_controller_has_created_are_scheduled(
    policy: str, scheduled: list[str], waiting: dict[str, str]
) -> None:
    report = run(cluster(policy))
    assert list(placements(report)) == scheduled
    assert all(a.scheduled for a in report.attempts)
    assert report.loaded.waiting == waiting
    pods = [o["metadata"]["name"] for o in objects(report) if o["kind"] == "Pod"]
    assert pods == [k.split("/")[1] for k in scheduled]  # -o yaml: the others do not exist
    claims = [o for o in objects(report) if o["kind"] == "ResourceClaim"]
    assert len(claims) == len(scheduled)  # nor do their claims


def test_the_table_says_why_the_other_replicas_are_missing() -> None:
    table = render_table(run(cluster()), SelectorCompiler())
    assert "note: StatefulSet default/db: db-1, db-2 not created yet: with podManagementPolicy OrderedReady" in table


def test_explain_of_a_pod_not_created_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run(cluster())
    explanation = explain_pod(report, "default/db-2")
    assert explanation.status == "NotCreated"
    assert explanation.summary == (
        "not created yet: its StatefulSet (podManagementPolicy OrderedReady) creates it once default/db-1 is "
        "Running and Ready"
    )
    assert len(explanation.notes) == 1 and "db-1, db-2 not created yet" in explanation.notes[0]
    path = tmp_path / "cluster.yaml"
    path.write_text(cluster())
    assert main(["explain", "pod/default/db-1", "-f", str(path)]) == 1
    assert capsys.readouterr().out.startswith("pod default/db-1: NotCreated\n")


def test_schedule_exit_status_is_zero_when_every_created_pod_is_placed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(cluster())
    assert main(["schedule", "-f", str(path)]) == 0
    assert "1 of 1 pending pod(s) scheduled" in capsys.readouterr().out

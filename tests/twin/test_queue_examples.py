"""The queue scenarios of ``examples/queues/``: ``dratwin schedule`` of each and ``dratwin explain`` of their
Workloads, compared with the golden files in ``tests/golden/queues/`` byte for byte, and the mismatch each
scenario is there to show.

Regenerate after an intended change, then read the diff before committing::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/twin/test_queue_examples.py

Kueue's semantics each scenario relies on: cohort lending capped by borrowingLimit and lendingLimit
(concepts/cluster_queue.md), flavors skipped for node affinity (flavorassigner.go checkFlavorForPodSets),
DRA devices counted through deviceClassMappings and unmapped classes refused (concepts/
dynamic_resource_allocation.md, pkg/dra/claims.go), topology-aware scheduling with required, preferred and
unconstrained PodSets (concepts/topology_aware_scheduling.md, tas_flavor_snapshot.go), all at Kueue ff69552;
plain pods, pod groups, Deployments and StatefulSets through the pod integrations (tasks/run/plain_pods.md,
deployment.md, statefulset.md; pkg/controller/jobs/pod).
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUEUES = EXAMPLES / "queues"
GOLDEN = REPO / "tests" / "golden" / "queues"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"
BASE = ("-f", str(EXAMPLES / "deviceclasses.yaml"), "-f", str(QUEUES / "cluster.yaml"))


@dataclass(frozen=True)
class QueueCase:
    name: str
    scenario: str
    target: str
    status: str  # the explanation's status
    mismatches: tuple[str, ...]
    exit_status: int = 1


CASES = [
    QueueCase("team-quota-finetune", "team-quota", "job/team-a/finetune", "Pending", ("NodesFreeButQuotaBlocks",)),
    QueueCase("team-quota-pretrain", "team-quota", "job/team-a/pretrain", "Admitted", (), exit_status=0),
    QueueCase("dra-unplaceable-tp-bench", "dra-unplaceable", "job/llm/tp-bench", "AdmittedNotPlaced",
              ("QuotaAdmitsButNoNodePlaces",)),
    QueueCase("flavor-skipped-release-gate", "flavor-skipped", "job/eval/release-gate", "Pending",
              ("NodesFreeButQuotaBlocks",)),
    QueueCase("dra-quota-sweep-b", "dra-quota", "job/ml/sweep-b", "Pending", ("NodesFreeButQuotaBlocks",)),
    QueueCase("dra-quota-mig-probe", "dra-quota", "job/ml/mig-probe", "Pending", ()),
    QueueCase("pod-groups-trainer", "pod-groups", "workload/inference/trainer", "Admitted", (), exit_status=0),
    # the quota has room but the topology cannot place all six pods in one rack: TopologyPlacementFailed, no
    # flavor chosen, and no mismatch (Kueue does not admit it, so no quota is reserved for unplaceable pods)
    QueueCase("tas-wide-ring", "tas", "job/ml/wide-ring", "Pending", ()),
]


def _run(case: QueueCase, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    base = () if case.scenario in OWN_CLUSTER else BASE
    rc = main(["explain", case.target, *base, "-f", str(QUEUES / case.scenario), *extra])
    captured = capsys.readouterr()
    assert captured.err == ""
    return rc, captured.out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_queue_example_golden(case: QueueCase, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(case, capsys)
    assert rc == case.exit_status
    _compare(GOLDEN / f"{case.name}.out", out, "dratwin explain")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_queue_example_json(case: QueueCase, capsys: pytest.CaptureFixture[str]) -> None:
    """-o json carries both views and the mismatch flags the scenario is written to show."""
    rc, out = _run(case, capsys, "-o", "json")
    found = json.loads(out)
    assert rc == case.exit_status
    assert found["status"] == case.status
    assert tuple(m["kind"] for m in found["mismatches"]) == case.mismatches
    assert found["quota"]["workload"] == found["workload"]
    assert found["placement"]["summary"]


SCENARIOS = ["team-quota", "dra-unplaceable", "flavor-skipped", "dra-quota", "tas", "pod-groups"]
OWN_CLUSTER = {"tas"}  # scenarios that bring their own nodes (tas: a block of two racks, nodes.yaml)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_queue_example_schedule_golden(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``dratwin schedule`` of each scenario: the admitted Jobs' pods placed, the Workloads with Kueue's print
    columns and the reasons of those waiting (exit status 1 wherever a pod or a Workload waits)."""
    base = () if scenario in OWN_CLUSTER else BASE
    rc = main(["schedule", *base, "-f", str(QUEUES / scenario)])
    captured = capsys.readouterr()
    assert captured.err == ""
    assert rc in (0, 1)
    _compare(GOLDEN / f"{scenario}-schedule.out", captured.out, "dratwin schedule")


def _compare(golden: Path, out: str, what: str) -> None:
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
        return
    assert golden.exists(), f"{golden} is missing: run with DRATWIN_UPDATE_GOLDEN=1 to create it"
    expected = golden.read_text()
    if out != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), out.splitlines(keepends=True),
                                            f"tests/golden/queues/{golden.name}", what))
        pytest.fail(f"{what} output differs from the golden file (DRATWIN_UPDATE_GOLDEN=1 to accept):\n{diff}")


def test_every_queue_golden_has_a_case() -> None:
    expected = [c.name for c in CASES] + [f"{s}-schedule" for s in SCENARIOS]
    assert sorted(p.stem for p in GOLDEN.glob("*.out")) == sorted(expected)

"""``dratwin schedule`` with Kueue: the Workloads in the table (Kueue's print columns), in -o json and -o yaml
(as Kueue stores them), and the exit status when a Workload waits.

apis/kueue/v1beta2/workload_types.go (kubebuilder printcolumns: Queue, Reserved in, Admitted, Finished, Age);
pkg/workload/workload.go SetQuotaReservation (status.admission and the QuotaReserved condition).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.builders.kueue_sim import kueue_basics, queued_job, schedule_objects
from tests.builders.manifests import manifest

from dratwin.cel import SelectorCompiler
from dratwin.cli.main import main
from dratwin.twin.report import render_json, render_table, render_yaml

Raw = dict[str, Any]
OBJECTS = [*kueue_basics(2), queued_job("a", "2"), queued_job("b", "1")]


def test_table_lists_workloads_with_kueues_columns() -> None:
    text = render_table(schedule_objects(OBJECTS), SelectorCompiler())
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("NAMESPACE"))
    assert lines[header].split() == ["NAMESPACE", "NAME", "QUEUE", "RESERVED", "IN", "ADMITTED", "FINISHED", "AGE"]
    assert lines[header + 1].split()[2:] == ["lq", "cq", "True", "0s"]
    assert lines[header + 2].split()[2:] == ["lq", "False", "0s"]  # waiting: not reserved, Admitted=False
    assert "1 of 2 Kueue workload(s) admitted" in text
    assert "WAITING FOR ADMISSION (1)" in text
    assert "QuotaReserved=False WaitingForQuota: couldn't assign flavors to pod set main" in text


def test_json_carries_workloads_and_cluster_queues() -> None:
    body = json.loads(render_json(schedule_objects(OBJECTS), SelectorCompiler()))
    rows = {r["name"].rsplit("-", 1)[0]: r for r in body["workloads"]}
    assert (rows["job-a"]["reservedIn"], rows["job-a"]["admitted"], rows["job-a"]["reason"]) == ("cq", "True", None)
    assert (rows["job-b"]["reservedIn"], rows["job-b"]["reason"]) == ("", "WaitingForQuota")
    assert body["clusterQueues"] == [{"name": "cq", "pending": 1, "admitted": 1,
                                      "usage": [{"flavor": "default", "resource": "cpu", "amount": 2000}],
                                      "borrowed": []}]
    assert sum(1 for o in body["objects"] if o["kind"] == "Workload") == 2


@dataclass(frozen=True)
class StoredCase:
    name: str
    job: str
    admission: Raw | None
    condition_types: list[str]


STORED_CASES = [
    StoredCase("admitted", "a", {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "main", "flavors": {"cpu": "default"}, "count": 1, "resourceUsage": {"cpu": "2"}}]},
        ["QuotaReserved", "Admitted"]),
    # SyncAdmittedCondition with UnadmittedWorkloadsObservability (beta, on): Admitted=False NoReservation
    StoredCase("waiting", "b", None, ["QuotaReserved", "Admitted"]),
]


@pytest.mark.parametrize("case", STORED_CASES, ids=lambda c: c.name)
def test_yaml_stores_workloads_as_kueue_does(case: StoredCase) -> None:
    documents = yaml.safe_load(render_yaml(schedule_objects(OBJECTS)))["items"]  # a v1 List
    [workload] = [d for d in documents if d["kind"] == "Workload"
                  and d["metadata"]["ownerReferences"][0]["name"] == case.job]
    assert workload["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert workload["status"].get("admission") == case.admission
    assert [c["type"] for c in workload["status"]["conditions"]] == case.condition_types


def test_exit_status_is_one_while_a_workload_waits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    waiting = tmp_path / "waiting.yaml"
    waiting.write_text(manifest(*OBJECTS))
    admitted = tmp_path / "admitted.yaml"
    admitted.write_text(manifest(*kueue_basics(4), queued_job("a", "2"), queued_job("b", "1")))
    assert main(["schedule", "-f", str(waiting)]) == 1
    assert main(["schedule", "-f", str(admitted)]) == 0
    capsys.readouterr()


def test_table_says_which_checks_hold_a_reserved_workload() -> None:
    """admission_check.md: quota reserved, Admitted=False until every check is Ready (an unmodelled controller's
    check stays Pending)."""
    check = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "prov"},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"}}
    basics = kueue_basics(4)
    basics[2]["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "prov"}]}
    text = render_table(schedule_objects([*basics, check, queued_job("a", "1")]), SelectorCompiler())
    assert "quota reserved in ClusterQueue cq, Admitted=False UnsatisfiedAdmissionChecks: prov Pending" in text
    assert "WARNING: AdmissionCheck prov: controller 'kueue.x-k8s.io/provisioning-request' is not modelled" in text

"""Kueue v1beta1 → v1beta2 as Kueue's conversion functions do it (apis/kueue/v1beta1/*_conversion.go,
apis/config/v1beta1/configuration_conversion.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from dratwin.api.conversion_kueue import convert_to_v1beta2, needs_kueue_conversion


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    kind: str
    written: dict[str, Any]
    expect: dict[str, Any]


CASES = [
    Case("cohort-renamed", "clusterqueue_conversion.go", "ClusterQueue",
         {"spec": {"cohort": "research"}}, {"spec": {"cohortName": "research"}}),
    Case("admission-checks-to-strategy", "clusterqueue_conversion.go", "ClusterQueue",
         {"spec": {"admissionChecks": ["prov", "data"]}},
         {"spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}, {"name": "data"}]}}}),
    Case("removed-fungibility-values", "clusterqueue_conversion.go: Borrow/Preempt → MayStopSearch", "ClusterQueue",
         {"spec": {"flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}}},
         {"spec": {"flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}}}),
    Case("workload-priority-class", "workload_conversion.go", "Workload",
         {"spec": {"priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priorityClassName": "high"}},
         {"spec": {"priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}}}),
    Case("pod-priority-class", "workload_conversion.go", "Workload",
         {"spec": {"priorityClassSource": "scheduling.k8s.io/priorityclass", "priorityClassName": "p"}},
         {"spec": {"priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "p"}}}),
    Case("misspelt-status-field", "workload_conversion.go", "Workload",
         {"spec": {}, "status": {"accumulatedPastExexcutionTimeSeconds": 5}},
         {"spec": {}, "status": {"accumulatedPastExecutionTimeSeconds": 5}}),
    Case("retry-delay-dropped", "admissioncheck types (deprecated field)", "AdmissionCheck",
         {"spec": {"controllerName": "c", "retryDelayMinutes": 15}}, {"spec": {"controllerName": "c"}}),
    Case("local-queue-status-recomputed", "localqueue_conversion.go", "LocalQueue",
         {"spec": {"clusterQueue": "cq"}, "status": {"flavors": [], "pendingWorkloads": 1}},
         {"spec": {"clusterQueue": "cq"}, "status": {"pendingWorkloads": 1}}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kueue_conversion(case: Case) -> None:
    written = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": case.kind, "metadata": {"name": "x"}, **case.written}
    assert needs_kueue_conversion(written)
    out = convert_to_v1beta2(written).raw
    assert out == {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": case.kind, "metadata": {"name": "x"}, **case.expect}
    assert written["apiVersion"] == "kueue.x-k8s.io/v1beta1"  # the input is not changed


@pytest.mark.parametrize(("stanza", "expect"), [({"enable": True, "timeout": "5m"}, {"timeout": "5m"}),
                                                ({"enable": False, "timeout": "5m"}, None)])
def test_configuration_enable_flags_become_the_stanza(stanza: dict[str, Any], expect: Any) -> None:
    written = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration", "waitForPodsReady": stanza}
    out = convert_to_v1beta2(written).raw
    assert out["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert out.get("waitForPodsReady") == expect


def test_moved_fields_point_at_what_was_written() -> None:
    conversion = convert_to_v1beta2({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
                                     "spec": {"admissionChecks": ["a", "b"]}})
    assert conversion.original_path(("spec", "admissionChecksStrategy", "admissionChecks", 1, "name")) == (
        "spec", "admissionChecks", 1)

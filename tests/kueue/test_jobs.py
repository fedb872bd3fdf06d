"""The Workloads Kueue makes from jobs (pkg/controller/jobframework, pkg/controller/jobs/{job,pod,statefulset})
and what it changes in a job on suspend and admission (pkg/podset)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import container, job, pod_spec, resource_flavor

from dratwin.api.kueue import ResourceFlavor, Workload
from dratwin.kueue.jobs import (
    InjectionConflict,
    NotQueued,
    Priorities,
    admitted_job,
    role_hash,
    statefulset_group,
    suspended,
    workload_for_job,
    workload_for_pod,
    workload_for_pod_group,
    workload_name,
)

LONG = ("marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-department-social-"
        "media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-engineering-team-lead-senior-"
        "architect-validation-checked-approved-by-legal-and-ops-dept")


@pytest.mark.parametrize(("owner", "uid", "gvk", "expected"), [
    # the expected names are those of jobframework/workload_names_test.go (ShortWorkloadNames off)
    ("name", "uid", ("batch", "Job"), "job-name-ef3a1"),
    (LONG, "uid", ("batch", "Job"), ("job-" + LONG)[:247] + "-218b8"),
], ids=["short", "prefix-cut-to-247"])
def test_workload_name(owner: str, uid: str, gvk: tuple[str, str], expected: str) -> None:
    assert workload_name(owner, uid, *gvk) == expected
    assert len(workload_name(owner, uid, *gvk)) <= 253


@pytest.mark.parametrize(("spec", "expected"), [
    # computed with Go's encoding/json over a corev1.PodSpec, as util/pod GenerateRoleHash hashes it
    ({"containers": [{"name": "c", "resources": {"requests": {"memory": "2Gi", "cpu": "1"}}}]}, "67d1a8a2"),
    ({"nodeSelector": {"zone": "a", "arch": "x"},
      "containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1000m"}}}]}, "736e93f9"),
], ids=["requests-in-any-order", "selector-and-canonical-quantity"])
def test_role_hash_is_go_s(spec: dict[str, Any], expected: str) -> None:
    assert role_hash(spec) == expected


@dataclass(frozen=True)
class JobCase:
    name: str
    cite: str
    job: dict[str, Any]
    count: int | None  # None: no Workload
    min_count: int | None = None
    priority: dict[str, Any] = field(default_factory=lambda: {"priority": 0})
    reason: str = ""


def _with_meta(obj: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], **metadata}}


QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}
PRIORITIES = Priorities({"high": 1000}, {"batch-low": 10})
JOB_CASES = [
    JobCase("parallel", "jobs/job podsCount", job(parallelism=4), 4),
    JobCase("fewer-completions", "jobs/job podsCount: min(parallelism, completions)", job(parallelism=4, completions=2),
            2),
    JobCase("partial-admission", "jobs/job minPodsCount (job-min-parallelism)",
            _with_meta(job(parallelism=8), annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}), 8, min_count=2),
    JobCase("workload-priority-class", "jobframework: kueue.x-k8s.io/priority-class first",
            _with_meta(job(), labels={**QUEUED, "kueue.x-k8s.io/priority-class": "high"}), 1,
            priority={"priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                           "name": "high"}, "priority": 1000}),
    JobCase("pod-priority-class", "jobframework: the pods' PriorityClass",
            job(spec=pod_spec(priorityClassName="batch-low")), 1,
            priority={"priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "batch-low"},
                      "priority": 10}),
    JobCase("missing-workload-priority-class", "workload_priority_class.md: no fallback",
            _with_meta(job(), labels={**QUEUED, "kueue.x-k8s.io/priority-class": "urgent"}), None,
            reason='"urgent" not found'),
    JobCase("no-queue-label", "jobframework: a job without queue-name is not managed", job(queue=None), None,
            reason="no kueue.x-k8s.io/queue-name label"),
]


@pytest.mark.parametrize("case", JOB_CASES, ids=lambda c: c.name)
def test_workload_for_job(case: JobCase) -> None:
    result = workload_for_job(case.job, PRIORITIES)
    if case.count is None:
        assert isinstance(result, NotQueued) and case.reason in result.reason
        return
    assert not isinstance(result, NotQueued)
    [pod_set] = result["spec"]["podSets"]
    assert (pod_set["name"], pod_set["count"], pod_set.get("minCount")) == ("main", case.count, case.min_count)
    assert {k: v for k, v in result["spec"].items() if k.startswith("priority")} == case.priority
    meta = result["metadata"]
    assert meta["name"] == workload_name("train", "uid-1", "batch", "Job")
    assert meta["namespace"] == "team" and result["spec"]["queueName"] == "lq"
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-1",
                                        "controller": True, "blockOwnerDeletion": True}]
    assert meta["labels"] == {"kueue.x-k8s.io/job-uid": "uid-1"}
    assert meta["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]


def test_the_workload_decodes_as_kueue_s_type() -> None:
    result = workload_for_job(job(parallelism=2))
    assert not isinstance(result, NotQueued)
    assert msgspec.convert(result, Workload).spec.pod_sets[0].count == 2


def _group_pod(name: str, cpu: str, total: str | None = "3") -> dict[str, Any]:
    annotations = {"kueue.x-k8s.io/pod-group-total-count": total} if total is not None else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team", "uid": f"u-{name}", "annotations": annotations,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/pod-group-name": "g"}},
            "spec": pod_spec(container({"cpu": cpu}))}


def test_a_pod_group_has_one_pod_set_per_role_sorted_by_name() -> None:
    """jobs/pod constructGroupPodSets: one PodSet per role hash, counted, sorted by name."""
    pods = [_group_pod("driver", "1"), _group_pod("w-0", "4"), _group_pod("w-1", "4")]
    result = workload_for_pod_group(pods)
    assert not isinstance(result, NotQueued)
    assert result["metadata"]["name"] == "g"
    got = [(p["name"], p["count"]) for p in result["spec"]["podSets"]]
    roles = {role_hash(pods[0]["spec"]): 1, role_hash(pods[1]["spec"]): 2}
    assert got == sorted(roles.items())
    assert all(not ref.get("controller") for ref in result["metadata"]["ownerReferences"])
    assert len(result["metadata"]["ownerReferences"]) == 3


def test_a_pod_group_without_the_total_count_is_not_admitted() -> None:
    result = workload_for_pod_group([_group_pod("a", "1", total=None)])
    assert isinstance(result, NotQueued) and "pod-group-total-count" in result.reason


def test_a_single_pod_is_its_own_workload() -> None:
    """jobs/pod GetWorkloadNameForPod: how a Deployment's pods are admitted one by one."""
    pod = _group_pod("web-7d4f-abcde", "1")
    result = workload_for_pod(pod)
    assert not isinstance(result, NotQueued)
    assert result["metadata"]["name"] == workload_name("web-7d4f-abcde", "u-web-7d4f-abcde", "", "Pod")
    assert result["metadata"]["name"].startswith("pod-web-7d4f-abcde-")


def test_a_statefulset_is_a_pod_group_of_its_replicas() -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "db", "namespace": "team", "uid": "s-1"}, "spec": {"replicas": 3}}
    # statefulset_webhook.go GetWorkloadName: an empty uid, the webhook runs before the object has one
    assert statefulset_group(sts) == (workload_name("db", "", "apps", "StatefulSet"), 3)
    assert statefulset_group(sts)[0].startswith("statefulset-db-")


def _flavor(labels: dict[str, str], tolerations: list[dict[str, Any]] | None = None) -> ResourceFlavor:
    return msgspec.convert(resource_flavor("f", labels, tolerations=tolerations), ResourceFlavor)


def test_a_queued_job_is_suspended_and_admission_injects_the_flavor() -> None:
    """podset FromAssignment/Merge: nodeLabels into nodeSelector, tolerations appended once."""
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    written = job(spec=pod_spec(nodeSelector={"team": "ml"}, tolerations=[toleration]))
    assert suspended(written)["spec"]["suspend"] is True
    started = admitted_job(suspended(written), [_flavor({"instance-type": "p5"}, [toleration])])
    assert not isinstance(started, InjectionConflict)
    pod = started["spec"]["template"]["spec"]
    assert started["spec"]["suspend"] is False
    assert pod["nodeSelector"] == {"team": "ml", "instance-type": "p5"}
    assert pod["tolerations"] == [toleration]
    assert written["spec"]["template"]["spec"]["nodeSelector"] == {"team": "ml"}  # the input is not changed


def test_a_node_selector_that_contradicts_the_flavor_is_a_conflict() -> None:
    written = job(spec=pod_spec(nodeSelector={"instance-type": "p4d"}))
    conflict = admitted_job(written, [_flavor({"instance-type": "p5"})])
    assert isinstance(conflict, InjectionConflict)
    assert "conflict for key=instance-type" in conflict.message

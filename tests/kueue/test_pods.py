"""Kueue's pod integrations, pure: which are on (jobframework integrationmanager.go and the Configuration's
integrations.frameworks), the webhooks (jobs/pod pod_webhook.go, jobs/deployment deployment_webhook.go,
jobs/statefulset statefulset_webhook.go), the Workloads of pods (jobs/pod pod_controller.go
constructGroupPodSets, constructGroupPodSetsFast, validatePodGroupMetadata, Finished) and their release on
admission (Run: ungate, podset.Merge); site docs "Run Plain Pods", "Run Deployments", "Run StatefulSets"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import container, pod_spec, resource_flavor

from dratwin.api.kueue import ResourceFlavor
from dratwin.kueue.jobs import InjectionConflict, NotQueued, role_hash, workload_name
from dratwin.kueue.pods import (
    ADMISSION_GATE,
    admitted_pod,
    frameworks,
    group_key,
    managed_pod,
    owner_webhook,
    pod_webhook,
    total_count,
    workload_for_pods,
)

Raw = dict[str, Any]
QUEUE = "kueue.x-k8s.io/queue-name"
GROUP = "kueue.x-k8s.io/pod-group-name"
TOTAL = "kueue.x-k8s.io/pod-group-total-count"
ALL = {"integrations": {"frameworks": ["batch/job", "pod", "deployment", "statefulset"]}}


def a_pod(name: str, *, namespace: str = "team", queue: str | None = "lq", group: str = "", total: str | None = None,
          cpu: str = "1", phase: str = "", owners: list[Raw] | None = None, fast: bool = False, **spec: Any) -> Raw:
    labels = {QUEUE: queue} if queue else {}
    annotations: dict[str, str] = {}
    if group:
        labels[GROUP] = group
    if total is not None:
        annotations[TOTAL] = total
    if fast:
        annotations["kueue.x-k8s.io/pod-group-fast-admission"] = "true"
    meta: Raw = {"name": name, "namespace": namespace, "uid": f"u-{name}", "labels": labels,
                 "annotations": annotations}
    if owners:
        meta["ownerReferences"] = owners
    raw: Raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(container({"cpu": cpu}), **spec)}
    if phase:
        raw["status"] = {"phase": phase}
    return raw


def an_owner(kind: str, name: str = "web", *, queue: str | None = "lq", replicas: int | None = 2) -> Raw:
    spec: Raw = {"template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(container({"cpu": "1"}))}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "team", "labels": {QUEUE: queue} if queue else {}}, "spec": spec}


# ---- integrations.frameworks -----------------------------------------------------------------------


@dataclass
class FrameworksCase:
    name: str
    config: Raw | None
    enabled: set[str]
    pods: bool
    problems: int = 0


FRAMEWORKS = [
    # Kueue's default Configuration: integrations.frameworks [batch/job]
    FrameworksCase("no-configuration", None, {"batch/job"}, False),
    FrameworksCase("configuration-without-integrations", {}, {"batch/job"}, False),
    FrameworksCase("all-pod-integrations", ALL, {"batch/job", "pod", "deployment", "statefulset"}, True),
    # a list that leaves batch/job out: Jobs are not managed
    FrameworksCase("pods-only", {"integrations": {"frameworks": ["pod"]}}, {"pod"}, True),
    # deployment and statefulset have DependencyList ["pod"]: Kueue refuses to start without it
    FrameworksCase("deployment-without-pod", {"integrations": {"frameworks": ["deployment", "statefulset"]}},
                   {"deployment", "statefulset"}, False, problems=2),
]


@pytest.mark.parametrize("case", FRAMEWORKS, ids=lambda c: c.name)
def test_frameworks(case: FrameworksCase) -> None:
    found = frameworks(case.config)
    assert set(found.enabled) == case.enabled
    assert found.pods == case.pods
    assert len(found.problems) == case.problems


# ---- webhooks ------------------------------------------------------------------------------------


def test_the_deployment_webhook_copies_the_queue_name_to_the_pod_template() -> None:
    out = owner_webhook(an_owner("Deployment"), frameworks(ALL))
    assert out["spec"]["template"]["metadata"]["labels"] == {"app": "web", QUEUE: "lq"}


def test_the_statefulset_webhook_makes_its_pods_one_pod_group() -> None:
    out = owner_webhook(an_owner("StatefulSet", "db", replicas=3), frameworks(ALL))
    meta = out["spec"]["template"]["metadata"]
    # GetWorkloadName(sts.Name): the owner's hash with an empty uid
    assert meta["labels"] == {"app": "db", QUEUE: "lq", GROUP: workload_name("db", "", "apps", "StatefulSet")}
    assert meta["labels"][GROUP].startswith("statefulset-db-")
    assert meta["annotations"] == {TOTAL: "3", "kueue.x-k8s.io/pod-group-fast-admission": "true",
                                   "kueue.x-k8s.io/pod-group-serving": "true"}
    # replicas unset: ptr.Deref(replicas, 1)
    unset = owner_webhook(an_owner("StatefulSet", "db", replicas=None), frameworks(ALL))
    assert unset["spec"]["template"]["metadata"]["annotations"][TOTAL] == "1"


@pytest.mark.parametrize(("owner", "config"), [
    (an_owner("Deployment", queue=None), ALL),  # no queue name: not Kueue's
    (an_owner("Deployment"), {"integrations": {"frameworks": ["batch/job", "pod"]}}),  # deployment not enabled
    (an_owner("StatefulSet"), {"integrations": {"frameworks": ["pod"]}}),  # statefulset not enabled
    (an_owner("StatefulSet"), None),  # default Configuration
], ids=["no-queue", "deployment-off", "statefulset-off", "defaults"])
def test_owners_kueue_does_not_manage_are_left_alone(owner: Raw, config: Raw | None) -> None:
    assert owner_webhook(owner, frameworks(config)) is owner


@pytest.mark.parametrize(("pod", "config", "managed"), [
    (a_pod("p"), ALL, True),
    (a_pod("p", queue=None), ALL, False),  # no queue name (manageJobsWithoutQueueName off)
    (a_pod("p"), None, False),  # pod integration off by default
    (a_pod("p", namespace="kube-system"), ALL, False),  # the default managedJobsNamespaceSelector
    (a_pod("p", namespace="kueue-system"), ALL, False),
    # FindAncestorJobManagedByKueue: a Job's pod is the Job's, not a pod Workload of its own
    (a_pod("p", owners=[{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j"}]), ALL, False),
    (a_pod("p", owners=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "r"}]), ALL, True),
], ids=["queued", "no-queue", "integration-off", "kube-system", "kueue-system", "job-owned", "replicaset-owned"])
def test_which_pods_the_pod_webhook_takes(pod: Raw, config: Raw | None, managed: bool) -> None:
    assert managed_pod(pod, frameworks(config)) == managed


def test_the_pod_webhook_gates_labels_and_finalizes() -> None:
    pod = a_pod("p", schedulingGates=[{"name": "example.com/other"}])
    out = pod_webhook(pod)
    assert out["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert out["metadata"]["finalizers"] == ["kueue.x-k8s.io/managed"]
    assert out["spec"]["schedulingGates"] == [{"name": "example.com/other"}, {"name": ADMISSION_GATE}]
    assert out["metadata"]["annotations"]["kueue.x-k8s.io/role-hash"] == role_hash(out["spec"])
    assert pod_webhook(out)["spec"]["schedulingGates"] == out["spec"]["schedulingGates"]  # gated once
    assert "schedulingGates" in pod["spec"] and "kueue.x-k8s.io/managed" not in pod["metadata"]["labels"]
    assert "kueue.x-k8s.io/tas" not in out["metadata"]["labels"]  # no topology request: no topology gate


def test_the_pod_webhook_gates_a_pod_that_asks_for_topology() -> None:
    """pod_webhook.go Default with TopologyAwareScheduling: the TAS label and the topology gate after the
    admission gate; the label named by pod-group-pod-index-label copied into pod-group-pod-index."""
    pod = a_pod("p", group="g", total="2")
    pod["metadata"]["labels"]["rank"] = "1"
    pod["metadata"]["annotations"].update({"kueue.x-k8s.io/podset-required-topology": "rack",
                                            "kueue.x-k8s.io/pod-group-pod-index-label": "rank"})
    out = pod_webhook(pod)
    assert [g["name"] for g in out["spec"]["schedulingGates"]] == [ADMISSION_GATE, "kueue.x-k8s.io/topology"]
    assert out["metadata"]["labels"]["kueue.x-k8s.io/tas"] == "true"
    assert out["metadata"]["labels"]["kueue.x-k8s.io/pod-group-pod-index"] == "1"
    released = admitted_pod(out, [])
    assert not isinstance(released, InjectionConflict)
    assert [g["name"] for g in released["spec"]["schedulingGates"]] == ["kueue.x-k8s.io/topology"]  # for the ungater


# ---- Workloads -----------------------------------------------------------------------------------


@dataclass
class WorkloadCase:
    name: str
    pods: list[Raw]
    workload: str  # the name, "" when not made
    counts: list[int] = field(default_factory=list)
    owners: int = 0
    reason: str = ""


WORKLOADS = [
    # GetWorkloadNameForPod: pod-<name>-<hash>, owned (controller) by the pod
    WorkloadCase("single-pod", [a_pod("web-7d4f")], workload_name("web-7d4f", "u-web-7d4f", "", "Pod"), [1], 1),
    WorkloadCase("complete-group", [a_pod("t-0", group="t", total="2"), a_pod("t-1", group="t", total="2")],
                 "t", [2], 2),
    # validatePodGroupMetadata: fewer runnable pods than the total count, no fast admission
    WorkloadCase("incomplete-group", [a_pod("t-0", group="t", total="2")], "",
                 reason="'t' group has fewer runnable pods than expected (1 of kueue.x-k8s.io/pod-group-total-count "
                        "2)"),
    # constructGroupPodSetsFast (a StatefulSet's group): one pod is enough, counted to the total
    WorkloadCase("fast-admission", [a_pod("db-0", group="g", total="3", fast=True)], "g", [3], 1),
    # two roles (role hashes): two PodSets, sorted by name
    WorkloadCase("two-roles", [a_pod("d", group="t", total="3", cpu="1"), a_pod("w-0", group="t", total="3", cpu="4"),
                               a_pod("w-1", group="t", total="3", cpu="4")], "t",
                 [c for _, c in sorted({role_hash(pod_spec(container({"cpu": "1"}))): 1,
                                        role_hash(pod_spec(container({"cpu": "4"}))): 2}.items())], 3),
]


@pytest.mark.parametrize("case", WORKLOADS, ids=lambda c: c.name)
def test_workload_for_pods(case: WorkloadCase) -> None:
    made = workload_for_pods(case.pods)
    if not case.workload:
        assert isinstance(made, NotQueued)
        assert made.reason.startswith(case.reason)
        return
    assert not isinstance(made, NotQueued)
    assert made["metadata"]["name"] == case.workload
    assert f"{made['metadata']['namespace']}/{case.workload}" == group_key(case.pods[0])
    assert [p["count"] for p in made["spec"]["podSets"]] == case.counts
    owners = made["metadata"]["ownerReferences"]
    assert [o["name"] for o in owners] == [p["metadata"]["name"] for p in case.pods][:case.owners]
    grouped = len(case.pods) > 1 or bool(case.pods[0]["metadata"]["labels"].get(GROUP))
    assert all(bool(o.get("controller")) != grouped for o in owners)  # a group's pods own it together
    assert (made["metadata"].get("annotations") or {}).get("kueue.x-k8s.io/is-group-workload") == (
        "true" if grouped else None)


def test_total_count() -> None:
    assert total_count(a_pod("a", group="g", total="4")) == 4
    assert total_count(a_pod("a")) is None
    assert total_count(a_pod("a", group="g")) is None


# ---- release on admission ---------------------------------------------------------------------------


def _flavor(labels: dict[str, str], tolerations: list[Raw] | None = None) -> ResourceFlavor:
    return msgspec.convert(resource_flavor("f", labels, tolerations=tolerations), ResourceFlavor)


@dataclass
class ReleaseCase:
    name: str
    pod: Raw
    flavors: list[ResourceFlavor]
    selector: dict[str, str] | None = None
    gates: list[Raw] | None = None
    tolerations: list[Raw] | None = None
    conflict: str = ""


TOLERATION = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
RELEASES = [
    ReleaseCase("gate-removed-selector-injected", pod_webhook(a_pod("p")), [_flavor({"pool": "h100"})],
                selector={"pool": "h100"}),
    ReleaseCase("other-gates-kept", pod_webhook(a_pod("p", schedulingGates=[{"name": "x/y"}])), [],
                gates=[{"name": "x/y"}]),
    ReleaseCase("tolerations-appended", pod_webhook(a_pod("p")), [_flavor({}, [TOLERATION])],
                tolerations=[TOLERATION]),
    # podset.Merge: a nodeSelector key set to another value is a conflict; the pod stays gated
    ReleaseCase("selector-conflict", pod_webhook(a_pod("p", nodeSelector={"pool": "a100"})),
                [_flavor({"pool": "h100"})], conflict="conflict for key=pool, value1=a100, value2=h100"),
]


@pytest.mark.parametrize("case", RELEASES, ids=lambda c: c.name)
def test_admitted_pod(case: ReleaseCase) -> None:
    out = admitted_pod(case.pod, case.flavors)
    if case.conflict:
        assert isinstance(out, InjectionConflict) and case.conflict in out.message
        return
    assert not isinstance(out, InjectionConflict)
    assert out["spec"].get("schedulingGates") == case.gates
    assert out["spec"].get("nodeSelector") == case.selector
    assert out["spec"].get("tolerations") == case.tolerations
    assert case.pod["spec"]["schedulingGates"][-1] == {"name": ADMISSION_GATE}  # the input is not changed

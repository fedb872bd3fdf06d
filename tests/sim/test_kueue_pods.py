"""Kueue's pod integrations on the control plane: gated pods get Workloads, an admitted Workload's pods are
released (gate removed, flavor injected) and placed, the others stay gated while their Workload waits, and
quota comes back when the pods end.

Follows kubernetes-sigs/kueue pkg/controller/jobs/pod (pod_webhook.go Default, pod_controller.go Run and
Finished), jobs/deployment and jobs/statefulset, and the site's "Run Plain Pods", "Run Deployments" and
"Run StatefulSets"; the scheduler side is Kubernetes' SchedulingGates PreEnqueue plugin."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import configuration, local_queue, resource_flavor
from tests.builders.kueue_sim import cpu_queue, kueue_basics, kueue_rig, schedule_objects, simulate_objects
from tests.builders.manifests import condition, node, pod, stateful_set

from dratwin.kueue.jobs import workload_name
from dratwin.kueue.pods import ADMISSION_GATE
from dratwin.sim.quick_scenario import RUN_FOR

Raw = dict[str, Any]
QUEUE = "kueue.x-k8s.io/queue-name"
PODS_ON = configuration(integrations={"frameworks": ["batch/job", "pod", "deployment", "statefulset"]})


def queued_pod(name: str, cpu: str = "1", *, group: str = "", total: int = 0, run_for: str = "") -> Raw:
    labels = {QUEUE: "lq", **({"kueue.x-k8s.io/pod-group-name": group} if group else {})}
    raw = pod(name, cpu=cpu, labels=labels)
    annotations = {**({"kueue.x-k8s.io/pod-group-total-count": str(total)} if group else {}),
                   **({RUN_FOR: run_for} if run_for else {})}
    if annotations:
        raw["metadata"]["annotations"] = annotations
    return raw


def deployment(name: str, replicas: int, cpu: str = "1") -> Raw:
    template = pod(name, cpu=cpu, labels={"app": name})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "labels": {QUEUE: "lq"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": template["metadata"], "spec": template["spec"]}}}


def queued_stateful_set(name: str, replicas: int, cpu: str = "1") -> Raw:
    raw = stateful_set(name, replicas, policy="Parallel", cpu=cpu)
    raw["metadata"]["labels"] = {QUEUE: "lq"}
    return raw


def owned_by(workloads: dict[str, Raw], pod_name: str) -> str:
    """The key of the Workload the pod owns (a single pod's Workload: pod-<name>-<hash of its uid>)."""
    [key] = [k for k, w in workloads.items() if [o["name"] for o in w["metadata"]["ownerReferences"]] == [pod_name]]
    uid = workloads[key]["metadata"]["ownerReferences"][0]["uid"]
    assert key == f"default/{workload_name(pod_name, uid, '', 'Pod')}"
    return key


@dataclass
class PodsCase:
    name: str
    objects: list[Raw]
    placed: set[str]  # pod names bound to a node
    gated: set[str]  # pod names still carrying Kueue's admission gate
    admitted: int  # Workloads admitted
    workloads: int  # Workloads in all
    counts: dict[str, int] = field(default_factory=dict)  # Workload name prefix -> its pods (PodSets' counts)


CASES = [
    # single pods, quota for one: the first is released and placed, the second waits gated
    PodsCase("single-pods-quota-for-one", [*kueue_basics(1), PODS_ON, queued_pod("a"), queued_pod("b")],
             {"a"}, {"b"}, 1, 2),
    # the pod integration is off by default: the pods run unmanaged, beyond the quota
    PodsCase("integration-off", [*kueue_basics(1), queued_pod("a"), queued_pod("b")], {"a", "b"}, set(), 0, 0),
    # a pod group of 2 is one Workload, admitted and released whole
    PodsCase("pod-group", [*kueue_basics(2), PODS_ON, queued_pod("t-0", group="t", total=2),
                           queued_pod("t-1", group="t", total=2)], {"t-0", "t-1"}, set(), 1, 1, {"t": 2}),
    # a group larger than the quota is not admitted: neither pod runs (no partial start)
    PodsCase("pod-group-over-quota", [*kueue_basics(1), PODS_ON, queued_pod("t-0", group="t", total=2),
                                      queued_pod("t-1", group="t", total=2)], set(), {"t-0", "t-1"}, 0, 1),
    # a group short of pods gets no Workload: its pod stays gated
    PodsCase("incomplete-group", [*kueue_basics(2), PODS_ON, queued_pod("t-0", group="t", total=2)],
             set(), {"t-0"}, 0, 0),
    # each replica of a Deployment is a Workload of its own: quota for 2 of 3
    PodsCase("deployment-replicas", [*kueue_basics(2), PODS_ON, deployment("web", 3)], set(), set(), 2, 3,
             {"pod-web-": 1}),
    # a StatefulSet is one pod group named statefulset-<name>-<hash>
    PodsCase("statefulset", [*kueue_basics(2), PODS_ON, queued_stateful_set("db", 2)], {"db-0", "db-1"}, set(),
             1, 1, {"statefulset-db-": 2}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_pods_through_kueue(case: PodsCase) -> None:
    report = schedule_objects(case.objects)
    pods = {k.split("/", 1)[1]: r for k, r in report.state.pods.items()}
    bound = {name for name, r in pods.items() if r.pod.spec.node_name}
    gated = {name for name, r in pods.items() if any(g.get("name") == ADMISSION_GATE
                                                     for g in r.raw["spec"].get("schedulingGates") or [])}
    if case.name == "deployment-replicas":
        assert len(bound) == 2 and len(gated) == 1 and bound.isdisjoint(gated)
    else:
        assert bound == case.placed
        assert gated == case.gated
    for name in gated:
        assert (condition(pods[name].raw) or {}).get("reason") == "SchedulingGated"
    for name in bound:  # released with the flavor's nodeLabels (kueue_basics' flavor has none: nothing added)
        assert not pods[name].raw["spec"].get("schedulingGates")
    workloads = report.state.workloads
    assert len(workloads) == case.workloads
    kueue = report.kueue
    assert sum(1 for w in (kueue.workloads if kueue else []) if w.admitted_at is not None) == case.admitted
    for prefix, count in case.counts.items():
        matching = [w for key, w in workloads.items() if key.split("/", 1)[1].startswith(prefix)]
        assert matching and all(sum(p["count"] for p in w["spec"]["podSets"]) == count for w in matching)


def test_the_flavor_is_injected_into_released_pods() -> None:
    labels = {"pool": "h100"}
    report = schedule_objects([*kueue_basics(1, flavor_labels=labels), PODS_ON, queued_pod("a")])
    raw = report.state.pods["default/a"].raw
    assert raw["spec"]["nodeSelector"] == labels
    assert raw["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert raw["metadata"]["finalizers"] == ["kueue.x-k8s.io/managed"]
    [workload] = report.state.workloads.values()
    assert workload["metadata"]["ownerReferences"][0]["name"] == "a"
    assert workload["status"]["admission"]["podSetAssignments"][0]["flavors"] == {"cpu": "default"}


def test_quota_comes_back_when_a_pod_ends() -> None:
    """Finished: a single pod's Workload ends with the pod; the waiting one is admitted then, released, placed."""
    sim = simulate_objects([*kueue_basics(1), PODS_ON, queued_pod("a", run_for="10m"),
                            queued_pod("b", run_for="10m")], until="1h")
    assert sim.kueue is not None
    view = {w.key: w for w in sim.kueue.view().workloads}
    first, second = sorted(view.values(), key=lambda w: w.admitted_at or 0.0)
    assert first.admitted_at == 0.0
    assert second.admitted_at is not None and second.admitted_at >= 600.0
    assert all(w.finished_at is not None for w in view.values())
    finished = [c for c in (w["status"]["conditions"] for w in sim.store.state.workloads.values())]
    assert all(any(c["type"] == "Finished" and c["status"] == "True" for c in cs) for cs in finished)


def test_a_preempted_pod_workload_loses_its_pod() -> None:
    """pod_controller.go Stop: the evicted Workload's pod is deleted; left without pods the Workload is finalized
    (Finished, never admitted again), and the preemptor's pod is released and placed (preemption.md "Preemption
    within a ClusterQueue")."""
    high = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "high"},
            "value": 1000}
    urgent = queued_pod("b", run_for="10m")
    urgent["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    urgent["metadata"]["annotations"]["dratwin.io/arrive-at"] = "5m"
    queue = cpu_queue("cq", 1, preemption={"withinClusterQueue": "LowerPriority"})
    sim = simulate_objects([node("n1", cpu="4"), resource_flavor("default"), queue,
                            local_queue("lq", "cq", namespace="default"), PODS_ON, high,
                            queued_pod("a", run_for="1h"), urgent], until="30m")
    assert sim.kueue is not None
    assert "default/a" not in sim.store.state.pods
    view = {w.key: w for w in sim.kueue.view().workloads}
    workloads = sim.store.state.workloads
    victim, preemptor = view[owned_by(workloads, "a")], view[owned_by(workloads, "b")]
    assert victim.finished_at == 300.0 and sim.kueue.evicted["Preempted"] == 1
    assert victim.admitted_at is None  # out of its queue: never admitted again, though quota came back at 15m
    assert preemptor.admitted_at == 300.0 and preemptor.finished_at == 900.0


@pytest.mark.parametrize(("node_cpu", "evictions", "ready"), [
    ("4", 0, ("True", "Started")),  # placed and Ready in time: PodsReady=True, never evicted
    ("1", 1, ("False", "WaitForStart")),  # admitted but no node has room: evicted at the timeout
], ids=["ready", "never-ready"])
def test_pods_ready_follows_the_pods(node_cpu: str, evictions: int, ready: tuple[str, str]) -> None:
    """waitForPodsReady (concepts/workload.md "Wait for Pods Ready"; pod_controller.go PodsReady: every pod of
    the Workload Ready) for a pod Workload as for a Job's."""
    config = configuration(integrations={"frameworks": ["pod"]}, waitForPodsReady={"timeout": "5m"})
    objects = [node("n1", cpu=node_cpu), resource_flavor("default"), cpu_queue("cq", 4),
               local_queue("lq", "cq", namespace="default"), config,
               queued_pod("t-0", "2", group="t", total=2, run_for="1h"),
               queued_pod("t-1", "2", group="t", total=2, run_for="1h")]
    sim = simulate_objects(objects, until="8m")
    assert sim.kueue is not None
    assert sim.kueue.evicted.get("PodsReadyTimeout", 0) == evictions
    [workload] = sim.store.state.workloads.values()
    found = {c["type"]: (c["status"], c["reason"]) for c in workload["status"]["conditions"]}
    assert found["PodsReady"] == ready



@pytest.mark.parametrize(("owner", "running"), [
    (deployment("web", 2), 1),  # deployment_webhook.go: each replica a Workload, quota for one
    (queued_stateful_set("db", 2), 0),  # statefulset_webhook.go: one group of 2, over the quota: neither runs
], ids=["deployment", "statefulset"])
def test_owners_arriving_in_a_run_go_through_the_webhooks(owner: Raw, running: int) -> None:
    sim = simulate_objects([*kueue_basics(1), PODS_ON, owner], until="10m")
    pods = sim.store.state.pods.values()
    assert len(pods) == 2
    assert sum(1 for r in pods if r.pod.spec.node_name) == running
    assert sum(1 for r in pods if r.raw["spec"].get("schedulingGates")) == 2 - running
    assert sim.store.state.workloads


def _condition(raw: Raw, kind: str) -> dict[str, str] | None:
    return next((c for c in (raw.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def test_excess_pods_of_a_group_are_deleted() -> None:
    """ConstructComposableWorkload: three pods of a group of two, the newest deleted before the Workload is made;
    FindMatchingWorkloads: a fourth pod arriving for the admitted group is deleted too ("Excess pod deleted")."""
    late = queued_pod("t-late", group="t", total=2, run_for="1h")
    late["metadata"]["annotations"]["dratwin.io/arrive-at"] = "5m"
    rig = kueue_rig([*kueue_basics(4), PODS_ON, *(queued_pod(f"t-{i}", group="t", total=2, run_for="1h")
                                                  for i in range(3)), late])
    rig.store.keep_log = True
    rig.run("10m")
    pods = rig.store.state.pods
    assert sorted(k for k in pods if k.startswith("default/t-")) == ["default/t-0", "default/t-1"]
    workload = rig.store.state.workloads["default/t"]
    assert [p["count"] for p in workload["spec"]["podSets"]] == [2]
    assert _condition(workload, "Admitted")["status"] == "True"
    assert [c.key for c in rig.store.log if c.type == "ExcessPodDeleted"] == ["default/t-2", "default/t-late"]


def test_a_group_waits_for_a_replacement_pod() -> None:
    """A pod of an admitted group is gone (evicted): WaitingForReplacementPods=True PodsFailed while its role
    lacks it; the replacement pod, created later, is released at once and the condition turns False."""
    replacement = queued_pod("t-new", group="t", total=2, run_for="1h")
    replacement["metadata"]["annotations"]["dratwin.io/arrive-at"] = "20m"
    rig = kueue_rig([*kueue_basics(4), PODS_ON, queued_pod("t-0", group="t", total=2, run_for="1h"),
                     queued_pod("t-1", group="t", total=2, run_for="1h"), replacement])
    rig.at("10m", lambda: rig.store.delete_pod("default/t-1"))
    rig.run("15m")
    waiting = _condition(rig.store.state.workloads["default/t"], "WaitingForReplacementPods")
    assert waiting is not None and (waiting["status"], waiting["reason"], waiting["message"]) == (
        "True", "PodsFailed", "Some Failed pods need replacement")
    rig.run("25m")
    waiting = _condition(rig.store.state.workloads["default/t"], "WaitingForReplacementPods")
    assert waiting is not None and (waiting["status"], waiting["reason"]) == ("False", "PodsReady")
    new = rig.store.state.pods["default/t-new"]
    assert not new.raw["spec"].get("schedulingGates") and new.pod.spec.node_name  # released and placed
    assert _condition(rig.store.state.workloads["default/t"], "Finished") is None  # still running


@pytest.mark.parametrize(("retriable", "finished_at"), [(True, None), (False, 600.0)], ids=["retriable", "not"])
def test_a_group_that_may_not_retry_ends_when_nothing_is_active(retriable: bool, finished_at: float | None) -> None:
    """retriable-in-group "false": once no pod of the group is active the Workload is Finished (reported as
    succeeded, "Pods succeeded: 1/2.") and its quota freed; a retriable group keeps waiting for a replacement."""
    pods = [queued_pod("t-0", group="t", total=2, run_for="10m"), queued_pod("t-1", group="t", total=2,
                                                                              run_for="1h")]
    if not retriable:
        for raw in pods:
            raw["metadata"]["annotations"]["kueue.x-k8s.io/retriable-in-group"] = "false"
    rig = kueue_rig([*kueue_basics(4), PODS_ON, *pods])
    rig.at("5m", lambda: rig.store.delete_pod("default/t-1"))
    rig.run("30m")
    record = rig.kueue.records["default/t"]
    assert record.finished_at == finished_at
    if finished_at is not None:
        done = _condition(rig.store.state.workloads["default/t"], "Finished")
        assert done is not None and (done["reason"], done["message"]) == ("Succeeded", "Pods succeeded: 1/2.")


def test_a_group_that_completes_is_finished_as_succeeded() -> None:
    """The twin removes a pod when it succeeds; Kueue's finalizer keeps it in the group, so the group's Workload
    counts it: Finished=True Succeeded "Pods succeeded: 2/2." once the second pod succeeds (not "deleted")."""
    pods = [queued_pod("t-0", group="t", total=2, run_for="10m"), queued_pod("t-1", group="t", total=2,
                                                                              run_for="20m")]
    rig = kueue_rig([*kueue_basics(4), PODS_ON, *pods])
    rig.run("15m")
    assert _condition(rig.store.state.workloads["default/t"], "Finished") is None  # one of two succeeded
    assert _condition(rig.store.state.workloads["default/t"], "WaitingForReplacementPods") is None
    rig.run("30m")
    done = _condition(rig.store.state.workloads["default/t"], "Finished")
    assert done is not None and (done["status"], done["reason"], done["message"]) == (
        "True", "Succeeded", "Pods succeeded: 2/2.")
    assert rig.kueue.records["default/t"].finished_at == 1200.0


def test_a_single_pod_that_succeeds_is_finished_as_succeeded() -> None:
    rig = kueue_rig([*kueue_basics(4), PODS_ON, queued_pod("a", run_for="10m")])
    rig.run("20m")
    [key] = rig.store.state.workloads
    done = _condition(rig.store.state.workloads[key], "Finished")
    assert done is not None and (done["status"], done["reason"]) == ("True", "Succeeded")

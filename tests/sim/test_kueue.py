"""Kueue's controllers on the control plane (sim/kueue.py): Workloads for queued Jobs, admission through time,
unsuspend with the flavor injection, Finished and the quota it frees; the same controller in the one-shot run.

Kueue at ff69552: pkg/controller/jobframework/reconciler.go (ReconcileGenericJob: create the Workload,
StartJob on admission, Finished when the Job ends), pkg/scheduler/scheduler.go (cycles on queue changes,
requeue of inadmissible Workloads when quota is freed), pkg/workload/workload.go (SetQuotaReservation,
SetStatusCondition), apis/kueue/v1beta2/workload_types.go (print columns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import configuration, local_queue, resource_flavor
from tests.builders.kueue_sim import (
    cpu_queue,
    kueue_basics,
    queued_job,
    schedule_objects,
    simulate_objects,
)
from tests.builders.manifests import node
from tests.builders.sim import job

from dratwin.kueue.jobs import workload_name
from dratwin.sim.kueue_status import set_condition
from dratwin.sim.run import Simulation
from dratwin.twin.report_kueue import human_duration

Raw = dict[str, Any]


def _admitted_at(sim: Simulation) -> dict[str, float | None]:
    assert sim.kueue is not None
    return {w.key.split("/")[1].rsplit("-", 1)[0]: w.admitted_at for w in sim.kueue.view().workloads}


def _finished_at(sim: Simulation) -> dict[str, float | None]:
    assert sim.kueue is not None
    return {w.key.split("/")[1].rsplit("-", 1)[0]: w.finished_at for w in sim.kueue.view().workloads}


@dataclass(frozen=True)
class TimeCase:
    name: str
    cite: str
    objects: list[Raw]
    admitted_at: dict[str, float | None]  # "job-<name>" -> when its Workload was admitted (None: never)
    finished_at: dict[str, float | None] = field(default_factory=dict)


TIME_CASES = [
    TimeCase("within-quota-admitted-at-arrival", "scheduler.go schedule: a head that fits is admitted in the cycle",
             [*kueue_basics(4), queued_job("a", "2"), queued_job("b", "2", at="30s")],
             {"job-a": 0.0, "job-b": 30.0}, {"job-a": 600.0, "job-b": 630.0}),
    TimeCase("quota-freed-by-a-finished-job", "reconciler.go Finished -> cache deletes the usage; "
             "manager.QueueAssociatedInadmissibleWorkloadsAfter requeues the one set aside, batched 1 s later",
             [*kueue_basics(4), queued_job("a", "2"), queued_job("b", "2"), queued_job("c", "2", at="1s")],
             {"job-a": 0.0, "job-b": 0.0, "job-c": 601.0}, {"job-c": 1201.0}),
    TimeCase("bigger-than-nominal-never-admitted", "flavorassigner.go: more than the ClusterQueue could ever get",
             [*kueue_basics(4), queued_job("a", "1", parallelism=5)], {"job-a": None}, {"job-a": None}),
    TimeCase("completions-hold-quota-until-the-last", "jobs/job: one PodSet of min(parallelism, completions); "
             "the Workload finishes when the Job is Complete",
             [*kueue_basics(2), queued_job("a", "2", completions=3), queued_job("b", "2", at="1s")],
             {"job-a": 0.0, "job-b": 1801.0}, {"job-a": 1800.0}),  # b set aside: requeued in the 1 s batch
    TimeCase("strict-fifo-head-blocks", "cluster_queue.md queueingStrategy StrictFIFO: the head blocks the rest",
             [node("n1", cpu="8"), resource_flavor("default"),
              cpu_queue("cq", 4, queueingStrategy="StrictFIFO"), local_queue("lq", "cq", namespace="default"),
              queued_job("a", "3"), queued_job("big", "2", at="1s", parallelism=2), queued_job("small", "1", at="2s")],
             {"job-a": 0.0, "job-big": 600.0, "job-small": 1200.0}),  # 1 cpu free at 2 s, but big is the head
    TimeCase("best-effort-fifo-skips-the-head", "cluster_queue.md BestEffortFIFO: an inadmissible head is set aside",
             [*kueue_basics(4), queued_job("a", "3"), queued_job("big", "2", at="1s", parallelism=2),
              queued_job("small", "1", at="2s")],
             {"job-a": 0.0, "job-big": 603.0, "job-small": 2.0}),  # big needs small's cpu back, then the 1 s batch
]


@pytest.mark.parametrize("case", TIME_CASES, ids=lambda c: c.name)
def test_admission_through_time(case: TimeCase) -> None:
    sim = simulate_objects(case.objects, until="1h")
    assert _admitted_at(sim) == case.admitted_at
    for name, when in case.finished_at.items():
        assert _finished_at(sim)[name] == when


def test_pods_exist_only_after_admission() -> None:
    """reconciler.go: the webhook suspends the Job; StartJob unsuspends it, then the Job controller makes pods."""
    sim = simulate_objects([*kueue_basics(2), queued_job("a", "2"), queued_job("b", "2", at="1s")])
    created = [c.time for c in sim.events if c.kind == "Pod" and c.type == "Added" and c.key.startswith("default/b-")]
    assert created == [601.0]  # requeued in the cohort's 1 s batch


def test_the_workload_is_named_and_owned_as_kueue_does() -> None:
    """workload_names.go GetWorkloadNameForOwnerWithGVK; interface.go NewWorkload (controller owner reference)."""
    sim = simulate_objects([*kueue_basics(2), queued_job("a", "1")])
    [(key, raw)] = sim.store.state.workloads.items()
    owner = raw["metadata"]["ownerReferences"][0]
    assert key == f"default/{workload_name('a', owner['uid'], 'batch', 'Job')}"
    assert (owner["kind"], owner["name"], owner.get("controller")) == ("Job", "a", True)


def test_finished_condition_and_times() -> None:
    """reconciler.go: Finished=True reason Succeeded with the Job condition's message; QuotaReserved and
    Admitted stamped with the (simulated) time of admission."""
    sim = simulate_objects([*kueue_basics(2), queued_job("a", "1", at="5s")])
    [raw] = sim.store.state.workloads.values()
    conditions = {c["type"]: c for c in raw["status"]["conditions"]}
    assert conditions["QuotaReserved"]["lastTransitionTime"] == "2026-01-01T00:00:05Z"
    assert conditions["Admitted"]["status"] == "True"
    finished = conditions["Finished"]
    assert (finished["status"], finished["reason"], finished["lastTransitionTime"]) == \
        ("True", "Succeeded", "2026-01-01T00:10:05Z")
    assert finished["message"] == "Reached expected number of succeeded pods"


def test_flavor_labels_steer_the_pods() -> None:
    """podset.FromAssignment / Merge: the flavor's nodeLabels become the pods' nodeSelector on admission."""
    objects = [node("n1", cpu="8", labels={"pool": "a"}), node("n2", cpu="8", labels={"pool": "b"}),
               resource_flavor("default", {"pool": "b"}), cpu_queue("cq", 8), local_queue("lq", "cq", "default"),
               queued_job("a", "1", parallelism=3)]
    report = schedule_objects(objects)
    assert sorted({a.node for a in report.attempts}) == ["n2"]
    assert all(r.raw["spec"]["nodeSelector"] == {"pool": "b"} for r in report.state.pods.values())


@dataclass(frozen=True)
class WaitCase:
    name: str
    cite: str
    objects: list[Raw]
    reason: str
    message: str


WAIT_CASES = [
    WaitCase("local-queue-missing", "workload_controller.go: Inadmissible, LocalQueue ... doesn't exist",
             [*kueue_basics(4), queued_job("a", "1", queue="nope")], "Inadmissible", "LocalQueue nope doesn't exist"),
    WaitCase("cluster-queue-missing", "workload_controller.go: Inadmissible, ClusterQueue ... doesn't exist",
             [node("n1"), resource_flavor("default"), local_queue("lq", "gone", namespace="default"),
              cpu_queue("other", 4), queued_job("a", "1")], "Inadmissible", "ClusterQueue gone doesn't exist"),
    WaitCase("flavor-missing-inactive", "clusterqueue_controller.go: a ClusterQueue whose flavors are missing is "
             "inactive", [node("n1"), cpu_queue("cq", 4), local_queue("lq", "cq", namespace="default"),
                          queued_job("a", "1")], "Inadmissible", "ClusterQueue cq is inactive"),
    WaitCase("no-quota-left", "flavorassigner.go: insufficient unused quota",
             [*kueue_basics(2), queued_job("a", "2"), queued_job("b", "1")], "WaitingForQuota",
             "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, "
             "1 more needed"),
]


@pytest.mark.parametrize("case", WAIT_CASES, ids=lambda c: c.name)
def test_waiting_workloads_keep_kueues_reason(case: WaitCase) -> None:
    report = schedule_objects(case.objects)
    assert report.kueue is not None
    waiting = [w for w in report.kueue.workloads if w.waiting]
    assert [(w.reason, w.message) for w in waiting] == [(case.reason, case.message)]
    raw = report.state.workloads[waiting[0].key]
    # workload.go UnsetQuotaReservationWithCondition + SyncAdmittedCondition (UnadmittedWorkloadsObservability on)
    assert [(c["type"], c["status"], c["reason"]) for c in raw["status"]["conditions"]] == \
        [("QuotaReserved", "False", case.reason), ("Admitted", "False", "NoReservation")]


def test_without_queues_a_labelled_job_runs_unmanaged() -> None:
    """No ClusterQueue or LocalQueue: nothing changes (Kueue is not set up); the Job runs at once."""
    report = schedule_objects([node("n1"), queued_job("a", "1")])
    assert report.kueue is None and not report.state.workloads
    assert [a.scheduled for a in report.attempts] == [True]


def test_unlabelled_jobs_are_not_managed() -> None:
    """manageJobsWithoutQueueName defaults to false: a Job without the label is not Kueue's."""
    plain = job("plain", cpu="1")
    sim = simulate_objects([*kueue_basics(1), queued_job("a", "1"), plain])
    assert list(_admitted_at(sim)) == ["job-a"]
    assert sim.result.pods_succeeded == 2


def test_view_counts_usage_and_borrowing() -> None:
    """cluster_queue.md: usage per flavor and resource; borrowed = usage beyond nominal quota (cohort lending)."""
    objects = [node("n1", cpu="16"), resource_flavor("default"), cpu_queue("a", 2, cohort="research"),
               cpu_queue("b", 4, cohort="research"), local_queue("lq", "a", namespace="default"),
               queued_job("x", "3", run_for="1h")]
    report = schedule_objects(objects)
    assert report.kueue is not None
    by_name = {q.name: q for q in report.kueue.cluster_queues}
    assert by_name["a"].usage == {("default", "cpu"): 3000} and by_name["a"].borrowed == {("default", "cpu"): 1000}
    assert (by_name["a"].admitted, by_name["a"].pending, by_name["b"].admitted) == (1, 0, 0)


@dataclass(frozen=True)
class ConditionCase:
    name: str
    before: list[dict[str, str]]
    new: dict[str, str]
    after: list[dict[str, str]]


def _c(kind: str, status: str, time: str, reason: str = "R") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": "", "lastTransitionTime": time}


CONDITION_CASES = [  # apimachinery meta.SetStatusCondition
    ConditionCase("new-type-appended", [_c("QuotaReserved", "True", "t0")], _c("Admitted", "True", "t1"),
                  [_c("QuotaReserved", "True", "t0"), _c("Admitted", "True", "t1")]),
    ConditionCase("same-status-keeps-transition-time", [_c("QuotaReserved", "False", "t0", "A")],
                  _c("QuotaReserved", "False", "t1", "B"), [_c("QuotaReserved", "False", "t0", "B")]),
    ConditionCase("status-change-in-place", [_c("QuotaReserved", "False", "t0"), _c("Admitted", "False", "t0")],
                  _c("QuotaReserved", "True", "t1"),
                  [_c("QuotaReserved", "True", "t1"), _c("Admitted", "False", "t0")]),
]


@pytest.mark.parametrize("case", CONDITION_CASES, ids=lambda c: c.name)
def test_set_condition(case: ConditionCase) -> None:
    assert set_condition(case.before, case.new) == case.after


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "0s"), (119, "119s"), (120, "2m"), (150, "2m30s"), (600, "10m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"),
    (8 * 3600, "8h"), (49 * 3600, "2d1h"), (9 * 86400, "9d"), (800 * 86400, "2y70d"),
])
def test_human_duration(seconds: int, shown: str) -> None:
    """apimachinery/pkg/util/duration HumanDuration: the AGE kubectl prints."""
    assert human_duration(seconds) == shown


def test_integrations_beyond_those_modelled_are_noted() -> None:
    """apis/config/v1beta2 integrations.frameworks: batch/job, pod, deployment and statefulset are modelled; the
    others are said, not dropped, and a missing dependency (jobframework DependencyList) is said too."""
    config = configuration(integrations={"frameworks": ["batch/job", "pod", "jobset.x-k8s.io/jobset",
                                                        "statefulset"]})
    report = schedule_objects([*kueue_basics(4), config, queued_job("a", "1")])
    assert report.kueue is not None
    [note] = [n for n in report.kueue.notes if "integrations.frameworks jobset" in n]
    assert note.endswith("Kueue Configuration: integrations.frameworks jobset.x-k8s.io/jobset: only batch/job, pod, "
                         "deployment, statefulset are modelled; the workloads of the others run as if Kueue did not "
                         "manage them")
    assert not [n for n in report.kueue.notes if "depends on" in n]
    config = configuration(integrations={"frameworks": ["batch/job", "deployment"]})
    report = schedule_objects([*kueue_basics(4), config, queued_job("a", "1")])
    assert report.kueue is not None
    [note] = [n for n in report.kueue.notes if "depends on" in n]
    assert note.endswith('integrations.frameworks: "deployment" depends on "pod", which is not enabled: Kueue does '
                         'not start (add "pod")')
    config = configuration(manageJobsWithoutQueueName=True, integrations={"frameworks": ["batch/job"]})
    report = schedule_objects([*kueue_basics(4), config, queued_job("a", "1")])
    assert report.kueue is not None
    [note] = [n for n in report.kueue.notes if "not modelled" in n]
    assert note.endswith("Kueue Configuration: manageJobsWithoutQueueName: not modelled; Kueue manages only what "
                         "carries a kueue.x-k8s.io/queue-name label, outside kube-system and kueue-system (its "
                         "defaults)")


def _workload_object(name: str, cpu: str, count: int = 1) -> Raw:
    """A Workload written directly (as Kueue's performance tests create them), without a Job."""
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": count, "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}}]}}


def test_workloads_written_directly_are_queued() -> None:
    """test/performance/scheduler: Workloads created without a Job are admitted by the same cycle; admitted,
    they start nothing, and their runner finishes them (finish_workload), which frees the quota."""
    objects = [*kueue_basics(4), _workload_object("w1", "3"), _workload_object("w2", "3")]
    report = schedule_objects(objects)
    assert report.kueue is not None
    admitted = {w.key: w.admitted_at for w in report.kueue.workloads}
    assert admitted == {"default/w1": 0.0, "default/w2": None}
    assert report.attempts == []  # no pods: nothing to schedule
    sim = simulate_objects(objects)
    assert sim.kueue is not None
    sim.kueue.finish_workload("default/w1")
    sim.kueue.engine.run(sim.kueue.engine.now() + 1)  # requeued in the cohort's 1 s batch
    assert {w.key: w.admitted_at is not None for w in sim.kueue.view().workloads} == \
        {"default/w1": True, "default/w2": True}

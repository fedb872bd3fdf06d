"""The pods the workload controllers create: whole objects per controller, priority admission, rejections.

Random name suffixes come from :class:`AlphabetRng`, whose ``choice`` walks the safe alphabet in order, so
the n-th generated name ends in a known suffix (``bcdfg``, ``hjklm``, ``npqrs``, ...). Determinism with a
real ``random.Random`` is checked separately.
"""

from __future__ import annotations

import copy
import random
import re
import uuid
from typing import Any

import pytest

from dratwin.cluster.naming import SAFE_ALPHABET, indexed_job_generate_name, object_uid, safe_encode, template_hash
from dratwin.cluster.workload_results import Rejection, WorkloadExpansion
from dratwin.cluster.workloads import SIMULATION_EPOCH, expand_workloads
from dratwin.errors import InputError, ObjectDecodeError

Raw = dict[str, Any]
SUFFIXES = ["bcdfg", "hjklm", "npqrs", "tvwxz", "24567", "89bcd", "fghjk"]


class AlphabetRng(random.Random):
    """``choice`` returns the alphabet's characters in order, wrapping around."""

    def __init__(self) -> None:
        super().__init__(0)
        self.calls = 0

    def choice(self, seq: Any) -> Any:
        value = seq[self.calls % len(seq)]
        self.calls += 1
        return value


def expand(*objects: Raw, **kwargs: Any) -> WorkloadExpansion:
    """Expands, and checks on the way that no input object was modified."""
    before = copy.deepcopy(list(objects))
    result = expand_workloads(list(objects), AlphabetRng(), **kwargs)
    assert list(objects) == before, "expand_workloads mutated its input"
    return result


CONTAINER = {"name": "main", "image": "registry.example/train:1", "resources": {"claims": [{"name": "gpu"}]}}
CLAIMS = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def pod_template(labels: dict[str, str], **spec: Any) -> Raw:
    return {"metadata": {"labels": labels, "annotations": {"team": "ml"}},
            "spec": {"containers": [CONTAINER], "resourceClaims": CLAIMS, **spec}}


def deployment(name: str = "web", replicas: int | None = 2, **spec: Any) -> Raw:
    body: Raw = {"selector": {"matchLabels": {"app": name}}, "template": pod_template({"app": name}), **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ml", "annotations": {
                "owner": "team-a", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": body}


def replica_set(name: str = "rs", replicas: int | None = 2) -> Raw:
    body: Raw = {"selector": {"matchLabels": {"app": name}}, "template": pod_template({"app": name})}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "ml"},
            "spec": body}


def job(name: str = "train", template_labels: dict[str, str] | None = None, restart: str | None = "Never",
        **spec: Any) -> Raw:
    template = pod_template(template_labels or {})
    if restart is not None:
        template["spec"]["restartPolicy"] = restart
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"template": template, **spec}}


def stateful_set(name: str = "db", replicas: int | None = 3, **spec: Any) -> Raw:
    body: Raw = {"serviceName": name, "selector": {"matchLabels": {"app": name}},
                 "template": pod_template({"app": name}), **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "ml"},
            "spec": body}


def bare_pod(name: str = "solo", namespace: str | None = "ml", **spec: Any) -> Raw:
    meta: Raw = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [CONTAINER], **spec}}


def priority_class(name: str, value: int, default: bool = False, policy: str | None = None) -> Raw:
    obj: Raw = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value}
    if default:
        obj["globalDefault"] = True
    if policy:
        obj["preemptionPolicy"] = policy
    return obj


def uid(api_version: str, kind: str, name: str, namespace: str = "ml") -> str:
    return object_uid(api_version, kind, namespace, name)


def names(result: WorkloadExpansion) -> list[str]:
    return [p["metadata"]["name"] for p in result.pods]


DEFAULT_PRIORITY = {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"}


# ---- helpers -------------------------------------------------------------------------------------


def test_safe_encode_maps_digits_like_upstream() -> None:
    # '0'..'9' are bytes 48..57; modulo 27 they land on alphabet positions 21..26, 0..3.
    assert safe_encode("0123456789") == "456789bcdf"


def test_template_hash_is_stable_short_and_sensitive() -> None:
    a = {"metadata": {"labels": {"app": "x", "tier": "y"}}, "spec": {"containers": [CONTAINER]}}
    reordered = {"spec": {"containers": [CONTAINER]}, "metadata": {"labels": {"tier": "y", "app": "x"}}}
    changed = {"metadata": {"labels": {"app": "x", "tier": "z"}}, "spec": {"containers": [CONTAINER]}}
    assert template_hash(a) == template_hash(reordered)
    assert template_hash(a) != template_hash(changed)
    assert re.fullmatch(r"[456789bcdf]{1,10}", template_hash(a))


@pytest.mark.parametrize(("api_version", "kind", "namespace", "name"), [
    ("v1", "Pod", "default", "web-0"),
    ("resource.k8s.io/v1", "ResourceClaim", "ml", "train-0-gpu-x7k2q"),
    ("apps/v1", "Deployment", "équipe", "名前"),  # non-ASCII is hashed as UTF-8
    ("batch/v1", "Job", "", ""),
], ids=["pod", "generated-claim", "non-ascii", "empty-names"])
def test_object_uid_is_the_uuid5_of_group_kind_namespace_and_name(
    api_version: str, kind: str, namespace: str, name: str
) -> None:
    group = api_version.rpartition("/")[0]
    namespace_uuid = uuid.UUID("6f1c8e2a-3b7d-5e4f-9a10-d7a7f1e0c0de")
    assert object_uid(api_version, kind, namespace, name) == str(uuid.uuid5(namespace_uuid,
                                                                             f"{group}/{kind}/{namespace}/{name}"))


def test_object_uid_is_a_stable_uuid_per_kind_namespace_and_name() -> None:
    first = object_uid("apps/v1", "Deployment", "ml", "web")
    assert uuid.UUID(first).version == 5
    assert first == object_uid("apps/v1", "Deployment", "ml", "web")
    assert len({first, object_uid("apps/v1", "StatefulSet", "ml", "web"),
                object_uid("apps/v1", "Deployment", "other", "web"),
                object_uid("apps/v1", "Deployment", "ml", "api")}) == 4


@pytest.mark.parametrize(("job_name", "index", "expected"), [
    ("train", 0, "train-0-"),
    ("train", 12, "train-12-"),
    ("j" * 60, 3, "j" * 55 + "-3-"),  # cut to 58 characters, the index kept
    ("j" * 54, 100, "j" * 53 + "-100-"),
])
def test_indexed_job_generate_name_keeps_the_index(job_name: str, index: int, expected: str) -> None:
    assert indexed_job_generate_name(job_name, index) == expected
    assert len(expected) <= 58


# ---- Deployment ----------------------------------------------------------------------------------


def test_deployment_creates_one_replica_set_and_its_pods() -> None:
    result = expand(deployment())
    template = pod_template({"app": "web"})
    pod_hash = template_hash(template)
    rs_name = f"web-{pod_hash}"
    labels = {"app": "web", "pod-template-hash": pod_hash}
    assert result.replica_sets == ({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name, "namespace": "ml", "uid": uid("apps/v1", "ReplicaSet", rs_name),
            "creationTimestamp": SIMULATION_EPOCH, "labels": labels,
            "annotations": {"owner": "team-a", "deployment.kubernetes.io/desired-replicas": "2",
                            "deployment.kubernetes.io/max-replicas": "3", "deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                 "uid": uid("apps/v1", "Deployment", "web"), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels, "annotations": {"team": "ml"}},
                              "spec": template["spec"]}},
    },)
    expected_pods = []
    for suffix in SUFFIXES[:2]:
        name = f"{rs_name}-{suffix}"
        expected_pods.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": name, "generateName": f"{rs_name}-", "namespace": "ml", "uid": uid("v1", "Pod", name),
                "creationTimestamp": SIMULATION_EPOCH, "labels": labels, "annotations": {"team": "ml"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name,
                                     "uid": uid("apps/v1", "ReplicaSet", rs_name), "controller": True,
                                     "blockOwnerDeletion": True}],
            },
            "spec": {**template["spec"], **DEFAULT_PRIORITY},
            "status": {"phase": "Pending"},
        })
    assert list(result.pods) == expected_pods
    assert [str(n) for n in result.notes] == [f"Deployment ml/web: 2 replicas → ReplicaSet {rs_name}",
                                              f"ReplicaSet ml/{rs_name}: 2 pods"]
    assert result.rejections == ()


@pytest.mark.parametrize(("replicas", "strategy", "pods", "max_replicas"), [
    (None, {}, 1, "2"),  # replicas default 1; maxSurge 25% of 1 rounds up to 1
    (4, {}, 4, "5"),
    (10, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}}, 10, "15"),
    (3, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}, 3, "5"),
    (3, {"type": "Recreate"}, 3, "3"),
    (0, {}, 0, "0"),
])
def test_deployment_replicas_and_max_replicas_annotation(
    replicas: int | None, strategy: Raw, pods: int, max_replicas: str
) -> None:
    extra: Raw = {"strategy": strategy} if strategy else {}
    obj = deployment("web", replicas, **extra)
    result = expand(obj)
    (rs,) = result.replica_sets
    assert rs["spec"]["replicas"] == pods
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == max_replicas
    assert len(result.pods) == pods


def test_a_changed_template_gives_another_replica_set_name() -> None:
    first = expand(deployment()).replica_sets[0]["metadata"]["name"]
    changed = deployment()
    changed["spec"]["template"]["spec"]["containers"] = [{**CONTAINER, "image": "registry.example/train:2"}]
    second = expand(changed).replica_sets[0]["metadata"]["name"]
    assert first != second and first.startswith("web-") and second.startswith("web-")


def test_paused_deployment_creates_nothing() -> None:
    result = expand(deployment(paused=True))
    assert (result.pods, result.replica_sets) == ((), ())
    assert "paused" in str(result.notes[0])


# ---- ReplicaSet ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("replicas", "expected"), [(None, 1), (0, 0), (3, 3)])
def test_replica_set_pods(replicas: int | None, expected: int) -> None:
    result = expand(replica_set(replicas=replicas))
    assert names(result) == [f"rs-{s}" for s in SUFFIXES[:expected]]
    for pod in result.pods:
        assert pod["metadata"]["generateName"] == "rs-"
        assert pod["metadata"]["labels"] == {"app": "rs"}
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": uid("apps/v1", "ReplicaSet", "rs"),
            "controller": True, "blockOwnerDeletion": True}]
    assert result.replica_sets == ()  # only a Deployment's ReplicaSets are new objects


def test_long_replica_set_name_is_cut_before_the_suffix() -> None:
    name = "r" * 70
    obj = replica_set(name=name, replicas=1)
    result = expand(obj)
    assert names(result) == ["r" * 58 + SUFFIXES[0]]
    assert result.pods[0]["metadata"]["generateName"] == name + "-"


# ---- Job -----------------------------------------------------------------------------------------


def job_labels(name: str = "train") -> dict[str, str]:
    job_uid = uid("batch/v1", "Job", name)
    return {"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": job_uid,
            "batch.kubernetes.io/controller-uid": job_uid}


def test_non_indexed_job_pod_whole_object() -> None:
    result = expand(job())
    name = f"train-{SUFFIXES[0]}"
    assert list(result.pods) == [{
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "generateName": "train-", "namespace": "ml", "uid": uid("v1", "Pod", name),
            "creationTimestamp": SIMULATION_EPOCH, "labels": job_labels(), "annotations": {"team": "ml"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                 "uid": uid("batch/v1", "Job", "train"), "controller": True,
                                 "blockOwnerDeletion": True}],
            "finalizers": ["batch.kubernetes.io/job-tracking"],
        },
        "spec": {"containers": [CONTAINER], "resourceClaims": CLAIMS, "restartPolicy": "Never", **DEFAULT_PRIORITY},
        "status": {"phase": "Pending"},
    }]
    assert str(result.notes[0]) == "Job ml/train: NonIndexed, parallelism 1, completions 1: 1 pod"


@pytest.mark.parametrize(("parallelism", "completions", "pods"), [
    (None, None, 1),  # both default to 1
    (3, None, 3),  # a work queue: parallelism pods
    (None, 4, 1),  # parallelism defaults to 1
    (3, 2, 2),  # never more pods than completions
    (2, 5, 2),
    (0, 5, 0),
    (4, 0, 0),
])
def test_job_active_pods(parallelism: int | None, completions: int | None, pods: int) -> None:
    spec: Raw = {k: v for k, v in (("parallelism", parallelism), ("completions", completions)) if v is not None}
    result = expand(job("train", None, "Never", **spec))
    assert names(result) == [f"train-{s}" for s in SUFFIXES[:pods]]


def test_indexed_job_pods_carry_their_index() -> None:
    result = expand(job(completionMode="Indexed", completions=4, parallelism=3, backoffLimitPerIndex=1))
    assert names(result) == [f"train-{i}-{SUFFIXES[i]}" for i in range(3)]
    for index, pod in enumerate(result.pods):
        meta, spec = pod["metadata"], pod["spec"]
        assert meta["generateName"] == f"train-{index}-"
        assert meta["labels"] == {**job_labels(), "batch.kubernetes.io/job-completion-index": str(index)}
        assert meta["annotations"] == {"team": "ml", "batch.kubernetes.io/job-completion-index": str(index),
                                       "batch.kubernetes.io/job-index-failure-count": "0"}
        assert spec["hostname"] == f"train-{index}"
        assert spec["containers"] == [{**CONTAINER, "env": [{
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}},
        }]}]
    assert "the rest as pods succeed (up to 4 completions)" in str(result.notes[0])


def test_suspended_job_has_no_pods() -> None:
    result = expand(job(suspend=True, parallelism=4))
    assert result.pods == ()
    assert str(result.notes[0]).startswith("Job ml/train: suspended: no pods")


def test_job_managed_by_another_controller_has_no_pods() -> None:
    result = expand(job(managedBy="kueue.x-k8s.io/multikueue"))
    assert result.pods == ()
    assert "kueue.x-k8s.io/multikueue" in str(result.notes[0])


def test_manual_selector_job_keeps_the_users_labels() -> None:
    obj = job(template_labels={"run": "a"}, manualSelector=True, selector={"matchLabels": {"run": "a"}})
    result = expand(obj)
    assert result.pods[0]["metadata"]["labels"] == {"run": "a"}


@pytest.mark.parametrize(("obj", "message"), [
    (job(completionMode="Indexed"),
     'Job.batch "train" is invalid: spec.completions: Required value: when completion mode is Indexed'),
    (job(restart=None),
     'Job.batch "train" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
     'supported values: "OnFailure", "Never"'),
    (job(completionMode="Sequential"),
     'Job.batch "train" is invalid: spec.completionMode: Unsupported value: "Sequential": supported values: '
     '"NonIndexed", "Indexed"'),
    (job(parallelism=-1),
     'Job.batch "train" is invalid: spec.parallelism: Invalid value: -1: must be greater than or equal to 0'),
    (job(manualSelector=True),
     'Job.batch "train" is invalid: spec.selector: Required value'),
    (job(selector={"matchLabels": {"a": "b"}}),
     'Job.batch "train" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{'
     f'"a":"b", "batch.kubernetes.io/controller-uid":"{object_uid("batch/v1", "Job", "ml", "train")}"}}, '
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated"),
])
def test_invalid_jobs_are_rejected_with_the_api_servers_words(obj: Raw, message: str) -> None:
    result = expand(obj)
    assert result.pods == ()
    (rejection,) = result.rejections
    assert (rejection.workload, rejection.stage, rejection.kind, rejection.name, rejection.count) == \
        ("Job ml/train", "validation", "Job", "train", 1)
    assert rejection.message == message
    assert rejection.hint


# ---- StatefulSet ---------------------------------------------------------------------------------


def test_stateful_set_pods_whole_object() -> None:
    obj = stateful_set(replicas=2, volumeClaimTemplates=[{"metadata": {"name": "data"}}])
    obj["spec"]["template"]["spec"]["volumes"] = [{"name": "cache", "emptyDir": {}}]
    result = expand(obj)
    template = obj["spec"]["template"]
    revision = f"db-{template_hash({'spec': {'template': template}})}"
    expected = []
    for ordinal in range(2):
        name = f"db-{ordinal}"
        expected.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": name, "namespace": "ml", "uid": uid("v1", "Pod", name), "creationTimestamp": SIMULATION_EPOCH,
                "labels": {"app": "db", "statefulset.kubernetes.io/pod-name": name,
                           "apps.kubernetes.io/pod-index": str(ordinal), "controller-revision-hash": revision},
                "annotations": {"team": "ml"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                     "uid": uid("apps/v1", "StatefulSet", "db"), "controller": True,
                                     "blockOwnerDeletion": True}],
            },
            "spec": {"containers": [CONTAINER], "resourceClaims": CLAIMS,
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{ordinal}"}},
                                 {"name": "cache", "emptyDir": {}}],
                     "hostname": name, "subdomain": "db", **DEFAULT_PRIORITY},
            "status": {"phase": "Pending"},
        })
    assert list(result.pods) == expected
    assert result.ordered_after == {"ml/db-1": "ml/db-0"}


@pytest.mark.parametrize(("spec", "pod_names", "ordered_after"), [
    ({}, ["db-0", "db-1", "db-2"], {"ml/db-1": "ml/db-0", "ml/db-2": "ml/db-1"}),
    ({"podManagementPolicy": "Parallel"}, ["db-0", "db-1", "db-2"], {}),
    ({"ordinals": {"start": 5}}, ["db-5", "db-6", "db-7"], {"ml/db-6": "ml/db-5", "ml/db-7": "ml/db-6"}),
])
def test_stateful_set_ordinals_and_ordering(spec: Raw, pod_names: list[str], ordered_after: dict[str, str]) -> None:
    result = expand(stateful_set(**spec))
    assert names(result) == pod_names
    assert dict(result.ordered_after) == ordered_after


def test_stateful_set_without_replicas_has_one_pod() -> None:
    assert names(expand(stateful_set(replicas=None))) == ["db-0"]


# ---- validation of apps/v1 selectors -------------------------------------------------------------


@pytest.mark.parametrize(("selector", "message"), [
    (None, 'Deployment.apps "web" is invalid: spec.selector: Required value'),
    ({}, 'Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
         "map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid "
         "for deployment"),
    ({"matchLabels": {"app": "api"}},
     'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
     'map[string]string{"app":"web"}: `selector` does not match template `labels`'),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
     'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
     'map[string]string{"app":"web"}: `selector` does not match template `labels`'),
])
def test_deployment_selector_must_match_its_template(selector: Raw | None, message: str) -> None:
    obj = deployment()
    if selector is None:
        del obj["spec"]["selector"]
    else:
        obj["spec"]["selector"] = selector
    result = expand(obj)
    assert (result.pods, result.replica_sets) == ((), ())
    assert [r.message for r in result.rejections] == [message]


def test_selector_expressions_that_match_are_accepted() -> None:
    obj = deployment(replicas=1)
    obj["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]},
                                                    {"key": "tier", "operator": "DoesNotExist"}]}
    assert len(expand(obj).pods) == 1


# ---- priority admission --------------------------------------------------------------------------


@pytest.mark.parametrize(("classes", "spec", "expected"), [
    ([], {}, {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"}),
    ([priority_class("high", 1000)], {"priorityClassName": "high"},
     {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"}),
    ([priority_class("batch", 10, policy="Never")], {"priorityClassName": "batch"},
     {"priorityClassName": "batch", "priority": 10, "preemptionPolicy": "Never"}),
    ([], {"priorityClassName": "system-node-critical"},
     {"priorityClassName": "system-node-critical", "priority": 2000001000, "preemptionPolicy": "PreemptLowerPriority"}),
    ([], {"priorityClassName": "system-cluster-critical"},
     {"priorityClassName": "system-cluster-critical", "priority": 2000000000,
      "preemptionPolicy": "PreemptLowerPriority"}),
    # the global default applies when none is named; of two defaults the lower value wins
    ([priority_class("normal", 100, default=True), priority_class("low", 5, default=True)], {},
     {"priorityClassName": "low", "priority": 5, "preemptionPolicy": "PreemptLowerPriority"}),
    ([priority_class("normal", 100, default=True), priority_class("high", 1000)], {"priorityClassName": "high"},
     {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"}),
    ([priority_class("high", 1000)], {"priorityClassName": "high", "priority": 1000},
     {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"}),
])
def test_priority_resolution(classes: list[Raw], spec: Raw, expected: Raw) -> None:
    obj = job(parallelism=2)
    obj["spec"]["template"]["spec"].update(spec)
    result = expand(*classes, obj, bare_pod(**spec))
    assert len(result.pods) == 3
    for pod in result.pods:
        got = {k: pod["spec"][k] for k in ("priorityClassName", "priority", "preemptionPolicy") if k in pod["spec"]}
        assert got == expected


def test_unknown_priority_class_rejects_every_pod_at_admission() -> None:
    classes = [priority_class("high", 1000)]
    dep, sts, jb, pod = deployment(replicas=3), stateful_set(replicas=2), job(parallelism=2), bare_pod()
    for obj in (dep, sts, jb, pod):
        template_spec = obj["spec"]["template"]["spec"] if "template" in obj["spec"] else obj["spec"]
        template_spec["priorityClassName"] = "hihg"
    result = expand(*classes, dep, sts, jb, pod)
    assert result.pods == ()
    rs_name = result.replica_sets[0]["metadata"]["name"]  # the ReplicaSet exists; its pods do not
    reason = "no PriorityClass with name hihg was found"
    hint = 'did you mean "high"? known classes: high, system-cluster-critical, system-node-critical'
    assert list(result.rejections) == [
        Rejection(f"ReplicaSet ml/{rs_name}", "admission", "Pod", f"{rs_name}-", 3,
                  f'pods "{rs_name}-" is forbidden: {reason}', hint),
        Rejection("StatefulSet ml/db", "admission", "Pod", "db-0", 2, f'pods "db-0" is forbidden: {reason}', hint),
        Rejection("Job ml/train", "admission", "Pod", "train-", 2, f'pods "train-" is forbidden: {reason}', hint),
        Rejection("Pod ml/solo", "admission", "Pod", "solo", 1, f'pods "solo" is forbidden: {reason}', hint),
    ]
    assert str(result.rejections[2]) == \
        f'Job ml/train: 2 Pods rejected at admission: pods "train-" is forbidden: {reason} ({hint})'


def test_a_priority_written_in_the_pod_must_match_its_class() -> None:
    result = expand(priority_class("high", 1000), bare_pod(priorityClassName="high", priority=7))
    assert result.pods == ()
    assert result.rejections[0].message == (
        'pods "solo" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
        "priority admission controller computed 1000 from the given PriorityClass name")


# ---- bare pods, order, names ---------------------------------------------------------------------


def test_bare_pods_keep_what_was_written_and_get_defaults() -> None:
    written = bare_pod(namespace=None)
    imported = bare_pod(name="imported")
    imported["metadata"].update({"uid": "u-1", "creationTimestamp": "2025-05-05T00:00:00Z"})
    imported["status"] = {"phase": "Running", "hostIP": "10.0.0.1"}
    result = expand(written, imported)
    assert list(result.pods) == [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "solo", "namespace": "default", "uid": uid("v1", "Pod", "solo", "default"),
                      "creationTimestamp": SIMULATION_EPOCH},
         "spec": {"containers": [CONTAINER], **DEFAULT_PRIORITY}, "status": {"phase": "Pending"}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "imported", "namespace": "ml", "uid": "u-1", "creationTimestamp": "2025-05-05T00:00:00Z"},
         "spec": {"containers": [CONTAINER], **DEFAULT_PRIORITY},
         "status": {"phase": "Running", "hostIP": "10.0.0.1"}},
    ]


def test_pods_come_in_input_order_then_index() -> None:
    result = expand(bare_pod("first"), job(parallelism=2), stateful_set(replicas=2), bare_pod("last"))
    assert names(result) == ["first", f"train-{SUFFIXES[0]}", f"train-{SUFFIXES[1]}", "db-0", "db-1", "last"]


def test_creation_timestamp_comes_from_the_caller() -> None:
    result = expand(job(), creation_timestamp="2026-03-04T05:06:07Z")
    assert result.pods[0]["metadata"]["creationTimestamp"] == "2026-03-04T05:06:07Z"


def test_generated_names_avoid_names_already_taken() -> None:
    # The first draw would give train-bcdfg, which a bare pod already holds: the next draw is used.
    result = expand(job(), bare_pod(f"train-{SUFFIXES[0]}"))
    assert names(result) == [f"train-{SUFFIXES[1]}", f"train-{SUFFIXES[0]}"]


def test_a_pod_name_used_twice_is_rejected_the_second_time() -> None:
    result = expand(bare_pod("db-0"), stateful_set(replicas=2), bare_pod("db-0"))
    assert names(result) == ["db-0", "db-1"]
    assert [(r.workload, r.stage, r.message) for r in result.rejections] == [
        ("StatefulSet ml/db", "creation", 'pods "db-0" already exists'),
        ("Pod ml/db-0", "creation", 'pods "db-0" already exists'),
    ]


def test_workload_with_generate_name_gets_a_name() -> None:
    obj = job()
    obj["metadata"] = {"generateName": "train-", "namespace": "ml"}
    result = expand(obj)
    job_name = f"train-{SUFFIXES[0]}"
    assert result.pods[0]["metadata"]["ownerReferences"][0]["name"] == job_name
    assert names(result) == [f"{job_name}-{SUFFIXES[1]}"]


def test_object_without_any_name_is_bad_input() -> None:
    obj = job()
    del obj["metadata"]["name"]
    with pytest.raises(InputError, match=r"Job in namespace ml: metadata.name or metadata.generateName is required"):
        expand(obj)


def test_malformed_workload_fields_raise_with_the_field_path() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "three"
    with pytest.raises(ObjectDecodeError, match=r"Deployment ml/web.*spec.replicas"):
        expand(obj)


def test_unmodelled_kinds_say_so_and_other_objects_are_ignored() -> None:
    daemon = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
              "spec": {}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}}
    result = expand(daemon, slice_)
    assert result.pods == ()
    assert [n.workload for n in result.notes] == ["DaemonSet kube-system/agent"]
    assert "node list" in result.notes[0].message


def test_seeded_runs_are_reproducible_and_seeds_differ() -> None:
    objects = [deployment(replicas=3), job(parallelism=3), replica_set(replicas=2)]
    first = expand_workloads(objects, random.Random(42))
    again = expand_workloads(objects, random.Random(42))
    other = expand_workloads(objects, random.Random(43))
    assert first == again
    assert names(first) != names(other)
    generated = names(first)
    assert len(set(generated)) == len(generated) == 8
    suffix = f"[{SAFE_ALPHABET}]{{5}}"
    assert all(re.fullmatch(rf"(web-[456789bcdf]+|train|rs)-{suffix}", n) for n in generated)


def test_result_objects_do_not_share_structure() -> None:
    result = expand(deployment(replicas=2))
    first, second = result.pods
    first["metadata"]["labels"]["changed"] = "yes"
    first["metadata"]["ownerReferences"][0]["name"] = "changed"
    first["spec"]["containers"][0]["image"] = "changed"
    assert "changed" not in second["metadata"]["labels"]
    assert second["metadata"]["ownerReferences"][0]["name"] != "changed"
    assert second["spec"]["containers"][0]["image"] != "changed"
    assert result.replica_sets[0]["spec"]["template"]["spec"]["containers"][0]["image"] != "changed"


def test_completion_index_env_is_added_once_to_every_container() -> None:
    obj = job(completionMode="Indexed", completions=1)
    spec = obj["spec"]["template"]["spec"]
    own = {"name": "JOB_COMPLETION_INDEX", "value": "mine"}
    spec["containers"] = [{"name": "main", "env": [own]}, {"name": "sidecar"}]
    spec["initContainers"] = [{"name": "init"}]
    (pod,) = expand(obj).pods
    from_label = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}
    assert [c["env"] for c in pod["spec"]["containers"]] == [[own], [from_label]]
    assert [c["env"] for c in pod["spec"]["initContainers"]] == [[from_label]]

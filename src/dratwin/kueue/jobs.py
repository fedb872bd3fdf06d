"""The Workloads Kueue makes from jobs, and what it changes in a job when it suspends and admits it.

Follows Kueue's job framework (kubernetes-sigs/kueue v0.17, ``pkg/controller/jobframework``): a job
labelled ``kueue.x-k8s.io/queue-name`` gets one Workload, named by ``workload_names.go`` (the lower-case
kind, the owner's name, a dash and the first 5 hex digits of a SHA-1 of kind, group, name and uid, the
prefix cut to 247 characters), owned by the job (controller reference), labelled with the job's uid and
carrying Kueue's ``resource-in-use`` finalizer (``interface.go`` NewWorkload, ``reconciler.go``
ConstructWorkload). The PodSets are those each integration builds:

- **batch/v1 Job** (``jobs/job``): one PodSet ``main`` of ``min(parallelism, completions)`` pods, the pod
  template without the job controller's legacy labels, ``minCount`` from the
  ``kueue.x-k8s.io/job-min-parallelism`` annotation (partial admission);
- **plain pod groups** (``jobs/pod``): pods labelled ``kueue.x-k8s.io/pod-group-name`` make one Workload named
  by the group; pods of one role (the hash of the fields that matter for admission, ``util/pod`` role hash)
  make one PodSet named by that hash, PodSets sorted by name; a single pod without a group is a Workload of
  its own (``pod-<name>-<hash>``), which is how a Deployment's pods are admitted (``jobs/deployment``);
- **StatefulSet** (``jobs/statefulset``): its pods form a pod group named ``statefulset-<name>-<hash>`` (the
  hash taken with an empty uid) of ``replicas`` pods. The webhooks and gates of these integrations are in
  :mod:`dratwin.kueue.pods`.

The role hash is SHA-256 of the Go JSON of the pod's admission shape; dratwin writes that JSON from the
object as written, which is Go's byte for byte when the struct-valued fields it includes (affinity,
tolerations, resource claims, ports, topology spread) are absent or written in the Go types' field order.

A job is suspended on creation (the webhook sets ``spec.suspend: true``) and unsuspended on admission,
when Kueue merges each assigned flavor's ``nodeLabels`` into the pod template's ``nodeSelector`` and
appends its ``tolerations`` (``pkg/podset`` FromAssignment and Merge); a nodeSelector key the flavor sets
to another value is a conflict Kueue refuses. A PodSet placed by topology-aware scheduling also gets the
``kueue.x-k8s.io/topology`` scheduling gate (and, when TAS was implied, the unconstrained annotation); the
ungater later gives each pod its domain's nodeSelector (:mod:`dratwin.kueue.tas.encoding`). With the
``TopologyAwareScheduling`` gate on (the default) every PodSet carries the ``topologyRequest`` its pod
template's annotations make (:func:`dratwin.kueue.tas.request.topology_request`), with the integration's
pod index label.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.api.kueue import (
    API_VERSION,
    DEFAULT_POD_SET_NAME,
    JOB_UID_LABEL,
    POD_GROUP_NAME_LABEL,
    POD_GROUP_TOTAL_COUNT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    ResourceFlavor,
)
from dratwin.api.quantity import Quantity
from dratwin.kueue.tas.encoding import gated
from dratwin.kueue.tas.request import (
    JOB_COMPLETION_INDEX,
    POD_GROUP_POD_INDEX_LABEL,
    PREFERRED_ANNOTATION,
    REQUIRED_ANNOTATION,
    UNCONSTRAINED_ANNOTATION,
    annotation_problems,
    topology_request,
)

Raw = dict[str, Any]

HASH_LENGTH = 5
MAX_WORKLOAD_NAME = 253
MAX_PREFIX = MAX_WORKLOAD_NAME - 1 - HASH_LENGTH
ROLE_HASH_LENGTH = 8
RESOURCE_IN_USE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
# Labels the job controller manages on pod templates that Kueue drops from the PodSet (job-name stays).
JOB_CONTROLLER_LABELS = ("job-name", "controller-uid", "batch.kubernetes.io/controller-uid")
WORKLOAD_PRIORITY_CLASS = ("kueue.x-k8s.io", "WorkloadPriorityClass")
POD_PRIORITY_CLASS = ("scheduling.k8s.io", "PriorityClass")
# (group, kind) of the owners, as Kueue hashes them.
JOB_GVK = ("batch", "Job")
POD_GVK = ("", "Pod")
STATEFULSET_GVK = ("apps", "StatefulSet")


@dataclass(frozen=True)
class NotQueued:
    """A job Kueue does not make a Workload for (or cannot): why, in Kueue's terms."""

    reason: str


@dataclass(frozen=True)
class Priorities:
    """The priority classes of the cluster: WorkloadPriorityClass and PriorityClass names → values."""

    workload: Mapping[str, int]
    pod: Mapping[str, int]


NO_PRIORITIES = Priorities({}, {})


# ---- names ---------------------------------------------------------------------------------------


def workload_name(owner_name: str, owner_uid: str, group: str, kind: str) -> str:
    """``workload_names.go`` GetWorkloadNameForOwnerWithGVK: ``<kind>-<name>-<5 hex of sha1>``."""
    digest = hashlib.sha1(f"{kind}\n{group}\n{owner_name}\n{owner_uid}".encode()).hexdigest()
    prefix = f"{kind.lower()}-{owner_name}"[:MAX_PREFIX]
    return f"{prefix}-{digest[:HASH_LENGTH]}"


def role_hash(pod_spec: Mapping[str, Any]) -> str:
    """``util/pod`` GenerateRoleHash: what of a pod decides its admission, hashed (8 hex digits)."""
    def containers(name: str) -> list[Raw] | None:
        items = pod_spec.get(name)
        if not items:
            return None
        return [{"ports": c.get("ports") or None,
                 "resources": {"requests": _canonical_quantities((c.get("resources") or {}).get("requests"))}}
                for c in items]

    shape = {"spec": {
        "affinity": pod_spec.get("affinity") or None,
        "containers": containers("containers"),
        "initContainers": containers("initContainers"),
        "nodeSelector": dict(sorted(pod_spec["nodeSelector"].items())) if pod_spec.get("nodeSelector") else None,
        "overhead": _canonical_quantities(pod_spec.get("overhead")),
        "priority": pod_spec.get("priority"),
        "resourceClaims": pod_spec.get("resourceClaims") or None,
        "runtimeClassName": pod_spec.get("runtimeClassName"),
        "tolerations": pod_spec.get("tolerations") or None,
        "topologySpreadConstraints": pod_spec.get("topologySpreadConstraints") or None,
    }}
    # Go's encoder: map keys sorted (the shape is made of maps), struct fields as written (see the module note)
    text = json.dumps(shape, separators=(",", ":"), sort_keys=False, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:ROLE_HASH_LENGTH]


def _canonical_quantities(values: Mapping[str, Any] | None) -> dict[str, str] | None:
    if not values:
        return None
    return {name: str(Quantity.parse(value)) for name, value in sorted(values.items())}


# ---- Workloads -----------------------------------------------------------------------------------


def queue_name(obj: Mapping[str, Any]) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(QUEUE_NAME_LABEL) or "")


def workload_for_job(job: Mapping[str, Any], priorities: Priorities = NO_PRIORITIES) -> Raw | NotQueued:
    """The Workload Kueue makes for a batch/v1 Job (``jobs/job`` PodSets)."""
    meta = job.get("metadata") or {}
    if not queue_name(job):
        return NotQueued(f"the Job has no {QUEUE_NAME_LABEL} label: Kueue does not manage it "
                         "(unless manageJobsWithoutQueueName is set)")
    spec = job.get("spec") or {}
    count = int(spec.get("parallelism", 1))
    if spec.get("completions") is not None and int(spec["completions"]) < count:
        count = int(spec["completions"])
    template = _clean_template(spec.get("template") or {})
    pod_set: Raw = {"name": DEFAULT_POD_SET_NAME, "count": count, "template": template}
    minimum = (meta.get("annotations") or {}).get(MIN_PARALLELISM_ANNOTATION)
    if isinstance(minimum, str) and minimum.isdigit():
        pod_set["minCount"] = int(minimum)
    problems = annotation_problems((template.get("metadata") or {}).get("annotations") or {}, count)
    if problems:
        return NotQueued("Kueue's webhook refuses the Job: " + "; ".join(
            f"spec.template.metadata.annotations{f'[{key}]' if key else ''}: {problem}" for key, problem in problems))
    refused = _with_topology_request(pod_set, template, JOB_COMPLETION_INDEX)
    if refused is not None:
        return refused
    return _workload(job, JOB_GVK, [pod_set], priorities, template.get("spec") or {})


def workload_for_pod_group(pods: Sequence[Mapping[str, Any]],
                           priorities: Priorities = NO_PRIORITIES) -> Raw | NotQueued:
    """The Workload of the pods of one ``kueue.x-k8s.io/pod-group-name`` group (``jobs/pod``)."""
    if not pods:
        return NotQueued("the pod group has no pods")
    first = pods[0]
    group = str(((first.get("metadata") or {}).get("labels") or {}).get(POD_GROUP_NAME_LABEL) or "")
    total = ((first.get("metadata") or {}).get("annotations") or {}).get(POD_GROUP_TOTAL_COUNT_ANNOTATION)
    if not group:
        return NotQueued(f"the pod has no {POD_GROUP_NAME_LABEL} label")
    if not (isinstance(total, str) and total.isdigit()):
        return NotQueued(f"failed to extract '{POD_GROUP_TOTAL_COUNT_ANNOTATION}' annotation: the pods of group "
                         f"{group} are not admitted until every pod has it")
    by_role: dict[str, Raw] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        role = role_hash(spec)
        if role in by_role:
            by_role[role]["count"] += 1
        else:
            by_role[role] = {"name": role, "count": 1, "template": {"spec": copy.deepcopy(dict(spec))}}
            refused = _with_topology_request(by_role[role], pod, POD_GROUP_POD_INDEX_LABEL)
            if refused is not None:
                return refused
    pod_sets = [by_role[name] for name in sorted(by_role)]
    return _workload(first, POD_GVK, pod_sets, priorities, first.get("spec") or {}, name=group, own_all=pods)


def workload_for_pod(pod: Mapping[str, Any], priorities: Priorities = NO_PRIORITIES) -> Raw | NotQueued:
    """The Workload of a single queued pod (a Deployment's pods are admitted one by one, ``jobs/deployment``)."""
    if not queue_name(pod):
        return NotQueued(f"the pod has no {QUEUE_NAME_LABEL} label")
    spec = pod.get("spec") or {}
    pod_set: Raw = {"name": DEFAULT_POD_SET_NAME, "count": 1, "template": {"spec": copy.deepcopy(dict(spec))}}
    refused = _with_topology_request(pod_set, pod, POD_GROUP_POD_INDEX_LABEL)
    if refused is not None:
        return refused
    return _workload(pod, POD_GVK, [pod_set], priorities, spec)


def _with_topology_request(pod_set: Raw, source: Mapping[str, Any], index_label: str) -> NotQueued | None:
    """Set the PodSet's ``topologyRequest`` from ``source``'s annotations (a pod template or a pod)."""
    annotations = (source.get("metadata") or {}).get("annotations") or {}
    request = topology_request(annotations, index_label)
    if isinstance(request, str):
        return NotQueued(f"the topology annotations cannot be read: {request}")
    if request is not None:
        pod_set["topologyRequest"] = request
    return None


def statefulset_group_name(name: str) -> str:
    """``jobs/statefulset`` GetWorkloadName: the owner's name with an empty uid (the webhook runs before the
    StatefulSet has one)."""
    return workload_name(name, "", *STATEFULSET_GVK)


def statefulset_group(statefulset: Mapping[str, Any]) -> tuple[str, int]:
    """The pod group Kueue puts a StatefulSet's pods in (``jobs/statefulset``): its name and total count."""
    meta = statefulset.get("metadata") or {}
    return statefulset_group_name(str(meta.get("name", ""))), int((statefulset.get("spec") or {}).get("replicas", 1))


def _workload(owner: Mapping[str, Any], gvk: tuple[str, str], pod_sets: list[Raw], priorities: Priorities,
              pod_spec: Mapping[str, Any], name: str = "",
              own_all: Sequence[Mapping[str, Any]] = ()) -> Raw | NotQueued:
    meta = owner.get("metadata") or {}
    owner_name, uid = str(meta.get("name", "")), str(meta.get("uid", ""))
    spec: Raw = {"podSets": pod_sets, "queueName": queue_name(owner)}
    priority = _priority(meta, pod_spec, priorities)
    if isinstance(priority, NotQueued):
        return priority
    spec.update(priority)
    labels = {JOB_UID_LABEL: uid} if uid and len(uid) <= 63 else {}
    owners = [_owner_reference(o, gvk, controller=not own_all) for o in (own_all or [owner])]
    wl_meta: Raw = {"name": name or workload_name(owner_name, uid, *gvk),
                    "namespace": meta.get("namespace") or "default", "labels": labels,
                    "ownerReferences": owners, "finalizers": [RESOURCE_IN_USE_FINALIZER]}
    return {"apiVersion": API_VERSION, "kind": "Workload", "metadata": wl_meta, "spec": spec}


def _priority(meta: Mapping[str, Any], pod_spec: Mapping[str, Any], priorities: Priorities) -> Raw | NotQueued:
    """``jobframework`` priority: the WorkloadPriorityClass label first (no fallback when it is missing),
    then the pods' PriorityClass, else 0."""
    wpc = ((meta.get("labels") or {}).get(PRIORITY_CLASS_LABEL))
    if wpc:
        if wpc not in priorities.workload:
            return NotQueued(f'workloadPriorityClass.kueue.x-k8s.io "{wpc}" not found: Kueue does not create the '
                             "Workload until it exists")
        group, kind = WORKLOAD_PRIORITY_CLASS
        return {"priorityClassRef": {"group": group, "kind": kind, "name": wpc}, "priority": priorities.workload[wpc]}
    pod_class = pod_spec.get("priorityClassName")
    if pod_class and pod_class in priorities.pod:
        group, kind = POD_PRIORITY_CLASS
        return {"priorityClassRef": {"group": group, "kind": kind, "name": pod_class},
                "priority": priorities.pod[pod_class]}
    return {"priority": 0}


def _owner_reference(owner: Mapping[str, Any], gvk: tuple[str, str], controller: bool) -> Raw:
    meta = owner.get("metadata") or {}
    group, kind = gvk
    version = "v1"
    ref: Raw = {"apiVersion": f"{group}/{version}" if group else version, "kind": kind,
                "name": meta.get("name", ""), "uid": meta.get("uid", "")}
    if controller:
        ref.update({"controller": True, "blockOwnerDeletion": True})
    return ref


def _clean_template(template: Mapping[str, Any]) -> Raw:
    out = copy.deepcopy(dict(template))
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        for key in JOB_CONTROLLER_LABELS:
            labels.pop(key, None)
    return out


# ---- suspend and admission -----------------------------------------------------------------------


def suspended(job: Mapping[str, Any]) -> Raw:
    """The Job as Kueue's webhook stores a queued one: ``spec.suspend: true`` until it is admitted."""
    out = copy.deepcopy(dict(job))
    out.setdefault("spec", {})["suspend"] = True
    return out


@dataclass(frozen=True)
class InjectionConflict:
    """Kueue refuses to start a job whose nodeSelector sets a flavor's label to another value."""

    key: str
    written: str
    flavor_value: str

    @property
    def message(self) -> str:
        return (f"invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key={self.key}, "
                f"value1={self.written}, value2={self.flavor_value}")


def admitted_job(job: Mapping[str, Any], flavors: Sequence[ResourceFlavor],
                 topology: bool = False) -> Raw | InjectionConflict:
    """The Job as Kueue starts it: unsuspended, the flavors' nodeLabels and tolerations in its pod template,
    and, when its PodSet has a topology assignment (``topology``), the topology scheduling gate."""
    out = copy.deepcopy(dict(job))
    spec = out.setdefault("spec", {})
    template = spec.setdefault("template", {})
    pod = template.setdefault("spec", {})
    conflict = inject_flavors(pod, flavors)
    if conflict is not None:
        return conflict
    if topology:
        template["spec"] = gated(pod)
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        if not any(k in annotations for k in (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, UNCONSTRAINED_ANNOTATION)):
            annotations[UNCONSTRAINED_ANNOTATION] = "true"  # implied TAS is placed unconstrained
    spec["suspend"] = False
    return out


def inject_flavors(pod_spec: Raw, flavors: Sequence[ResourceFlavor]) -> InjectionConflict | None:
    """Merge the flavors' nodeLabels into ``pod_spec`` (in place) and append their new tolerations."""
    selector: dict[str, str] = dict(pod_spec.get("nodeSelector") or {})
    tolerations: list[Raw] = list(pod_spec.get("tolerations") or [])
    for flavor in flavors:
        for key, value in flavor.spec.node_labels.items():
            if key in selector and selector[key] != value:
                return InjectionConflict(key, selector[key], value)
            selector[key] = value
        for toleration in flavor.spec.tolerations:
            wire = {k: v for k, v in (("key", toleration.key), ("operator", toleration.operator),
                                      ("value", toleration.value), ("effect", toleration.effect),
                                      ("tolerationSeconds", toleration.toleration_seconds)) if v not in ("", None)}
            if wire not in tolerations:
                tolerations.append(wire)
    if selector:
        pod_spec["nodeSelector"] = selector
    if tolerations:
        pod_spec["tolerations"] = tolerations
    return None

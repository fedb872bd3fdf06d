"""Kueue's pod integrations: which are on, what its webhooks change in pods, Deployments and StatefulSets, the
Workloads the pods make, and the pods as Kueue releases them on admission.

Follows kubernetes-sigs/kueue (``pkg/controller/jobs/pod``, ``jobs/deployment``, ``jobs/statefulset``,
``pkg/controller/jobframework/integrationmanager.go``) and the site's "Run Plain Pods", "Run Deployments" and
"Run StatefulSets":

- **integrations** (``integrations.frameworks`` of the Configuration): ``batch/job`` only when the
  Configuration does not say (Kueue's default); ``deployment`` and ``statefulset`` depend on ``pod`` (their
  ``DependencyList``), and Kueue refuses to start when a dependency is not enabled;
- **Deployment webhook**: the Deployment's ``kueue.x-k8s.io/queue-name`` label is copied to its pod template,
  so each of its pods is a plain pod with a queue: a single-pod Workload ``pod-<pod>-<hash>`` per replica;
- **StatefulSet webhook**: the pod template gets the queue name, the pod group
  ``statefulset-<name>-<hash>`` (the hash of kind, group and name with an empty uid: the webhook runs before
  the object has one), ``pod-group-total-count`` = ``replicas`` and the fast-admission and serving
  annotations: the StatefulSet's pods are one pod group, admitted once its first pod exists;
- **pod webhook**: a pod with a queue name (outside the namespaces Kueue's default
  ``managedJobsNamespaceSelector`` leaves out, and not owned by a Job Kueue manages) is labelled
  ``kueue.x-k8s.io/managed: "true"``, gets the ``kueue.x-k8s.io/managed`` finalizer, the
  ``kueue.x-k8s.io/admission`` scheduling gate and its role-hash annotation; a pod whose annotations ask for
  topology-aware scheduling (``podset-required-topology``, ``-preferred-``, ``-unconstrained-``, slices) also
  gets the ``kueue.x-k8s.io/tas`` label and the ``kueue.x-k8s.io/topology`` gate (TopologyAwareScheduling, on
  by default), and its index label (``pod-group-pod-index``) copied from the label its
  ``pod-group-pod-index-label`` annotation names, as ``pod_webhook.go`` Default does (later Kueue releases gate
  every managed pod and lift the topology gate with the admission gate when the admission has no topology
  assignment: the released pods are the same);
- **Workloads**: a pod without a group is a Workload of its own; the pods of one group (namespace and
  ``kueue.x-k8s.io/pod-group-name``) are one Workload named by the group, made once all
  ``pod-group-total-count`` pods exist (with fast admission: once one exists, each role counted to the total);
- **admission** (the pod reconciler's ``Run``): each gated pod loses the admission gate and gets its flavors'
  nodeSelector and tolerations (``podset.Merge``), as a Job's template does; the topology gate stays for the
  topology ungater (:mod:`dratwin.sim.kueue_tas`);
- **finished**, excess and replaced pods of a group: :mod:`dratwin.kueue.pod_groups`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.api.kueue import POD_GROUP_NAME_LABEL, POD_GROUP_TOTAL_COUNT_ANNOTATION, QUEUE_NAME_LABEL, ResourceFlavor
from dratwin.kueue.jobs import (
    NO_PRIORITIES,
    InjectionConflict,
    NotQueued,
    Priorities,
    inject_flavors,
    role_hash,
    statefulset_group_name,
    workload_for_pod,
    workload_for_pod_group,
    workload_name,
)
from dratwin.kueue.tas.encoding import remove_scheduling_gate
from dratwin.kueue.tas.request import POD_GROUP_POD_INDEX_LABEL, TOPOLOGY_SCHEDULING_GATE, is_tas_pod

Raw = dict[str, Any]

JOB_FRAMEWORK = "batch/job"
POD_FRAMEWORK = "pod"
DEPLOYMENT_FRAMEWORK = "deployment"
STATEFULSET_FRAMEWORK = "statefulset"
DEFAULT_FRAMEWORKS = frozenset({JOB_FRAMEWORK})
DEPENDS_ON = {DEPLOYMENT_FRAMEWORK: POD_FRAMEWORK, STATEFULSET_FRAMEWORK: POD_FRAMEWORK}

ADMISSION_GATE = "kueue.x-k8s.io/admission"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
MANAGED_FINALIZER = MANAGED_LABEL
ROLE_HASH_ANNOTATION = "kueue.x-k8s.io/role-hash"
TAS_LABEL = "kueue.x-k8s.io/tas"  # a pod placed by topology-aware scheduling
POD_GROUP_POD_INDEX_LABEL_ANNOTATION = "kueue.x-k8s.io/pod-group-pod-index-label"
FAST_ADMISSION_ANNOTATION = "kueue.x-k8s.io/pod-group-fast-admission"
SERVING_ANNOTATION = "kueue.x-k8s.io/pod-group-serving"
IS_GROUP_WORKLOAD_ANNOTATION = "kueue.x-k8s.io/is-group-workload"
# Kueue's default managedJobsNamespaceSelector: kubernetes.io/metadata.name NotIn these.
UNMANAGED_NAMESPACES = frozenset({"kube-system", "kueue-system"})


@dataclass(frozen=True)
class Frameworks:
    """The integrations Kueue runs, and what is wrong with the list (Kueue would not start)."""

    enabled: frozenset[str]
    problems: tuple[str, ...] = ()

    def __contains__(self, name: object) -> bool:
        return name in self.enabled

    @property
    def pods(self) -> bool:
        return POD_FRAMEWORK in self.enabled


def frameworks(config: Mapping[str, Any] | None) -> Frameworks:
    """``integrations.frameworks`` of the Configuration (None: no Configuration, Kueue's defaults)."""
    listed = ((config or {}).get("integrations") or {}).get("frameworks")
    if listed is None:
        return Frameworks(DEFAULT_FRAMEWORKS)
    enabled = frozenset(str(f) for f in listed)
    problems = tuple(f'integrations.frameworks: "{name}" depends on "{needed}", which is not enabled: Kueue '
                     f'does not start (add "{needed}")'
                     for name, needed in sorted(DEPENDS_ON.items()) if name in enabled and needed not in enabled)
    return Frameworks(enabled, problems)


# ---- webhooks ------------------------------------------------------------------------------------


def _labels(meta: Raw) -> dict[str, str]:
    labels: dict[str, str] = meta.setdefault("labels", {}) or {}
    meta["labels"] = labels
    return labels


def _annotations(meta: Raw) -> dict[str, str]:
    annotations: dict[str, str] = meta.setdefault("annotations", {}) or {}
    meta["annotations"] = annotations
    return annotations


def owner_webhook(raw: Mapping[str, Any], enabled: Frameworks) -> Mapping[str, Any]:
    """A Deployment or StatefulSet as Kueue's webhook stores it (the object itself when Kueue leaves it)."""
    kind, api_version = raw.get("kind"), raw.get("apiVersion")
    queue = str(((raw.get("metadata") or {}).get("labels") or {}).get(QUEUE_NAME_LABEL) or "")
    if api_version != "apps/v1" or not queue:
        return raw
    if kind == "Deployment" and DEPLOYMENT_FRAMEWORK in enabled:
        out = copy.deepcopy(dict(raw))
        template_meta = out.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
        _labels(template_meta)[QUEUE_NAME_LABEL] = queue
        return out
    if kind == "StatefulSet" and STATEFULSET_FRAMEWORK in enabled:
        out = copy.deepcopy(dict(raw))
        spec = out.setdefault("spec", {})
        meta = spec.setdefault("template", {}).setdefault("metadata", {})
        labels = _labels(meta)
        labels[QUEUE_NAME_LABEL] = queue
        labels[POD_GROUP_NAME_LABEL] = statefulset_group_name(str(out["metadata"].get("name") or ""))
        annotations = _annotations(meta)
        replicas = spec.get("replicas")
        annotations[POD_GROUP_TOTAL_COUNT_ANNOTATION] = str(1 if replicas is None else int(replicas))
        annotations[FAST_ADMISSION_ANNOTATION] = "true"
        annotations[SERVING_ANNOTATION] = "true"
        return out
    return raw


def managed_pod(pod: Mapping[str, Any], enabled: Frameworks) -> bool:
    """Does Kueue's pod webhook take this pod (it has a queue name, its namespace is managed, its owner is
    not a Job Kueue manages already)?"""
    meta = pod.get("metadata") or {}
    if not enabled.pods or not (meta.get("labels") or {}).get(QUEUE_NAME_LABEL):
        return False
    if (meta.get("namespace") or "default") in UNMANAGED_NAMESPACES:
        return False
    owners = meta.get("ownerReferences") or []
    return not (JOB_FRAMEWORK in enabled and any(o.get("kind") == "Job" and str(o.get("apiVersion", "")).startswith(
        "batch/") for o in owners))


def pod_webhook(pod: Mapping[str, Any]) -> Raw:
    """The pod as Kueue's webhook admits a managed one: labelled managed, with its finalizer, the admission
    gate and the role-hash annotation."""
    out = copy.deepcopy(dict(pod))
    meta = out.setdefault("metadata", {})
    _labels(meta)[MANAGED_LABEL] = "true"
    finalizers = list(meta.get("finalizers") or [])
    if MANAGED_FINALIZER not in finalizers:
        meta["finalizers"] = [*finalizers, MANAGED_FINALIZER]
    spec = out.setdefault("spec", {})
    _gate(spec, ADMISSION_GATE)
    labels, annotations = _labels(meta), _annotations(meta)
    index_label = annotations.get(POD_GROUP_POD_INDEX_LABEL_ANNOTATION)
    if index_label is not None:  # the label's value, or "" when the pod has no such label (as Go's map read)
        labels[POD_GROUP_POD_INDEX_LABEL] = str(labels.get(index_label, ""))
    if is_tas_pod(annotations):
        labels[TAS_LABEL] = "true"
        _gate(spec, TOPOLOGY_SCHEDULING_GATE)
    annotations[ROLE_HASH_ANNOTATION] = role_hash(spec)
    return out


def _gate(spec: Raw, name: str) -> None:
    gates = list(spec.get("schedulingGates") or [])
    if not any(g.get("name") == name for g in gates):
        spec["schedulingGates"] = [*gates, {"name": name}]


def gated_by_kueue(pod: Mapping[str, Any]) -> bool:
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return any(g.get("name") == ADMISSION_GATE for g in gates)


# ---- Workloads -----------------------------------------------------------------------------------


def group_key(pod: Mapping[str, Any]) -> str:
    """The Workload's key (namespace/name) a managed pod belongs to: its group's, else its own single-pod one."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    group = (meta.get("labels") or {}).get(POD_GROUP_NAME_LABEL)
    if group:
        return f"{namespace}/{group}"
    return f"{namespace}/{workload_name(str(meta.get('name') or ''), str(meta.get('uid') or ''), '', 'Pod')}"


def workload_for_pods(pods: Sequence[Mapping[str, Any]], priorities: Priorities = NO_PRIORITIES) -> Raw | NotQueued:
    """The Workload of the managed pods of one :func:`group_key` (one pod without a group, or a group's pods):
    a group is made once all its pods exist, or at once with fast admission."""
    if not pods:
        return NotQueued("no pods")
    first = pods[0]
    meta = first.get("metadata") or {}
    group = (meta.get("labels") or {}).get(POD_GROUP_NAME_LABEL)
    if not group:
        return workload_for_pod(first, priorities)
    total = total_count(first)
    fast = (meta.get("annotations") or {}).get(FAST_ADMISSION_ANNOTATION) == "true"
    if total is not None and len(pods) < total and not fast:
        return NotQueued(f"'{group}' group has fewer runnable pods than expected ({len(pods)} of "
                         f"{POD_GROUP_TOTAL_COUNT_ANNOTATION} {total}): Kueue makes its Workload once all exist")
    made = workload_for_pod_group(pods, priorities)
    if isinstance(made, NotQueued):
        return made
    pod_sets = made["spec"]["podSets"]
    if fast and total is not None and len(pod_sets) == 1:
        pod_sets[0]["count"] = total  # the pods still to come are counted in (fast admission)
    made["metadata"]["annotations"] = {IS_GROUP_WORKLOAD_ANNOTATION: "true"}
    return made


def total_count(pod: Mapping[str, Any]) -> int | None:
    """The group's ``pod-group-total-count`` (None: a pod without a group, or no readable count)."""
    meta = pod.get("metadata") or {}
    if not (meta.get("labels") or {}).get(POD_GROUP_NAME_LABEL):
        return None
    total = (meta.get("annotations") or {}).get(POD_GROUP_TOTAL_COUNT_ANNOTATION)
    return int(total) if isinstance(total, str) and total.isdigit() else None


def admitted_pod(pod: Mapping[str, Any], flavors: Sequence[ResourceFlavor]) -> Raw | InjectionConflict:
    """The pod as Kueue releases it on admission: the admission gate removed, the flavors injected."""
    out = copy.deepcopy(dict(pod))
    spec = out.setdefault("spec", {})
    conflict = inject_flavors(spec, flavors)
    if conflict is not None:
        return conflict
    remove_scheduling_gate(spec, ADMISSION_GATE)
    return out

"""The pods that the workload controllers would create, as pure functions of the manifests.

:func:`expand_workloads` turns Deployments, ReplicaSets, StatefulSets and Jobs into the ReplicaSets and
Pods that kube-controller-manager (Kubernetes 1.36) would create for them, and passes bare Pods through
the same API-server admission, so that its result is every pod of the cluster. Everything stays a raw
dict in the Kubernetes JSON shape: pod specs are deep copies of the templates users wrote, so no field is
dropped. The typed views of :mod:`dratwin.api.workloads` are only read for replicas, selectors and modes.

Fidelity notes (the upstream code each rule follows is named where it is applied):

- names: controllers send ``generateName`` and the API server appends 5 characters of its "safe" alphabet
  (``names.SimpleNameGenerator``, ``utilrand.String``); here the characters come from the ``rng`` passed
  in, so a seed makes the run reproducible. StatefulSet pods are ``<sts>-<ordinal>``.
- ``pod-template-hash`` and ``controller-revision-hash`` have the upstream shape (FNV-32a, rendered
  with ``rand.SafeEncodeString``) but are computed over canonical JSON, not over Go's in-memory struct
  dump, so their *values* differ from a real cluster's.
- objects without a uid get a deterministic one (a UUIDv5 of apiVersion, kind, namespace and name), and
  every created object gets one fixed ``creationTimestamp`` (the simulated clock's value).
- what the API server refuses is a :class:`Rejection` (a value, not an exception): a pod naming an
  unknown PriorityClass (``plugin/pkg/admission/priority``), a workload whose selector does not match its
  template, an Indexed Job without completions, a restartPolicy the kind does not allow.

Not modelled: DaemonSets (they need the node list), CronJobs (they need a clock and a schedule),
ReplicationControllers, adoption of existing pods by their controller, rollouts of a changed template,
pod-template-hash collision counts, ``minReadySeconds``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from dratwin.api.codec import copy_raw, decode_as
from dratwin.api.workloads import (
    Deployment,
    DeploymentStrategy,
    Job,
    LabelSelector,
    ReplicaSet,
    StatefulSet,
    label_selector_matches,
)
from dratwin.cluster.naming import (
    controller_reference,
    generated_name,
    indexed_job_generate_name,
    object_uid,
    pods_prefix,
    template_hash,
)
from dratwin.cluster.priority_admission import Priority, PriorityAdmission, apply_priority
from dratwin.cluster.workload_results import Rejection, WorkloadExpansion, WorkloadNote
from dratwin.errors import InputError

Raw = dict[str, Any]
S = TypeVar("S", bound=msgspec.Struct)

SIMULATION_EPOCH = "2026-01-01T00:00:00Z"
"""The ``creationTimestamp`` of created objects unless the caller passes the simulated clock's time."""

DEFAULT_NAMESPACE = "default"

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"  # both annotation and label
JOB_INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
JOB_COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
JOB_CONTROLLER = "kubernetes.io/job-controller"

STATEFULSET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"


# The Deployment annotations that are not copied onto its ReplicaSets (deployment_util.skipCopyAnnotation).
_NOT_COPIED_TO_REPLICA_SET = frozenset({
    LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION,
})


# ---- selectors in validation messages ---------------------------------------------------------


def _selector_is_empty(selector: LabelSelector) -> bool:
    return not selector.match_labels and not selector.match_expressions


def _go_map(labels: Mapping[str, str]) -> str:
    """A label map as Go's ``%#v`` prints it in validation messages: keys sorted."""
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
    return f"map[string]string{{{items}}}"


def _go_selector(selector: LabelSelector) -> str:
    """A ``metav1.LabelSelector`` as Go's ``%#v`` prints it in validation messages."""
    labels = _go_map(selector.match_labels) if selector.match_labels else "map[string]string(nil)"
    if selector.match_expressions:
        reqs = ", ".join(
            f'v1.LabelSelectorRequirement{{Key:"{r.key}", Operator:"{r.operator}", Values:'
            + ("[]string{" + ", ".join(f'"{v}"' for v in r.values) + "}" if r.values else "[]string(nil)") + "}"
            for r in selector.match_expressions)
        expressions = f"[]v1.LabelSelectorRequirement{{{reqs}}}"
    else:
        expressions = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expressions}}}"


# ---- the expansion -------------------------------------------------------------------------------


def expand_workloads(
    objects: Sequence[Raw], rng: random.Random, *, creation_timestamp: str = SIMULATION_EPOCH
) -> WorkloadExpansion:
    """Every pod of the cluster: the pods the controllers create for the workloads in ``objects`` and the
    bare Pods, all through priority admission, in input order. Inputs are never mutated.

    Raises :class:`~dratwin.errors.ObjectDecodeError` for a workload whose fields have the wrong types and
    :class:`~dratwin.errors.InputError` for an object without a name.
    """
    return _Expansion(objects, rng, creation_timestamp).run()


_APPS = "apps/v1"
_BATCH = "batch/v1"
_NOT_EXPANDED = {
    (_APPS, "DaemonSet"): "DaemonSet pods are not modelled: they need the node list (one pod per eligible node)",
    (_BATCH, "CronJob"): "CronJobs are not expanded: they create Jobs on a schedule; write the Job itself",
    ("v1", "ReplicationController"): "ReplicationControllers are not modelled; use a Deployment",
}


@dataclass
class _Draft:
    """A pod on its way out of a controller: what ``GetPodFromTemplate`` builds before the create call."""

    labels: Raw
    annotations: Raw
    finalizers: list[str]
    spec: Raw


class _Expansion:
    """Per-call scratch of :func:`expand_workloads`: the outputs so far and the names already taken."""

    def __init__(self, objects: Sequence[Raw], rng: random.Random, creation_timestamp: str) -> None:
        self.objects = objects
        self.rng = rng
        self.now = creation_timestamp
        self.priority = PriorityAdmission.from_objects(objects)
        self.pods: list[Raw] = []
        self.replica_sets: list[Raw] = []
        self.notes: list[WorkloadNote] = []
        self.rejections: list[Rejection] = []
        self.ordered_after: dict[str, str] = {}
        # Names the API server holds or will hold: bare pods are created as written, so their names are
        # reserved up front and random names avoid them. ``emitted`` are the pods already in the result.
        self.taken: set[tuple[str, str, str]] = set()
        self.emitted: set[tuple[str, str]] = set()
        for raw in objects:
            if (raw.get("apiVersion"), raw.get("kind")) == ("v1", "Pod"):
                meta = raw.get("metadata") or {}
                if meta.get("name"):
                    self.taken.add(("Pod", meta.get("namespace") or DEFAULT_NAMESPACE, meta["name"]))

    def run(self) -> WorkloadExpansion:
        handlers = {
            ("v1", "Pod"): self._bare_pod,
            (_APPS, "Deployment"): self._deployment,
            (_APPS, "ReplicaSet"): self._replica_set,
            (_APPS, "StatefulSet"): self._stateful_set,
            (_BATCH, "Job"): self._job,
        }
        for raw in self.objects:
            key = (str(raw.get("apiVersion") or ""), str(raw.get("kind") or ""))
            handler = handlers.get(key)
            if handler is not None:
                handler(raw)
            elif key in _NOT_EXPANDED:
                ns, name = self._namespace(raw), (raw.get("metadata") or {}).get("name") or "<unnamed>"
                self.notes.append(WorkloadNote(f"{key[1]} {ns}/{name}", _NOT_EXPANDED[key]))
        return WorkloadExpansion(tuple(self.pods), tuple(self.replica_sets), tuple(self.notes),
                                 tuple(self.rejections), dict(self.ordered_after))

    # ---- identity ----

    @staticmethod
    def _namespace(raw: Raw) -> str:
        return str((raw.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE)

    def _identity(self, raw: Raw) -> tuple[str, str, str]:
        """(namespace, name, uid) of an input object; a generateName is resolved as the API server does."""
        meta = raw.get("metadata") or {}
        kind = str(raw.get("kind") or "object")
        namespace = self._namespace(raw)
        name = str(meta.get("name") or "")
        if not name:
            base = str(meta.get("generateName") or "")
            if not base:
                raise InputError(f"{kind} in namespace {namespace}: metadata.name or metadata.generateName is "
                                 "required; the API server refuses an object without a name")
            name = self._fresh_name(kind, namespace, base)
        self.taken.add((kind, namespace, name))
        uid = str(meta.get("uid") or object_uid(str(raw.get("apiVersion") or ""), kind, namespace, name))
        return namespace, name, uid

    def _fresh_name(self, kind: str, namespace: str, generate_name: str) -> str:
        # A clash makes the API server answer AlreadyExists; the controller retries with a new random name.
        while True:
            name = generated_name(generate_name, self.rng)
            if (kind, namespace, name) not in self.taken:
                return name

    # ---- validation shared by the apps/v1 kinds ----

    def _check_selector(
        self, ref: str, kind: str, qualified: str, name: str, selector: LabelSelector | None, labels: Mapping[str, str]
    ) -> bool:
        """apps/v1 and manual-selector Jobs: a selector is required, non-empty and matches the template."""
        invalid = f'{qualified} "{name}" is invalid'
        if selector is None:
            self._reject(ref, "validation", kind, name, 1, f"{invalid}: spec.selector: Required value",
                         "add spec.selector.matchLabels with the template's labels")
        elif _selector_is_empty(selector):
            self._reject(ref, "validation", kind, name, 1,
                         f"{invalid}: spec.selector: Invalid value: {_go_selector(selector)}: empty selector is "
                         f"invalid for {kind.lower()}", "select the template's labels in spec.selector.matchLabels")
        elif not label_selector_matches(selector, labels):
            self._reject(ref, "validation", kind, name, 1,
                         f"{invalid}: spec.template.metadata.labels: Invalid value: {_go_map(labels)}: "
                         "`selector` does not match template `labels`",
                         "make spec.template.metadata.labels carry every label spec.selector asks for")
        else:
            return True
        return False

    def _check_restart_policy(self, ref: str, kind: str, qualified: str, name: str, template: Raw,
                              allowed: tuple[str, ...]) -> bool:
        policy = str((template.get("spec") or {}).get("restartPolicy") or "Always")
        if policy in allowed:
            return True
        supported = ", ".join(f'"{p}"' for p in allowed)
        hint = ("Jobs need restartPolicy Never or OnFailure in the pod template" if kind == "Job"
                else f"{kind} pods must use restartPolicy Always (the default)")
        self._reject(ref, "validation", kind, name, 1,
                     f'{qualified} "{name}" is invalid: spec.template.spec.restartPolicy: Unsupported value: '
                     f'"{policy}": supported values: {supported}', hint)
        return False

    def _check_non_negative(self, ref: str, kind: str, qualified: str, name: str, fields: Mapping[str, int | None]
                            ) -> bool:
        for path, value in fields.items():
            if value is not None and value < 0:
                self._reject(ref, "validation", kind, name, 1,
                             f'{qualified} "{name}" is invalid: {path}: Invalid value: {value}: must be greater '
                             "than or equal to 0", f"set {path} to 0 or more")
                return False
        return True

    def _reject(self, ref: str, stage: str, kind: str, name: str, count: int, message: str, hint: str) -> None:
        self.rejections.append(Rejection(ref, stage, kind, name, count, message, hint))

    def _admit(self, ref: str, template_spec: Raw, pod_name: str, count: int) -> Priority | None:
        """Priority admission for ``count`` pods built from one template; a Rejection when refused."""
        admitted = self.priority.admit(template_spec)
        if isinstance(admitted, Priority):
            return admitted
        reason, hint = admitted
        # admission.NewForbidden names the pod by its generateName when the name is not generated yet.
        self._reject(ref, "admission", "Pod", pod_name, count, f'pods "{pod_name}" is forbidden: {reason}', hint)
        return None

    # ---- pods ----

    @staticmethod
    def _draft(template: Raw) -> _Draft:
        """``controller.GetPodFromTemplate``: labels, annotations, finalizers and a copy of the spec."""
        meta = template.get("metadata") or {}
        return _Draft(dict(meta.get("labels") or {}), dict(meta.get("annotations") or {}),
                      list(meta.get("finalizers") or []), copy_raw(template.get("spec") or {}))

    def _emit_pod(self, draft: _Draft, namespace: str, name: str, generate_name: str, owner: Raw) -> Raw:
        metadata: Raw = {"name": name}
        if generate_name:
            metadata["generateName"] = generate_name
        metadata["namespace"] = namespace
        metadata["uid"] = object_uid("v1", "Pod", namespace, name)
        metadata["creationTimestamp"] = self.now
        if draft.labels:
            metadata["labels"] = draft.labels
        if draft.annotations:
            metadata["annotations"] = draft.annotations
        metadata["ownerReferences"] = [dict(owner)]
        if draft.finalizers:
            metadata["finalizers"] = draft.finalizers
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": draft.spec,
               "status": {"phase": "Pending"}}
        self._add_pod(pod, namespace, name)
        return pod

    def _add_pod(self, pod: Raw, namespace: str, name: str) -> None:
        self.taken.add(("Pod", namespace, name))
        self.emitted.add((namespace, name))
        self.pods.append(pod)

    def _bare_pod(self, raw: Raw) -> None:
        # Copy on write: admission changes metadata, spec and status at their top level only, so those three
        # are copied and everything below them (containers, volumes...) is shared with the input object,
        # which nothing changes; a deep copy of every pod cost a tenth of loading 5,000 of them.
        pod = dict(raw)
        meta = pod["metadata"] = dict(raw.get("metadata") or {})
        namespace, name, uid = self._identity(raw)
        if (namespace, name) in self.emitted:
            self._reject(f"Pod {namespace}/{name}", "creation", "Pod", name, 1, f'pods "{name}" already exists',
                         "two objects of the input create a pod of this name; rename one of them")
            return
        meta["name"], meta["namespace"] = name, namespace
        meta.setdefault("uid", uid)
        meta.setdefault("creationTimestamp", self.now)
        spec = pod["spec"] = dict(raw.get("spec") or {})
        priority = self._admit(f"Pod {namespace}/{name}", spec, name, 1)
        if priority is None:
            return
        apply_priority(spec, priority)
        status = pod["status"] = dict(raw.get("status") or {})
        status.setdefault("phase", "Pending")
        self._add_pod(pod, namespace, name)

    # ---- Deployment ----

    def _deployment(self, raw: Raw) -> None:
        """``deployment/sync.go`` getNewReplicaSet for a new Deployment: one ReplicaSet for the template."""
        namespace, name, uid = self._identity(raw)
        ref = f"Deployment {namespace}/{name}"
        deployment = decode_as(raw, Deployment, ref)
        spec = deployment.spec
        template = copy_raw((raw.get("spec") or {}).get("template") or {})
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        if not (self._check_non_negative(ref, "Deployment", "Deployment.apps", name, {"spec.replicas": spec.replicas})
                and self._check_selector(ref, "Deployment", "Deployment.apps", name, spec.selector, labels)
                and self._check_restart_policy(ref, "Deployment", "Deployment.apps", name, template, ("Always",))):
            return
        if spec.paused:
            self.notes.append(WorkloadNote(ref, "paused: the Deployment controller creates no ReplicaSet until "
                                                "spec.paused is false"))
            return
        replicas = 1 if spec.replicas is None else spec.replicas
        pod_hash = template_hash(template)
        template_meta = template.setdefault("metadata", {})
        template_meta["labels"] = {**labels, POD_TEMPLATE_HASH_LABEL: pod_hash}
        selector = copy_raw((raw.get("spec") or {}).get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash}
        rs_name = f"{name}-{pod_hash}"
        annotations = {k: v for k, v in ((raw.get("metadata") or {}).get("annotations") or {}).items()
                       if k not in _NOT_COPIED_TO_REPLICA_SET}
        annotations[DESIRED_REPLICAS_ANNOTATION] = str(replicas)
        annotations[MAX_REPLICAS_ANNOTATION] = str(replicas + _max_surge(spec.strategy, replicas, ref))
        annotations[REVISION_ANNOTATION] = "1"
        rs_spec: Raw = {"replicas": replicas}
        if spec.min_ready_seconds:
            rs_spec["minReadySeconds"] = spec.min_ready_seconds
        rs_spec["selector"] = selector
        rs_spec["template"] = template
        rs: Raw = {
            "apiVersion": _APPS, "kind": "ReplicaSet",
            "metadata": {
                "name": rs_name, "namespace": namespace,
                "uid": object_uid(_APPS, "ReplicaSet", namespace, rs_name), "creationTimestamp": self.now,
                "labels": dict(template_meta["labels"]), "annotations": annotations,
                "ownerReferences": [controller_reference(_APPS, "Deployment", name, uid)],
            },
            "spec": rs_spec,
        }
        self.replica_sets.append(rs)
        self.notes.append(WorkloadNote(ref, f"{replicas} replica{'s' if replicas != 1 else ''} "
                                            f"→ ReplicaSet {rs_name}"))
        self._replica_set(rs, owned=True)

    # ---- ReplicaSet ----

    def _replica_set(self, raw: Raw, owned: bool = False) -> None:
        """``replicaset.manageReplicas``: ``replicas`` pods named ``<rs>-<random>``."""
        if owned:
            meta = raw["metadata"]
            namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        else:
            namespace, name, uid = self._identity(raw)
        ref = f"ReplicaSet {namespace}/{name}"
        rs = decode_as(raw, ReplicaSet, ref)
        template = (raw.get("spec") or {}).get("template") or {}
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        if not owned and not (
            self._check_non_negative(ref, "ReplicaSet", "ReplicaSet.apps", name, {"spec.replicas": rs.spec.replicas})
            and self._check_selector(ref, "ReplicaSet", "ReplicaSet.apps", name, rs.spec.selector, labels)
            and self._check_restart_policy(ref, "ReplicaSet", "ReplicaSet.apps", name, template, ("Always",))
        ):
            return
        replicas = 1 if rs.spec.replicas is None else rs.spec.replicas
        prefix = pods_prefix(name)
        priority = self._admit(ref, dict(template.get("spec") or {}), prefix, replicas) if replicas else None
        if priority is None:
            self.notes.append(WorkloadNote(ref, "0 pods" if not replicas else
                                           f"0 of {replicas} pods: refused at admission"))
            return
        owner = controller_reference(_APPS, "ReplicaSet", name, uid)
        for _ in range(replicas):
            draft = self._draft(template)
            apply_priority(draft.spec, priority)
            self._emit_pod(draft, namespace, self._fresh_name("Pod", namespace, prefix), prefix, owner)
        self.notes.append(WorkloadNote(ref, f"{replicas} pod{'s' if replicas != 1 else ''}"))

    # ---- StatefulSet ----

    def _stateful_set(self, raw: Raw) -> None:
        """``statefulset.newVersionedStatefulSetPod``: ``<sts>-<ordinal>`` with identity and storage."""
        namespace, name, uid = self._identity(raw)
        ref = f"StatefulSet {namespace}/{name}"
        sts = decode_as(raw, StatefulSet, ref)
        spec = sts.spec
        template = (raw.get("spec") or {}).get("template") or {}
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        start = spec.ordinals.start if spec.ordinals is not None else 0
        if not (self._check_non_negative(ref, "StatefulSet", "StatefulSet.apps", name,
                                         {"spec.replicas": spec.replicas, "spec.ordinals.start": start})
                and self._check_selector(ref, "StatefulSet", "StatefulSet.apps", name, spec.selector, labels)
                and self._check_restart_policy(ref, "StatefulSet", "StatefulSet.apps", name, template, ("Always",))):
            return
        replicas = 1 if spec.replicas is None else spec.replicas
        policy = spec.pod_management_policy or "OrderedReady"
        # ControllerRevisionName: the set's name (cut to 223 characters) and the revision hash.
        revision = f"{name[:223]}-{template_hash({'spec': {'template': template}})}"
        ordinals = range(start, start + replicas)
        priority = self._admit(ref, dict(template.get("spec") or {}), f"{name}-{start}", replicas) \
            if replicas else None
        if priority is None:
            self.notes.append(WorkloadNote(ref, "0 pods" if not replicas else
                                           f"0 of {replicas} pods: refused at admission"))
            return
        owner = controller_reference(_APPS, "StatefulSet", name, uid)
        previous = ""
        created = 0
        for ordinal in ordinals:
            pod_name = f"{name}-{ordinal}"
            if ("Pod", namespace, pod_name) in self.taken:
                self._reject(ref, "creation", "Pod", pod_name, 1, f'pods "{pod_name}" already exists',
                             "another object in the input already uses this pod name; rename one of them")
                continue
            draft = self._draft(template)
            draft.labels[STATEFULSET_POD_NAME_LABEL] = pod_name
            draft.labels[POD_INDEX_LABEL] = str(ordinal)
            draft.labels[CONTROLLER_REVISION_HASH_LABEL] = revision
            draft.spec["hostname"] = pod_name
            if spec.service_name:
                draft.spec["subdomain"] = spec.service_name
            _stateful_set_volumes(draft.spec, [t.metadata.name for t in spec.volume_claim_templates], name, ordinal)
            apply_priority(draft.spec, priority)
            self._emit_pod(draft, namespace, pod_name, "", owner)
            created += 1
            if policy == "OrderedReady" and previous:
                self.ordered_after[f"{namespace}/{pod_name}"] = f"{namespace}/{previous}"
            previous = pod_name
        message = f"{created} pod{'s' if created != 1 else ''} ({name}-{start}..{name}-{start + replicas - 1})" \
            if replicas else "0 pods"
        if policy == "OrderedReady" and replicas > 1:
            message += ", OrderedReady: each pod is created only after the previous one is Running and Ready"
        self.notes.append(WorkloadNote(ref, message))

    # ---- Job ----

    def _job(self, raw: Raw) -> None:
        """The API server's Job defaults and generated selector, then ``job.manageJob`` for a new Job."""
        namespace, name, uid = self._identity(raw)
        ref = f"Job {namespace}/{name}"
        job = decode_as(raw, Job, ref)
        spec = job.spec
        template = copy_raw((raw.get("spec") or {}).get("template") or {})
        template_meta = template.setdefault("metadata", {})
        labels: Raw = dict(template_meta.get("labels") or {})
        selector = spec.selector
        mode = spec.completion_mode or "NonIndexed"
        invalid = f'Job.batch "{name}" is invalid'
        if not spec.manual_selector:
            # batch/job strategy generateSelector: labels the user did not set, selector on the uid.
            for key, value in ((LEGACY_JOB_NAME_LABEL, name), (JOB_NAME_LABEL, name),
                               (LEGACY_CONTROLLER_UID_LABEL, uid), (CONTROLLER_UID_LABEL, uid)):
                labels.setdefault(key, value)
            base = selector or LabelSelector()
            selector = msgspec.structs.replace(base, match_labels={**base.match_labels, CONTROLLER_UID_LABEL: uid}) \
                if CONTROLLER_UID_LABEL not in base.match_labels else base
            # ValidateGeneratedSelector: a selector the user wrote must still select the generated labels.
            if not label_selector_matches(selector, {CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name}):
                self._reject(ref, "validation", "Job", name, 1,
                             f"{invalid}: spec.selector: Invalid value: {_go_selector(selector)}: "
                             "`selector` not auto-generated",
                             "remove spec.selector (the API server generates it) or set spec.manualSelector: true")
                return
        template_meta["labels"] = labels
        if not (self._check_non_negative(ref, "Job", "Job.batch", name,
                                         {"spec.parallelism": spec.parallelism, "spec.completions": spec.completions})
                and self._check_selector(ref, "Job", "Job.batch", name, selector, labels)
                and self._check_restart_policy(ref, "Job", "Job.batch", name, template, ("OnFailure", "Never"))):
            return
        if mode not in ("NonIndexed", "Indexed"):
            self._reject(ref, "validation", "Job", name, 1, f'{invalid}: spec.completionMode: Unsupported value: '
                         f'"{mode}": supported values: "NonIndexed", "Indexed"', "use NonIndexed or Indexed")
            return
        indexed = mode == "Indexed"
        if indexed and spec.completions is None:
            self._reject(ref, "validation", "Job", name, 1,
                         f"{invalid}: spec.completions: Required value: when completion mode is Indexed",
                         "set spec.completions to the number of indexes")
            return
        # SetDefaults_Job: both unset → both 1; parallelism unset → 1 (completions unset = work queue).
        parallelism = 1 if spec.parallelism is None else spec.parallelism
        completions = 1 if spec.completions is None and spec.parallelism is None else spec.completions
        if spec.managed_by and spec.managed_by != JOB_CONTROLLER:
            self.notes.append(WorkloadNote(ref, f'managed by "{spec.managed_by}": the built-in Job controller '
                                                "creates no pods for it"))
            return
        if spec.suspend:
            self.notes.append(WorkloadNote(ref, "suspended: no pods (the Job controller creates them when "
                                                "spec.suspend becomes false, e.g. when a queue admits the Job)"))
            return
        active = parallelism if completions is None else min(parallelism, completions)
        shape = (f"{mode}, parallelism {parallelism}, "
                 f"{'no completions (work queue)' if completions is None else f'completions {completions}'}")
        if active == 0:
            self.notes.append(WorkloadNote(ref, f"{shape}: no pods"))
            return
        first_name = indexed_job_generate_name(name, 0) if indexed else pods_prefix(name)
        priority = self._admit(ref, dict(template.get("spec") or {}), first_name, active)
        if priority is None:
            self.notes.append(WorkloadNote(ref, f"{shape}: 0 of {active} pods: refused at admission"))
            return
        if indexed:
            _add_completion_index_env(template.setdefault("spec", {}))
        finalizers = list(template_meta.get("finalizers") or [])
        if JOB_TRACKING_FINALIZER not in finalizers:
            finalizers.append(JOB_TRACKING_FINALIZER)
        template_meta["finalizers"] = finalizers
        owner = controller_reference(_BATCH, "Job", name, uid)
        for index in range(active):
            draft = self._draft(template)
            generate = pods_prefix(name)
            if indexed:
                draft.annotations[JOB_COMPLETION_INDEX] = str(index)
                draft.labels[JOB_COMPLETION_INDEX] = str(index)
                draft.spec["hostname"] = f"{name}-{index}"
                generate = indexed_job_generate_name(name, index)
                if spec.backoff_limit_per_index is not None:
                    draft.annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = "0"
            apply_priority(draft.spec, priority)
            self._emit_pod(draft, namespace, self._fresh_name("Pod", namespace, generate), generate, owner)
        more = "" if completions is None or active >= completions else \
            f", the rest as pods succeed (up to {completions} completions)"
        self.notes.append(WorkloadNote(ref, f"{shape}: {active} pod{'s' if active != 1 else ''}{more}"))


def _max_surge(strategy: DeploymentStrategy, replicas: int, ref: str) -> int:
    """``deploymentutil.MaxSurge``: 0 for Recreate, else maxSurge (default 25%) of replicas, rounded up."""
    if (strategy.type or "RollingUpdate") != "RollingUpdate":
        return 0
    rolling = strategy.rolling_update
    surge = rolling.max_surge if rolling is not None and rolling.max_surge is not None else "25%"
    if isinstance(surge, int):
        return surge
    if surge.endswith("%") and surge[:-1].isdigit():
        return -(-int(surge[:-1]) * replicas // 100)
    if surge.isdigit():
        return int(surge)
    raise InputError(f"{ref}: spec.strategy.rollingUpdate.maxSurge: invalid value {surge!r}; "
                     'use a number of pods (1) or a percentage ("25%")')


def _add_completion_index_env(spec: Raw) -> None:
    """``addCompletionIndexEnvVariables``: JOB_COMPLETION_INDEX from the pod's index label."""
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            env = container.setdefault("env", [])
            if any(e.get("name") == JOB_COMPLETION_INDEX_ENV for e in env):
                continue
            env.append({"name": JOB_COMPLETION_INDEX_ENV, "valueFrom": {
                "fieldRef": {"fieldPath": f"metadata.labels['{JOB_COMPLETION_INDEX}']"}}})


def _stateful_set_volumes(spec: Raw, templates: Sequence[str], set_name: str, ordinal: int) -> None:
    """``updateStorage``: a PVC volume per volumeClaimTemplate (``<template>-<sts>-<ordinal>``) first."""
    if not templates:
        return
    volumes = [{"name": t, "persistentVolumeClaim": {"claimName": f"{t}-{set_name}-{ordinal}"}} for t in templates]
    volumes.extend(v for v in spec.get("volumes") or [] if v.get("name") not in templates)
    spec["volumes"] = volumes

"""Loading a cluster: decode the objects, run the workload and resourceclaim controllers, fill the state.

Objects go through :func:`dratwin.api.intake.admit` first, as the API server takes them: one with a
structural error (unknown field, wrong type, bad quantity, missing required field) is refused and reported
with its file, line and field, and the cluster is built from the others, as ``kubectl apply -f DIR``
would leave it; resource.k8s.io v1beta1/v1beta2 objects are converted to v1, with a note.

Pods that the input already binds (``spec.nodeName``, as in a dump of a real cluster) are placed on
their nodes as they are, with their claims' allocations; every other pod is pending and goes to the
scheduler.

NVIDIA ComputeDomains (:mod:`dratwin.cluster.compute_domains`): their controller's templates are created on
load, before the pods' claims; the IMEX daemons that follow from where the workload pods land are created by
:func:`imex_daemons`, which the scheduling run calls once the workload pods are placed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.allocator.features import Features
from dratwin.api.codec import classify, decode_as, split_api_version
from dratwin.api.compute_domain import DOMAIN_LABEL
from dratwin.api.core import Node, Pod, PodResourceClaimStatus
from dratwin.api.intake import Admitted, admit
from dratwin.api.kueue import CONFIG_GROUP, QUEUE_NAME_LABEL
from dratwin.api.kueue import GROUP as KUEUE_GROUP
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from dratwin.cluster.claims import claims_for_pod
from dratwin.cluster.compute_domains import Domains, controller_templates, read_domains, start_daemons
from dratwin.cluster.device_taint_rules import device_taint_view, untolerated_no_execute
from dratwin.cluster.ordered_ready import created_now, waiting_notes
from dratwin.cluster.pod_groups import pod_group_objects, pod_group_references
from dratwin.cluster.roles import NodeRole, node_roles
from dratwin.cluster.skipped import KUEUE_GROUPS, skipped_objects
from dratwin.cluster.state import ClusterState, PodRecord
from dratwin.cluster.workloads import expand_workloads
from dratwin.kueue.pods import JOB_FRAMEWORK, Frameworks, frameworks, managed_pod, owner_webhook, pod_webhook
from dratwin.scheduler.framework import NodeInfo, PodInfo
from dratwin.scheduler.gates import scheduling_gates, with_gated_condition
from dratwin.scheduler.resources import add_pod, make_pod_info, node_allocatable

Raw = dict[str, Any]


@dataclass
class PendingReason:
    """A pod that cannot even reach the scheduler (a claim it needs does not exist, ...)."""

    pod: str
    reason: str  # the root cause, as the component that knows it reports it
    scheduler_status: str = ""  # what kube-scheduler's PreEnqueue check says meanwhile


@dataclass
class LoadedCluster:
    state: ClusterState
    pending: list[PodInfo] = field(default_factory=list)  # pods for the scheduler, in creation order
    blocked: list[PendingReason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)  # objects the API server would refuse
    conversions: list[str] = field(default_factory=list)  # objects read in an older version (also in notes)
    roles: list[NodeRole] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)  # constraints of the pods the twin ignores
    waiting: dict[str, str] = field(default_factory=dict)  # pods a controller has not created yet -> the pod before
    compute_domains: Domains = field(default_factory=Domains)
    # Loaded for Kueue's controller (``kueue=True``): the Kueue objects, and the Jobs it queues, held back
    # from the Job controller as Kueue's webhook holds them (suspended) until their Workload is admitted.
    kueue_objects: list[LoadedObject] = field(default_factory=list)
    queued_jobs: list[Raw] = field(default_factory=list)
    priority_classes: list[Raw] = field(default_factory=list)  # for the pods of the Jobs admitted later
    # Kueue's pod integration is on: pods with a queue name are gated by its webhook as they are created.
    kueue_frameworks: Frameworks | None = None


def load_cluster(objects: Sequence[LoadedObject], features: Features, rng: random.Random, *,
                 admitted_already: bool = False, kueue: bool = False) -> LoadedCluster:
    """``admitted_already``: the objects are what :func:`admit` took (whoever admitted them reports its
    refusals and notes); they are not read a second time. ``kueue``: a Kueue controller runs over the
    result; in a cluster with a ClusterQueue or LocalQueue, the Jobs labelled ``kueue.x-k8s.io/queue-name``
    are held for it (``queued_jobs``) instead of creating pods, and the Kueue objects are not listed as
    skipped."""
    state = ClusterState(features=features)
    raws: list[Raw] = []
    templates: dict[tuple[str, str], Raw] = {}
    claims: dict[tuple[str, str], Raw] = {}
    admitted = Admitted(list(objects)) if admitted_already else admit(objects)
    for obj in admitted.objects:
        kind = obj.kind
        info = classify(obj).info
        if kind == "Node" and info is not None:
            node = decode_as(obj.raw, Node, obj.ref)
            state.add_node(obj.raw, node, NodeInfo(node, node_allocatable(node)))
        elif kind == "ResourceSlice" and info is not None:
            state.add_slice(decode_as(obj.raw, ResourceSlice, obj.ref))
        elif kind == "DeviceClass" and info is not None:
            device_class = decode_as(obj.raw, DeviceClass, obj.ref)
            state.classes[device_class.metadata.name] = device_class
        elif kind == "ResourceClaimTemplate" and info is not None:
            template = decode_as(obj.raw, ResourceClaimTemplate, obj.ref)
            namespace = template.metadata.namespace or "default"
            state.templates[f"{namespace}/{template.metadata.name}"] = template
            templates[(namespace, template.metadata.name)] = obj.raw
        elif kind == "ResourceClaim" and info is not None:
            record = state.add_claim(obj.raw)
            claims[(record.claim.metadata.namespace, record.claim.metadata.name)] = record.raw
        raws.append(obj.raw)
    kueue_objects = [o for o in admitted.objects if split_api_version(o.api_version)[0] in KUEUE_GROUPS]
    managing = kueue and has_queues(kueue_objects)
    integrations = kueue_frameworks(kueue_objects) if managing else None
    queued = queued_by_kueue(raws) if integrations is not None and JOB_FRAMEWORK in integrations else []
    if integrations is not None and integrations.pods:  # Kueue's Deployment and StatefulSet webhooks
        raws = [dict(owner_webhook(raw, integrations)) for raw in raws]
    if queued:
        held = {id(raw) for raw in queued}
        raws = [raw for raw in raws if id(raw) not in held]
    taints = device_taint_view(admitted.objects, state.slices, features)
    state.use_tainted_slices(taints.slices, taints.sources)
    loaded = LoadedCluster(state, notes=list(admitted.notes), rejections=admitted.rejections(),
                           conversions=list(admitted.notes), kueue_objects=kueue_objects, queued_jobs=queued,
                           priority_classes=[r for r in raws if r.get("kind") == "PriorityClass"]
                           if queued or (integrations is not None and integrations.pods) else [],
                           kueue_frameworks=integrations if integrations is not None and integrations.pods else None)
    loaded.notes += taints.notes
    expansion = expand_workloads(raws, rng)
    present = created_now(expansion.pods, expansion.ordered_after)
    loaded.waiting = present.waiting
    loaded.notes += [str(n) for n in expansion.notes] + waiting_notes(expansion.pods, present.waiting)
    loaded.rejections += [str(r) for r in expansion.rejections]
    loaded.unmodelled = [
        *unmodelled_constraints(present.pods),
        *pod_group_references(present.pods),
        *pod_group_objects(admitted.objects),
        *skipped_objects(admitted.objects, READ_ELSEWHERE | (KUEUE_APPLIED if kueue else frozenset())),
    ]
    _create_compute_domain_templates(loaded, admitted.objects, templates)
    by_owner = _claims_by_owner(claims)
    for order, raw in enumerate(present.pods):
        _add_pod(loaded, raw, order, templates, claims, by_owner, rng)
    loaded.unmodelled += taints.warnings
    if features.device_taints:
        loaded.unmodelled += untolerated_no_execute((r.claim for r in state.claims.values()), state.slices,
                                                    state.taint_sources)
    loaded.roles = node_roles((n.node for n in state.nodes.values()), state.slices)
    return loaded


# Kinds that classify does not check but that the twin reads (the workload controllers' PriorityClasses) or
# reports on its own (Workload, PodGroup, DeviceTaintRule): not listed as skipped.
READ_ELSEWHERE = frozenset({
    ("scheduling.k8s.io", "PriorityClass"),
    ("scheduling.k8s.io", "Workload"),
    ("scheduling.k8s.io", "PodGroup"),
    ("resource.k8s.io", "DeviceTaintRule"),
})

# The Kueue kinds its controller reads (``kueue=True``): applied, not skipped.
KUEUE_APPLIED = frozenset((KUEUE_GROUP, kind) for kind in (
    "ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass", "AdmissionCheck", "Workload",
    "Topology",
)) | {(CONFIG_GROUP, "Configuration")}


def kueue_frameworks(kueue_objects: Sequence[LoadedObject]) -> Frameworks:
    """The integrations of the (first) Kueue Configuration, Kueue's defaults without one."""
    config = next((o.raw for o in kueue_objects if o.kind == "Configuration"), None)
    return frameworks(config)


def has_queues(kueue_objects: Sequence[LoadedObject]) -> bool:
    return any(o.kind in ("ClusterQueue", "LocalQueue") for o in kueue_objects)


def queued_by_kueue(raws: Sequence[Raw]) -> list[Raw]:
    """The Jobs Kueue manages (``batch/job`` among ``integrations.frameworks``, as by default): those labelled with
    a queue name. Pods, Deployments and StatefulSets need Kueue's pod integration, off by default
    (:mod:`dratwin.kueue.pods`): without it they run unmanaged, as in such a cluster."""
    return [raw for raw in raws if raw.get("kind") == "Job" and str(raw.get("apiVersion")) == "batch/v1"
            and ((raw.get("metadata") or {}).get("labels") or {}).get(QUEUE_NAME_LABEL)]


# Pod fields that change where a real scheduler puts a pod and that the twin does not model yet: the
# path of each, read from spec then (for affinity) one level down.
UNMODELLED = (
    ("spec.topologySpreadConstraints", ("topologySpreadConstraints",)),
    ("spec.affinity.podAffinity", ("affinity", "podAffinity")),
    ("spec.affinity.podAntiAffinity", ("affinity", "podAntiAffinity")),
)


def _set_at(spec: Raw, keys: tuple[str, ...]) -> bool:
    value: object = spec
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return bool(value)


def unmodelled_constraints(pods: Sequence[Raw]) -> list[str]:
    """One warning per field the twin ignores, naming up to three of the pods that set it: a silent
    difference from the real cluster would be worse than a stated one."""
    found = []
    for path, keys in UNMODELLED:
        names = [
            f"{(p.get('metadata') or {}).get('namespace') or 'default'}/{(p.get('metadata') or {}).get('name')}"
            for p in pods
            if _set_at(p.get("spec") or {}, keys)
        ]
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            found.append(
                f"{len(names)} pod(s) set {path} ({shown}): dratwin does not model it yet and places them as if "
                "it were absent; a real cluster may place them differently or leave some Pending"
            )
    return found


def _create_compute_domain_templates(loaded: LoadedCluster, objects: Sequence[LoadedObject],
                                     templates: dict[tuple[str, str], Raw]) -> None:
    """The ComputeDomain controller's templates, in the state before any pod's claims are made."""
    loaded.compute_domains = read_domains(objects)
    loaded.rejections += loaded.compute_domains.rejections
    created = controller_templates(loaded.compute_domains, templates)
    for raw in created.templates:
        meta = raw["metadata"]
        template = decode_as(raw, ResourceClaimTemplate, f"ResourceClaimTemplate {meta['namespace']}/{meta['name']}")
        loaded.state.templates[f"{meta['namespace']}/{meta['name']}"] = template
        templates[(meta["namespace"], meta["name"])] = raw
        loaded.state.record("Added", "ResourceClaimTemplate", f"{meta['namespace']}/{meta['name']}")
    loaded.notes += created.notes
    loaded.unmodelled += created.warnings


def imex_daemons(loaded: LoadedCluster, rng: random.Random) -> list[PodInfo]:
    """Once the workload pods are placed: the ComputeDomain labels the kubelet plugin sets on their nodes and the
    IMEX daemon pods the DaemonSets then create, as pending pods (none without ComputeDomains)."""
    if not loaded.compute_domains.domains:
        return []
    started = start_daemons(loaded.state, loaded.compute_domains, rng)
    for node, uid in started.node_labels.items():
        loaded.state.label_node(node, DOMAIN_LABEL, uid)
    loaded.notes += started.notes
    loaded.unmodelled += started.warnings
    before = len(loaded.pending)
    add_pods(loaded, started.pods, rng)
    return loaded.pending[before:]


def add_pods(loaded: LoadedCluster, pods: Sequence[Raw], rng: random.Random) -> None:
    """Create more pods in a loaded cluster (admission, then the resourceclaim controller), as pending."""
    state = loaded.state
    templates = {(k.split("/")[0], k.split("/")[1]): msgspec.to_builtins(t) for k, t in state.templates.items()}
    claims = {(r.claim.metadata.namespace, r.claim.metadata.name): r.raw for r in state.claims.values()}
    order = len(state.pods) + len(loaded.pending)
    expansion = expand_workloads(list(pods), rng)
    present = created_now(expansion.pods, expansion.ordered_after)
    loaded.waiting.update(present.waiting)
    for offset, raw in enumerate(present.pods):
        _add_pod(loaded, raw, order + offset, templates, claims, {}, rng)


def _claims_by_owner(claims: dict[tuple[str, str], Raw]) -> dict[str, dict[tuple[str, str], Raw]]:
    """Claims of the input indexed by the uid of the pod that owns them (as the controller's index)."""
    index: dict[str, dict[tuple[str, str], Raw]] = {}
    for key, raw in claims.items():
        for owner in (raw.get("metadata") or {}).get("ownerReferences") or []:
            if owner.get("kind") == "Pod" and owner.get("uid"):
                index.setdefault(str(owner["uid"]), {})[key] = raw
    return index


def _add_pod(
    loaded: LoadedCluster,
    raw: Raw,
    order: int,
    templates: dict[tuple[str, str], Raw],
    claims: MutableMapping[tuple[str, str], Raw],
    by_owner: dict[str, dict[tuple[str, str], Raw]],
    rng: random.Random,
) -> None:
    state = loaded.state
    frameworks = loaded.kueue_frameworks
    if frameworks is not None and not (raw.get("spec") or {}).get("nodeName") and managed_pod(raw, frameworks):
        raw = pod_webhook(raw)  # Kueue's pod webhook, before the API server stores the pod
    if scheduling_gates(raw):  # the API server's condition for a pod created with scheduling gates
        raw = with_gated_condition(raw)
    pod = msgspec.convert(raw, Pod, strict=False)
    if not pod.metadata.namespace:
        pod.metadata.namespace = "default"
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    uid = str((raw.get("metadata") or {}).get("uid") or "")
    made = claims_for_pod(raw, templates, claims, rng, owned=by_owner.get(uid, {}))
    for claim_raw in made.created:
        record = state.add_claim(claim_raw)
        claims[(record.claim.metadata.namespace, record.claim.metadata.name)] = record.raw
    if made.statuses:
        status = {**(raw.get("status") or {}), "resourceClaimStatuses": list(made.statuses)}
        raw = {**raw, "status": status}
        # Only status.resourceClaimStatuses changed: the typed pod takes them, the rest is decoded already.
        statuses = msgspec.convert(status["resourceClaimStatuses"], list[PodResourceClaimStatus], strict=False)
        pod = msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, resource_claim_statuses=statuses))
    info = make_pod_info(pod, order)
    state.pods[key] = PodRecord(raw, pod, info)
    state.record("Added", "Pod", key)
    for problem in made.problems:
        loaded.blocked.append(PendingReason(key, str(problem), problem.scheduler_status))
    if pod.spec.node_name and pod.spec.node_name in state.nodes:
        add_pod(state.nodes[pod.spec.node_name], info)
    elif not made.problems:
        loaded.pending.append(info)
    # else: kube-scheduler's PreEnqueue check holds the pod back until its claims exist: it is never
    # tried, so it gets neither a FailedScheduling event nor a PodScheduled condition.


class _ClaimsByName(MutableMapping[tuple[str, str], Raw]):
    """The state's claims keyed by (namespace, name), as the resourceclaim controller looks them up; adding
    one is a no-op (the caller has added its record to the state already)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state

    def __getitem__(self, key: tuple[str, str]) -> Raw:
        return self.state.claims[f"{key[0]}/{key[1]}"].raw

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and f"{key[0]}/{key[1]}" in self.state.claims

    def __setitem__(self, key: tuple[str, str], raw: Raw) -> None:
        assert self.state.claims[f"{key[0]}/{key[1]}"].raw is raw, "a claim the state does not hold"

    def __delitem__(self, key: tuple[str, str]) -> None:
        raise TypeError("claims leave through the state, not this view")

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return (tuple(k.split("/", 1)) for k in self.state.claims)  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.state.claims)


def add_created_pods(loaded: LoadedCluster, pods: Sequence[Raw], rng: random.Random) -> list[PodInfo]:
    """Pods a controller has just created (already through admission): the resourceclaim controller makes
    their claims and they become pending, as in :func:`add_pods`; returns the new pending pods."""
    state = loaded.state
    templates = {(k.split("/")[0], k.split("/")[1]): msgspec.to_builtins(t) for k, t in state.templates.items()}
    claims = _ClaimsByName(state)  # a view, not a copy: a run over time creates pods among thousands of claims
    before = len(loaded.pending)
    for raw in pods:
        _add_pod(loaded, raw, len(state.pods), templates, claims, {}, rng)
    created = loaded.pending[before:]
    del loaded.pending[before:]
    return created

"""Kueue's state for the input: the Workloads of its queued jobs, what a settled run of cycles admitted, and
the input as the cluster then holds it (queued Jobs suspended, admitted ones started with their flavors).

This is the one place ``explain`` gets Kueue's decisions from. It runs the pure core
(:func:`dratwin.kueue.cycle.run_until_settled`) over the loaded objects at time 0, as Kueue's scheduler
does on a cluster where the objects appear at once: Workloads are queued in the order of the input (their
creation order), each ClusterQueue's heads tried cycle after cycle until nothing more can be admitted.

What it reads: ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, WorkloadPriorityClasses and the
scheduling.k8s.io PriorityClasses, Kueue's Configuration (``deviceClassMappings``, transformations), the
DRA objects Kueue counts (ResourceClaimTemplates, DeviceClasses, ResourceSlices), batch/v1 Jobs labelled
``kueue.x-k8s.io/queue-name`` (their Workloads made as Kueue's job framework makes them) and Workload
objects written in the input that no Job of the input owns. A Workload already admitted in the input
(``status.admission``) is queued again like the others: the twin decides admission itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.codec import decode_as
from dratwin.api.kueue import (
    CLUSTER_QUEUE,
    COHORT,
    CONFIG_GROUP,
    CONFIGURATION,
    GROUP,
    LOCAL_QUEUE,
    RESOURCE_FLAVOR,
    WORKLOAD,
    WORKLOAD_PRIORITY_CLASS,
    ClusterQueue,
    Cohort,
    Configuration,
    LocalQueue,
    ResourceFlavor,
    Workload,
    WorkloadPriorityClass,
)
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from dratwin.cluster.workloads import object_uid
from dratwin.kueue.cycle import Admitted, Entry, Pending, Queues, Snapshot, resolve_local_queue, run_until_settled
from dratwin.kueue.dra import DraInputs
from dratwin.kueue.explain import QuotaView, quota_view
from dratwin.kueue.jobs import Priorities, admitted_job, suspended, workload_for_job
from dratwin.kueue.quota import QuotaTree
from dratwin.kueue.usage import decode_workload, workload_usage

KUEUE_GROUPS = (GROUP, CONFIG_GROUP)


@dataclass
class QueuedWorkload:
    """One Workload, the job it was made from (``None`` for a Workload written as such) and Kueue's word."""

    entry: Entry
    owner: LoadedObject | None
    verdict: Admitted | Pending | None  # None: no cycle tried it (behind a blocking StrictFIFO head)

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def admitted(self) -> bool:
        return isinstance(self.verdict, Admitted)

    @property
    def owner_ref(self) -> str:
        return self.owner.ref if self.owner is not None else ""


@dataclass
class KueueState:
    snapshot: Snapshot
    flavors: Mapping[str, ResourceFlavor]
    workloads: dict[str, QueuedWorkload]  # namespace/name → workload, in queueing order
    objects: list[LoadedObject]  # the input after Kueue: queued Jobs suspended or started, Kueue's objects out
    notes: list[str] = field(default_factory=list)

    def view(self, key: str) -> QuotaView:
        queued = self.workloads[key]
        return quota_view(self.snapshot, queued.entry, queued.verdict)

    def by_job(self, namespace: str, name: str) -> QueuedWorkload | None:
        return next((w for w in self.workloads.values() if w.owner is not None and w.owner.kind == "Job"
                     and w.owner.namespace == namespace and w.owner.name == name), None)

    def started(self, queued: QueuedWorkload, flavor_names: Sequence[str]) -> LoadedObject | str | None:
        """``queued``'s Job as Kueue starts it with ``flavor_names`` injected, or why it cannot start."""
        if queued.owner is None:
            return None
        started = admitted_job(queued.owner.raw, [self.flavors[f] for f in flavor_names if f in self.flavors])
        if isinstance(started, dict):
            return LoadedObject(started, queued.owner.source)
        return started.message


def is_kueue_object(obj: LoadedObject) -> bool:
    return obj.api_version.partition("/")[0] in KUEUE_GROUPS


def kueue_state(objects: Sequence[LoadedObject]) -> KueueState | None:
    """Kueue's decisions over ``objects`` (as read and converted), or ``None`` when the input holds no
    ClusterQueue and no LocalQueue (Kueue is not part of this cluster)."""
    typed = _typed(objects)
    if not typed.cluster_queues and not typed.local_queues:
        return None
    tree = QuotaTree.build(typed.cluster_queues.values(), typed.cohorts)
    snapshot = Snapshot(typed.cluster_queues, typed.flavors, tree)
    queues = Queues.of(typed.cluster_queues.values())
    workloads: dict[str, QueuedWorkload] = {}
    early: dict[str, Pending] = {}
    notes: list[str] = []
    for order, (workload, owner) in enumerate(_workloads(objects, typed, notes)):
        target = resolve_local_queue(workload, typed.local_queues)
        usage = workload_usage(workload, typed.config, typed.dra)
        entry = Entry(workload, target if isinstance(target, str) else "", usage, float(order))
        workloads[entry.key] = QueuedWorkload(entry, owner, None)
        if isinstance(target, Pending):
            early[entry.key] = Pending(entry, target.reason, target.message)
        else:
            queues.push(entry)
    admitted, last = run_until_settled(snapshot, queues)
    for done in admitted:
        workloads[done.entry.key].verdict = done
    for key, pending in {**last, **early}.items():
        workloads[key].verdict = pending
    state = KueueState(snapshot, typed.flavors, workloads, [], notes)
    state.objects = _after_kueue(objects, state)
    return state


@dataclass
class _Typed:
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    cohorts: list[Cohort] = field(default_factory=list)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    priorities: Priorities = field(default_factory=lambda: Priorities({}, {}))
    config: Configuration = field(default_factory=Configuration)
    dra: DraInputs = field(default_factory=lambda: DraInputs({}, {}, []))


def _typed(objects: Sequence[LoadedObject]) -> _Typed:
    out = _Typed()
    workload_classes: dict[str, int] = {}
    pod_classes: dict[str, int] = {}
    templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
    classes: dict[str, DeviceClass] = {}
    slices: list[ResourceSlice] = []
    for obj in objects:
        group = obj.api_version.partition("/")[0]
        if group == GROUP and obj.kind == RESOURCE_FLAVOR:
            out.flavors[obj.name] = decode_as(obj.raw, ResourceFlavor, obj.ref)
        elif group == GROUP and obj.kind == CLUSTER_QUEUE:
            out.cluster_queues[obj.name] = decode_as(obj.raw, ClusterQueue, obj.ref)
        elif group == GROUP and obj.kind == COHORT:
            out.cohorts.append(decode_as(obj.raw, Cohort, obj.ref))
        elif group == GROUP and obj.kind == LOCAL_QUEUE:
            out.local_queues[(obj.namespace or "default", obj.name)] = decode_as(obj.raw, LocalQueue, obj.ref)
        elif group == GROUP and obj.kind == WORKLOAD_PRIORITY_CLASS:
            workload_classes[obj.name] = decode_as(obj.raw, WorkloadPriorityClass, obj.ref).value
        elif group == CONFIG_GROUP and obj.kind == CONFIGURATION:
            out.config = decode_as(obj.raw, Configuration, obj.ref)
        elif group == "scheduling.k8s.io" and obj.kind == "PriorityClass":
            pod_classes[obj.name] = int(obj.raw.get("value") or 0)
        elif group == "resource.k8s.io" and obj.kind == "ResourceClaimTemplate":
            templates[(obj.namespace or "default", obj.name)] = decode_as(obj.raw, ResourceClaimTemplate, obj.ref)
        elif group == "resource.k8s.io" and obj.kind == "DeviceClass":
            classes[obj.name] = decode_as(obj.raw, DeviceClass, obj.ref)
        elif group == "resource.k8s.io" and obj.kind == "ResourceSlice":
            slices.append(decode_as(obj.raw, ResourceSlice, obj.ref))
    out.priorities = Priorities(workload_classes, pod_classes)
    out.dra = DraInputs(templates, classes, slices)
    return out


def _workloads(objects: Sequence[LoadedObject], typed: _Typed,
               notes: list[str]) -> list[tuple[Workload, LoadedObject | None]]:
    out: list[tuple[Workload, LoadedObject | None]] = []
    for obj in objects:
        if obj.kind != "Job" or not obj.api_version.startswith("batch/"):
            continue
        made = workload_for_job(_with_uid(obj.raw), typed.priorities)
        if isinstance(made, dict):
            out.append((decode_workload(made), obj))
        elif (obj.raw.get("metadata") or {}).get("labels", {}).get("kueue.x-k8s.io/queue-name"):
            notes.append(f"{obj.ref}: no Workload: {made.reason}")
    made_names = {(w.metadata.namespace, w.metadata.name) for w, _ in out}
    for obj in objects:
        if obj.api_version.partition("/")[0] == GROUP and obj.kind == WORKLOAD:
            workload = decode_as(obj.raw, Workload, obj.ref)
            if (workload.metadata.namespace or "default", workload.metadata.name) not in made_names:
                out.append((workload, None))
    return out


def _with_uid(raw: dict[str, Any]) -> dict[str, Any]:
    """The Job with the uid the API server gives it (the twin's deterministic one when the input has none),
    which its Workload's name hashes."""
    meta = raw.get("metadata") or {}
    if meta.get("uid"):
        return raw
    return {**raw, "metadata": {**meta, "uid": object_uid("batch/v1", "Job", meta.get("namespace") or "default",
                                                          str(meta.get("name") or ""))}}


def _after_kueue(objects: Sequence[LoadedObject], state: KueueState) -> list[LoadedObject]:
    """The input as the cluster holds it once Kueue has acted: a queued Job suspended until its Workload is
    admitted, then unsuspended with its flavors' nodeLabels and tolerations; Kueue's own objects left out
    (they place nothing)."""
    by_owner = {id(w.owner): w for w in state.workloads.values() if w.owner is not None}
    out = []
    for obj in objects:
        if is_kueue_object(obj):
            continue
        queued = by_owner.get(id(obj))
        if queued is None:
            out.append(obj)
            continue
        started = state.started(queued, admitted_flavors(queued)) if queued.admitted else None
        if isinstance(started, LoadedObject):
            out.append(started)
            continue
        if isinstance(started, str):
            state.notes.append(f"{obj.ref}: admitted but not started: {started}")
        out.append(LoadedObject(suspended(obj.raw), obj.source))
    return out


def admitted_flavors(queued: QueuedWorkload) -> list[str]:
    if not isinstance(queued.verdict, Admitted):
        return []
    return sorted({f for p in queued.verdict.assignment.pod_sets for f in p.flavors.values()})

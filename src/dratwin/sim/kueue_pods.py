"""Kueue's pod reconciler on the simulated control plane: the Workloads of gated pods, and their release.

The twin of ``pkg/controller/jobs/pod/pod_controller.go`` over :mod:`dratwin.kueue.pods`: the pods that
Kueue's webhook gated as they were created (``kueue.x-k8s.io/admission``; plain pods, pod groups, a
Deployment's replicas, a StatefulSet's pods) are gathered by Workload: a pod without a group makes its own
Workload at once; a group's Workload is made once all its pods exist (fast admission: with its first pod).
The Workload goes through :class:`dratwin.sim.kueue.KueueController` as any other; on admission each of its
gated pods loses the gate and gets the assigned flavors' nodeSelector and tolerations (``Run``), and the
scheduler tries it. A pod of an admitted group created later (a StatefulSet's next ordinal) is released as it
comes. The Workload is Finished and its quota freed as Kueue's ``Finished`` says
(:func:`dratwin.kueue.pod_groups.finished`: a group's when its total count succeeded, or when nothing is
active in a group that is not retriable), or when its pods are gone; a Deployment's replacement pod is a new
pod, with a Workload of its own. A made group's active pods beyond a role's count are deleted ("Excess pod
deleted"), and its Workload's ``WaitingForReplacementPods`` condition says whether a role lacks pods (a
preempted or evicted pod leaves its place open until a pod of the same role is created).

An evicted pod Workload (preemption, the PodsReady timeout) has its pods deleted, as Kueue's ``Stop`` does
(none in a one-shot run, which evicts nothing); left without pods, the Workload is finalized (Finished,
out of its queue). With topology-aware scheduling (the webhook's topology gate), the released pods are put
in their assigned domains by the topology ungater (:class:`dratwin.sim.kueue_tas.TasController`) in the same
moment. PodsReady follows the pods'
Ready condition (the controller's ``by_pod``); a group's succeeded pods are not counted in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.api.core import Pod
from dratwin.api.kueue import ResourceFlavor
from dratwin.cluster.state import PodRecord
from dratwin.kueue.cycle import Admitted
from dratwin.kueue.jobs import InjectionConflict, NotQueued
from dratwin.kueue.pod_groups import (
    EXCESS_POD_DELETED,
    WAITING_FOR_REPLACEMENT_PODS,
    GroupPod,
    cleanup,
    excess_pods,
    finished,
    replacement_condition,
)
from dratwin.kueue.pods import admitted_pod, gated_by_kueue, group_key, total_count, workload_for_pods
from dratwin.kueue.tas.request import POD_GROUP_POD_INDEX_LABEL
from dratwin.sim.kueue import KueueController
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase

TERMINAL = ("Succeeded", "Failed")


@dataclass
class KueuePods:
    kueue: KueueController
    store: Store
    members: dict[str, list[str]] = field(default_factory=dict)  # Workload key -> its pods' keys, in creation order
    workload_of: dict[str, str] = field(default_factory=dict)  # pod key -> its Workload's key
    admitted: dict[str, list[ResourceFlavor]] = field(default_factory=dict)  # Workload key -> its flavors, admitted
    made: set[str] = field(default_factory=set)  # Workloads created
    totals: dict[str, int | None] = field(default_factory=dict)  # Workload key -> its group's total (None: a pod)
    created: dict[str, float] = field(default_factory=dict)  # pod key -> when the pod reconciler first saw it
    # Members that left the cluster on their own, as Kueue still sees them: the twin removes a pod when it
    # succeeds or is preempted, where upstream Kueue's finalizer keeps it (Succeeded, or Failed) in the group
    departed: dict[str, dict[str, Any]] = field(default_factory=dict)  # pod key -> its last object, phase final
    _stopped: set[str] = field(default_factory=set)  # pods Kueue's Stop deleted: gone for good, not departed
    _waiting: dict[str, str] = field(default_factory=dict)  # Workload key -> why it is not made yet (noted once)

    def __post_init__(self) -> None:
        self.store.subscribe("Pod", self._on_pod)
        for key, record in list(self.store.state.pods.items()):
            if gated_by_kueue(record.raw):
                self._add(key, record.raw)
        for workload in list(self.members):
            self._make(workload)

    def _add(self, pod: str, raw: Mapping[str, Any]) -> str:
        workload = group_key(raw)
        self.totals.setdefault(workload, total_count(raw))
        self.created.setdefault(pod, self.kueue.engine.now())
        if pod not in self.workload_of:
            self.workload_of[pod] = workload
            self.members.setdefault(workload, []).append(pod)
        return workload

    def _on_pod(self, change: Change) -> None:
        record = self.store.state.pods.get(change.key)
        known = self.workload_of.get(change.key)
        if known is None:
            if change.type != "Added" or record is None or not gated_by_kueue(record.raw):
                return
            known = self._add(change.key, record.raw)
            if known in self.made:
                self.kueue.by_pod[change.key] = known
                self._reconcile_group(known)
                if known in self.admitted and change.key in self.store.state.pods:
                    self._release(known, change.key)
            else:
                self._make(known)
            return
        if change.type == "Deleted":
            self._departed(change)
            self._reconcile_group(known)
        if change.type == "Deleted" or record is None or pod_phase(record.raw) in TERMINAL:
            self._maybe_finished(known)

    def _departed(self, change: Change) -> None:
        """A member pod was deleted: unless Kueue stopped it, it stays in the group as Kueue would see it
        (Succeeded if it succeeded, else Failed: a preempted or evicted pod's containers are killed)."""
        if change.key in self._stopped:
            self._stopped.discard(change.key)
            return
        raw = change.pod.raw if change.pod is not None else {}
        phase = "Succeeded" if pod_phase(raw) == "Succeeded" else "Failed"
        self.departed[change.key] = {**raw, "status": {**(raw.get("status") or {}), "phase": phase}}

    def _members_as_kueue_sees(self, workload: str) -> list[tuple[str, dict[str, Any]]]:
        """The Workload's pods, in creation order: those in the cluster and the members that departed."""
        state = self.store.state
        out = []
        for key in self.members.get(workload, []):
            if key in state.pods:
                out.append((key, state.pods[key].raw))
            elif key in self.departed:
                out.append((key, self.departed[key]))
        return out

    def _group_pods(self, workload: str) -> list[GroupPod]:
        return [GroupPod(key, raw, self.created.get(key, 0.0)) for key, raw in self._members_as_kueue_sees(workload)]

    def _delete_excess(self, keys: Sequence[str]) -> None:
        """The excess pods are deleted and leave the group (their deletion is not a departure)."""
        for key in keys:
            self.store.note("ExcessPodDeleted", "Pod", key, EXCESS_POD_DELETED)
            workload = self.workload_of.pop(key, None)
            if workload is not None:
                self.members[workload].remove(key)
                self.kueue.by_pod.pop(key, None)
            if self.departed.pop(key, None) is None:  # a departed member is only forgotten
                self.store.delete_pod(key)

    def _reconcile_group(self, workload: str) -> None:
        """FindMatchingWorkloads and CustomWorkloadConditions for a made group: its active pods beyond each
        role's count are deleted, and WaitingForReplacementPods says whether a role lacks pods."""
        record = self.kueue.records.get(workload)
        raw = self.store.state.workloads.get(workload)
        if self.totals.get(workload) is None or record is None or record.finished_at is not None or raw is None:
            return
        pod_sets = [(str(p.get("name") or ""), int(p.get("count") or 0)) for p in raw["spec"].get("podSets") or []]
        found = cleanup(self._group_pods(workload), pod_sets)
        self._delete_excess(found.excess)
        conditions = {c.get("type"): c for c in (raw.get("status") or {}).get("conditions") or []}
        wanted = replacement_condition(found.absent, conditions.get(WAITING_FOR_REPLACEMENT_PODS),
                                       conditions.get("Evicted"))
        if wanted is not None:
            self.kueue.write_condition(workload, WAITING_FOR_REPLACEMENT_PODS, *wanted)

    def _make(self, workload: str) -> None:
        state = self.store.state
        total = self.totals.get(workload)
        if total is not None:  # ConstructComposableWorkload: the pods beyond the total count go first
            self._delete_excess(excess_pods(self._group_pods(workload), total))
        pods = [state.pods[k].raw for k in self.members[workload] if k in state.pods]
        made = workload_for_pods(pods, self.kueue.objects.priorities)
        if isinstance(made, NotQueued):
            if self._waiting.get(workload) != made.reason:
                self._waiting[workload] = made.reason
                self.kueue.notes.append(f"Workload {workload}: not created yet: {made.reason}")
            return
        self._waiting.pop(workload, None)
        key = self.kueue.add_workload(made)
        self.made.add(key)
        self.kueue.by_pod.update(dict.fromkeys(self.members[workload], key))  # its PodsReady follows them
        self.kueue.starters[key] = lambda admission: self._start(key, admission)
        self.kueue.stoppers[key] = lambda: self._stop(key)
        self._reconcile_group(key)

    def _start(self, workload: str, admission: Admitted) -> None:
        """The pod reconciler's Run: every gated pod of the Workload released with its flavors (and, with a
        topology assignment, put in its domain by the topology ungater)."""
        self.kueue.tas.admitted(workload, admission.assignment)
        self.release(workload, self.kueue.flavors_of(admission))

    def release(self, workload: str, flavors: Sequence[ResourceFlavor]) -> str:
        """Release the Workload's gated pods with ``flavors`` (and the pods of it still to come); "" when
        released, else why Kueue could not (a nodeSelector conflict)."""
        self.admitted[workload] = list(flavors)
        problems = [self._release(workload, pod) for pod in list(self.members.get(workload, []))]
        return next((p for p in problems if p), "")

    def _release(self, workload: str, pod: str) -> str:
        record = self.store.state.pods.get(pod)
        if record is None or not gated_by_kueue(record.raw):
            return ""
        released = admitted_pod(record.raw, self.admitted[workload])
        if isinstance(released, InjectionConflict):
            self.kueue.notes.append(f"Pod {pod}: not released: {released.message}")
            return released.message
        state = self.store.state
        released = self.kueue.tas.ungate(workload, [released], lambda key: key in state.pods,
                                         POD_GROUP_POD_INDEX_LABEL)[0]
        self.store.state.update_pod(pod, released, msgspec.convert(released, Pod, strict=False))
        return ""

    def _stop(self, workload: str) -> list[PodRecord]:
        """The pod reconciler's Stop on eviction: the Workload's pods are deleted (its Workload, left without
        pods, is then finalized; a Deployment's ReplicaSet makes new pods, with Workloads of their own)."""
        self.admitted.pop(workload, None)
        state = self.store.state
        members = self.members.get(workload, [])
        for key in members:
            self.departed.pop(key, None)
        stopped = [p for p in members if p in state.pods]
        self._stopped.update(stopped)
        return [self.store.delete_pod(p) for p in stopped]

    def _maybe_finished(self, workload: str) -> None:
        pods = self.members.get(workload, [])
        if workload not in self.made or not pods:
            return
        done = finished([raw for _, raw in self._members_as_kueue_sees(workload)], self.totals.get(workload))
        if done is not None:
            self.admitted.pop(workload, None)
            self.kueue.finish_workload(workload, done.succeeded, done.message)

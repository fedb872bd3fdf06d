"""``explain workload/NS/NAME``: Kueue's quota view beside the scheduler's placement view of the same pods.

Quota and placement are two worlds (kubernetes-sigs/kueue#12422): Kueue admits a Workload when its
ClusterQueue's quota has room, without looking at nodes or devices, and the scheduler places pods without
looking at quota. The explanation shows both for one Workload:

- the quota view (:mod:`dratwin.kueue.explain`): Kueue's condition in its own words, then per PodSet,
  flavor and resource the numbers behind it;
- the placement view: the Workload's pods as Kueue would start them (its flavors' nodeLabels and
  tolerations injected, :func:`dratwin.kueue.jobs.inject_flavors`), run through the scheduler twin after
  the Workloads Kueue admitted; the first pod that finds no node is explained as ``explain pod/...``
  explains it (the same per-node and per-device reasons);
- the two mismatches users hit: quota admits (or would) but no node can place the pods, and the nodes
  have room but quota blocks.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator import Features
from dratwin.api.loader import LoadedObject
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.kueue.explain import QuotaView, shortfalls
from dratwin.kueue.jobs import inject_flavors
from dratwin.twin.explain import PodExplanation, explain_pod
from dratwin.twin.kueue_state import KueueState, QueuedWorkload
from dratwin.twin.schedule import Options, ScheduleReport, schedule

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
QUOTA_ADMITS_UNPLACEABLE = "QuotaAdmitsButNoNodePlaces"
PLACEABLE_QUOTA_BLOCKS = "NodesFreeButQuotaBlocks"


@dataclass(frozen=True)
class Mismatch:
    kind: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


@dataclass
class PlacementView:
    """The Workload's pods as the scheduler would place them once Kueue starts them."""

    admitted: bool  # the pods exist (admitted) or are what admission would create
    flavors: list[str]
    pods: list[str]
    placed: dict[str, str] = field(default_factory=dict)  # pod → node
    first_unplaced: PodExplanation | None = None
    refused: str = ""  # why Kueue cannot start the job with these flavors, or why no pod was made

    @property
    def all_placed(self) -> bool:
        return bool(self.pods) and len(self.placed) == len(self.pods) and not self.refused

    def summary(self) -> str:
        lead = "" if self.admitted else "if admitted, "
        injected = f" with flavor {', '.join(self.flavors)} injected" if self.flavors else ""
        if self.refused:
            return f"{lead}the pods are not started: {self.refused}"
        if not self.pods:
            return f"{lead}no pods to place"
        if self.all_placed:
            nodes = sorted(set(self.placed.values()))
            return f"{lead}{_every(self.pods)}{injected} can be placed (on {', '.join(nodes)})"
        head = f"{lead}{len(self.placed)} of {len(self.pods)} pod{_s(self.pods)}{injected} can be placed"
        return f"{head}: {self.first_unplaced.summary}" if self.first_unplaced is not None else head

    def lines(self) -> list[str]:
        out = [self.summary()]
        if self.first_unplaced is not None:
            out.append(f"pod {self.first_unplaced.pod}, the first that finds no node:")
            out += self.first_unplaced.lines()[2:]  # its groups and notes, one level in
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"admitted": self.admitted, "flavors": self.flavors, "pods": self.pods, "placed": self.placed,
                "allPlaced": self.all_placed, "summary": self.summary(), "refused": self.refused or None,
                "firstUnplaced": self.first_unplaced.to_dict() if self.first_unplaced is not None else None}


@dataclass
class WorkloadExplanation:
    workload: str
    owner: str  # "Job ns/name", or "" for a Workload written as such
    quota: QuotaView
    placement: PlacementView
    mismatches: list[Mismatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    asked_as: str = ""  # the pod or job the user named, when not the Workload itself

    @property
    def status(self) -> str:
        if not self.quota.admitted:
            return "Pending"
        return "Admitted" if self.placement.all_placed else "AdmittedNotPlaced"

    def lines(self) -> list[str]:
        owner = f" (of {self.owner})" if self.owner else ""
        out = [f"{self.asked_as}: queued as workload {self.workload}" if self.asked_as else "",
               f"workload {self.workload}{owner}: {self.status}", "  quota (Kueue):"]
        out = [line for line in out if line]
        out += [f"    {line}" for line in self.quota.lines()]
        out.append("  placement (kube-scheduler):")
        out += [f"    {line}" for line in self.placement.lines()]
        out += [f"  mismatch {m.kind}: {m.message}" for m in self.mismatches]
        out += [f"  note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "owner": self.owner or None, "askedAs": self.asked_as or None,
                "status": self.status, "quota": self.quota.to_dict(), "placement": self.placement.to_dict(),
                "mismatches": [m.to_dict() for m in self.mismatches], "notes": self.notes}


def explain_workload(state: KueueState, key: str, features: Features, options: Options,
                     compiler: SelectorCompiler | None, seed: int) -> WorkloadExplanation:
    """Both views of the Workload ``key`` of ``state`` and the mismatches between them."""
    import random

    queued = state.workloads[key]
    view = state.view(key)
    flavors = sorted({f for p in queued.entry.workload.spec.pod_sets for f in view.flavors_for(p.name)})
    objects, refused, made = _placement_objects(state, queued, view)
    placement = PlacementView(queued.admitted, flavors, [], refused=refused)
    notes = list(state.notes)
    if not flavors and any(p.flavors for p in view.pod_sets):
        notes.append("no flavor of the ClusterQueue can take the pods (see the quota view): they are placed without "
                     "a flavor's nodeLabels and tolerations, which Kueue would never start them without")
    if not refused:
        loaded = load_cluster(objects, features, random.Random(seed), admitted_already=True)
        report = schedule(loaded, options, compiler)
        placement.pods = _target_pods(loaded, queued, made)
        for pod in placement.pods:
            attempt = report.attempt_of(pod)
            if attempt is not None and attempt.scheduled and attempt.node:
                placement.placed[pod] = attempt.node
        unplaced = [p for p in placement.pods if p not in placement.placed]
        if unplaced:
            placement.first_unplaced = _explain_first(objects, features, options, compiler, seed, unplaced[0])
        notes += report.loaded.rejections
    explanation = WorkloadExplanation(key, queued.owner_ref, view, placement, notes=notes)
    explanation.mismatches = mismatches(view, placement)
    return explanation


def _explain_first(objects: Sequence[LoadedObject], features: Features, options: Options,
                   compiler: SelectorCompiler | None, seed: int, pod: str) -> PodExplanation:
    """The pod in the state it met when it was tried (the run repeated up to it, as ``explain pod`` does)."""
    import random

    loaded = load_cluster(objects, features, random.Random(seed), admitted_already=True)
    report: ScheduleReport = schedule(loaded, options, compiler, until=pod)
    return explain_pod(report, pod)


def mismatches(view: QuotaView, placement: PlacementView) -> list[Mismatch]:
    """Quota admits (or has room) but the pods find no node; or the nodes have room but quota blocks."""
    found = []
    if view.would_fit and placement.pods and not placement.all_placed and not placement.refused:
        unplaced = len(placement.pods) - len(placement.placed)
        why = placement.first_unplaced.summary.rstrip(".") if placement.first_unplaced is not None else "no node fits"
        if view.admitted:
            lead = f"Kueue reserved quota in ClusterQueue {view.cluster_queue}"
            tail = ("; Kueue does not look at nodes or devices, so the quota stays reserved while the pods are "
                    "Pending (until waitForPodsReady evicts the Workload, where it is configured)")
        else:
            lead = f"the quota of ClusterQueue {view.cluster_queue} has room"
            tail = "; admitting it would reserve quota that no pod can use"
        found.append(Mismatch(QUOTA_ADMITS_UNPLACEABLE,
                              f"{lead}, but {unplaced} of {len(placement.pods)} pod{_s(placement.pods)} find no "
                              f"node: {why}{tail}"))
    if view.quota_blocks and placement.all_placed:
        short = [r.text() for r in shortfalls(view)]
        because = "; ".join(short) if short else (view.condition.message if view.condition else "")
        found.append(Mismatch(PLACEABLE_QUOTA_BLOCKS,
                              f"the nodes have room for {_every(placement.pods)} (their devices are free), "
                              f"but quota blocks: {because}"))
    return found


def _placement_objects(state: KueueState, queued: QueuedWorkload,
                       view: QuotaView) -> tuple[list[LoadedObject], str, list[str]]:
    """The input after Kueue with the Workload's pods started: (objects, why they cannot start, the names of
    pods made here for a Workload that no Job of the input owns)."""
    objects = list(state.objects)
    if queued.owner is not None:
        if queued.admitted:
            return objects, "", []
        flavors = view.flavors_for(queued.entry.workload.spec.pod_sets[0].name)
        started = state.started(queued, flavors)
        if isinstance(started, str):
            return objects, started, []
        if started is None:
            return objects, "the Job could not be started", []
        index = next(i for i, o in enumerate(objects)
                     if o.kind == "Job" and o.namespace == queued.owner.namespace and o.name == queued.owner.name)
        objects.pop(index)
        return [*objects, started], "", []
    pods, refused = _workload_pods(state, queued, view)
    return [*objects, *pods], refused, [f"{p.namespace or 'default'}/{p.name}" for p in pods]


def _workload_pods(state: KueueState, queued: QueuedWorkload, view: QuotaView) -> tuple[list[LoadedObject], str]:
    """For a Workload with no job in the input: its PodSets' pods, as its owner would create them."""
    import msgspec

    workload = queued.entry.workload
    namespace = workload.metadata.namespace or "default"
    pods = []
    for pod_set in workload.spec.pod_sets:
        template = msgspec.to_builtins(pod_set.template)
        spec = copy.deepcopy(template.get("spec") or {})
        conflict = inject_flavors(spec, [state.flavors[f] for f in view.flavors_for(pod_set.name)
                                         if f in state.flavors])
        if conflict is not None:
            return [], conflict.message
        for index in range(pod_set.count):
            meta = dict(template.get("metadata") or {})
            meta.update({"name": f"{workload.metadata.name}-{pod_set.name}-{index}", "namespace": namespace})
            raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(spec)}
            source = state.objects[0].source if state.objects else None
            if source is None:
                return [], "the input holds no object to place the pods beside"
            pods.append(LoadedObject(raw, source))
    return pods, ""


def _target_pods(loaded: LoadedCluster, queued: QueuedWorkload, made: Sequence[str]) -> list[str]:
    if made:
        return [p for p in made if p in loaded.state.pods]
    owner = queued.owner
    if owner is None:
        return []
    namespace = owner.namespace or "default"
    return [info.key for info in loaded.pending
            if info.pod.metadata.namespace == namespace
            and (info.pod.metadata.labels or {}).get(JOB_NAME_LABEL) == owner.name]


def _s(items: Sequence[object]) -> str:
    return "" if len(items) == 1 else "s"


def _every(pods: Sequence[str]) -> str:
    return {1: "the pod", 2: "both pods"}.get(len(pods), f"all {len(pods)} pods")

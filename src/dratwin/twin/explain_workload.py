"""``explain workload/NS/NAME``: Kueue's quota view beside the scheduler's placement view of the same pods.

Quota and placement are two worlds (kubernetes-sigs/kueue#12422): Kueue admits a Workload when its
ClusterQueue's quota has room, without looking at nodes or devices, and the scheduler places pods without
looking at quota. The explanation shows both for one Workload:

- the quota view (:mod:`dratwin.kueue.explain`): Kueue's condition in its own words, then per PodSet,
  flavor and resource the numbers behind it;
- the placement view: the Workload's pods as Kueue starts them (its flavors' nodeLabels and tolerations
  injected, :func:`dratwin.kueue.jobs.admitted_job`), placed by the scheduler twin in the one-shot run of
  the control plane with Kueue's controller (:mod:`dratwin.twin.kueue_state`), after the Workloads it
  admitted; a Workload that waits is started after them, as if admitted. The first pod that finds no
  node is explained as ``explain pod/...`` explains it (the same per-node and per-device reasons);
- the two mismatches users hit: quota admits (or would) but no node can place the pods, and the nodes
  have room but quota blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.kueue.explain import QuotaView, shortfalls
from dratwin.twin.explain import PodExplanation, explain_pod
from dratwin.twin.kueue_state import KueueRun

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
    owner: str  # "Job ns/name"
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


def explain_workload(run: KueueRun, key: str, rerun: Callable[[str], KueueRun | None]) -> WorkloadExplanation:
    """Both views of the Workload ``key`` of ``run`` and the mismatches between them. ``rerun(pod)`` repeats
    the run up to ``pod``, so that the first pod that finds no node is explained in the state it met."""
    queued = run.workloads[key]
    view = run.view(key)
    flavors = sorted({f for p in queued.entry.workload.spec.pod_sets for f in view.flavors_for(p.name)})
    refused = "" if queued.admitted else run.start(queued, flavors)
    placement = PlacementView(queued.admitted, flavors, [], refused=refused)
    notes = run.notes
    if not flavors and any(p.flavors for p in view.pod_sets):
        notes.append("no flavor of the ClusterQueue can take the pods (see the quota view): they are placed without "
                     "a flavor's nodeLabels and tolerations, which Kueue would never start them without")
    if not refused:
        report = run.report()
        placement.pods = run.job_pods(queued)
        for pod in placement.pods:
            attempt = report.attempt_of(pod)
            if attempt is not None and attempt.scheduled and attempt.node:
                placement.placed[pod] = attempt.node
        unplaced = [p for p in placement.pods if p not in placement.placed]
        if unplaced:
            placement.first_unplaced = _explain_first(rerun, key, flavors, unplaced[0])
        notes += run.loaded.rejections
    explanation = WorkloadExplanation(key, queued.owner_ref, view, placement, notes=notes)
    explanation.mismatches = mismatches(view, placement)
    return explanation


def _explain_first(rerun: Callable[[str], KueueRun | None], key: str, flavors: Sequence[str],
                   pod: str) -> PodExplanation | None:
    """The pod in the state it met when it was tried (the run repeated up to it, as ``explain pod`` does)."""
    again = rerun(pod)
    if again is None:
        return None
    queued = again.workloads[key]
    if not queued.admitted:
        again.start(queued, flavors)
    return explain_pod(again.report(), pod)


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


def _s(items: Sequence[object]) -> str:
    return "" if len(items) == 1 else "s"


def _every(pods: Sequence[str]) -> str:
    return {1: "the pod", 2: "both pods"}.get(len(pods), f"all {len(pods)} pods")

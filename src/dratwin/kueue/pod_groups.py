"""The life of a pod Workload once its pods exist: when it is finished, which pods of a group are excess or
replaced, and the condition of a group that waits for replacement pods.

Follows kubernetes-sigs/kueue ``pkg/controller/jobs/pod/pod_controller.go`` at ``ff69552`` and the site's "Run
Plain Pods" (pod groups: failed pods, excess pods, ``retriable-in-group``):

- **finished** (``Finished``): a single pod's Workload ends with its pod (Succeeded or Failed, the pod's
  status message). A group's ends when ``pod-group-total-count`` of its pods Succeeded, or when no pod is
  active and a pod of the group says ``kueue.x-k8s.io/retriable-in-group: "false"``; either way Kueue reports
  the group as succeeded ("Pods succeeded: n/total."), an upstream quirk the twin keeps. A serving group
  (``pod-group-serving: "true"``, a StatefulSet's) never finishes. A group whose pods are all gone ends too
  (Kueue finalizes a Workload without pods);
- **excess pods** (``FindMatchingWorkloads``, ``ConstructComposableWorkload``): per role (PodSet), the active
  pods beyond its count are deleted ("Excess pod deleted"), keeping those with Kueue's finalizer, then those
  not gated, then the older ones (``sortActivePods``);
- failed pods stay members until deleted; the twin deletes a preempted or evicted pod at once, so Kueue's
  finalizing of replaced failed pods (``sortInactivePods``) has nothing to act on and is left out;
- **WaitingForReplacementPods** (``waitingForReplacementPodsCondition``): True while a role has fewer active
  pods than its count (reason and message of the Workload's Evicted condition when it is evicted, else
  PodsFailed "Some Failed pods need replacement"), False PodsReady "No pods need replacement" once replaced.

No I/O: the caller gives the pods (``namespace/name`` and object) and the Workload's PodSets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.kueue.jobs import role_hash
from dratwin.kueue.pods import ADMISSION_GATE, MANAGED_FINALIZER, ROLE_HASH_ANNOTATION, SERVING_ANNOTATION

Raw = dict[str, Any]

RETRIABLE_IN_GROUP_ANNOTATION = "kueue.x-k8s.io/retriable-in-group"
WAITING_FOR_REPLACEMENT_PODS = "WaitingForReplacementPods"
PODS_FAILED = "PodsFailed"
PODS_FAILED_MESSAGE = "Some Failed pods need replacement"
PODS_READY = "PodsReady"
NO_REPLACEMENT_MESSAGE = "No pods need replacement"
EXCESS_POD_DELETED = "Excess pod deleted"
TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Finished:
    succeeded: bool
    message: str


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("annotations") or {}


def is_serving(pods: Sequence[Mapping[str, Any]]) -> bool:
    return bool(pods) and _annotations(pods[0]).get(SERVING_ANNOTATION) == "true"


def unretriable(pods: Sequence[Mapping[str, Any]]) -> bool:
    """``isUnretriableGroup``: a pod of the group says it may not be retried within it."""
    return any(_annotations(p).get(RETRIABLE_IN_GROUP_ANNOTATION) == "false" for p in pods)


def finished(pods: Sequence[Mapping[str, Any]], total: int | None) -> Finished | None:
    """Is the Workload of these pods (the ones that still exist) finished? ``total``: the group's total count,
    None for a single pod."""
    if total is None:
        if not pods:
            return Finished(False, "The pod was deleted")
        phase = _phase(pods[0])
        if phase in TERMINAL:
            return Finished(phase == "Succeeded", str((pods[0].get("status") or {}).get("message") or ""))
        return None
    if not pods:
        return Finished(False, "The pods of the group were deleted")
    if is_serving(pods):
        return None
    succeeded = sum(1 for p in pods if _phase(p) == "Succeeded")
    active = any(_phase(p) not in TERMINAL for p in pods)
    if succeeded == total or (not active and unretriable(pods)):
        return Finished(True, f"Pods succeeded: {succeeded}/{total}.")
    return None


# ---- excess and replaced pods ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupPod:
    key: str  # namespace/name
    raw: Mapping[str, Any]
    created: float  # when it was created (the simulated time), for the upstream ordering

    @property
    def role(self) -> str:
        return str(_annotations(self.raw).get(ROLE_HASH_ANNOTATION) or role_hash(self.raw.get("spec") or {}))

    @property
    def active(self) -> bool:
        """``isPodRunnableOrSucceeded``: not Failed (the twin deletes pods at once, so no deletion is pending)."""
        return _phase(self.raw) != "Failed"

    @property
    def finalized(self) -> bool:
        return MANAGED_FINALIZER not in ((self.raw.get("metadata") or {}).get("finalizers") or [])

    @property
    def gated(self) -> bool:
        gates = (self.raw.get("spec") or {}).get("schedulingGates") or []
        return any(g.get("name") == ADMISSION_GATE for g in gates)


@dataclass(frozen=True)
class Cleanup:
    """What the pod reconciler does to a group's pods against its Workload's PodSets."""

    excess: tuple[str, ...] = ()  # active pods beyond their role's count: deleted
    absent: int = 0  # pods the roles lack: the group waits for replacements


def _keep_order(pod: GroupPod) -> tuple[bool, bool, float]:
    """``sortActivePods``: with the finalizer first, not gated first, older first (the last ones go)."""
    return (pod.finalized, pod.gated, pod.created)


def excess_pods(pods: Sequence[GroupPod], total: int) -> tuple[str, ...]:
    """``ConstructComposableWorkload``: the active pods beyond the group's total count, before its Workload
    exists (the ones to delete)."""
    active = sorted((p for p in pods if p.active), key=_keep_order)
    return tuple(p.key for p in active[total:])


def cleanup(pods: Sequence[GroupPod], pod_sets: Sequence[tuple[str, int]]) -> Cleanup:
    """The group's excess pods and its absent ones, per role (``pod_sets``: each PodSet's name, the role hash,
    and its count)."""
    excess: list[str] = []
    absent = 0
    for name, count in pod_sets:
        active = sorted((p for p in pods if p.role == name and p.active), key=_keep_order)
        absent += max(0, count - len(active))
        excess += [p.key for p in active[count:]]
    return Cleanup(tuple(excess), absent)


def replacement_condition(absent: int, current: Mapping[str, str] | None,
                          evicted: Mapping[str, str] | None) -> tuple[str, str, str] | None:
    """(status, reason, message) of WaitingForReplacementPods to write, or None when nothing changes."""
    if absent > 0:
        if evicted is not None and evicted.get("status") == "True":
            wanted = ("True", str(evicted.get("reason") or ""), str(evicted.get("message") or ""))
        elif current is not None and current.get("status") == "True":
            return None  # already waiting: the reason it was written with stays
        else:
            wanted = ("True", PODS_FAILED, PODS_FAILED_MESSAGE)
    elif current is None or current.get("status") == "False":
        return None
    else:
        wanted = ("False", PODS_READY, NO_REPLACEMENT_MESSAGE)
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == wanted:
        return None
    return wanted

"""Which pods of OrderedReady StatefulSets exist at the moment the twin looks at the cluster.

With ``podManagementPolicy: OrderedReady`` (the default) the StatefulSet controller creates pod N+1 only
once pod N is Running and Ready (``statefulset.StatefulSetControl``: it stops at the first pod that is not
healthy). :func:`dratwin.cluster.workloads.expand_workloads` returns the controller's whole plan, every
ordinal with the pod it waits for; this module keeps the pods that exist now. The twin runs no kubelet, so
a pod the controller has just created never becomes Running and Ready in one run: only the first ordinal
of a new StatefulSet exists, as on a real cluster right after ``kubectl apply``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Raw = dict[str, Any]


@dataclass(frozen=True)
class CreatedNow:
    """``pods``: the pods that exist, in the order given; ``waiting``: each pod not created yet
    (``namespace/name``) and the pod it waits for."""

    pods: list[Raw] = field(default_factory=list)
    waiting: dict[str, str] = field(default_factory=dict)


def pod_key(raw: Raw) -> str:
    meta = raw.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def is_running_and_ready(raw: Raw) -> bool:
    """``podutil.IsPodReady`` on a running pod: phase Running and the Ready condition True."""
    status = raw.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def created_now(pods: Sequence[Raw], ordered_after: Mapping[str, str]) -> CreatedNow:
    """Drop the pods whose predecessor does not exist or is not Running and Ready (and so, in turn, the
    pods after them)."""
    result = CreatedNow()
    ready = {pod_key(p) for p in pods if is_running_and_ready(p)}
    for raw in pods:
        key = pod_key(raw)
        before = ordered_after.get(key)
        if before is not None and (before in result.waiting or before not in ready):
            result.waiting[key] = before
        else:
            result.pods.append(raw)
    return result


def waiting_notes(pods: Sequence[Raw], waiting: Mapping[str, str]) -> list[str]:
    """One note per StatefulSet naming its pods not created yet and the first pod they wait for."""
    owners = {pod_key(p): _controller(p) for p in pods}
    by_owner: dict[str, list[str]] = {}
    for key in waiting:
        by_owner.setdefault(owners.get(key, "StatefulSet"), []).append(key)
    notes = []
    for owner, keys in by_owner.items():
        first = waiting[keys[0]].split("/", 1)[1]
        names = ", ".join(k.split("/", 1)[1] for k in keys)
        notes.append(
            f"{owner}: {names} not created yet: with podManagementPolicy OrderedReady (the default) the "
            f"controller creates each pod only once the one before it is Running and Ready, and {first} is not "
            "(dratwin runs no kubelet: a pod it schedules is bound, not yet Running); set podManagementPolicy: "
            "Parallel to create them all at once"
        )
    return notes


def _controller(raw: Raw) -> str:
    meta = raw.get("metadata") or {}
    owner: Raw = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), {})
    return f"{owner.get('kind') or 'StatefulSet'} {meta.get('namespace') or 'default'}/{owner.get('name')}"

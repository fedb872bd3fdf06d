"""Workload-aware scheduling (``scheduling.k8s.io`` Workload and PodGroup, Kubernetes 1.36 alpha): what a
1.36 cluster with its defaults does with these objects, said by name.

In 1.36 the Workload and PodGroup kinds are served in ``scheduling.k8s.io/v1alpha2`` only when the alpha
feature gate GenericWorkload is on (off by default); 1.35's ``v1alpha1`` is gone. A pod joins a group
through ``spec.schedulingGroup.podGroupName``, a field of the same gate that the API server drops while the
gate is off (1.35's ``spec.workloadRef`` no longer exists). With the defaults, then, the objects are
refused and every pod is scheduled on its own, which is what the twin does. What the gates switch on is
not modelled: gang scheduling (GangScheduling: a group's pods wait until ``minCount`` of them can be placed
together), claims per pod group (DRAWorkloadResourceClaims) and workload-aware preemption; the messages
say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dratwin.api.codec import split_api_version
from dratwin.api.loader import LoadedObject

Raw = dict[str, Any]

GROUP = "scheduling.k8s.io"
KINDS = frozenset({"Workload", "PodGroup"})
SERVED_VERSION = "v1alpha2"
MAX_NAMES = 3

NOT_MODELLED = (
    "dratwin models 1.36 with GenericWorkload off and does not model gang scheduling (GangScheduling), claims per "
    "pod group (DRAWorkloadResourceClaims) or workload-aware preemption: with those gates on, a real cluster "
    "holds a group's pods until minCount of them fit together, where dratwin places them one by one"
)


def pod_group_objects(objects: Sequence[LoadedObject]) -> list[str]:
    """One line per Workload or PodGroup of the input: what the 1.36 API server does with it."""
    lines = []
    for obj in objects:
        group, version = split_api_version(obj.api_version)
        if group != GROUP or obj.kind not in KINDS:
            continue
        ref = f"{obj.kind} {obj.namespace or 'default'}/{obj.name or '<unnamed>'} ({obj.api_version})"
        if version == SERVED_VERSION:
            served = ("refused: the API server serves it only with the alpha feature gate GenericWorkload, off by "
                      "default in 1.36")
        else:
            served = (f"refused: Kubernetes 1.36 serves {obj.kind} only in {GROUP}/{SERVED_VERSION} (behind the alpha "
                      "feature gate GenericWorkload); pods join a PodGroup through spec.schedulingGroup.podGroupName")
        lines.append(f"{ref} is {served}; {NOT_MODELLED}")
    return lines


def pod_group_references(pods: Sequence[Raw]) -> list[str]:
    """One line per pod field that names a group: the pods that set it and what becomes of it."""
    fields = (
        ("spec.schedulingGroup", "schedulingGroup",
         "the API server drops it while the alpha feature gate GenericWorkload is off (the 1.36 default), so "
         "they are scheduled one by one, as here"),
        ("spec.workloadRef", "workloadRef",
         "a 1.35 alpha field that 1.36 no longer has (replaced by spec.schedulingGroup): kubectl's strict field "
         "validation refuses the pod, and without it the API server drops the field"),
    )
    lines = []
    for path, key, what in fields:
        names = [_pod_key(p) for p in pods if (p.get("spec") or {}).get(key)]
        if names:
            more = len(names) - MAX_NAMES
            shown = ", ".join(names[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
            lines.append(f"{len(names)} pod(s) set {path} ({shown}): {what}; gang scheduling is not modelled")
    return lines


def _pod_key(raw: Raw) -> str:
    meta = raw.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"

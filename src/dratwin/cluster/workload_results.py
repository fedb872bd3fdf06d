"""What expanding the workloads gives: the pods and ReplicaSets, and what happened to each input object."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Raw = dict[str, Any]


@dataclass(frozen=True)
class WorkloadNote:
    """What happened to one input object, for people: ``workload`` is ``Kind namespace/name``."""

    workload: str
    message: str

    def __str__(self) -> str:
        return f"{self.workload}: {self.message}"


@dataclass(frozen=True)
class Rejection:
    """Something the API server refuses to create; nothing of it exists in the cluster.

    ``stage`` is ``admission`` (a pod that admission plugins refuse, e.g. an unknown PriorityClass),
    ``validation`` (a workload the API server refuses, so no pod is ever created from it) or ``creation``
    (a name already taken). ``name`` is the name the API server's message uses: the ``generateName`` for
    pods that a controller names through the API server. ``count`` is how many create calls fail alike.
    """

    workload: str
    stage: str
    kind: str
    name: str
    count: int
    message: str
    hint: str = ""

    def __str__(self) -> str:
        what = f"{self.count} {self.kind}s" if self.count > 1 else self.kind
        text = f"{self.workload}: {what} rejected at {self.stage}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(frozen=True)
class WorkloadExpansion:
    """Every pod of the cluster, the ReplicaSets that Deployments create, and what happened to each input.

    ``pods`` are ordered by input object, then by pod index (replica, completion index, ordinal).
    ``ordered_after`` maps a pod (``namespace/name``) of an OrderedReady StatefulSet to the pod that must be
    Running and Ready before the StatefulSet controller creates it. The dicts are fresh copies that belong
    to the caller; treat the mapping as read-only.
    """

    pods: tuple[Raw, ...] = ()
    replica_sets: tuple[Raw, ...] = ()
    notes: tuple[WorkloadNote, ...] = ()
    rejections: tuple[Rejection, ...] = ()
    ordered_after: Mapping[str, str] = field(default_factory=dict)

"""The Kueue objects of a cluster, typed, as Kueue's controller reads them from its informers.

Workloads written in the input (without a Job) are kept to be queued as they are. Read from the objects
:func:`dratwin.cluster.load.load_cluster` kept for Kueue (``kueue_objects``: already
through intake, v1beta1 converted to v1beta2). The Configuration is Kueue's own file, not an API object: a
cluster has at most one (the first is used; a second is noted). Pod PriorityClasses are read too, since a
Workload takes its pods' priority when it names no WorkloadPriorityClass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.codec import decode_as
from dratwin.api.kueue import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    Configuration,
    LocalQueue,
    ResourceFlavor,
    Topology,
    WorkloadPriorityClass,
)
from dratwin.api.loader import LoadedObject
from dratwin.kueue.jobs import Priorities
from dratwin.kueue.pods import (
    DEFAULT_FRAMEWORKS,
    DEPLOYMENT_FRAMEWORK,
    JOB_FRAMEWORK,
    POD_FRAMEWORK,
    STATEFULSET_FRAMEWORK,
    Frameworks,
    frameworks,
)

Raw = dict[str, Any]


@dataclass(frozen=True)
class KueueObjects:
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    cohorts: list[Cohort] = field(default_factory=list)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)  # (namespace, name)
    checks: dict[str, AdmissionCheck] = field(default_factory=dict)
    priorities: Priorities = field(default_factory=lambda: Priorities({}, {}))
    config: Configuration = field(default_factory=Configuration)
    notes: list[str] = field(default_factory=list)
    workloads: list[Raw] = field(default_factory=list)  # Workloads written in the input (queued anew)
    topologies: dict[str, Topology] = field(default_factory=dict)  # for topology-aware scheduling
    frameworks: Frameworks = field(default_factory=lambda: Frameworks(DEFAULT_FRAMEWORKS))  # integrations.frameworks

    @property
    def present(self) -> bool:
        """Is Kueue set up at all (a queue to send work to)? Without one nothing changes in the cluster."""
        return bool(self.cluster_queues or self.local_queues)


def read_kueue_objects(objects: Sequence[LoadedObject], pod_priority_classes: Sequence[Raw] = ()) -> KueueObjects:
    flavors: dict[str, ResourceFlavor] = {}
    queues: dict[str, ClusterQueue] = {}
    cohorts: list[Cohort] = []
    local: dict[tuple[str, str], LocalQueue] = {}
    checks: dict[str, AdmissionCheck] = {}
    workload_classes: dict[str, int] = {}
    configs: list[tuple[LoadedObject, Configuration]] = []
    workloads: list[Raw] = []
    topologies: dict[str, Topology] = {}
    for obj in objects:
        kind = obj.kind
        if kind == "ResourceFlavor":
            flavors[obj.name] = decode_as(obj.raw, ResourceFlavor, obj.ref)
        elif kind == "ClusterQueue":
            queues[obj.name] = decode_as(obj.raw, ClusterQueue, obj.ref)
        elif kind == "Cohort":
            cohorts.append(decode_as(obj.raw, Cohort, obj.ref))
        elif kind == "LocalQueue":
            local[(obj.namespace or "default", obj.name)] = decode_as(obj.raw, LocalQueue, obj.ref)
        elif kind == "AdmissionCheck":
            checks[obj.name] = decode_as(obj.raw, AdmissionCheck, obj.ref)
        elif kind == "WorkloadPriorityClass":
            workload_classes[obj.name] = decode_as(obj.raw, WorkloadPriorityClass, obj.ref).value
        elif kind == "Workload":
            workloads.append(obj.raw)
        elif kind == "Topology":
            topologies[obj.name] = decode_as(obj.raw, Topology, obj.ref)
        elif kind == "Configuration":
            configs.append((obj, decode_as(obj.raw, Configuration, obj.ref)))
    pod_classes = {str((c.get("metadata") or {}).get("name") or ""): int(c.get("value") or 0)
                   for c in pod_priority_classes}
    notes = [f"{_where(obj)}: a second Kueue Configuration is ignored (Kueue reads one file; the first one is used)"
             for obj, _ in configs[1:]]
    config = configs[0][1] if configs else Configuration()
    if configs:
        notes += _unmodelled_frameworks(configs[0][0])
    if any((w.get("status") or {}).get("admission") for w in workloads):
        notes.append("Workloads of the input with status.admission are queued anew: the twin does not restore "
                     "admissions from a dump")
    return KueueObjects(flavors, queues, cohorts, local, checks, Priorities(workload_classes, pod_classes), config,
                        notes, workloads, topologies, frameworks(configs[0][0].raw if configs else None))


MODELLED_FRAMEWORKS = (JOB_FRAMEWORK, POD_FRAMEWORK, DEPLOYMENT_FRAMEWORK, STATEFULSET_FRAMEWORK)


def _unmodelled_frameworks(obj: LoadedObject) -> list[str]:
    """Kueue integrations the Configuration turns on that the twin does not model (their workloads are not
    queued here), the dependencies it lacks, and the settings of what Kueue manages that the twin ignores."""
    enabled = frameworks(obj.raw)
    others = sorted(f for f in enabled.enabled if f not in MODELLED_FRAMEWORKS)
    notes = [f"{_where(obj)}: {problem}" for problem in enabled.problems]
    if others:
        notes.append(f"{_where(obj)}: integrations.frameworks {', '.join(others)}: only "
                     f"{', '.join(MODELLED_FRAMEWORKS)} are modelled; the workloads of the others run as if Kueue "
                     "did not manage them")
    raw = obj.raw
    ignored = [name for name, value in (("manageJobsWithoutQueueName", raw.get("manageJobsWithoutQueueName")),
                                        ("managedJobsNamespaceSelector", raw.get("managedJobsNamespaceSelector")),
                                        ("integrations.podOptions", (raw.get("integrations") or {}).get("podOptions")))
               if value]
    if ignored:
        notes.append(f"{_where(obj)}: {', '.join(ignored)}: not modelled; Kueue manages only what carries a "
                     "kueue.x-k8s.io/queue-name label, outside kube-system and kueue-system (its defaults)")
    return notes


def _where(obj: LoadedObject) -> str:
    return f"{obj.source.path}:{obj.source.line}: Kueue Configuration"

"""Builders for Kueue's objects and the jobs it queues (plain wire dicts, kueue.x-k8s.io/v1beta2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from dratwin.api.kueue import ClusterQueue, Cohort, ResourceFlavor, Workload
from dratwin.api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from dratwin.kueue.cycle import Admitted, Entry, Pending, Queues, Snapshot, run_until_settled
from dratwin.kueue.dra import DraInputs
from dratwin.kueue.flavors import PREEMPT, Assignment, Mode, PodSetAssignment
from dratwin.kueue.preemption import AdmittedWorkload, Preemptor, State, Workloads
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.usage import workload_usage

Wire = dict[str, Any]
API = "kueue.x-k8s.io/v1beta2"


def quota(name: str, nominal: Any, borrowing: Any = None, lending: Any = None) -> Wire:
    out: Wire = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        out["borrowingLimit"] = borrowing
    if lending is not None:
        out["lendingLimit"] = lending
    return out


def flavor_quotas(name: str, *quotas: Wire) -> Wire:
    return {"name": name, "resources": list(quotas)}


def group(covered: list[str], *flavors: Wire) -> Wire:
    return {"coveredResources": covered, "flavors": list(flavors)}


def cluster_queue(name: str = "cq", *groups: Wire, cohort: str = "", **spec: Any) -> Wire:
    body: Wire = {"namespaceSelector": {}, "resourceGroups": list(groups), **spec}
    if cohort:
        body["cohortName"] = cohort
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def cohort(name: str, *groups: Wire, parent: str = "", weight: Any = None) -> Wire:
    body: Wire = {"resourceGroups": list(groups)}
    if parent:
        body["parentName"] = parent
    if weight is not None:
        body["fairSharing"] = {"weight": weight}
    return {"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": body}


def resource_flavor(name: str, labels: dict[str, str] | None = None, taints: list[Wire] | None = None,
                    tolerations: list[Wire] | None = None) -> Wire:
    spec: Wire = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def local_queue(name: str = "lq", cluster_queue_name: str = "cq", namespace: str = "team") -> Wire:
    return {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue_name}}


def container(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
              claims: list[str] | None = None, name: str = "c") -> Wire:
    resources: Wire = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if claims:
        resources["claims"] = [{"name": claim} for claim in claims]
    return {"name": name, "image": "busybox", "resources": resources}


def pod_spec(*containers: Wire, **spec: Any) -> Wire:
    return {"containers": list(containers) or [container()], "restartPolicy": "Never", **spec}


def job(name: str = "train", queue: str | None = "lq", namespace: str = "team", parallelism: int = 1,
        completions: int | None = None, spec: Wire | None = None, uid: str = "uid-1", **job_spec: Any) -> Wire:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue is not None else {}
    body: Wire = {"parallelism": parallelism, "template": {"spec": spec or pod_spec()}, **job_spec}
    if completions is not None:
        body["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "labels": labels, "uid": uid}, "spec": body}


def workload(name: str = "job-train-1a2b3", *pod_sets: Wire, queue: str = "lq", namespace: str = "team",
             **spec: Any) -> Wire:
    return {"apiVersion": API, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
            "spec": {"queueName": queue, "podSets": list(pod_sets) or [pod_set()], **spec}}


def pod_set(name: str = "main", count: int = 1, spec: Wire | None = None, **fields: Any) -> Wire:
    return {"name": name, "count": count, "template": {"spec": spec or pod_spec()}, **fields}


def configuration(**fields: Any) -> Wire:
    return {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **fields}


def dra_inputs(templates: Sequence[Wire] = (), classes: Sequence[Wire] = (), slices: Sequence[Wire] = ()) -> DraInputs:
    """The DRA objects Kueue reads, typed (templates keyed by namespace and name)."""
    typed = [msgspec.convert(t, ResourceClaimTemplate) for t in templates]
    return DraInputs({(t.metadata.namespace or "default", t.metadata.name): t for t in typed},
                     {c["metadata"]["name"]: msgspec.convert(c, DeviceClass) for c in classes},
                     [msgspec.convert(s, ResourceSlice) for s in slices])


def claim_template(name: str, *requests: Wire, namespace: str = "team") -> Wire:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": list(requests)}}}}


def device_class(name: str, expression: str | None = None, extended_resource: str | None = None) -> Wire:
    spec: Wire = {}
    if expression:
        spec["selectors"] = [{"cel": {"expression": expression}}]
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def gpu_queue(name: str = "cq", gpus: Any = 8, cohort_name: str = "", flavor: str = "h100", borrowing: Any = None,
              lending: Any = None, **spec: Any) -> Wire:
    """A ClusterQueue with one flavor covering example.com/gpu."""
    return cluster_queue(name, group(["example.com/gpu"], flavor_quotas(flavor, quota(
        "example.com/gpu", gpus, borrowing, lending))), cohort=cohort_name, **spec)


def gpu_workload(name: str, gpus: int, count: int = 1, namespace: str = "team", priority: int = 0,
                 **pod: Any) -> Wire:
    """A Workload of one PodSet whose pods each request ``gpus`` example.com/gpu (as limits)."""
    spec = pod_spec(container(limits={"example.com/gpu": gpus}), **pod)
    return workload(name, pod_set(count=count, spec=spec), namespace=namespace, priority=priority)


def quota_tree(queues: Sequence[Wire], cohorts: Sequence[Wire] = (),
               used: dict[str, dict[tuple[str, str], int]] | None = None) -> QuotaTree:
    """The quota tree of ``queues`` and ``cohorts``, with ``used`` (ClusterQueue → (flavor, resource) →
    amount) admitted as Kueue's cache adds a Workload's usage."""
    tree = QuotaTree.build([msgspec.convert(q, ClusterQueue) for q in queues],
                           [msgspec.convert(c, Cohort) for c in cohorts])
    for name, usage in (used or {}).items():
        tree.add_usage(cq_key(name), usage)
    return tree


def cpu_flavor(flavor: str, nominal: Any, borrowing: Any = None, lending: Any = None) -> Wire:
    """A flavor's quota of cpu (in cores, as a ClusterQueue writes it)."""
    return flavor_quotas(flavor, quota("cpu", nominal, borrowing, lending))


def cpu_workload(name: str, cpus: Any, count: int = 1, namespace: str = "team", priority: int = 0) -> Wire:
    """A Workload of one PodSet whose pods each request ``cpus`` cpu."""
    return workload(name, pod_set(count=count, spec=pod_spec(container({"cpu": cpus}))), namespace=namespace,
                    priority=priority)


def kueue_snapshot(queues: Sequence[Wire], cohorts: Sequence[Wire] = (),
                   used: dict[str, dict[tuple[str, str], int]] | None = None,
                   flavors: Sequence[Wire] | None = None, admitted: Sequence[AdmittedWorkload] = (),
                   namespaces: dict[str, dict[str, str]] | None = None) -> Snapshot:
    """What a scheduling cycle reads; without ``flavors``, a plain ResourceFlavor for every flavor named.
    ``admitted`` are the preemption candidates, their usage in the tree beside ``used``; ``namespaces``: the
    cluster's Namespaces and their labels (None: not known)."""
    if flavors is None:
        named = {f["name"] for q in [*queues, *cohorts] for g in q["spec"]["resourceGroups"] for f in g["flavors"]}
        flavors = [resource_flavor(name) for name in sorted(named)]
    cqs = [msgspec.convert(q, ClusterQueue) for q in queues]
    tree = quota_tree(queues, cohorts, used)
    for item in admitted:
        tree.add_usage(cq_key(item.cluster_queue), item.usage)
    return Snapshot({cq.metadata.name: cq for cq in cqs},
                    {f["metadata"]["name"]: msgspec.convert(f, ResourceFlavor) for f in flavors}, tree, admitted,
                    namespaces=namespaces)


def queued(wire: Wire, cq: str, timestamp: float = 0.0) -> Entry:
    """A pending Workload of ClusterQueue ``cq`` with the usage Kueue computes for it."""
    typed = msgspec.convert(wire, Workload)
    usage = workload_usage(typed)
    return Entry(typed, cq, usage, timestamp)


def settled(queues: Sequence[Wire], workloads: Sequence[Wire], cohorts: Sequence[Wire] = (),
            flavors: Sequence[Wire] | None = None, cluster_queue: str = "cq") -> tuple[
                Snapshot, dict[str, Entry], dict[str, Admitted | Pending]]:
    """Kueue's cycles run until settled over ``queues`` and ``workloads`` (all in ``cluster_queue``, queued in
    the given order): the snapshot left, the entries and the last word on each, by namespace/name."""
    snapshot = kueue_snapshot(queues, cohorts, flavors=flavors)
    pending = Queues.of(snapshot.cluster_queues.values())
    entries: dict[str, Entry] = {}
    for order, wire in enumerate(workloads):
        entry = queued(wire, cluster_queue, float(order))
        entries[entry.key] = entry
        pending.push(entry)
    admitted, last = run_until_settled(snapshot, pending)
    verdicts: dict[str, Admitted | Pending] = {**last, **{a.entry.key: a for a in admitted}}
    return snapshot, entries, verdicts


# ---- preemption ----------------------------------------------------------------------------------


def holding(name: str, cluster_queue: str, usage: dict[tuple[str, str], int], priority: int = 0,
            reserved_at: float = 0.0, queued_at: float = 0.0, evicted: bool = False,
            namespace: str = "team") -> AdmittedWorkload:
    """An admitted Workload holding ``usage`` ((flavor, resource) → amount) in ``cluster_queue``."""
    wire = workload(name, namespace=namespace, priority=priority)
    wire["metadata"]["uid"] = f"uid-{name}"
    return AdmittedWorkload(msgspec.convert(wire, Workload), cluster_queue, usage, reserved_at, queued_at, evicted)


def preemption_state(queues: Sequence[Wire], cohorts: Sequence[Wire] = (),
                     admitted: Sequence[AdmittedWorkload] = ()) -> State:
    """The quota tree of ``queues`` and ``cohorts`` holding the usage of ``admitted``."""
    tree = quota_tree(queues, cohorts)
    for item in admitted:
        tree.add_usage(cq_key(item.cluster_queue), item.usage)
    cqs = [msgspec.convert(q, ClusterQueue) for q in queues]
    return State({cq.metadata.name: cq for cq in cqs}, tree, Workloads.of(admitted))


def preemptor(name: str, cluster_queue: str, priority: int = 0, timestamp: float = 0.0) -> Preemptor:
    """A pending Workload (uid ``wl-NAME``, job uid ``job-NAME``) that preempts from ``cluster_queue``."""
    wire = workload(name, priority=priority)
    wire["metadata"].update(uid=f"wl-{name}", labels={"kueue.x-k8s.io/job-uid": f"job-{name}"})
    return Preemptor(msgspec.convert(wire, Workload), cluster_queue, timestamp)


def preempting_assignment(usage: dict[tuple[str, str], int]) -> Assignment:
    """One PodSet whose every (flavor, resource) of ``usage`` was classified Preempt."""
    pod_set = PodSetAssignment("main", 1, {r: f for f, r in usage}, {r: Mode(PREEMPT, 0) for _, r in usage},
                               {r: a for (_, r), a in usage.items()})
    return Assignment([pod_set], dict(usage))


def preemption_policy(within: str | None = None, reclaim: str | None = None, borrow: str | None = None,
                      threshold: int | None = None) -> Wire:
    """A ClusterQueue's ``spec.preemption``."""
    out: Wire = {}
    if within:
        out["withinClusterQueue"] = within
    if reclaim:
        out["reclaimWithinCohort"] = reclaim
    if borrow:
        out["borrowWithinCohort"] = {"policy": borrow}
        if threshold is not None:
            out["borrowWithinCohort"]["maxPriorityThreshold"] = threshold
    return out


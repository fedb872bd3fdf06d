"""Small manifest builders for the twin tests: Kubernetes objects as dicts, joined into one YAML text.

The tests load that text with :func:`dratwin.api.loader.load_text`, exactly as ``-f file.yaml`` would,
then run :func:`dratwin.cluster.load.load_cluster` and :func:`dratwin.twin.schedule.schedule`:

    text = manifest(gpu_class(), node("n1"), gpu_slice("n1", 2), pod("p", claims={"gpu": ("template", "t")}))
    report = run(text)

Everything defaults to the smallest object that is valid: a node with 8 cpu, 32Gi and 110 pods; a GPU
class ``gpu.example.com`` selecting the driver ``gpu.example.com``; pods in namespace ``default``.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from dratwin.allocator.features import Features
from dratwin.api.codec import dump_yaml_documents
from dratwin.api.loader import load_text
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.scheduler.plugins.node_resources import ScoringStrategy
from dratwin.twin.schedule import Options, ScheduleReport, schedule

Raw = dict[str, Any]

GPU_DRIVER = "gpu.example.com"
GPU_CLASS = "gpu.example.com"
GPU_CLASS_SELECTOR = f"device.driver == '{GPU_DRIVER}'"


def manifest(*objects: Raw | Iterable[Raw]) -> str:
    """One multi-document YAML text from objects (or lists of objects)."""
    flat: list[Raw] = []
    for obj in objects:
        if isinstance(obj, Mapping):
            flat.append(dict(obj))
        else:
            flat.extend(obj)
    return dump_yaml_documents(flat)


def load(text: str, *, gates: str = "", seed: int = 0) -> LoadedCluster:
    return load_cluster(load_text(text), Features.from_gates(gates), random.Random(seed), kueue=True)


def run(
    text: str,
    *,
    gates: str = "",
    seed: int = 0,
    scoring: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED,
    percentage: int = 0,
    until: str | None = None,
) -> ScheduleReport:
    """load_text -> load_cluster -> schedule, as ``dratwin schedule`` does."""
    return schedule(load(text, gates=gates, seed=seed), Options(seed, scoring, percentage), until=until)


# ---- cluster objects -----------------------------------------------------------------------------


def node(
    name: str,
    *,
    cpu: str = "8",
    memory: str = "32Gi",
    pods: str = "110",
    extended: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Raw] = (),
    zone: str | None = None,
) -> Raw:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **dict(extended or {})}
    all_labels = {"kubernetes.io/hostname": name, **dict(labels or {})}
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    raw: Raw = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "status": {"capacity": dict(allocatable), "allocatable": allocatable},
    }
    if taints:
        raw["spec"] = {"taints": list(taints)}
    return raw


def device_class(name: str = GPU_CLASS, selector: str = GPU_CLASS_SELECTOR, extended_resource: str = "") -> Raw:
    spec: Raw = {"selectors": [{"cel": {"expression": selector}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def gpu_class(extended_resource: str = "") -> Raw:
    return device_class(GPU_CLASS, GPU_CLASS_SELECTOR, extended_resource)


def gpu_slice(node_name: str, count: int, *, driver: str = GPU_DRIVER, memory: str = "80Gi") -> Raw:
    """The ResourceSlice of one node: ``count`` GPUs ``gpu-0``..., pool named after the node."""
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"index": {"int": i}, "model": {"string": "H100"}},
            "capacity": {"memory": {"value": memory}},
        }
        for i in range(count)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def gpu_request(
    name: str = "gpu",
    count: int = 1,
    device_class_name: str = GPU_CLASS,
    selector: str = "",
    tolerations: Iterable[Raw] = (),
) -> Raw:
    exactly: Raw = {"deviceClassName": device_class_name, "allocationMode": "ExactCount", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if tolerations:
        exactly["tolerations"] = list(tolerations)
    return {"name": name, "exactly": exactly}


def claim_spec(*requests: Raw) -> Raw:
    return {"devices": {"requests": list(requests or [gpu_request()])}}


def claim_template(name: str, *requests: Raw, namespace: str = "default") -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim_spec(*requests)},
    }


def resource_claim(name: str, *requests: Raw, namespace: str = "default") -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": claim_spec(*requests),
    }


def device_taint_rule(
    name: str,
    key: str = "maintenance",
    value: str = "true",
    effect: str = "NoSchedule",
    *,
    version: str = "v1beta2",
    **selector: str,
) -> Raw:
    """A DeviceTaintRule; ``selector`` (driver, pool, device) becomes its deviceSelector, none: no selector."""
    spec: Raw = {"taint": {"key": key, "value": value, "effect": effect}}
    if selector:
        spec["deviceSelector"] = dict(selector)
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": spec}


def pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    extended: Mapping[str, str] | None = None,
    templates: Mapping[str, str] | None = None,
    claims: Mapping[str, str] | None = None,
    priority_class: str = "",
    node_selector: Mapping[str, str] | None = None,
    affinity: Raw | None = None,
    tolerations: Iterable[Raw] = (),
    labels: Mapping[str, str] | None = None,
    containers: int = 1,
) -> Raw:
    """A bare Pod. ``templates`` maps pod claim names to ResourceClaimTemplates, ``claims`` to ResourceClaims;
    every container requests ``cpu``/``memory``/``extended`` and uses every claim."""
    requests: Raw = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extended or {})
    references = [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    references += [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    resources: Raw = {}
    if requests:
        resources["requests"] = dict(requests)
        if extended:
            resources["limits"] = dict(extended)
    if references:
        resources["claims"] = [{"name": r["name"]} for r in references]
    spec: Raw = {
        "containers": [
            {"name": f"c{i}" if containers > 1 else "main", "image": "busybox", "resources": dict(resources)}
            for i in range(containers)
        ]
    }
    if references:
        spec["resourceClaims"] = references
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = list(tolerations)
    metadata: Raw = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def stateful_set(name: str, replicas: int, *, policy: str = "", namespace: str = "default", **pod_args: Any) -> Raw:
    """A StatefulSet whose pod template is :func:`pod` with ``pod_args``; ``policy`` is its podManagementPolicy
    (unset: OrderedReady, the default)."""
    template = pod(name, namespace=namespace, labels={"app": name}, **pod_args)
    spec: Raw = {
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]},
    }
    if policy:
        spec["podManagementPolicy"] = policy
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def priority_class(name: str, value: int, preemption_policy: str = "") -> Raw:
    raw: Raw = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
    raw["value"] = value
    if preemption_policy:
        raw["preemptionPolicy"] = preemption_policy
    return raw


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Raw:
    raw = {"key": key, "effect": effect}
    if value:
        raw["value"] = value
    return raw


# ---- reading the result --------------------------------------------------------------------------


def pod_raw(report: ScheduleReport, key: str) -> Raw:
    return report.state.pods[key].raw


def claim_raw(report: ScheduleReport, key: str) -> Raw:
    return report.state.claims[key].raw


def condition(raw: Raw, kind: str = "PodScheduled") -> Raw | None:
    return next((c for c in (raw.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def placements(report: ScheduleReport) -> dict[str, str | None]:
    """pod key -> node (None when it stays pending), for every attempt."""
    return {a.pod: a.node for a in report.attempts}


def messages(report: ScheduleReport) -> dict[str, str]:
    return {a.pod: a.message for a in report.attempts if not a.scheduled}


def generated_claims(report: ScheduleReport, pod_key: str) -> list[Raw]:
    """The claims whose controlling owner is the pod (by name, in the pod's namespace)."""
    namespace, name = pod_key.split("/")
    found = []
    for record in report.state.claims.values():
        meta = record.raw.get("metadata") or {}
        owners = meta.get("ownerReferences") or []
        if (meta.get("namespace") or "default") == namespace and any(
            o.get("kind") == "Pod" and o.get("name") == name and o.get("controller") for o in owners
        ):
            found.append(record.raw)
    return found


def devices_of(claim: Raw) -> list[str]:
    """``driver/pool/device`` of each result of the claim's allocation."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [f"{r['driver']}/{r['pool']}/{r['device']}" for r in (allocation.get("devices") or {}).get("results") or []]


def bound_pod_with_claim(
    name: str,
    node_name: str,
    devices: Iterable[str],
    *,
    cpu: str = "1",
    priority_class: str = "",
    driver: str = GPU_DRIVER,
    namespace: str = "default",
) -> list[Raw]:
    """A running pod as ``kubectl get -o yaml`` shows it: bound to ``node_name``, with the claim the
    resourceclaim controller generated for it (pod claim ``gpu``, template ``one-gpu``) allocated to
    ``devices`` and reserved for it."""
    uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"test-pod/{namespace}/{name}"))
    claim_name = f"{name}-gpu-x7k2q"
    raw = pod(name, namespace=namespace, cpu=cpu, priority_class=priority_class, templates={"gpu": "one-gpu"})
    raw["metadata"]["uid"] = uid
    raw["spec"]["nodeName"] = node_name
    raw["status"] = {
        "phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}],
    }
    results = [{"request": "gpu", "driver": driver, "pool": node_name, "device": d} for d in devices]
    claim = resource_claim(claim_name, gpu_request(count=len(results)), namespace=namespace)
    claim["metadata"].update(
        {
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid, "controller": True,
                 "blockOwnerDeletion": True}
            ],
        }
    )
    claim["status"] = {
        "allocation": {
            "devices": {"results": results},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": name, "uid": uid}],
    }
    return [raw, claim]

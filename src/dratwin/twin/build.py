"""Loading a cluster: decode the objects, run the workload and resourceclaim controllers, fill the state.

Pods that the input already binds (``spec.nodeName``, as in a dump of a real cluster) are placed on
their nodes as they are, with their claims' allocations; every other pod is pending and goes to the
scheduler.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.allocator.features import Features
from dratwin.api.codec import classify, decode_as
from dratwin.api.core import Node, Pod
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from dratwin.cluster.claims import claims_for_pod
from dratwin.cluster.roles import NodeRole, node_roles
from dratwin.cluster.state import ClusterState, PodRecord
from dratwin.cluster.workloads import expand_workloads
from dratwin.scheduler.framework import NodeInfo, PodInfo
from dratwin.scheduler.resources import add_pod, node_allocatable, pod_requests

Raw = dict[str, Any]


@dataclass
class PendingReason:
    """A pod that cannot even reach the scheduler (a claim it needs does not exist, ...)."""

    pod: str
    reason: str


@dataclass
class LoadedCluster:
    state: ClusterState
    pending: list[PodInfo] = field(default_factory=list)  # pods for the scheduler, in creation order
    blocked: list[PendingReason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    roles: list[NodeRole] = field(default_factory=list)


def load_cluster(objects: Sequence[LoadedObject], features: Features, rng: random.Random) -> LoadedCluster:
    state = ClusterState(features=features)
    raws: list[Raw] = []
    templates: dict[tuple[str, str], Raw] = {}
    claims: dict[tuple[str, str], Raw] = {}
    for obj in objects:
        kind = obj.kind
        info = classify(obj).info
        if kind == "Node" and info is not None:
            node = decode_as(obj.raw, Node, obj.ref)
            state.add_node(obj.raw, node, NodeInfo(node, node_allocatable(node)))
        elif kind == "ResourceSlice" and info is not None:
            state.add_slice(decode_as(obj.raw, ResourceSlice, obj.ref))
        elif kind == "DeviceClass" and info is not None:
            device_class = decode_as(obj.raw, DeviceClass, obj.ref)
            state.classes[device_class.metadata.name] = device_class
        elif kind == "ResourceClaimTemplate" and info is not None:
            template = decode_as(obj.raw, ResourceClaimTemplate, obj.ref)
            namespace = template.metadata.namespace or "default"
            state.templates[f"{namespace}/{template.metadata.name}"] = template
            templates[(namespace, template.metadata.name)] = obj.raw
        elif kind == "ResourceClaim" and info is not None:
            record = state.add_claim(obj.raw)
            claims[(record.claim.metadata.namespace, record.claim.metadata.name)] = record.raw
        raws.append(obj.raw)
    loaded = LoadedCluster(state)
    expansion = expand_workloads(raws, rng)
    loaded.notes += [str(n) for n in expansion.notes] + [str(r) for r in expansion.rejections]
    for order, raw in enumerate(expansion.pods):
        _add_pod(loaded, raw, order, templates, claims, rng)
    loaded.roles = node_roles((n.node for n in state.nodes.values()), state.slices)
    return loaded


def _add_pod(
    loaded: LoadedCluster,
    raw: Raw,
    order: int,
    templates: dict[tuple[str, str], Raw],
    claims: dict[tuple[str, str], Raw],
    rng: random.Random,
) -> None:
    state = loaded.state
    pod = msgspec.convert(raw, Pod, strict=False)
    if not pod.metadata.namespace:
        pod.metadata.namespace = "default"
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    made = claims_for_pod(raw, templates, claims, rng)
    for claim_raw in made.created:
        record = state.add_claim(claim_raw)
        claims[(record.claim.metadata.namespace, record.claim.metadata.name)] = record.raw
    if made.statuses:
        status = {**(raw.get("status") or {}), "resourceClaimStatuses": list(made.statuses)}
        raw = {**raw, "status": status}
        pod = msgspec.convert(raw, Pod, strict=False)
        if not pod.metadata.namespace:
            pod.metadata.namespace = "default"
    info = PodInfo(pod, key, pod.spec.priority or 0, pod_requests(pod), order)
    state.pods[key] = PodRecord(raw, pod, info)
    state.record("Added", "Pod", key)
    for problem in made.problems:
        loaded.blocked.append(PendingReason(key, str(problem)))
    if pod.spec.node_name and pod.spec.node_name in state.nodes:
        add_pod(state.nodes[pod.spec.node_name], info)
    else:
        loaded.pending.append(info)

"""Builders for Kueue's topology-aware scheduling: labelled nodes, topologies, TAS flavors and PodSet requests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from dratwin.api.core import Node, Pod, PodSpec
from dratwin.api.kueue import PodSetTopologyRequest, ResourceFlavor, Topology
from dratwin.kueue.tas.assign import PodSetRequest
from dratwin.kueue.tas.domains import FlavorTopology, NodeView, node_is_ready

Wire = dict[str, Any]
API = "kueue.x-k8s.io/v1beta2"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.com/topology-rack"
HOST = "kubernetes.io/hostname"
THREE_LEVELS = (BLOCK, RACK, HOST)
TWO_LEVELS = (BLOCK, RACK)


def tas_node(name: str, block: str = "", rack: str = "", host: str | None = None, cpu: Any = "1",
             memory: Any = "1Gi", pods: Any = "10", taints: Sequence[Wire] = (), unschedulable: bool = False,
             ready: bool = True, labels: dict[str, str] | None = None) -> Wire:
    """A Node with topology labels (block and rack when given, the hostname defaulting to the name)."""
    all_labels = {HOST: name if host is None else host, **(labels or {})}
    if block:
        all_labels[BLOCK] = block
    if rack:
        all_labels[RACK] = rack
    spec: Wire = {}
    if taints:
        spec["taints"] = list(taints)
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all_labels}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def default_tree() -> list[Wire]:
    """Kueue's ``defaultNodes`` shape (tas_cache_test.go): b1 holds r1 (x3) and r2 (x5, x1, x6), b2 holds
    r1 (x2) and r2 (x4, twice the cpu and memory, 40 pods); every other node 1 cpu, 1Gi, 10 pods."""
    return [tas_node("x3", "b1", "r1"), tas_node("x5", "b1", "r2"), tas_node("x1", "b1", "r2"),
            tas_node("x6", "b1", "r2"), tas_node("x2", "b2", "r1"),
            tas_node("x4", "b2", "r2", cpu="2", memory="4Gi", pods="40")]


def scattered_tree() -> list[Wire]:
    """Kueue's ``scatteredNodes``: b1/r1 holds x3 (4 cpu), x5, x1 (1 cpu); b2/r1 holds x6 (2 cpu), x2 (1 cpu)."""
    return [tas_node("x3", "b1", "r1", cpu="4"), tas_node("x5", "b1", "r1"), tas_node("x1", "b1", "r1"),
            tas_node("x6", "b2", "r1", cpu="2"), tas_node("x2", "b2", "r1")]


def topology(levels: Sequence[str] = THREE_LEVELS, name: str = "default") -> Wire:
    return {"apiVersion": API, "kind": "Topology", "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": level} for level in levels]}}


def tas_flavor(name: str = "tas", topology_name: str | None = "default", labels: dict[str, str] | None = None,
               tolerations: Sequence[Wire] = ()) -> Wire:
    spec: Wire = {}
    if topology_name is not None:
        spec["topologyName"] = topology_name
    if labels:
        spec["nodeLabels"] = labels
    if tolerations:
        spec["tolerations"] = list(tolerations)
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def node_views(nodes: Sequence[Wire]) -> list[NodeView]:
    return [NodeView(msgspec.convert(n, Node), node_is_ready(n)) for n in nodes]


def flavor_topology(nodes: Sequence[Wire], levels: Sequence[str] = THREE_LEVELS, pods: Sequence[Wire] = (),
                    flavor: Wire | None = None) -> FlavorTopology:
    """The TAS snapshot of one flavor over ``nodes`` (non-TAS ``pods`` bound to them subtract their requests)."""
    return FlavorTopology.build(msgspec.convert(flavor or tas_flavor(), ResourceFlavor),
                                msgspec.convert(topology(levels), Topology), node_views(nodes),
                                [msgspec.convert(p, Pod) for p in pods])


def bound_pod(name: str, node: str, cpu: Any = "1", phase: str = "Running",
              annotations: dict[str, str] | None = None) -> Wire:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase}}


def request(count: int, cpu: int = 1000, memory: int = 0, *, required: str | None = None,
            preferred: str | None = None, unconstrained: bool | None = None, slice_topology: str | None = None,
            slice_size: int | None = None, implied: bool = False, pod: Wire | None = None) -> PodSetRequest:
    """A TAS PodSet request: ``count`` pods of ``cpu`` millicores (and ``memory`` bytes), one ``pods`` each."""
    per_pod = {"cpu": cpu, "pods": 1, **({"memory": memory} if memory else {})}
    asked = PodSetTopologyRequest(required=required, preferred=preferred, unconstrained=unconstrained,
                                  pod_set_slice_required_topology=slice_topology, pod_set_slice_size=slice_size)
    no_request = (required, preferred, unconstrained, slice_topology, slice_size) == (None,) * 5
    return PodSetRequest("main", count, per_pod, None if no_request else asked,
                         msgspec.convert(pod or {}, PodSpec), implied)

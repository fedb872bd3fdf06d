"""The cluster of Kueue's ``tas`` performance test, for benchmarks and tests.

``test/performance/scheduler/configs/tas/generator.yaml`` and ``runner/generator/topology_generator.go`` at
Kueue ``ff69552``: one block of 10 racks of 64 nodes (640 nodes), each with 96 cpu, 256Gi of memory and 110
pods allocatable, Ready, labelled ``tas-node-group: tas``; a Topology ``default-topology`` with the levels
``cloud.provider.com/topology-block``, ``cloud.provider.com/topology-rack`` and ``kubernetes.io/hostname``;
the ResourceFlavor ``tas-flavor`` selecting ``tas-node-group: tas`` with that topology.

Kueue's generator names a node ``node-b<block>-r<rack>-n<node>`` but labels its hostname with the node
level's value, ``node-<node>``, which repeats in every rack: TAS then sees 64 hostname leaves, each holding
the 10 nodes of that number (960 cpu), under whichever rack it met first. ``unique_hostnames=True`` labels
each node's hostname with its own name instead, as a real cluster would: 640 leaves in 10 racks.

:func:`tas_shape_context` is the TAS snapshot a benchmark's scheduling cycle takes (``Snapshot.topology``);
:func:`tas_shape_topology_request` the PodSet request of a workload class.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dratwin.api.core import Node
from dratwin.api.kueue import ResourceFlavor, Topology
from dratwin.kueue.tas.admission import TasContext, tas_context
from dratwin.kueue.tas.domains import NodeView

BLOCK_LABEL = "cloud.provider.com/topology-block"
RACK_LABEL = "cloud.provider.com/topology-rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
NODE_GROUP_LABEL = "tas-node-group"
TOPOLOGY_NAME = "default-topology"
FLAVOR_NAME = "tas-flavor"
Raw = dict[str, Any]


def tas_shape_nodes(blocks: int = 1, racks: int = 10, nodes: int = 64, cpu: str = "96", memory: str = "256Gi",
                    unique_hostnames: bool = False) -> list[Raw]:
    """The shape's Nodes as wire objects, in the generator's order (block, rack, node)."""
    out = []
    for b in range(blocks):
        for r in range(racks):
            for n in range(nodes):
                name = f"node-b{b}-r{r}-n{n}"
                labels = {NODE_GROUP_LABEL: "tas", BLOCK_LABEL: f"block-{b}", RACK_LABEL: f"rack-{r}",
                          HOSTNAME_LABEL: name if unique_hostnames else f"node-{n}"}
                out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                                       "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                                       "conditions": [{"type": "Ready", "status": "True"}]}})
    return out


def tas_shape_topology() -> Raw:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": TOPOLOGY_NAME},
            "spec": {"levels": [{"nodeLabel": BLOCK_LABEL}, {"nodeLabel": RACK_LABEL}, {"nodeLabel": HOSTNAME_LABEL}]}}


def tas_shape_flavor() -> Raw:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": FLAVOR_NAME},
            "spec": {"nodeLabels": {NODE_GROUP_LABEL: "tas"}, "topologyName": TOPOLOGY_NAME}}


def tas_shape_topology_request(constraint: str, level: str = RACK_LABEL, slice_size: int = 0) -> Raw:
    """A workload class's ``topologyRequest`` as the generator writes it (``tasConstraint``): ``required`` and
    ``preferred`` at the level; ``balanced`` is a slice request at the level (with the class's
    ``sliceSize`` when set), not Kueue's balanced placement: Kueue places it as a slice-only request."""
    if constraint == "required":
        return {"required": level}
    if constraint == "preferred":
        return {"preferred": level}
    if constraint == "balanced":
        return {"podSetSliceRequiredTopology": level, **({"podSetSliceSize": slice_size} if slice_size > 0 else {})}
    raise ValueError(f"tasConstraint {constraint!r}: the generator knows required, preferred and balanced")


def tas_shape_context(unique_hostnames: bool = False) -> TasContext:
    """The TAS snapshot of the shape's flavor over its 640 nodes, nothing booked yet."""
    nodes = [NodeView(msgspec.convert(n, Node)) for n in tas_shape_nodes(unique_hostnames=unique_hostnames)]
    context = tas_context([msgspec.convert(tas_shape_flavor(), ResourceFlavor)],
                          [msgspec.convert(tas_shape_topology(), Topology)], nodes)
    assert context is not None  # the flavor has a topology and TAS is on by default
    return context

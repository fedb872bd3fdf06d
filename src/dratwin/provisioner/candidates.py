"""Hypothetical nodes: what a node of one instance type, launched by one NodePool, would look like.

Karpenter decides before a node exists, from the instance type's capacity, its well-known labels and,
for DRA, the devices its drivers would publish (``ResourceSliceTemplates`` built from scraped device
metadata). This module builds exactly that view once per (NodePool, instance type) — a Node object and
the ResourceSlices of its DRA drivers — so that the scheduler's own filters and the DRA allocator can
answer "would this pod fit there" without any special-casing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.allocator.pools import SliceIndex
from dratwin.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint
from dratwin.api.resource import ResourceSlice
from dratwin.catalog import InstanceType, Offering
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import GenerateOptions, NodeGroup
from dratwin.scheduler.framework import NodeInfo
from dratwin.scheduler.resources import node_allocatable, node_capacity

CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
ZONE_LABEL = "topology.kubernetes.io/zone"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass
class Template:
    """One (NodePool, instance type): the node Karpenter imagines and the devices it expects there."""

    pool: str
    instance_type: InstanceType
    node: Node
    slices: list[ResourceSlice]
    offerings: list[Offering]
    role: str = ""  # EKS Auto Mode: the device-manager role a node launched from it gets for life
    well_known: frozenset[str] = frozenset()  # the provisioner's well-known labels (pods may leave them undefined)
    index: SliceIndex = field(init=False)

    allocatable: dict[str, int] = field(init=False)
    capacity: dict[str, int] = field(init=False)  # what counts against NodePool limits, ``nodes`` included

    device_count: int = field(init=False)

    def __post_init__(self) -> None:
        self.index = SliceIndex(self.slices)
        self.allocatable = node_allocatable(self.node)
        self.capacity = node_capacity(self.node)
        self.capacity["nodes"] = 1
        if self.instance_type.gpus is not None:  # a DRA node lists no nvidia.com/gpu, Karpenter still counts them
            self.capacity["nvidia.com/gpu"] = self.instance_type.gpus.count
        self.device_count = sum(len(s.spec.devices) for s in self.slices)

    @property
    def has_dra_devices(self) -> bool:
        return bool(self.slices)

    @property
    def cheapest(self) -> Offering | None:
        return min(self.offerings, key=lambda o: (o.price, o.zone, o.capacity_type), default=None)

    def node_info(self) -> NodeInfo:
        return NodeInfo(self.node, dict(self.allocatable))


def build_template(
    pool: str,
    instance_type: InstanceType,
    labels: Mapping[str, str],
    taints: list[Taint],
    offerings: list[Offering],
    *,
    dra: bool,
    device_plugin_resources: bool,
    auto_mode: bool = False,
    well_known: frozenset[str] = frozenset(),
) -> Template:
    """A (NodePool, instance type) template.

    ``dra``: the DRA drivers run: the GPU and EFA ResourceSlices of the type's scraped device metadata; a
    type without metadata publishes none (so no DRA claim can land there, as in Karpenter, where g7e is
    left out that way). ``device_plugin_resources``: the node's allocatable lists ``nvidia.com/gpu`` /
    ``vpc.amazonaws.com/efa`` (Karpenter's capacity view of every GPU type; on EKS Auto Mode, the
    device-plugin role). ``auto_mode``: EKS Auto Mode's labels (``eks.amazonaws.com/*``).
    """
    role = "dra" if dra else "device-plugin"
    name = f"{pool}-{instance_type.name.replace('.', '-')}" + ("-dra" if auto_mode and dra else "")
    provisioner = "auto-mode" if auto_mode else "karpenter"
    generated = generate(
        GenerateOptions(
            groups=(NodeGroup(instance_type.name, 1),),
            gpu_manager=role,
            efa_manager=role,
            neuron_manager="device-plugin",  # Karpenter has no Neuron device metadata, Auto Mode no Neuron DRA driver
            name_prefix=name,
            nodepool=pool,
            provisioner=provisioner,
        )
    )
    raw_node: dict[str, Any] = generated.nodes[0]
    meta = raw_node["metadata"]
    meta["name"] = name
    meta["labels"] = {**meta.get("labels", {}), **dict(labels), NODEPOOL_LABEL: pool}
    if device_plugin_resources and dra:
        plugin = generate(
            GenerateOptions(
                groups=(NodeGroup(instance_type.name, 1),),
                gpu_manager="device-plugin",
                efa_manager="device-plugin",
                neuron_manager="device-plugin",
                name_prefix=name,
                nodepool=pool,
                provisioner=provisioner,
            )
        )
        raw_node["status"] = plugin.nodes[0]["status"]
    node = msgspec.convert(raw_node, Node, strict=False)
    node.spec.taints = list(taints)
    slices = []
    # Karpenter only knows the devices of types in its scraped metadata: others (g7e, ...) get no template,
    # so no DRA claim can make Karpenter launch them, even where the real drivers would publish devices.
    if dra and instance_type.dra is not None:
        for raw in generated.slices:
            raw["spec"]["nodeName"] = name
            raw["spec"]["pool"]["name"] = name
            slices.append(msgspec.convert(raw, ResourceSlice, strict=False))
    return Template(pool, instance_type, node, slices, offerings, role if auto_mode else "", well_known)


def requirement_selector(requirements: list[NodeSelectorRequirement]) -> NodeSelector:
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=list(requirements))])

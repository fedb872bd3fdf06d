"""Which manager serves each device family on each node: the DRA driver, the device plugin, or both.

EKS Auto Mode states the choice in the labels ``eks.amazonaws.com/device-manager-nvidia`` and
``-efa`` (``dra`` | ``device-plugin``); otherwise it shows in what the node publishes: ResourceSlices
of the family's driver (DRA) or the extended resource in the node's allocatable (device plugin).
When both serve one family on one node, both hand out the same physical devices and nothing stops
them: a GPU can go to a pod through ``nvidia.com/gpu`` and to another through a ResourceClaim. That
is what a real cluster does, so the twin does it too, and says so loudly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dratwin.api.core import Node
from dratwin.api.quantity import Quantity
from dratwin.api.resource import Device, ResourceSlice

DRA = "dra"
DEVICE_PLUGIN = "device-plugin"
BOTH = "both"


@dataclass(frozen=True)
class Family:
    name: str
    label: str | None
    drivers: frozenset[str]
    resources: tuple[str, ...]
    devices: str  # what the family's devices are called in messages

    def counts_device(self, driver: str, device: Device) -> bool:
        if driver not in self.drivers:
            return False
        if self.name != "efa":
            return True
        # DRANET publishes every NIC; only RDMA-capable adapters (EFA) belong to this family.
        rdma = device.attributes.get("dra.net/rdma") or device.attributes.get("rdma")
        return bool(rdma and rdma.bool_value)


FAMILIES = (
    Family(
        "nvidia", "eks.amazonaws.com/device-manager-nvidia", frozenset({"gpu.nvidia.com"}), ("nvidia.com/gpu",), "GPUs"
    ),
    Family(
        "efa", "eks.amazonaws.com/device-manager-efa", frozenset({"dra.net"}), ("vpc.amazonaws.com/efa",),
        "EFA adapters",
    ),
    Family(
        "neuron", None, frozenset({"neuron.aws.com"}), ("aws.amazon.com/neuron", "aws.amazon.com/neurondevice"),
        "Neuron devices",
    ),
)


@dataclass(frozen=True)
class NodeRole:
    """How one device family is served on one node."""

    node: str
    family: str
    manager: str  # dra | device-plugin | both
    declared: str  # the EKS label's value, "" when absent
    dra_devices: int
    plugin_devices: int

    @property
    def conflict(self) -> bool:
        return self.manager == BOTH

    @property
    def label_mismatch(self) -> bool:
        return bool(self.declared) and self.declared != self.manager

    def warning(self) -> str:
        if self.conflict:
            return (
                f"node {self.node}: {self.family} devices are served by both the DRA driver "
                f"({self.dra_devices} devices in ResourceSlices) and the device plugin ({self.plugin_devices} in "
                f"allocatable): both hand out the same devices, so pods can be given the same GPU twice (silent "
                f"oversubscription); run one manager per family and node"
            )
        if self.label_mismatch:
            return (
                f"node {self.node}: label says {self.family} devices are managed by {self.declared!r}, but the node "
                f"publishes them through {self.manager!r}"
            )
        return ""


def node_roles(nodes: Iterable[Node], slices: Sequence[ResourceSlice]) -> list[NodeRole]:
    """One role per node and family that the node has devices of (or declares a manager for)."""
    dra_counts = _dra_device_counts(slices)
    roles = []
    for node in nodes:
        name = node.metadata.name
        for family in FAMILIES:
            declared = node.metadata.labels.get(family.label, "") if family.label else ""
            dra = dra_counts.get((name, family.name), 0)
            plugin = _plugin_count(node.status.allocatable or node.status.capacity, family)
            if not dra and not plugin and not declared:
                continue
            manager = BOTH if dra and plugin else DRA if dra else DEVICE_PLUGIN if plugin else declared
            roles.append(NodeRole(name, family.name, manager, declared, dra, plugin))
    return roles


def conflicts(roles: Iterable[NodeRole]) -> list[NodeRole]:
    return [r for r in roles if r.conflict]


def _plugin_count(resources: Mapping[str, str | int | float], family: Family) -> int:
    return sum(count for _, count in plugin_resources(resources, family))


def plugin_resources(resources: Mapping[str, str | int | float], family: Family) -> list[tuple[str, int]]:
    """The family's extended resources that a device plugin advertises in ``resources``, with their counts."""
    found = []
    for name in family.resources:
        if name in resources:
            count = int(Quantity.parse(resources[name]).value)
            if count > 0:
                found.append((name, count))
    return found


def _dra_device_counts(slices: Sequence[ResourceSlice]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for resource_slice in slices:
        node = resource_slice.spec.node_name
        if not node:
            continue
        for family in FAMILIES:
            n = sum(1 for d in resource_slice.spec.devices if family.counts_device(resource_slice.spec.driver, d))
            if n:
                counts[(node, family.name)] = counts.get((node, family.name), 0) + n
    return counts


REPLICAS_LABEL = "nvidia.com/gpu.replicas"  # set by GPU feature discovery from the sharing config
SHARING_LABEL = "nvidia.com/gpu.sharing-strategy"


def time_slicing_replicas(node: Node) -> int:
    """How many pods the NVIDIA device plugin lets share each GPU (1 when the GPUs are not shared)."""
    labels = node.metadata.labels
    try:
        replicas = int(labels.get(REPLICAS_LABEL, "1"))
    except ValueError:
        replicas = 1
    if labels.get(SHARING_LABEL) not in (None, "time-slicing", "mps") and replicas == 1:
        return 1
    return max(replicas, 1)


def time_slicing_warning(node: Node, gpu_pods: int) -> str:
    """What sharing GPUs by time-slicing means for the pods on one node ("" when it does not apply)."""
    replicas = time_slicing_replicas(node)
    if replicas <= 1:
        return ""
    strategy = node.metadata.labels.get(SHARING_LABEL, "time-slicing")
    return (
        f"node {node.metadata.name}: {strategy} with {replicas} replicas per GPU: {gpu_pods} pod(s) got "
        f"nvidia.com/gpu there, up to {replicas} per physical GPU, with no memory isolation between them (one "
        f"pod can take a GPU's whole memory and make its neighbours fail)"
    )

"""The options of ``dratwin cluster generate`` (:mod:`dratwin.cluster.generate`): instance types and counts,
the device managers, MIG layouts, zones, node names and taints, with the parsers of their command-line forms,
and the constants that name the drivers and labels the generated objects carry."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dratwin.api.karpenter import AUTO_MODE_LABELS
from dratwin.errors import InputError

DRA, DEVICE_PLUGIN = "dra", "device-plugin"
MANAGERS = (DRA, DEVICE_PLUGIN)
KARPENTER, AUTO_MODE, NODE_GROUP = "karpenter", "auto-mode", "node-group"
PROVISIONERS = (KARPENTER, AUTO_MODE, NODE_GROUP)
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MAX_NODES = 10_000

GPU_DRIVER = "gpu.nvidia.com"
EFA_DRIVER = "dra.net"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
NUMA_NODE = "resource.kubernetes.io/numaNode"
# Node-wide values of the p5.48xlarge capture (any R580 driver is plausible on the EKS AL2023 NVIDIA AMI).
DRIVER_VERSION = "580.126.9"
CUDA_DRIVER_VERSION = "13.0.0"
ADDRESSING_MODE = "HMM"
EFA_PCI_DEVICE = "Elastic Fabric Adapter (EFA)"
EFA_PCI_VENDOR = "Amazon.com, Inc."
EKS_LABEL = "eks.amazonaws.com/"
MANAGER_LABEL_NVIDIA = "eks.amazonaws.com/device-manager-nvidia"
MANAGER_LABEL_EFA = "eks.amazonaws.com/device-manager-efa"
# Instance labels EKS Auto Mode sets (as eks.amazonaws.com/instance-*): EKS User Guide, create-node-pool.
AUTO_MODE_INSTANCE_LABELS = frozenset(k.removeprefix(EKS_LABEL) for k in AUTO_MODE_LABELS) - {"compute-type"}
_QUALIFIED_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class GenerateError(InputError):
    """Options that cannot produce a cluster (bad syntax, unknown MIG profile, impossible layout)."""


# ---- options -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeGroup:
    """``count`` nodes of one instance type."""

    instance_type: str
    count: int = 1


@dataclass(frozen=True)
class MigRequest:
    """A MIG profile for every MIG-capable GPU: ``count`` instances per GPU, or as many as fit (None)."""

    profile: str
    count: int | None = None


@dataclass(frozen=True)
class NodeTaint:
    key: str
    value: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, **({"value": self.value} if self.value else {}), "effect": self.effect}


@dataclass(frozen=True)
class GenerateOptions:
    groups: tuple[NodeGroup, ...]
    gpu_manager: str = DRA
    efa_manager: str = DRA
    neuron_manager: str | None = None  # None: the DRA driver with Karpenter, the device plugin on EKS Auto Mode
    mig: tuple[MigRequest, ...] = ()
    zones: tuple[str, ...] = ("us-east-1a",)
    name_prefix: str | None = None
    provisioner: str = KARPENTER
    nodepool: str = "default"
    taints: tuple[NodeTaint, ...] = ()
    first_node_index: int = 0  # where node names and IPs start: clusters generated in parts never collide


def parse_node_group(text: str) -> NodeGroup:
    """``p5.48xlarge=4`` (or ``p5.48xlarge`` for one node)."""
    name, sep, count = text.partition("=")
    name = name.strip()
    if not name or (sep and not count.strip().isdigit()) or (sep and int(count) < 1):
        raise GenerateError(f"bad instance type {text!r}: expected TYPE=COUNT with COUNT >= 1, e.g. p5.48xlarge=4")
    return NodeGroup(name, int(count) if sep else 1)


def parse_mig_request(text: str) -> MigRequest:
    """``1g.10gb`` (fill every GPU) or ``3g.40gb=1`` (that many per GPU)."""
    profile, sep, count = text.partition("=")
    profile = profile.strip()
    if not re.fullmatch(r"\d+g\.\d+gb(\+me)?", profile) or (sep and not count.strip().isdigit()):
        raise GenerateError(f"bad MIG profile {text!r}: expected PROFILE or PROFILE=COUNT, e.g. 1g.10gb or 3g.40gb=1")
    if sep and int(count) < 1:
        raise GenerateError(f"bad MIG profile {text!r}: COUNT must be at least 1")
    return MigRequest(profile, int(count) if sep else None)


def parse_taint(text: str) -> NodeTaint:
    """``key[=value]:Effect``, as ``kubectl taint`` writes it."""
    spec, _, effect = text.rpartition(":")
    key, _, value = spec.partition("=")
    if not key or effect not in EFFECTS or not _QUALIFIED_NAME.match(key):
        raise GenerateError(
            f"bad taint {text!r}: expected KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(EFFECTS)}, "
            "e.g. nvidia.com/gpu:NoSchedule"
        )
    return NodeTaint(key, value, effect)


def neuron_manager(options: GenerateOptions) -> str:
    """Who serves Neuron devices: the option, or by default the DRA driver with Karpenter and the device plugin on
    EKS Auto Mode (which runs no Neuron DRA driver)."""
    if options.neuron_manager is not None:
        return options.neuron_manager
    return DEVICE_PLUGIN if options.provisioner == AUTO_MODE else DRA

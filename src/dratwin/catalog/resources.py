"""Karpenter's model of a node's capacity and allocatable resources, as it computes them before launch.

Source: aws/karpenter-provider-aws ``pkg/providers/instancetype/types.go`` @ 1d927085 (v1.14.1), the functions
``memory``, ``kubeReservedResources``, ``evictionThreshold`` and ``pods``, with the defaults of an AL2023
EC2NodeClass (no kubelet overrides, no systemReserved, ``vmMemoryOverheadPercent`` 0.075, ENI-limited max pods):

- capacity cpu = vCPUs; capacity memory = instance MiB (minus 64 MiB of CMA on arm64)
  minus ceil(7.5 %) VM overhead; capacity pods = the ENI-limited max pods
  (max ENIs x (IPv4 per ENI - 1) + 2, the EKS AMI's eni-max-pods.txt), 110 where that is unknown;
  ephemeral-storage = the root volume (20Gi, Karpenter's default EBS volume; EKS Auto Mode's NodeClass
  default is 80Gi).
- kube-reserved cpu = 6 % of the first core + 1 % of the second + 0.5 % of cores 3-4 + 0.25 % of the rest
  (the EKS AMI bootstrap / Bottlerocket formula); kube-reserved memory = 11 MiB x max pods + 255 MiB;
  kube-reserved ephemeral-storage = 1Gi.
- eviction threshold: memory.available 100Mi, nodefs.available 10 %.
- allocatable = capacity - kube-reserved - eviction threshold.

``tests/catalog`` checks that this reproduces the cpu and memory of every instance type of Karpenter's
generated instance-types page (``dratwin/data/karpenter-instance-types.yaml``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

VM_MEMORY_OVERHEAD_PERCENT = 0.075
ARM64_CMA_MIB = 64
EVICTION_MEMORY_MIB = 100
EVICTION_NODEFS_PERCENT = 10
KUBE_RESERVED_EPHEMERAL_GIB = 1
DEFAULT_MAX_PODS = 110
KARPENTER_ROOT_VOLUME_GIB = 20
AUTO_MODE_ROOT_VOLUME_GIB = 80

_GIB = 1 << 30
_MIB = 1 << 20
_CPU_RANGES = ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025))


def memory_capacity_mib(instance_memory_mib: int, arch: str) -> int:
    """What Karpenter expects the kubelet to report as memory capacity, in MiB."""
    mib = instance_memory_mib - (ARM64_CMA_MIB if arch == "arm64" else 0)
    return mib - math.ceil(mib * VM_MEMORY_OVERHEAD_PERCENT)


def kube_reserved_cpu_millicores(vcpus: int) -> int:
    milli = vcpus * 1000
    reserved = 0
    for start, end, percentage in _CPU_RANGES:
        if milli >= start:
            reserved += int((min(milli, end) - start) * percentage)
    return reserved


def kube_reserved_memory_mib(max_pods: int) -> int:
    return 11 * max_pods + 255


def format_millicores(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_bytes(value: int) -> str:
    if value % _GIB == 0:
        return f"{value // _GIB}Gi"
    if value % _MIB == 0:
        return f"{value // _MIB}Mi"
    return str(value)


@dataclass(frozen=True)
class NodeResources:
    """``status.capacity`` and ``status.allocatable`` of a node, as Kubernetes quantities (strings)."""

    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)


def node_resources(
    vcpus: int,
    memory_mib: int,
    arch: str,
    max_pods: int,
    root_volume_gib: int = KARPENTER_ROOT_VOLUME_GIB,
    extended: dict[str, int] | None = None,
) -> NodeResources:
    """Capacity and allocatable of a node of this shape; ``extended`` are device-plugin resources (not reserved)."""
    memory = memory_capacity_mib(memory_mib, arch)
    storage = root_volume_gib * _GIB
    eviction_storage = math.ceil(storage / 100 * EVICTION_NODEFS_PERCENT)
    capacity = {
        "cpu": str(vcpus),
        "ephemeral-storage": format_bytes(storage),
        "memory": f"{memory}Mi",
        "pods": str(max_pods),
    }
    allocatable = {
        "cpu": format_millicores(vcpus * 1000 - kube_reserved_cpu_millicores(vcpus)),
        "ephemeral-storage": format_bytes(storage - KUBE_RESERVED_EPHEMERAL_GIB * _GIB - eviction_storage),
        "memory": f"{memory - kube_reserved_memory_mib(max_pods) - EVICTION_MEMORY_MIB}Mi",
        "pods": str(max_pods),
    }
    for name, count in sorted((extended or {}).items()):
        capacity[name] = allocatable[name] = str(count)
    return NodeResources(dict(sorted(capacity.items())), dict(sorted(allocatable.items())))

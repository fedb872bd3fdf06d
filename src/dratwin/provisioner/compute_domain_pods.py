"""The provisioning rule for NVIDIA ComputeDomain claims: Karpenter and EKS Auto Mode never launch nodes for them.

A ComputeDomain pod needs a node where the NVIDIA DRA driver's ComputeDomain kubelet plugin publishes an IMEX
channel: a multi-node NVLink instance (P6e-GB200). Karpenter simulates DRA claims on the device templates of its
DRA metadata, which has none for ``compute-domain.nvidia.com`` (nor for p6e-gb200), and the EKS UltraServer guide
says it plainly: DRA is not supported in Karpenter or EKS Auto Mode for P6e-GB200 UltraServers, use managed or
self-managed node groups, on UltraServers bought through EC2 Capacity Blocks. So such a pod is not planned; its
reason says where its capacity comes from, and what the UltraServers of the type cost per hour.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.api.resource import DeviceClass
from dratwin.catalog.ultraservers import ultraservers
from dratwin.cluster.compute_domains import asks_for_channels
from dratwin.provisioner.solver import ANY_POOL, PodToPlace, Pool, TypeRejection, Unplaced

STATIC_CAPACITY = (
    "ComputeDomain claims need static capacity: Karpenter and EKS Auto Mode never launch nodes for them (Karpenter "
    "has no DRA device metadata for compute-domain.nvidia.com, and the EKS guide supports DRA on P6e-GB200 "
    "UltraServers with managed or self-managed node groups only)"
)


def _ultraserver_offer() -> str:
    offers = [f"{u.name} ({u.instances} x {u.instance_type}"
              + (f", ${u.capacity_block_price_usd_per_hour:,.3f}/h" if u.capacity_block_price_usd_per_hour else "")
              + ")" for u in ultraservers().values()]
    return "; run a node group on the Capacity Block of an UltraServer: " + " or ".join(offers) if offers else ""


def split_compute_domain_pods(
    pods: list[PodToPlace], classes: dict[str, DeviceClass], pools: Sequence[Pool]
) -> tuple[list[PodToPlace], list[Unplaced]]:
    """The pods Karpenter or Auto Mode could launch for, and the ComputeDomain pods it never launches for."""
    keep, stuck = [], []
    reason = STATIC_CAPACITY + _ultraserver_offer() + _static_pools(pools)
    for pod in pods:
        if asks_for_channels(classes, pod.claims):
            stuck.append(Unplaced(pod.info.key, {ANY_POOL: [TypeRejection("(every instance type)", reason)]}))
        else:
            keep.append(pod)
    return keep, stuck


def _static_pools(pools: Sequence[Pool]) -> str:
    """Static NodePools of UltraServer types keep their nodes up whatever is pending: once they run, the pods fit."""
    types = {u.instance_type for u in ultraservers().values()}
    named = sorted(p.name for p in pools if p.static and any(t.instance_type.name in types for t in p.templates))
    if not named:
        return ""
    return (f"; static NodePool {', '.join(named)} keeps P6e-GB200 nodes up whatever is pending: on them the pods "
            "fit once the nodes run and publish their channels")

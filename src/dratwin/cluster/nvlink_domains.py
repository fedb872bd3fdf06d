"""What ``cluster generate`` adds to the nodes of multi-node NVLink instances (P6e-GB200 UltraServers).

An UltraServer's instances share one NVLink domain. On EKS (the UltraServer guide) such nodes come from an EC2
Capacity Block, GPU Feature Discovery labels them with their clique (``nvidia.com/gpu.clique``, the same value
on every node of one domain), and the NVIDIA DRA driver runs with ComputeDomains enabled, so its
ComputeDomain kubelet plugin publishes one pool per node with the devices ``channel-0`` (the IMEX channel a
workload claims) and ``daemon-0`` (the one an IMEX daemon claims), attributes ``type`` and ``id`` only
(``cmd/compute-domain-kubelet-plugin``: the plugin advertises channel 0 alone, and no device carries a clique:
the clique is the node label). The GPU side is unchanged: the DRA driver or, as the guide installs it, the
device plugin.

Instances of an UltraServer type given by instance type (``p6e-gb200.36xlarge=N``) are placed in UltraServers
of the largest size in order, with a warning; given by UltraServer (``u-p6e-gb200x36=N``), N whole ones.
PLACEHOLDERS: the clique values (``<ClusterUUID>.<CliqueID>``, deterministic per UltraServer) and the Capacity
Block reservation ids.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.api.compute_domain import (
    CHANNEL_DEVICE,
    CHANNEL_TYPE,
    CLIQUE_LABEL,
    DAEMON_DEVICE,
    DAEMON_TYPE,
)
from dratwin.api.compute_domain import DRIVER as COMPUTE_DOMAIN_DRIVER
from dratwin.catalog.ultraservers import UltraServer, ultraservers, ultraservers_of

_CLUSTER_NAMESPACE = uuid.UUID("3c5e2f0a-8b1d-5a7e-9c4f-6d2b1a0e9f37")


@dataclass(frozen=True)
class Fabric:
    """The nodes of one ``-t`` group that belong to UltraServers, and of which size."""

    ultraserver: UltraServer
    first: int  # the ordinal of the group's first UltraServer among all UltraServers of the cluster

    def ordinal(self, index: int) -> int:
        """The cluster-wide ordinal of the NVLink domain that the group's ``index``-th node is in."""
        return self.first + index // self.ultraserver.instances_per_domain

    def labels(self, index: int) -> dict[str, str]:
        """The labels the group's ``index``-th node gets for its NVLink domain (GPU Feature Discovery's clique)."""
        return {CLIQUE_LABEL: clique(self.ordinal(index))}


@dataclass(frozen=True)
class Expanded:
    """A ``-t`` group resolved to an instance type: the count in instances, and its UltraServers (if any)."""

    instance_type: str
    count: int
    fabric: Fabric | None


def expand_groups(groups: Sequence[tuple[str, int]], warn: Callable[[str], None]) -> list[Expanded]:
    """``u-p6e-gb200x72=2`` becomes 36 nodes of p6e-gb200.36xlarge in 2 UltraServers; an UltraServer instance
    type given on its own is packed into UltraServers of the largest size. Other types are left as they are."""
    found, next_ordinal = [], 0
    known = ultraservers()
    for name, count in groups:
        server = known.get(name.strip().lower())
        sizes = ultraservers_of(name) if server is None else []
        if server is None and not sizes:
            found.append(Expanded(name, count, None))
            continue
        if server is None:
            server = sizes[0]
            whole = -(-count // server.instances)
            listed = ", ".join(f"{u.name}: {u.instances} instances" for u in sizes)
            warn(f"{name} is sold only as UltraServers ({listed}): its {count} node(s) are placed in {whole} "
                 f"{server.name}; give -t {sizes[-1].name}=N for smaller ones")
            instances = count
        else:
            instances = count * server.instances
        fabric = Fabric(server, next_ordinal)
        next_ordinal += -(-instances // server.instances_per_domain)
        found.append(Expanded(server.instance_type, instances, fabric))
    return found


def clique(ordinal: int) -> str:
    """The ``nvidia.com/gpu.clique`` of the nodes of the ``ordinal``-th UltraServer: ``<ClusterUUID>.<CliqueID>``."""
    cluster = uuid.uuid5(_CLUSTER_NAMESPACE, f"nvlink-domain/{ordinal}")
    clique_id = int.from_bytes(hashlib.sha256(str(cluster).encode()).digest()[:2], "big") % 4096
    return f"{cluster}.{clique_id}"


def compute_domain_devices() -> list[dict[str, Any]]:
    """What the ComputeDomain kubelet plugin publishes on a node (driver-managed IMEX, the chart's default)."""
    return [
        {"name": CHANNEL_DEVICE, "attributes": {"id": {"int": 0}, "type": {"string": CHANNEL_TYPE}}},
        {"name": DAEMON_DEVICE, "attributes": {"id": {"int": 0}, "type": {"string": DAEMON_TYPE}}},
    ]


__all__ = ["COMPUTE_DOMAIN_DRIVER", "Expanded", "Fabric", "clique", "compute_domain_devices", "expand_groups"]

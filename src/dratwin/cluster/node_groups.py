"""The labels of nodes that EKS managed node groups launch, for ``cluster generate --provisioner node-group``.

A managed node group (the EKS User Guide, "Managed node groups" and "Create a managed node group with Capacity
Blocks for ML") labels its nodes with ``eks.amazonaws.com/nodegroup`` (its name), ``eks.amazonaws.com/capacityType``
(``ON_DEMAND``, ``SPOT`` or ``CAPACITY_BLOCK``) and ``eks.amazonaws.com/nodegroup-image`` (the AMI); Karpenter's
labels (``karpenter.sh/*``, ``karpenter.k8s.aws/*``) are not there, since Karpenter did not launch them. Nodes of
a Capacity Block under Karpenter carry capacity type ``reserved`` and the reservation's type and id.
PLACEHOLDERS: the AMI id and the Capacity Block reservation id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

NODE_GROUP_LABEL = "eks.amazonaws.com/nodegroup"
NODE_GROUP_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"
NODE_GROUP_IMAGE_LABEL = "eks.amazonaws.com/nodegroup-image"
CAPACITY_BLOCK = "CAPACITY_BLOCK"
ON_DEMAND = "ON_DEMAND"
KARPENTER_PREFIXES = ("karpenter.sh/", "karpenter.k8s.aws/")
KARPENTER_CAPACITY_TYPE = "karpenter.sh/capacity-type"
RESERVATION_TYPE_LABEL = "karpenter.k8s.aws/capacity-reservation-type"
RESERVATION_ID_LABEL = "karpenter.k8s.aws/capacity-reservation-id"


def _placeholder(kind: str, key: str, length: int = 17) -> str:
    return f"{kind}-{hashlib.sha256(f'{kind}/{key}'.encode()).hexdigest()[:length]}"


def node_group_labels(labels: Mapping[str, str], node_group: str, capacity_block: bool) -> dict[str, str]:
    """``labels`` of a node as Karpenter would label it, turned into those of a managed node group's node."""
    found = {k: v for k, v in labels.items() if not k.startswith(KARPENTER_PREFIXES)}
    found[NODE_GROUP_LABEL] = node_group
    found[NODE_GROUP_CAPACITY_LABEL] = CAPACITY_BLOCK if capacity_block else ON_DEMAND
    found[NODE_GROUP_IMAGE_LABEL] = _placeholder("ami", labels.get("kubernetes.io/arch", ""))
    return dict(sorted(found.items()))


def karpenter_capacity_block_labels(labels: Mapping[str, str], reservation: str) -> dict[str, str]:
    """A Karpenter node launched into a Capacity Block (``reservation`` names the block)."""
    found = dict(labels)
    found[KARPENTER_CAPACITY_TYPE] = "reserved"
    found[RESERVATION_TYPE_LABEL] = "capacity-block"
    found[RESERVATION_ID_LABEL] = _placeholder("cr", reservation)
    return dict(sorted(found.items()))

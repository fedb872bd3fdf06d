"""Which existing Karpenter nodes are drifted: their NodePool or EC2NodeClass no longer describes them.

Karpenter marks a launched NodeClaim ``Drifted`` (``pkg/controllers/nodeclaim/disruption/drift.go``, v1.14) for
the first of these reasons, and its disruption controller then replaces it (the Drift method, between Emptiness and
consolidation, limited by the NodePool's ``Drifted`` budgets; see :mod:`dratwin.provisioner.consolidation`):

- ``NodePoolDrifted``: the NodePool's ``karpenter.sh/nodepool-hash`` annotation differs from the NodeClaim's,
  at the same ``karpenter.sh/nodepool-hash-version`` (the hash of the NodeClaim template without requirements;
  only compared when both sides carry both annotations);
- ``RequirementsDrifted``: the NodeClaim's labels no longer meet the NodePool's requirements (every requirement
  key must be among the labels unless it only excludes values, and the values must intersect: strict
  ``Compatible``, no well-known label may be left undefined). A NodePool that no longer lists the node's
  instance type is the common case; a requirement that still allows it (``In [m5.large]`` to
  ``In [m5.large, m5.2xlarge]``) is not drift;
- ``NodeClassDrift`` (the AWS provider's ``IsDrifted``): the EC2NodeClass's ``karpenter.k8s.aws/ec2nodeclass-hash``
  differs from the NodeClaim's at the same hash version.

Karpenter syncs a NodeClaim's labels and annotations onto its Node, so the Node's are read here. Not modelled:
``InstanceTypeNotFound`` (dratwin's catalog is not the cloud's; a type it lacks is a gap of the catalog, not
drift), AMI, subnet, security group, capacity reservation and placement group drift (they need the instance and the
NodeClass status), and EKS Auto Mode's NodeClass hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dratwin.api.core import Node
from dratwin.provisioner.requirements import Requirement, RequirementError, Requirements

NODEPOOL_DRIFTED = "NodePoolDrifted"
REQUIREMENTS_DRIFTED = "RequirementsDrifted"
NODECLASS_DRIFTED = "NodeClassDrift"
NODEPOOL_HASH = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION = "karpenter.sh/nodepool-hash-version"
EC2NODECLASS_HASH = "karpenter.k8s.aws/ec2nodeclass-hash"
EC2NODECLASS_HASH_VERSION = "karpenter.k8s.aws/ec2nodeclass-hash-version"

Raw = Mapping[str, Any]


@dataclass(frozen=True)
class Drift:
    """Why a node is drifted: Karpenter's reason (the ``Drifted`` condition's) and what changed, in words."""

    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


def drift_of(node: Node, nodepool: Raw, node_classes: Mapping[str, Raw]) -> Drift | None:
    """The node's drift from its NodePool (its raw object) and EC2NodeClasses (raw, by name); None if none."""
    meta = nodepool.get("metadata") or {}
    name = meta.get("name", "")
    if _hash_differs(meta.get("annotations") or {}, node.metadata.annotations, NODEPOOL_HASH, NODEPOOL_HASH_VERSION):
        return Drift(NODEPOOL_DRIFTED, f"NodePool {name} changed since the node was launched (its {NODEPOOL_HASH} "
                     "differs; taints, labels, startup taints, kubelet or expiry settings of its template)")
    template = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
    problem = _requirements_problem(node.metadata.labels, template.get("requirements") or [])
    if problem:
        return Drift(REQUIREMENTS_DRIFTED, f"the node no longer meets the requirements of NodePool {name} ({problem})")
    ref = template.get("nodeClassRef") or {}
    node_class = node_classes.get(str(ref.get("name", ""))) if ref.get("kind") == "EC2NodeClass" else None
    class_annotations = ((node_class or {}).get("metadata") or {}).get("annotations") or {}
    if node_class is not None and _hash_differs(class_annotations, node.metadata.annotations, EC2NODECLASS_HASH,
                                                EC2NODECLASS_HASH_VERSION):
        return Drift(NODECLASS_DRIFTED, f"EC2NodeClass {ref.get('name')} changed since the node was launched (its "
                     f"{EC2NODECLASS_HASH} differs)")
    return None


def _hash_differs(owner: Mapping[str, str], node: Mapping[str, str], key: str, version: str) -> bool:
    if not all(k in side for side in (owner, node) for k in (key, version)):
        return False
    return owner[version] == node[version] and owner[key] != node[key]


def _requirements_problem(labels: Mapping[str, str], written: list[Any]) -> str | None:
    """Upstream's ``NewLabelRequirements(nodeClaim.Labels).Compatible(nodePoolRequirements)``, in its words."""
    try:
        wanted = Requirements(
            Requirement.create(str(r.get("key", "")), str(r.get("operator", "")), [str(v) for v in r.get("values", [])])
            for r in written
            if isinstance(r, Mapping)
        )
    except RequirementError:
        return None  # the NodePool is invalid; plan reports that before it gets here
    return Requirements.from_labels(labels).compatible(wanted)

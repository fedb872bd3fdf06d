"""The two label sets NodePools are written in: self-managed Karpenter's and EKS Auto Mode's.

Self-managed Karpenter (aws/karpenter-provider-aws) describes instance types with ``karpenter.k8s.aws/instance-*``
labels; EKS Auto Mode describes them with ``eks.amazonaws.com/instance-*`` (the EKS User Guide's "EKS Auto Mode
Supported Labels"; "EKS Auto Mode uses different labels than Karpenter"). Each provisioner knows only its own set.

How a NodePool requirement is read follows Karpenter core (``pkg/scheduling/requirements.go``,
``pkg/controllers/provisioning/scheduling/nodeclaim.go``): an instance type is compatible when its requirements
*intersect* the NodePool's, on the keys both define. The AWS provider defines every instance label on every
type, ``DoesNotExist`` where the type lacks the property (``computeRequirements``), so a requirement on a known
key always narrows the types. A key the provider does not know is a *custom label*: it narrows nothing, and every
node gets the label with one allowed value (``resolveCustomLabelsFromRequirements``). That is how an Auto Mode
key in a self-managed NodePool, or a Karpenter key in an Auto Mode NodePool, is taken: silently, which is why
:func:`foreign_key_hint` names the label set such a key belongs to.

Each provisioner also manages only the NodePools whose ``nodeClassRef`` names its NodeClass kind
(``nodepoolutils.IsManaged``): ``karpenter.k8s.aws``/``EC2NodeClass`` or ``eks.amazonaws.com``/``NodeClass``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum

from dratwin.api.karpenter import (
    AUTO_MODE_LABELS,
    AUTO_MODE_WELL_KNOWN_LABELS,
    AWS_GROUP,
    CAPACITY_TYPE_LABEL,
    EC2_NODE_CLASS,
    EKS_GROUP,
    INSTANCE_TENANCY_LABEL,
    NODEPOOL_LABEL,
    NORMALIZED_LABELS,
    REGION_LABEL,
    WELL_KNOWN_LABELS,
    WINDOWS_BUILD_LABEL,
    ZONE_ID_LABEL,
    ZONE_LABEL,
    label_domain,
)
from dratwin.catalog import InstanceType
from dratwin.provisioner.requirements import Requirement, Requirements

COMPUTE_TYPE_LABEL = f"{EKS_GROUP}/compute-type"
OFFERING_KEYS = frozenset({ZONE_LABEL, CAPACITY_TYPE_LABEL})
# Instance labels the AWS provider sets to DoesNotExist on a type that lacks the property (computeRequirements;
# every type has vCPUs and memory there, the catalog may not know them).
_NONE_WHEN_ABSENT = (
    "instance-cpu", "instance-memory", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth", "instance-category", "instance-capability-flex", "instance-family",
    "instance-generation", "instance-local-nvme", "instance-size", "instance-gpu-name", "instance-gpu-manufacturer",
    "instance-gpu-count", "instance-gpu-memory", "instance-accelerator-name", "instance-accelerator-manufacturer",
    "instance-accelerator-count",
)  # fmt: skip
# Keys of offerings and reservations the twin does not model (zone IDs are per account): not checked.
UNMODELLED_KEYS = frozenset(
    {ZONE_ID_LABEL}
    | {f"{AWS_GROUP}/{name}" for name in (
        "capacity-reservation-id", "capacity-reservation-type", "capacity-reservation-interruptible",
        "placement-group-id", "placement-group-partition", "nitro-sandbox",
    )}
)  # fmt: skip
_KNOWN_DOMAINS = frozenset(
    label_domain(k) for k in WELL_KNOWN_LABELS | AUTO_MODE_WELL_KNOWN_LABELS | {NODEPOOL_LABEL}
) | {"kubernetes.io", "k8s.io", "karpenter.sh"}


class KeyKind(Enum):
    OFFERING = "offering"  # zone, capacity type: narrow the offerings
    INSTANCE = "instance"  # a label the provisioner's instance types define: narrows the types
    UNMODELLED = "unmodelled"  # known to the provisioner, but the twin does not model its values
    CUSTOM = "custom"  # unknown to the provisioner: a label put on the node, narrows nothing


@dataclass(frozen=True)
class LabelSet:
    """One provisioner's vocabulary: its name, its instance-label domain, its well-known labels, its NodeClass."""

    name: str
    domain: str
    well_known: frozenset[str]
    node_class_group: str
    node_class_kind: str

    def key_kind(self, key: str) -> KeyKind:
        key = NORMALIZED_LABELS.get(key, key)
        if key in OFFERING_KEYS:
            return KeyKind.OFFERING
        if key in UNMODELLED_KEYS and key in self.well_known:
            return KeyKind.UNMODELLED
        if key in self.well_known and key != NODEPOOL_LABEL:
            return KeyKind.INSTANCE
        return KeyKind.CUSTOM

    def manages(self, group: str, kind: str) -> bool:
        """Whether a NodePool whose nodeClassRef is ``group``/``kind`` is this provisioner's."""
        return (group, kind) == (self.node_class_group, self.node_class_kind)


KARPENTER = LabelSet("self-managed Karpenter", AWS_GROUP, WELL_KNOWN_LABELS, AWS_GROUP, EC2_NODE_CLASS)
AUTO_MODE = LabelSet("EKS Auto Mode", EKS_GROUP, AUTO_MODE_WELL_KNOWN_LABELS, EKS_GROUP, "NodeClass")


def label_set(auto_mode: bool) -> LabelSet:
    return AUTO_MODE if auto_mode else KARPENTER


def other(labels: LabelSet) -> LabelSet:
    return KARPENTER if labels is AUTO_MODE else AUTO_MODE


def instance_labels(instance_type: InstanceType, labels: LabelSet, region: str) -> dict[str, str]:
    """The labels a node of this type gets from its provisioner (Karpenter's page, or Auto Mode's renaming)."""
    found: dict[str, str] = {}
    for key, value in instance_type.well_known_labels().items():
        if not key.startswith(f"{AWS_GROUP}/") or labels is KARPENTER:
            found[key] = value
        elif f"{EKS_GROUP}/{key.removeprefix(f'{AWS_GROUP}/')}" in AUTO_MODE_LABELS:
            found[f"{EKS_GROUP}/{key.removeprefix(f'{AWS_GROUP}/')}"] = value
    if labels is AUTO_MODE:
        found[COMPUTE_TYPE_LABEL] = "auto"
    found[REGION_LABEL] = region
    return found


def instance_requirements(instance_type: InstanceType, labels: LabelSet, region: str) -> Requirements:
    """The type's requirements as its provisioner computes them: its labels, ``DoesNotExist`` for the instance
    labels it lacks, any tenancy, no Windows build."""
    known = instance_labels(instance_type, labels, region)
    found = [Requirement.create(key, "In", [value]) for key, value in known.items()]
    found += [
        Requirement.create(key, "DoesNotExist")
        for name in _NONE_WHEN_ABSENT
        if (key := f"{labels.domain}/{name}") not in known and key in labels.well_known
    ]
    found.append(Requirement.create(WINDOWS_BUILD_LABEL, "DoesNotExist"))
    if labels is KARPENTER:
        found.append(Requirement.create(INSTANCE_TENANCY_LABEL, "In", ["default", "dedicated"]))
    return Requirements(found)


def foreign_key_hint(key: str, labels: LabelSet) -> str | None:
    """For a key ``labels`` does not know (a custom label to it): which label set it belongs to, or which known
    key it most likely meant, as a clause ("is EKS Auto Mode's label; self-managed Karpenter's is ..."). None for
    a key that looks like an ordinary custom label (``example.com/team``)."""
    alien = other(labels)
    name = key.rsplit("/", 1)[-1]
    counterpart = next((k for k in sorted(labels.well_known) if k.rsplit("/", 1)[-1] == name), None)
    if key in alien.well_known and key not in labels.well_known:
        mine = f'; {labels.name}\'s is "{counterpart}"' if counterpart else f"; {labels.name} has no such label"
        return f"is a label of {alien.name}, not of {labels.name}{mine}"
    if counterpart is not None and counterpart != key:
        return f'is not a label {labels.name} knows (typo of "{counterpart}"?)'
    if label_domain(key) not in _KNOWN_DOMAINS:
        return None
    names = {k.rsplit("/", 1)[-1]: k for k in labels.well_known}
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.75)
    meant = f' (typo of "{names[close[0]]}"?)' if close else ""
    return f"is not a label {labels.name} knows{meant}"

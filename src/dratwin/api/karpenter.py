"""Karpenter's objects (``karpenter.sh/v1`` NodePool and NodeClaim, ``karpenter.k8s.aws/v1`` EC2NodeClass)
and the label vocabulary its scheduling reads.

Like :mod:`dratwin.api.core`, the structs are typed *views* with wire names, permissive where the CRDs
are strict (strings for enums, ``None`` where absence differs from empty) so that input the API server
would reject can still be represented and reported by :mod:`dratwin.api.validation_karpenter`.
Defaults the CRDs apply on admission are not filled in; they are named here (``DEFAULT_*``) for the
code that needs the effective value.

The label sets mirror ``pkg/apis/v1/labels.go`` of kubernetes-sigs/karpenter (core, v1.14) and of
aws/karpenter-provider-aws (which adds its ``karpenter.k8s.aws/*`` labels and domain in ``init()``);
the restricted labels and domains are those of the CRDs' CEL rules, which the API server enforces.
The scheduling algebra over these labels lives in :mod:`dratwin.provisioner.requirements`.
"""

from __future__ import annotations

import msgspec

from dratwin.api.core import Taint
from dratwin.api.meta import ObjectMeta

QuantityText = str | int | float

KARPENTER_GROUP = "karpenter.sh"
AWS_GROUP = "karpenter.k8s.aws"
EKS_GROUP = "eks.amazonaws.com"  # EKS Auto Mode's NodeClass and labels
EC2_NODE_CLASS = "EC2NodeClass"

# ---- labels --------------------------------------------------------------------------------------

NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
INITIALIZED_LABEL = "karpenter.sh/initialized"
REGISTERED_LABEL = "karpenter.sh/registered"
DO_NOT_SYNC_TAINTS_LABEL = "karpenter.sh/do-not-sync-taints"
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
DRA_DRIVERS_ANNOTATION = "karpenter.sh/requested-dra-drivers"
MIN_VALUES_RELAXED_ANNOTATION = "karpenter.sh/nodeclaim-min-values-relaxed"

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"
OS_LABEL = "kubernetes.io/os"
HOSTNAME_LABEL = "kubernetes.io/hostname"
WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build"
ZONE_ID_LABEL = "topology.k8s.aws/zone-id"

CAPACITY_TYPE_ON_DEMAND = "on-demand"
CAPACITY_TYPE_SPOT = "spot"
CAPACITY_TYPE_RESERVED = "reserved"

# core WellKnownLabels: labels Karpenter knows the values of (from NodePools and instance types).
CORE_WELL_KNOWN_LABELS = frozenset(
    {
        NODEPOOL_LABEL, ZONE_LABEL, REGION_LABEL, INSTANCE_TYPE_LABEL, ARCH_LABEL, OS_LABEL, CAPACITY_TYPE_LABEL,
        WINDOWS_BUILD_LABEL,
    }
)

_AWS = AWS_GROUP + "/"
INSTANCE_CATEGORY_LABEL = _AWS + "instance-category"
INSTANCE_FAMILY_LABEL = _AWS + "instance-family"
INSTANCE_GENERATION_LABEL = _AWS + "instance-generation"
INSTANCE_SIZE_LABEL = _AWS + "instance-size"
INSTANCE_CPU_LABEL = _AWS + "instance-cpu"
INSTANCE_MEMORY_LABEL = _AWS + "instance-memory"
INSTANCE_GPU_NAME_LABEL = _AWS + "instance-gpu-name"
INSTANCE_GPU_MANUFACTURER_LABEL = _AWS + "instance-gpu-manufacturer"
INSTANCE_GPU_COUNT_LABEL = _AWS + "instance-gpu-count"
INSTANCE_GPU_MEMORY_LABEL = _AWS + "instance-gpu-memory"
INSTANCE_TENANCY_LABEL = _AWS + "instance-tenancy"
EC2_NODE_CLASS_LABEL = _AWS + "ec2nodeclass"

# The AWS provider's additions to WellKnownLabels (pkg/apis/v1/labels.go init()).
AWS_WELL_KNOWN_LABELS = frozenset(
    {_AWS + name for name in (
        "capacity-reservation-id", "capacity-reservation-type", "capacity-reservation-interruptible",
        "instance-hypervisor", "instance-encryption-in-transit-supported", "nitro-sandbox", "instance-category",
        "instance-capability-flex", "instance-family", "instance-generation", "instance-size", "instance-local-nvme",
        "instance-cpu", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory",
        "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer",
        "instance-gpu-count", "instance-gpu-memory", "instance-accelerator-name",
        "instance-accelerator-manufacturer", "instance-accelerator-count", "instance-tenancy",
        "placement-group-id", "placement-group-partition",
    )}
    | {ZONE_ID_LABEL}
)
WELL_KNOWN_LABELS = CORE_WELL_KNOWN_LABELS | AWS_WELL_KNOWN_LABELS

# EKS Auto Mode sets the AWS instance labels under eks.amazonaws.com/ (EKS User Guide, create-node-pool;
# the same list as dratwin.cluster.generate) plus eks.amazonaws.com/compute-type: auto.
AUTO_MODE_LABELS = frozenset(
    {f"{EKS_GROUP}/{name}" for name in (
        "instance-hypervisor", "instance-encryption-in-transit-supported", "instance-category",
        "instance-generation", "instance-family", "instance-size", "instance-cpu", "instance-cpu-manufacturer",
        "instance-memory", "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name",
        "instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-memory", "instance-local-nvme",
        "compute-type",
    )}
)
AUTO_MODE_WELL_KNOWN_LABELS = CORE_WELL_KNOWN_LABELS | AUTO_MODE_LABELS | {ZONE_ID_LABEL}

# Requirements on these keys must allow at least one of the values (else the NodePool is not Ready).
WELL_KNOWN_VALUES: dict[str, frozenset[str]] = {
    CAPACITY_TYPE_LABEL: frozenset({CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_RESERVED}),
    INSTANCE_TENANCY_LABEL: frozenset({"dedicated", "default"}),
}

# Deprecated aliases that Karpenter rewrites to the well-known label (pods and NodePools alike).
NORMALIZED_LABELS: dict[str, str] = {
    "failure-domain.beta.kubernetes.io/zone": ZONE_LABEL,
    "failure-domain.beta.kubernetes.io/region": REGION_LABEL,
    "beta.kubernetes.io/arch": ARCH_LABEL,
    "beta.kubernetes.io/os": OS_LABEL,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE_LABEL,
}

# Labels that interfere with provisioning: never set by a NodePool, ignored in requirement strings.
RESTRICTED_LABELS = frozenset({HOSTNAME_LABEL})
# Domains reserved by Karpenter, with the keys of each that NodePool labels and requirements may still use
# (the CEL rules of the karpenter.sh_nodepools CRD as the AWS provider ships it, v1.14).
RESTRICTED_LABEL_DOMAINS: dict[str, frozenset[str]] = {
    KARPENTER_GROUP: frozenset({CAPACITY_TYPE_LABEL, NODEPOOL_LABEL}),
    AWS_GROUP: (AWS_WELL_KNOWN_LABELS - {ZONE_ID_LABEL}) | {EC2_NODE_CLASS_LABEL},
}


def label_domain(key: str) -> str:
    """The part before '/', as the CRD's CEL ``find("^([^/]+)")`` reads it: the whole key when it has no '/'."""
    return key.split("/", 1)[0]


def restricted_label(key: str, nodepool: bool = True) -> str | None:
    """Why a NodePool (or NodeClaim, ``nodepool=False``) may not use ``key`` as a label or requirement key.

    The wording is the CRD's CEL message; None when the key is allowed.
    """
    if key == NODEPOOL_LABEL and nodepool:
        return f'label "{NODEPOOL_LABEL}" is restricted'
    if key in RESTRICTED_LABELS:
        return f'label "{key}" is restricted'
    domain = label_domain(key)
    for restricted, allowed in RESTRICTED_LABEL_DOMAINS.items():
        if domain.endswith(restricted) and key not in allowed:
            return f'label domain "{restricted}" is restricted'
    return None


# ---- shared pieces -------------------------------------------------------------------------------


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of every wire struct: keyword-only, camelCase, absent fields omitted on output."""


class NodeSelectorRequirementWithMinValues(_Wire):
    """A requirement of a NodePool or NodeClaim: a v1 node selector requirement plus ``minValues``.

    Operators: In, NotIn, Exists, DoesNotExist, Gt, Lt, and Karpenter's own Gte and Lte.
    """

    key: str = ""
    operator: str = ""
    values: list[str] = msgspec.field(default_factory=list)
    min_values: int | None = None


class NodeClassReference(_Wire):
    group: str = ""  # e.g. karpenter.k8s.aws (no version)
    kind: str = ""  # e.g. EC2NodeClass
    name: str = ""


class Condition(_Wire):
    """A status condition (operatorpkg's ``status.Condition``, the metav1 shape)."""

    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


# ---- NodePool ------------------------------------------------------------------------------------

DEFAULT_EXPIRE_AFTER = "720h"
DEFAULT_CONSOLIDATE_AFTER = "0s"
DEFAULT_CONSOLIDATION_POLICY = "WhenEmptyOrUnderutilized"
DEFAULT_BUDGET_NODES = "10%"
CONSOLIDATION_POLICIES = ("Balanced", "WhenEmpty", "WhenEmptyOrUnderutilized")
DISRUPTION_REASONS = ("Drifted", "Empty", "Underutilized")
REQUIREMENT_OPERATORS = ("DoesNotExist", "Exists", "Gt", "Gte", "In", "Lt", "Lte", "NotIn")


class NodeClaimTemplateMetadata(_Wire):
    """``spec.template.metadata``: only labels and annotations (Karpenter's own ObjectMeta)."""

    labels: dict[str, str] = msgspec.field(default_factory=dict)
    annotations: dict[str, str] = msgspec.field(default_factory=dict)


class NodeClaimTemplateSpec(_Wire):
    """``spec.template.spec``: a NodeClaim spec without resources."""

    taints: list[Taint] = msgspec.field(default_factory=list)
    startup_taints: list[Taint] = msgspec.field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues] | None = None  # required; [] is allowed
    node_class_ref: NodeClassReference | None = None  # required
    expire_after: str | None = None  # "720h" when absent; "Never" disables expiry
    termination_grace_period: str | None = None


class NodeClaimTemplate(_Wire):
    metadata: NodeClaimTemplateMetadata = msgspec.field(default_factory=NodeClaimTemplateMetadata)
    spec: NodeClaimTemplateSpec = msgspec.field(default_factory=NodeClaimTemplateSpec)


class Budget(_Wire):
    """A disruption budget; ``nodes`` is a count or a percentage, written as a string (``"10%"``, ``"5"``)."""

    reasons: list[str] | None = None  # None: every reason
    nodes: str | int = ""  # the CRD types it as a string; an unquoted YAML number is kept to be reported
    schedule: str | None = None  # cron, UTC
    duration: str | None = None


class Disruption(_Wire):
    consolidate_after: str | None = None  # "0s" when absent; "Never" disables consolidation
    consolidation_policy: str = ""  # WhenEmptyOrUnderutilized when absent
    budgets: list[Budget] | None = None  # one budget of 10% when absent


class NodePoolSpec(_Wire):
    template: NodeClaimTemplate = msgspec.field(default_factory=NodeClaimTemplate)
    disruption: Disruption = msgspec.field(default_factory=Disruption)
    limits: dict[str, QuantityText] = msgspec.field(default_factory=dict)
    weight: int | None = None  # 1..100; absent counts as 0
    replicas: int | None = None  # a static NodePool (alpha): a fixed number of nodes


class NodePoolStatus(_Wire):
    conditions: list[Condition] = msgspec.field(default_factory=list)
    resources: dict[str, QuantityText] = msgspec.field(default_factory=dict)
    nodes: int | None = None


class NodePool(_Wire):
    api_version: str = "karpenter.sh/v1"
    kind: str = "NodePool"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodePoolSpec = msgspec.field(default_factory=NodePoolSpec)
    status: NodePoolStatus = msgspec.field(default_factory=NodePoolStatus)


# ---- NodeClaim -----------------------------------------------------------------------------------


class NodeClaimResources(_Wire):
    requests: dict[str, QuantityText] = msgspec.field(default_factory=dict)


class NodeClaimSpec(_Wire):
    taints: list[Taint] = msgspec.field(default_factory=list)
    startup_taints: list[Taint] = msgspec.field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues] | None = None  # required
    resources: NodeClaimResources = msgspec.field(default_factory=NodeClaimResources)
    node_class_ref: NodeClassReference | None = None  # required
    termination_grace_period: str | None = None
    expire_after: str | None = None


class NodeClaimStatus(_Wire):
    node_name: str = ""
    provider_id: str = msgspec.field(default="", name="providerID")
    image_id: str = msgspec.field(default="", name="imageID")
    capacity: dict[str, QuantityText] = msgspec.field(default_factory=dict)
    allocatable: dict[str, QuantityText] = msgspec.field(default_factory=dict)
    conditions: list[Condition] = msgspec.field(default_factory=list)
    last_pod_event_time: str | None = None


class NodeClaim(_Wire):
    api_version: str = "karpenter.sh/v1"
    kind: str = "NodeClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeClaimSpec = msgspec.field(default_factory=NodeClaimSpec)
    status: NodeClaimStatus = msgspec.field(default_factory=NodeClaimStatus)


# ---- EC2NodeClass (the fields dratwin reads; status and the rest are not modelled) -------------------

AMI_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025")
AMI_ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
INTERFACE_TYPES = ("efa-only", "interface")
VOLUME_TYPES = ("gp2", "gp3", "io1", "io2", "sc1", "st1", "standard")
RESERVED_RESOURCES = ("cpu", "ephemeral-storage", "memory", "pid")  # kubelet systemReserved / kubeReserved keys
# EC2NodeClass annotation of the AWS provider's DRA support (PR #9550): mirrors the NVIDIA DRA driver's
# consumableShares; "disabled", "memory", "unlimited" or a positive integer number of shares.
NVIDIA_CONSUMABLE_CAPACITY_ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
NVIDIA_CONSUMABLE_CAPACITY_MODES = ("disabled", "memory", "unlimited")


class SubnetSelectorTerm(_Wire):
    tags: dict[str, str] | None = None
    id: str = ""


class SecurityGroupSelectorTerm(_Wire):
    tags: dict[str, str] | None = None
    id: str = ""
    name: str = ""


class AMISelectorTerm(_Wire):
    alias: str = ""  # family@version, e.g. al2023@latest
    tags: dict[str, str] | None = None
    id: str = ""
    name: str = ""
    owner: str = ""
    ssm_parameter: str = ""


class BlockDevice(_Wire):
    delete_on_termination: bool | None = None
    encrypted: bool | None = None
    iops: int | None = None
    kms_key_id: str | None = msgspec.field(default=None, name="kmsKeyID")
    snapshot_id: str | None = msgspec.field(default=None, name="snapshotID")
    throughput: int | None = None
    volume_initialization_rate: int | None = None
    volume_size: str | None = None  # 20Gi, 1Ti (Gi, G, Ti or T only)
    volume_type: str | None = None


class BlockDeviceMapping(_Wire):
    device_name: str | None = None
    ebs: BlockDevice | None = None
    root_volume: bool = False


class NetworkInterface(_Wire):
    """An ENI or EFA interface Karpenter attaches at launch (``efa-only`` carries no IP)."""

    network_card_index: int = 0
    device_index: int = 0
    interface_type: str = ""  # interface | efa-only


class KubeletConfiguration(_Wire):
    """The kubelet fields Karpenter's scheduling reads; other upstream KubeletConfiguration fields pass through."""

    max_pods: int | str | None = None  # upstream main also accepts a CEL expression (a string)
    pods_per_core: int | None = None
    system_reserved: dict[str, str] = msgspec.field(default_factory=dict)
    kube_reserved: dict[str, str] = msgspec.field(default_factory=dict)
    eviction_hard: dict[str, str] = msgspec.field(default_factory=dict)
    cluster_dns: list[str] = msgspec.field(default_factory=list, name="clusterDNS")


class EC2NodeClassSpec(_Wire):
    subnet_selector_terms: list[SubnetSelectorTerm] | None = None  # required
    security_group_selector_terms: list[SecurityGroupSelectorTerm] | None = None  # required
    ami_selector_terms: list[AMISelectorTerm] | None = None  # required, at least one
    ami_family: str | None = None  # required unless an alias term names the family
    user_data: str | None = None
    role: str | None = None  # exactly one of role and instanceProfile
    instance_profile: str | None = None
    tags: dict[str, str] = msgspec.field(default_factory=dict)
    kubelet: KubeletConfiguration | None = None
    block_device_mappings: list[BlockDeviceMapping] = msgspec.field(default_factory=list)
    instance_store_policy: str | None = None  # RAID0
    network_interfaces: list[NetworkInterface] | None = None  # unset: Karpenter attaches EFAs on request
    associate_public_ip_address: bool | None = msgspec.field(default=None, name="associatePublicIPAddress")


class EC2NodeClass(_Wire):
    api_version: str = "karpenter.k8s.aws/v1"
    kind: str = "EC2NodeClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: EC2NodeClassSpec = msgspec.field(default_factory=EC2NodeClassSpec)

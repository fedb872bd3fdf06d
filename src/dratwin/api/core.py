"""core/v1 objects, reduced to the fields that device allocation and scheduling read."""

from __future__ import annotations

import msgspec

from dratwin.api.meta import ObjectMeta


class NodeSelectorRequirement(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    key: str = ""
    operator: str = ""
    values: list[str] = msgspec.field(default_factory=list)


class NodeSelectorTerm(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    match_expressions: list[NodeSelectorRequirement] = msgspec.field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = msgspec.field(default_factory=list)


class NodeSelector(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    node_selector_terms: list[NodeSelectorTerm] = msgspec.field(default_factory=list)


class Taint(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class Toleration(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class NodeSpec(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    unschedulable: bool = False
    taints: list[Taint] = msgspec.field(default_factory=list)
    provider_id: str = msgspec.field(default="", name="providerID")


class NodeStatus(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    capacity: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    allocatable: dict[str, str | int | float] = msgspec.field(default_factory=dict)


class Node(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class Namespace(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


# ---- Pod (only what device allocation reads: resource claims and where the pod may run) ------------


class PodResourceClaim(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """``spec.resourceClaims[]``: a name for the pod, and exactly one source (a claim or a template)."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class ContainerResourceClaim(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """``resources.claims[]`` of a container: a pod claim name and optionally one request of it."""

    name: str = ""
    request: str = ""


class ResourceRequirements(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    requests: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    limits: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    claims: list[ContainerResourceClaim] = msgspec.field(default_factory=list)


class Container(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = msgspec.field(default_factory=ResourceRequirements)
    restart_policy: str | None = None  # "Always" on an init container makes it a sidecar


class PreferredSchedulingTerm(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    weight: int = 0
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = msgspec.field(
        default_factory=list
    )


class Affinity(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    node_affinity: NodeAffinity | None = None


class PodSpec(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    containers: list[Container] = msgspec.field(default_factory=list)
    init_containers: list[Container] = msgspec.field(default_factory=list)
    resource_claims: list[PodResourceClaim] = msgspec.field(default_factory=list)
    node_name: str = ""
    node_selector: dict[str, str] = msgspec.field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = msgspec.field(default_factory=list)
    priority: int | None = None
    priority_class_name: str = ""
    scheduler_name: str = ""
    overhead: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    preemption_policy: str = ""


class PodCondition(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class PodResourceClaimStatus(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    name: str = ""
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class PodExtendedResourceClaimStatus(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    request_mappings: list[ContainerExtendedResourceRequest] = msgspec.field(default_factory=list)
    resource_claim_name: str = ""


class PodStatus(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    phase: str = ""
    conditions: list[PodCondition] = msgspec.field(default_factory=list)
    nominated_node_name: str = ""
    resource_claim_statuses: list[PodResourceClaimStatus] = msgspec.field(default_factory=list)
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


class Pod(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


# ---- LimitRange (what Kueue reads of it: the defaults of a namespace's containers) ----------------


class LimitRangeItem(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    type: str = ""  # Container, Pod or PersistentVolumeClaim
    max: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    min: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    default: dict[str, str | int | float] = msgspec.field(default_factory=dict)  # default limits
    default_request: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    max_limit_request_ratio: dict[str, str | int | float] = msgspec.field(default_factory=dict)


class LimitRangeSpec(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    limits: list[LimitRangeItem] = msgspec.field(default_factory=list)


class LimitRange(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str = "v1"
    kind: str = "LimitRange"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LimitRangeSpec = msgspec.field(default_factory=LimitRangeSpec)

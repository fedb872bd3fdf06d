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

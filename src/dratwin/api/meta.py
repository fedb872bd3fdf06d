"""Object metadata and the envelope shared by every kind."""

from __future__ import annotations

from typing import Any

import msgspec


class OwnerReference(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int | None = None
    creation_timestamp: str | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    owner_references: list[OwnerReference] = msgspec.field(default_factory=list)
    finalizers: list[str] = msgspec.field(default_factory=list)


def object_key(meta: ObjectMeta) -> str:
    """"namespace/name" for namespaced objects, "name" for cluster-scoped ones."""
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


RawObject = dict[str, Any]

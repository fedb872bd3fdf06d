"""The objects of one arrival: a workload's template with names of its own.

A workload that can arrive more than once (a rate, a trace, ``count`` > 1) makes ``<name>-<n>`` of every
object of its template, ``n`` = 0, 1, 2, ... in arrival order (the order of the seed's samples), and points
the references inside the template at the renamed objects: a pod's ``resourceClaimName`` and
``resourceClaimTemplateName``, a ComputeDomain's channel template. A workload that arrives once keeps the
names as written.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from dratwin.api.codec import POD_TEMPLATES
from dratwin.api.loader import FieldPath, LoadedObject

_CLAIM_REFERENCES = ("resourceClaimName", "resourceClaimTemplateName")


def instance(objects: Sequence[LoadedObject], suffix: str) -> tuple[LoadedObject, ...]:
    """Copies of ``objects`` named ``<name><suffix>`` (unchanged when ``suffix`` is empty), references followed."""
    if not suffix:
        return tuple(objects)
    renamed = {obj.name for obj in objects if obj.name}
    renamed |= {name for obj in objects if (name := _channel_template(obj.raw)) is not None}
    copies = []
    for obj in objects:
        raw = copy.deepcopy(obj.raw)
        meta = raw.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
            meta["name"] += suffix
        _rename_references(raw, _pod_spec_path(raw), renamed, suffix)
        channel = _channel_template(raw)
        if channel is not None:
            raw["spec"]["channel"]["resourceClaimTemplate"]["name"] = channel + suffix
        obj.line_of(())  # the template's lines, read once and shared by every copy
        copies.append(LoadedObject(raw, obj.source, obj.lines))
    return tuple(copies)


def key(obj: LoadedObject) -> str:
    """``namespace/name`` (namespace ``default`` when unset), as the simulation names workloads."""
    return f"{obj.namespace or 'default'}/{obj.name}"


def _pod_spec_path(raw: dict[str, Any]) -> FieldPath | None:
    if raw.get("kind") == "Pod":
        return ("spec",)
    return POD_TEMPLATES.get((str(raw.get("apiVersion")), str(raw.get("kind"))))


def _rename_references(raw: dict[str, Any], path: FieldPath | None, renamed: set[str], suffix: str) -> None:
    spec: Any = raw
    for part in path or ():
        spec = spec.get(part) if isinstance(spec, dict) else None
    if path is None or not isinstance(spec, dict):
        return
    for entry in _dicts(spec.get("resourceClaims")):
        for field in _CLAIM_REFERENCES:
            if entry.get(field) in renamed:
                entry[field] += suffix


def _channel_template(raw: dict[str, Any]) -> str | None:
    """The ResourceClaimTemplate a ComputeDomain's controller creates, when the object is one."""
    if raw.get("kind") != "ComputeDomain":
        return None
    spec = raw.get("spec")
    channel = spec.get("channel") if isinstance(spec, dict) else None
    template = channel.get("resourceClaimTemplate") if isinstance(channel, dict) else None
    name = template.get("name") if isinstance(template, dict) else None
    return name if isinstance(name, str) and name else None


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, dict))

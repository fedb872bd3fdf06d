"""The same object given more than once, resolved as ``kubectl apply -f`` resolves it.

``kubectl apply`` sends the objects in order: the first definition of an object creates it, every
later one updates it. So an identical repeat changes nothing, and a different one replaces the earlier
content, unless it changes a field the API server does not let an update change (the spec of a
ResourceClaim or a Pod, the driver of a ResourceSlice, ...): then the update is refused and the
earlier definition stays. Several files of one directory often repeat a Namespace or an EC2NodeClass;
this is how a cluster ends up.

:func:`merge_duplicates` is pure: it returns the objects the cluster would hold, in input order (an
updated object keeps the place where it was created, with the later content), and one
:class:`Replacement` per repeat that was not identical.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.api.codec import KINDS, split_api_version
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.validation_formats import shorten

ObjectKey = tuple[str, str, str, str]  # group, kind, namespace ("" when cluster-scoped), name

# Fields an update may not change, per (group, kind): a path prefix, or "spec" for the whole spec.
# From the update validation of the API server (pkg/apis/*/validation) and Karpenter's CRDs.
_IMMUTABLE: dict[tuple[str, str], tuple[FieldPath, ...]] = {
    ("resource.k8s.io", "ResourceClaim"): (("spec",),),
    ("resource.k8s.io", "ResourceClaimTemplate"): (("spec",),),
    ("resource.k8s.io", "ResourceSlice"): (("spec", "driver"), ("spec", "pool", "name"), ("spec", "nodeName")),
    ("", "Pod"): (("spec",),),
    ("batch", "Job"): (("spec", "selector"), ("spec", "template"), ("spec", "completionMode")),
    ("apps", "Deployment"): (("spec", "selector"),),
    ("apps", "ReplicaSet"): (("spec", "selector"),),
    ("apps", "DaemonSet"): (("spec", "selector"),),
    ("apps", "StatefulSet"): (("spec", "selector"), ("spec", "serviceName"), ("spec", "volumeClaimTemplates"),
                              ("spec", "podManagementPolicy")),
    ("karpenter.sh", "NodeClaim"): (("spec",),),
    ("resource.nvidia.com", "ComputeDomain"): (("spec",),),  # the CRD's rule: self == oldSelf
}
# Within an immutable Pod spec, what an update may still change (tolerations and gates: additions and
# removals respectively upstream; any change here).
_POD_MUTABLE = ("image", "activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")


@dataclass(frozen=True)
class Replacement:
    """A later definition of an object that differs from the one before it."""

    earlier: LoadedObject
    later: LoadedObject
    field: FieldPath  # the first field that differs
    immutable: FieldPath | None = None  # the field an update may not change, when the API server refuses it

    @property
    def refused(self) -> bool:
        """The API server refuses the update: the earlier definition stays."""
        return self.immutable is not None

    @property
    def ref(self) -> str:
        return self.later.ref

    def describe(self) -> str:
        """What happened, in words (without the later object's own place)."""
        before, after = _value_at(self.earlier.raw, self.field), _value_at(self.later.raw, self.field)
        change = f"{render_field(self.field) or 'the object'}: {_show(before)} → {_show(after)}"
        where = f"{self.earlier.source.path}:{self.earlier.line_of(self.field)}"
        if self.immutable is not None:
            fixed = render_field(self.immutable)
            what = f"the {fixed} of a {self.later.kind}" if fixed != "spec" else f"a {self.later.kind}'s spec"
            return (f"the same {self.later.kind} is defined at {where}, and this definition differs in {change}; "
                    f"the API server refuses that update ({what} cannot change once created), so the earlier "
                    "definition stays")
        return (f"the same {self.later.kind} is defined at {where}; this later definition replaces it, as "
                f"kubectl apply does (first difference: {change})")


@dataclass(frozen=True)
class Merged:
    objects: list[LoadedObject]
    replacements: list[Replacement]


def merge_duplicates(objects: Sequence[LoadedObject]) -> Merged:
    """The objects after applying ``objects`` in order; see the module docstring."""
    kept: list[LoadedObject] = []
    position: dict[ObjectKey, int] = {}
    replacements: list[Replacement] = []
    for obj in objects:
        key = object_key(obj)
        if key is None or key not in position:
            if key is not None:
                position[key] = len(kept)
            kept.append(obj)
            continue
        current = kept[position[key]]
        if current.raw == obj.raw:
            continue
        difference = first_difference(current.raw, obj.raw)
        immutable = _immutable_change(key, current.raw, obj.raw)
        replacements.append(Replacement(current, obj, difference, immutable))
        if immutable is None:
            kept[position[key]] = obj
    return Merged(kept, replacements)


def object_key(obj: LoadedObject) -> ObjectKey | None:
    """group, kind, namespace, name; None for an object without a name (generateName makes a new one)."""
    if not obj.name or not obj.kind:
        return None
    group = split_api_version(obj.api_version)[0]
    return group, obj.kind, _namespace(obj), obj.name


def _namespace(obj: LoadedObject) -> str:
    info = KINDS.get((obj.api_version, obj.kind))
    if info is not None and not info.namespaced:
        return ""
    # Namespaced, or of a kind whose scope dratwin does not know: no namespace means "default", like kubectl.
    return obj.namespace or "default"


def first_difference(before: Any, after: Any, path: FieldPath = ()) -> FieldPath:
    """The path of the first field (in the later object's order) where two values differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*after, *(k for k in before if k not in after)]:
            if key not in before or key not in after or before[key] != after[key]:
                if key in before and key in after:
                    return first_difference(before[key], after[key], (*path, key))
                return (*path, key)
        return path
    if isinstance(before, list) and isinstance(after, list):
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            if old != new:
                return first_difference(old, new, (*path, index))
        return (*path, min(len(before), len(after)))
    return path


def _immutable_change(key: ObjectKey, before: dict[str, Any], after: dict[str, Any]) -> FieldPath | None:
    """The immutable field the update changes (the API server refuses it), or None."""
    group, kind, _, _ = key
    for prefix in _IMMUTABLE.get((group, kind), ()):
        old, new = _value_at(before, prefix), _value_at(after, prefix)
        if old == new or ((group, kind) == ("", "Pod") and prefix == ("spec",) and _pod_update_allowed(old, new)):
            continue
        return prefix
    return None


def _pod_update_allowed(old: Any, new: Any) -> bool:
    """A pod's spec may change only in container images, tolerations added, gates removed and a few more."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    for key in set(old) | set(new):
        before, after = old.get(key), new.get(key)
        if before == after or key in _POD_MUTABLE:
            continue
        if key in ("containers", "initContainers") and _only_images_differ(before, after):
            continue
        return False
    return True


def _only_images_differ(old: Any, new: Any) -> bool:
    if not isinstance(old, list) or not isinstance(new, list) or len(old) != len(new):
        return False
    strip = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c for c in old]
    return strip == [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c for c in new]


def _value_at(raw: Any, path: FieldPath) -> Any:
    value = raw
    for part in path:
        in_list = isinstance(value, list) and isinstance(part, int) and part < len(value)
        if in_list or (isinstance(value, dict) and part in value):
            value = value[part]
        else:
            return _ABSENT
    return value


class _Absent:
    def __repr__(self) -> str:
        return "(not set)"


_ABSENT = _Absent()


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "(not set)"
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) <= 60:
            return text
        return f"{{{len(value)} fields}}" if isinstance(value, dict) else f"[{len(value)} items]"
    if isinstance(value, str):
        return f'"{shorten(value)}"'
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def render_field(path: FieldPath) -> str:
    """``spec.devices.requests[0].name``; keys with dots or slashes as ``[key]`` (labels, attributes)."""
    text = ""
    for part in path:
        if isinstance(part, int) or "." in str(part) or "/" in str(part):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


"""The wire side of the API: which kinds dratwin knows, typed decoding, field paths, YAML/JSON output.

Objects are loaded as plain dicts (:mod:`dratwin.api.loader`) and decoded into msgspec structs only where
a typed view is needed; output is always produced from the raw dicts, so unknown fields, ``managedFields``
and ``status`` survive a round trip untouched.

Kinds fall in three groups (:func:`classify`):

- *modelled*: decoded and validated (core/v1 Node, Pod, Namespace; resource.k8s.io/v1 DeviceClass,
  ResourceSlice, ResourceClaim, ResourceClaimTemplate, and the same kinds in v1beta2 and v1beta1, which
  :mod:`dratwin.api.intake` converts to v1 as the API server does; Karpenter's karpenter.sh/v1 NodePool
  and NodeClaim and karpenter.k8s.aws/v1 EC2NodeClass; NVIDIA's resource.nvidia.com/v1beta1 ComputeDomain;
  Kueue's kueue.x-k8s.io/v1beta2 kinds and config.kueue.x-k8s.io/v1beta2 Configuration, v1beta1 converted);
- *pod templates*: workloads (Deployment, Job, ...) whose pod template is checked for DRA references;
- *not checked*: any other API group (CRDs such as MPIJob, EKS Auto Mode's NodeClass) and real
  kinds of the groups above that dratwin does not model, in the versions 1.36 serves them (ConfigMap,
  Service, resource.k8s.io/v1beta2 DeviceTaintRule, karpenter.sh/v1alpha1 NodeOverlay, ...) — skipped with a
  warning.

The structure of each modelled kind (fields, types, quantities) is checked by :mod:`dratwin.api.schema`.

Anything else that claims to be from a group dratwin models (an unknown kind, an unknown version, no
apiVersion or kind) is an :class:`~dratwin.errors.InputError`.
"""

from __future__ import annotations

import copy
import difflib
import enum
import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar, cast

import msgspec
import yaml

from dratwin.api import compute_domain
from dratwin.api.compute_domain import ComputeDomain
from dratwin.api.core import Namespace, Node, Pod, PodSpec
from dratwin.api.karpenter import (
    AWS_GROUP,
    KARPENTER_GROUP,
    EC2NodeClass,
    NodeClaim,
    NodePool,
)
from dratwin.api.kueue import API_VERSION as KUEUE_API_VERSION
from dratwin.api.kueue import (
    CONFIG_API_VERSION,
    CONFIG_GROUP,
    CONFIGURATION,
    KUEUE_KINDS,
    UNMODELLED_KINDS,
    Configuration,
)
from dratwin.api.kueue import GROUP as KUEUE_GROUP
from dratwin.api.kueue import OLDER_VERSIONS as OLDER_KUEUE_VERSIONS
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dratwin.api.schema import MapKey as MapKey  # re-exported: field paths are built with it everywhere
from dratwin.api.yaml_reader import resolve_plain
from dratwin.errors import InputError, ObjectDecodeError

S = TypeVar("S", bound=msgspec.Struct)
V = TypeVar("V")

RESOURCE_GROUP = "resource.k8s.io"


# ---- field paths ---------------------------------------------------------------------------------


def render_path(path: FieldPath) -> str:
    """``("spec", "devices", 0, "attributes", MapKey("a/b"))`` → ``spec.devices[0].attributes[a/b]``."""
    text = ""
    for part in path:
        if isinstance(part, int | MapKey):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


# ---- the registry --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KindInfo:
    """A kind dratwin decodes into a typed struct."""

    api_version: str
    kind: str
    type: type[msgspec.Struct]
    namespaced: bool


class Support(enum.Enum):
    MODELLED = "modelled"
    POD_TEMPLATE = "pod template"
    NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class Classification:
    support: Support
    info: KindInfo | None = None
    template_path: FieldPath = ()
    reason: str = ""


_MODELLED = [
    KindInfo("v1", "Node", Node, False),
    KindInfo("v1", "Pod", Pod, True),
    KindInfo("v1", "Namespace", Namespace, False),
    KindInfo("resource.k8s.io/v1", "DeviceClass", DeviceClass, False),
    KindInfo("resource.k8s.io/v1", "ResourceSlice", ResourceSlice, False),
    KindInfo("resource.k8s.io/v1", "ResourceClaim", ResourceClaim, True),
    KindInfo("resource.k8s.io/v1", "ResourceClaimTemplate", ResourceClaimTemplate, True),
    KindInfo("karpenter.sh/v1", "NodePool", NodePool, False),
    KindInfo("karpenter.sh/v1", "NodeClaim", NodeClaim, False),
    KindInfo("karpenter.k8s.aws/v1", "EC2NodeClass", EC2NodeClass, False),
    KindInfo(compute_domain.API_VERSION, compute_domain.KIND, ComputeDomain, True),
    *(KindInfo(KUEUE_API_VERSION, kind, type_, namespaced) for kind, (type_, namespaced) in KUEUE_KINDS.items()),
    KindInfo(CONFIG_API_VERSION, CONFIGURATION, Configuration, False),
]
KINDS: dict[tuple[str, str], KindInfo] = {(k.api_version, k.kind): k for k in _MODELLED}
# resource.k8s.io v1beta2 (the fields of v1) and v1beta1 (flat requests, `basic` devices) are read as v1:
# dratwin.api.intake converts them as the API server does before anything decodes them.
OLDER_RESOURCE_VERSIONS = ("v1beta2", "v1beta1")
KINDS.update(
    {(f"{RESOURCE_GROUP}/{version}", k.kind): k
     for version in OLDER_RESOURCE_VERSIONS for k in _MODELLED if k.api_version.startswith(RESOURCE_GROUP)}
)
# Kueue's v1beta1 (objects and Configuration) is read as v1beta2: dratwin.api.conversion_kueue converts it.
KINDS.update(
    {(f"{k.api_version.rpartition('/')[0]}/{version}", k.kind): k
     for version in OLDER_KUEUE_VERSIONS for k in _MODELLED
     if k.api_version.rpartition("/")[0] in (KUEUE_GROUP, CONFIG_GROUP)}
)

_TEMPLATE = ("spec", "template", "spec")
POD_TEMPLATES: dict[tuple[str, str], FieldPath] = {
    ("apps/v1", "Deployment"): _TEMPLATE,
    ("apps/v1", "ReplicaSet"): _TEMPLATE,
    ("apps/v1", "StatefulSet"): _TEMPLATE,
    ("apps/v1", "DaemonSet"): _TEMPLATE,
    ("batch/v1", "Job"): _TEMPLATE,
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    ("v1", "ReplicationController"): _TEMPLATE,
    ("v1", "PodTemplate"): ("template", "spec"),
}

# Real kinds of the groups above that dratwin does not model: skipped with a warning, never an error.
_UNMODELLED: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "Binding", "ComponentStatus", "ConfigMap", "Endpoints", "Event", "LimitRange", "PersistentVolume",
            "PersistentVolumeClaim", "ResourceQuota", "Secret", "Service", "ServiceAccount",
        }
    ),
    RESOURCE_GROUP: frozenset({"DeviceTaintRule", "ResourcePoolStatusRequest"}),
    "apps": frozenset({"ControllerRevision"}),
    "batch": frozenset(),
    KARPENTER_GROUP: frozenset({"NodeOverlay"}),  # karpenter.sh/v1alpha1
    AWS_GROUP: frozenset(),
    compute_domain.GROUP: frozenset({"ComputeDomainClique"}),  # the IMEX daemons' own bookkeeping
    KUEUE_GROUP: UNMODELLED_KINDS,
    CONFIG_GROUP: frozenset(),
}
_VERSIONS = {"": {"v1"}, RESOURCE_GROUP: {"v1", *OLDER_RESOURCE_VERSIONS}, "apps": {"v1"}, "batch": {"v1"},
             KARPENTER_GROUP: {"v1"}, AWS_GROUP: {"v1"}, compute_domain.GROUP: {compute_domain.VERSION},
             KUEUE_GROUP: {"v1beta2", *OLDER_KUEUE_VERSIONS}, CONFIG_GROUP: {"v1beta2", *OLDER_KUEUE_VERSIONS}}
# The versions of the kinds above that dratwin does not model, where 1.36 serves them (others are errors).
_UNMODELLED_VERSIONS = {
    (RESOURCE_GROUP, "DeviceTaintRule"): ("v1beta2", "v1alpha3"),
    (RESOURCE_GROUP, "ResourcePoolStatusRequest"): ("v1alpha3",),
    (KARPENTER_GROUP, "NodeOverlay"): ("v1alpha1",),
}


def split_api_version(api_version: str) -> tuple[str, str]:
    """``resource.k8s.io/v1`` → (``resource.k8s.io``, ``v1``); ``v1`` → (``""``, ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def classify(obj: LoadedObject) -> Classification:
    """How dratwin treats an object; InputError when it cannot be a valid object of a group dratwin models."""
    api_version, kind = obj.raw.get("apiVersion"), obj.raw.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        missing = " and ".join(f for f, v in (("apiVersion", api_version), ("kind", kind)) if not v)
        raise InputError(f"{obj.source}: object has no {missing or 'valid apiVersion/kind'}; "
                         f"every Kubernetes object needs both (e.g. apiVersion: resource.k8s.io/v1){_case_hint(obj)}")
    info = KINDS.get((api_version, kind))
    if info is not None:
        return Classification(Support.MODELLED, info)
    template = POD_TEMPLATES.get((api_version, kind))
    if template is not None:
        return Classification(Support.POD_TEMPLATE, template_path=template)
    group, version = split_api_version(api_version)
    if group not in _VERSIONS:
        reason = f'dratwin does not model the API group "{group}"'
        return Classification(Support.NOT_CHECKED, reason=reason)
    if kind in _UNMODELLED[group] and version in _UNMODELLED_VERSIONS.get((group, kind), (version,)):
        return Classification(Support.NOT_CHECKED, reason=f"dratwin does not model {api_version} {kind}")
    known = _known_kinds(group)
    if kind in known and (version not in _VERSIONS[group] or kind in _UNMODELLED[group]):
        raise InputError(f"{obj.source}: {kind}: apiVersion {api_version} is not read by dratwin; "
                         f"{_version_hint(group, kind)}")
    raise InputError(f'{obj.source}: unknown kind "{kind}" in {api_version}{_kind_hint(kind, known)}')


def _known_kinds(group: str) -> set[str]:
    modelled = {k for (av, k) in KINDS if split_api_version(av)[0] == group}
    templated = {k for (av, k) in POD_TEMPLATES if split_api_version(av)[0] == group}
    return modelled | templated | set(_UNMODELLED[group])


def _kind_hint(kind: str, known: set[str]) -> str:
    by_lower = {k.lower(): k for k in known}
    close = by_lower.get(kind.lower()) or next(iter(difflib.get_close_matches(kind, sorted(known), 1)), None)
    if close:
        return f" (did you mean {close}?)"
    return f"; known kinds: {', '.join(sorted(known))}"


def _case_hint(obj: LoadedObject) -> str:
    """`apiversion: v1` is not `apiVersion`: field names are case-sensitive. Say so when that is the cause."""
    found = [f"`{key}` (did you mean {name}?)" for key in obj.raw if isinstance(key, str)
             for name in ("apiVersion", "kind") if key != name and key.lower() == name.lower()]
    return f"; it has {' and '.join(found)}: field names are case-sensitive" if found else ""


def _version_hint(group: str, kind: str) -> str:
    if group == RESOURCE_GROUP and (group, kind) in _UNMODELLED_VERSIONS:
        served = " and ".join(f"{group}/{v}" for v in _UNMODELLED_VERSIONS[(group, kind)])
        return f"Kubernetes 1.36 serves {kind} as {served}"
    if group == RESOURCE_GROUP:
        return ("Kubernetes 1.36 serves it as resource.k8s.io/v1 (and v1beta2, v1beta1, which dratwin converts); "
                "v1alpha3 has only DeviceTaintRule and ResourcePoolStatusRequest since 1.32. From the v1alpha3 "
                "layout move deviceClassName, selectors, allocationMode, count and adminAccess of each request "
                "under `exactly`, and the fields of each device out of `basic`")
    if group == KARPENTER_GROUP:
        return ("use karpenter.sh/v1 (Karpenter 1.0+); from v1beta1 move spec.template.spec.kubelet to the "
                "EC2NodeClass and spec.disruption.expireAfter to spec.template.spec.expireAfter, and give "
                "nodeClassRef a group and kind")
    if group == compute_domain.GROUP:
        return (f"the NVIDIA DRA driver's CRDs serve it as {compute_domain.API_VERSION} only (an old ComputeDomain "
                "of v1alpha1/v25.3 and earlier moves to it unchanged: numNodes and channel)")
    if group in (KUEUE_GROUP, CONFIG_GROUP):
        return f"Kueue serves it as {group}/v1beta2 (and v1beta1, deprecated, which dratwin converts)"
    return f"use {'/'.join(p for p in (group, 'v1') if p)}"


def object_ref(obj: LoadedObject, namespaced: bool | None = None) -> str:
    """``ResourceClaim default/x`` (namespace defaulted like kubectl does) or ``DeviceClass gpu``."""
    if namespaced is None:
        info = KINDS.get((obj.api_version, obj.kind))
        namespaced = info.namespaced if info else bool(obj.namespace) or (obj.api_version, obj.kind) in POD_TEMPLATES
    name = obj.name or "<unnamed>"
    return f"{obj.kind} {obj.namespace or 'default'}/{name}" if namespaced else f"{obj.kind} {name}"


# ---- decoding ------------------------------------------------------------------------------------


class FieldDecodeError(ObjectDecodeError):
    """A field with the wrong type; ``path`` is the field (a FieldPath), ``detail`` says what was expected."""

    def __init__(self, ref: str, path: FieldPath, detail: str) -> None:
        self.ref = ref
        self.path = path
        self.detail = detail
        where = f"{render_path(path)}: " if path else ""
        super().__init__(f"{ref}: {where}{detail}")


def decode(obj: LoadedObject) -> msgspec.Struct:
    """The typed view of a modelled object; FieldDecodeError names the object and the field."""
    info = classify(obj).info
    if info is None:
        raise InputError(f"{obj.source}: {obj.api_version} {obj.kind} is not a kind dratwin decodes")
    return decode_as(obj.raw, info.type, object_ref(obj, info.namespaced))


def decode_as(raw: Any, type_: type[S], ref: str, prefix: FieldPath = ()) -> S:
    """Convert ``raw`` (found at ``prefix`` in the object ``ref``) into ``type_``, as the API server decodes JSON.

    ``null`` counts as absent, like in Go; numbers written as strings and similar are converted
    (``strict=False``).
    """
    if not _holds_any(type_):
        # Decoded as written first: where a null decodes, it is in an optional field and gives its default
        # (None), as absent would; a null anywhere else fails and is read again without the nulls below. Only
        # an ``Any`` field (opaque parameters) would keep a null that stripping drops. Copying every object
        # without its nulls cost a sixth of validating a 60 MB dump.
        try:
            return msgspec.convert(raw, type_, strict=False)
        except msgspec.ValidationError:
            pass
    cleaned = strip_nulls(raw)
    try:
        return msgspec.convert(cleaned, type_, strict=False)
    except msgspec.ValidationError as error:
        path, detail = _locate(cleaned, type_, str(error))
        raise FieldDecodeError(ref, prefix + path, detail) from error


@functools.cache
def _holds_any(type_: type) -> bool:
    """Whether a value of ``type_`` has an ``Any`` field somewhere (arbitrary JSON kept as it is)."""
    return _info_holds_any(msgspec.inspect.type_info(type_), set())


def _info_holds_any(info: msgspec.inspect.Type, seen: set[type]) -> bool:
    if isinstance(info, msgspec.inspect.AnyType):
        return True
    if isinstance(info, msgspec.inspect.StructType):
        if info.cls in seen:
            return False
        seen.add(info.cls)
        return any(_info_holds_any(f.type, seen) for f in info.fields)
    if isinstance(info, msgspec.inspect.UnionType):
        return any(_info_holds_any(t, seen) for t in info.types)
    if isinstance(info, msgspec.inspect.TupleType):
        return any(_info_holds_any(t, seen) for t in info.item_types)
    if isinstance(info, msgspec.inspect.DictType):
        return _info_holds_any(info.key_type, seen) or _info_holds_any(info.value_type, seen)
    if isinstance(info, msgspec.inspect.CollectionType):  # list, set, frozenset, variadic tuple
        return _info_holds_any(info.item_type, seen)
    return False


def copy_raw(value: V) -> V:
    """A deep copy of a decoded manifest, as ``copy.deepcopy`` makes it but four times faster: the dicts and
    lists of JSON and YAML are copied and their scalars shared (immutable), with no memo of what was seen (a
    manifest has no cycles); anything else, which no reader makes, is copied the general way. The
    controllers copy every pod and claim spec. A value that appears twice (a YAML alias) becomes two
    independent copies."""
    return cast(V, _copy_raw(value))


def _copy_raw(value: Any) -> Any:
    """``copy_raw`` untyped: no ``cast`` (a call, and a generic alias built) per dict and list copied."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALAR_TYPES else _copy_raw(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALAR_TYPES else _copy_raw(v) for v in value]
    if kind in _SCALAR_TYPES:
        return value
    return copy.deepcopy(value)


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def strip_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value


_MESSAGE = re.compile(r"^(?P<detail>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")


def _locate(raw: Any, type_: type[msgspec.Struct], message: str) -> tuple[FieldPath, str]:
    """Turn msgspec's ``Expected `int`, got `str` - at `$.a[...].b``` into a path (map keys resolved) and text."""
    match = _MESSAGE.match(message)
    assert match is not None  # the pattern matches every string
    detail = match["detail"].replace("`", "").replace(" | null", "")
    detail = detail[:1].lower() + detail[1:]
    path: list[str | int] = []
    for segment in _SEGMENT.finditer(match["path"] or ""):
        if segment[1] is not None:
            path.append(segment[1])
        elif segment[2] is not None:
            path.append(int(segment[2]))
        else:
            path.append(_failing_key(raw, type_, tuple(path), match["path"] or ""))
    return tuple(path), detail


def _failing_key(raw: Any, type_: type[msgspec.Struct], at: FieldPath, error_path: str) -> MapKey:
    """The key of the map at ``at`` whose entry causes the error (msgspec only says ``[...]``)."""
    mapping = _get(raw, at)
    if not isinstance(mapping, dict):
        return MapKey("...")
    for key in mapping:
        trial = _replace(raw, at, {key: mapping[key]})
        try:
            msgspec.convert(trial, type_, strict=False)
        except msgspec.ValidationError as error:
            if f"`${error_path}`" in str(error):
                return MapKey(str(key))
    return MapKey("...")


def _get(value: Any, path: FieldPath) -> Any:
    for part in path:
        value = value[part]
    return value


def _replace(value: Any, path: FieldPath, new: Any) -> Any:
    if not path:
        return new
    result = copy.copy(value)
    result[path[0]] = _replace(value[path[0]], path[1:], new)
    return result


def pod_spec_of(obj: LoadedObject, template_path: FieldPath) -> PodSpec | None:
    """The pod spec inside a workload (None when the template is absent); FieldDecodeError when malformed."""
    spec: Any = obj.raw
    for part in template_path:
        spec = spec.get(part) if isinstance(spec, dict) else None
    if spec is None:
        return None
    return decode_as(spec, PodSpec, object_ref(obj, True), template_path)


# ---- output --------------------------------------------------------------------------------------


# libyaml's emitter writes the same text as PyYAML's, about 20 times faster (thousands of nodes).
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Block style, no anchors, multi-line strings (CEL expressions) as literal blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_data(self, data: Any) -> yaml.Node:
        """The nodes PyYAML's safe representer makes for plain values, made directly: its generic dispatch
        (per-node type lookups and alias bookkeeping) is most of the time spent writing a large cluster."""
        kind = type(data)
        if kind is str or kind is MapKey:
            return _represent_str(self, data)
        if kind is dict:
            pairs = [(self.represent_data(key), self.represent_data(value)) for key, value in data.items()]
            return yaml.MappingNode(_MAP, pairs, flow_style=False)
        if kind is list:
            return yaml.SequenceNode(_SEQ, [self.represent_data(item) for item in data], flow_style=False)
        if kind is int:
            return yaml.ScalarNode(_INT, str(data))
        if kind is bool:
            return yaml.ScalarNode(_BOOL, "true" if data else "false")
        if data is None:
            return yaml.ScalarNode(_NULL, "null")
        node: yaml.Node = super().represent_data(data)
        return node


_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_INT, _BOOL, _NULL = "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    """Multi-line strings as literal blocks; quoted where the API server's reader would type the plain text
    (``y``, ``n``, ``1e3``, ``0o17``: YAML 1.1 and Go number forms PyYAML's emitter would leave plain)."""
    style = "|" if "\n" in data else ("'" if data and not isinstance(resolve_plain(data), str) else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(MapKey, _represent_str)


def as_list_or_object(raws: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One object as is; several (or none) wrapped in ``kind: List`` the way ``kubectl get -o yaml`` does."""
    if len(raws) == 1:
        return raws[0]
    return {"apiVersion": "v1", "items": list(raws), "kind": "List", "metadata": {"resourceVersion": ""}}


def dump_yaml_documents(raws: Sequence[dict[str, Any]]) -> str:
    """Several objects as multi-document YAML (``---`` between them), written as :func:`dump_yaml` writes one."""
    return "---\n".join(dump_yaml([raw]) for raw in raws)


def dump_yaml(raws: Sequence[dict[str, Any]]) -> str:
    """YAML in block style with keys in the order they were written."""
    text: str = yaml.dump(
        as_list_or_object(raws), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
        allow_unicode=True, width=10_000,
    )
    return text


def dump_json(raws: Sequence[dict[str, Any]]) -> str:
    """JSON indented like ``kubectl get -o json``, keys in the order written."""
    return dump_json_bytes(raws).decode()


def dump_json_bytes(raws: Sequence[dict[str, Any]]) -> bytes:
    """:func:`dump_json`'s text as UTF-8, made without the str (large outputs go to a file as they are)."""
    return format_json_bytes(as_list_or_object(raws)) + b"\n"


def format_json(value: Any, indent: int = 4, default: Callable[[Any], Any] | None = str) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False, default=default)``; see :func:`format_json_bytes`."""
    return format_json_bytes(value, indent, default).decode()


def format_json_bytes(value: Any, indent: int = 4, default: Callable[[Any], Any] | None = str) -> bytes:
    """``json.dumps(value, indent=indent, ensure_ascii=False, default=default)`` as UTF-8, five times faster on
    large values: the standard library's C encoder writes it compactly (its indenting encoder is pure Python),
    and msgspec lays it out (from bytes: from a str it would convert the text twice); the text is the same.
    NaN, which msgspec rightly refuses, takes the slow way. The values are decoded manifests and what dratwin
    builds from them, never cyclic (the loader refuses an alias inside its own anchor): the encoder need not
    keep a memo of every container to find a cycle."""
    try:
        compact = json.dumps(value, ensure_ascii=False, default=default, separators=(",", ":"), check_circular=False)
        return msgspec.json.format(compact.encode(), indent=indent)
    except msgspec.DecodeError:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=default).encode()


_LIST_HEAD = {"apiVersion": "v1"}
_LIST_TAIL = {"kind": "List", "metadata": {"resourceVersion": ""}}


def write_list(objects: Iterable[dict[str, Any]], out: TextIO, output: str = "yaml") -> None:
    """Write ``objects`` as one ``kind: List`` (the text :func:`dump_yaml` / :func:`dump_json` would give),
    one object at a time: memory stays that of one object however many there are."""
    if output == "json":
        _write_json_list(objects, out)
        return
    out.write(dump_yaml([_LIST_HEAD]))
    wrote = False
    for raw in objects:
        if not wrote:
            out.write("items:\n")
            wrote = True
        lines = dump_yaml([raw]).splitlines(keepends=True)
        out.write("- " + lines[0])
        out.write("".join("  " + line if line != "\n" else line for line in lines[1:]))
    if not wrote:
        out.write("items: []\n")
    out.write(dump_yaml([_LIST_TAIL]))


def _write_json_list(objects: Iterable[dict[str, Any]], out: TextIO) -> None:
    out.write('{\n    "apiVersion": "v1",\n    "items": [')
    separator = "\n"
    for raw in objects:
        text = format_json(raw)
        out.write(separator + "        " + text.replace("\n", "\n        "))
        separator = ",\n"
    out.write("\n    ],\n" if separator == ",\n" else "],\n")
    out.write('    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')

"""What the API server takes in: every object checked structurally and converted to v1, once, on load.

Every command reads its objects through here (``validate`` through :func:`read_object`, the others through
:func:`admit`), so nothing later meets a wrong type or an older layout:

1. :func:`~dratwin.api.codec.classify` says what the object is (an unknown kind of a modelled group is an
   :class:`~dratwin.errors.InputError`, as today);
2. the object is checked against the schema of the version it is written in (unknown fields, wrong types,
   bad quantities, fields the CRD requires) and for the fields the API server requires
   (:mod:`dratwin.api.required`);
3. a resource.k8s.io v1beta1/v1beta2 object is converted to v1 (:mod:`dratwin.api.conversion`), with one
   note; a problem found later in the v1 object points at the line the user wrote.

:func:`admit` then decides as ``kubectl apply -f DIR`` does: an object with an error is refused by the API
server, is reported with its file, line and field, and the rest goes on without it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.codec import RESOURCE_GROUP, Support, classify, object_ref, split_api_version, strip_nulls
from dratwin.api.conversion import FLAT_REQUEST_FIELDS, V1, Conversion, convert_to_v1, needs_conversion
from dratwin.api.conversion_kueue import convert_to_v1beta2, needs_kueue_conversion
from dratwin.api.karpenter import KARPENTER_GROUP
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.quantity import Quantity
from dratwin.api.required import missing_fields
from dratwin.api.schema import Issue, IssueKind, builtin_schema, json_kind, walk_structure
from dratwin.api.validation_base import Problem, ProblemKind, Reporter, Severity
from dratwin.api.validation_claims import class_field_hint
from dratwin.api.validation_formats import close_match, did_you_mean
from dratwin.api.validation_karpenter import moved_field_hint
from dratwin.errors import QuantityError


class ConvertedObject(LoadedObject):
    """An object read in an older version, as v1: ``raw`` is the v1 object, lines are those the user wrote."""

    def __init__(self, written: LoadedObject, conversion: Conversion) -> None:
        super().__init__(conversion.raw, written.source)
        self.written = written
        self.conversion = conversion

    def line_of(self, path: FieldPath) -> int:
        return self.written.line_of(self.conversion.original_path(path))


class WithoutNulls(LoadedObject):
    """An object as the API server stores it: its ``null`` fields dropped (the decoder reads them as absent)."""

    def __init__(self, written: LoadedObject) -> None:
        super().__init__(strip_nulls(written.raw), written.source)
        self.written = written

    def line_of(self, path: FieldPath) -> int:
        return self.written.line_of(path)


@dataclass
class ReadObject:
    """One object after intake: its v1 form, its structural problems, and the note of its conversion."""

    obj: LoadedObject  # the v1 form (the object itself when it was written as v1)
    written: LoadedObject
    problems: list[Problem] = field(default_factory=list)
    note: str = ""
    typed: bool = True  # False when a field has a wrong type: the typed view would not be what was written

    @property
    def has_errors(self) -> bool:
        return any(p.is_error for p in self.problems)


def read_object(obj: LoadedObject) -> ReadObject:
    """Check one object structurally and convert it to v1; InputError when it is no object dratwin can judge."""
    how = classify(obj)
    if how.support is Support.NOT_CHECKED:
        return ReadObject(obj, obj)
    namespaced = how.info.namespaced if how.info is not None else True
    sink: list[Problem] = []
    rep = Reporter(obj, object_ref(obj, namespaced), sink)
    root = builtin_schema().kind(obj.api_version, obj.kind)
    issues, nulls = walk_structure(obj.raw, root) if root is not None else ([], False)
    if nulls:  # stored without them, as the API server stores it; the typed views need no null handling then
        obj = WithoutNulls(obj)
    for issue in issues:
        _report(rep, issue)
    read = ReadObject(obj, obj, sink, typed=not any(i.is_type_error for i in issues))
    if obj.kind == "ResourceSlice" and split_api_version(obj.api_version)[0] == RESOURCE_GROUP:
        _warn_alpha_fields(rep, obj.raw)
    if needs_conversion(obj.raw):
        conversion = convert_to_v1(obj.raw)
        read.obj = ConvertedObject(obj, conversion)
        read.note = f"{obj.api_version} {rep.ref} {conversion_note(obj.api_version)}"
    elif needs_kueue_conversion(obj.raw):
        conversion = convert_to_v1beta2(obj.raw)
        read.obj = ConvertedObject(obj, conversion)
        read.note = f"{obj.api_version} {rep.ref} {conversion_note(obj.api_version)}"
    if read.typed:
        converted = Reporter(read.obj, rep.ref, sink)
        for path in missing_fields(read.obj.raw):
            converted.required(path)
    return read


@dataclass
class Admitted:
    """The objects the API server would take, the problems of those it refuses, and the conversion notes."""

    objects: list[LoadedObject]
    rejected: list[ReadObject] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def rejections(self) -> list[str]:
        """One line per error of a refused object: ``FILE:LINE: KIND NS/NAME: FIELD: ...``."""
        return [f"{p} (the API server refuses this object; dratwin goes on without it)"
                for read in self.rejected for p in read.problems if p.is_error]


def admit(objects: Sequence[LoadedObject]) -> Admitted:
    """Read every object; those with structural errors are refused, as ``kubectl apply -f`` refuses them."""
    admitted = Admitted([])
    for obj in objects:
        read = read_object(obj)
        if read.has_errors:
            admitted.rejected.append(read)
            continue
        admitted.objects.append(read.obj)
        if read.note:
            admitted.notes.append(read.note)
    return admitted


# ---- problems ------------------------------------------------------------------------------------

# Fields of the 1.36 API that dratwin does not model (alpha, gate off by default): accepted with a warning.
ALPHA_FIELDS = {"nodeAllocatableResourceMappings": "DRANodeAllocatableResources"}


def _warn_alpha_fields(rep: Reporter, raw: dict[str, Any]) -> None:
    spec = raw.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    for index, device in enumerate(devices if isinstance(devices, list) else []):
        if not isinstance(device, dict):
            continue
        basic = device.get("basic")
        fields: dict[str, Any] = basic if isinstance(basic, dict) else device
        for name, gate in ALPHA_FIELDS.items():
            if fields.get(name) is not None:
                where = ("spec", "devices", index, *(("basic",) if fields is not device else ()), name)
                rep.warn(ProblemKind.NOT_CHECKED, where, f"{name} (alpha, feature gate {gate}) is not modelled by "
                         "dratwin")


def _report(rep: Reporter, issue: Issue) -> None:
    if issue.kind is IssueKind.UNKNOWN_FIELD:
        _unknown_field(rep, issue)
    elif issue.kind is IssueKind.REQUIRED:
        rep.required(issue.path)
    elif issue.kind is IssueKind.BAD_QUANTITY:
        rep.invalid(issue.path, _shown(issue.value), issue.detail, _quantity_hint(issue.value))
    else:
        rep.invalid(issue.path, _shown(issue.value), f"must be {_describe(issue.expected)}, not "
                    f"{_article(json_kind(issue.value))}: the API server cannot decode it", _type_hint(issue))


def _unknown_field(rep: Reporter, issue: Issue) -> None:
    path, known = issue.path, list(issue.known)
    name = str(path[-1])
    parent = path[-3] if len(path) >= 3 else None
    v1_resource = rep.obj.api_version == V1
    if name == "adminAccess" and parent == "firstAvailable":
        rep.forbidden(path, "adminAccess is not supported in subrequests",
                      "use a request with `exactly` and adminAccess: true")
    elif v1_resource and parent == "requests" and close_match(name, FLAT_REQUEST_FIELDS):
        meant = close_match(name, FLAT_REQUEST_FIELDS)
        rep.add(ProblemKind.UNKNOWN_FIELD, path, "resource.k8s.io/v1 has no such field in a request",
                hint=f"did you mean {meant} under `exactly`? resource.k8s.io/v1beta1 wrote it flat")
    elif v1_resource and name == "basic" and parent == "devices":
        rep.add(ProblemKind.UNKNOWN_FIELD, path, "resource.k8s.io/v1 devices have no `basic`",
                hint="move the fields inside `basic` up one level (the v1beta1 layout)")
    else:
        hint = (_moved_hint(rep.obj, path) or class_field_hint(rep.obj.kind, path) or did_you_mean(name, known)
                or f"fields here: {', '.join(known) or 'none'}")
        rep.add(ProblemKind.UNKNOWN_FIELD, path, "the API has no such field here, the API server rejects it",
                hint=hint)


def _moved_hint(obj: LoadedObject, path: FieldPath) -> str:
    group = split_api_version(obj.api_version)[0]
    return moved_field_hint(obj.kind, path) if group == KARPENTER_GROUP else ""


def _shown(value: Any) -> object:
    return value if isinstance(value, str | int | float | bool) else json_kind(value)


_DESCRIPTIONS = {
    "string": "a string", "bool": "a boolean (true or false)", "int32": "an integer (int32)",
    "int64": "an integer (int64)", "float64": "a number", "intOrString": "an integer or a string",
    "time": "a time in RFC 3339 format (e.g. 2026-01-31T12:00:00Z)", "duration": "a duration string (e.g. 30s)",
    "bytes": "a base64 string",
}


def _describe(expected: str) -> str:
    if expected in _DESCRIPTIONS:
        return _DESCRIPTIONS[expected]
    if expected.startswith("[]"):
        return f"a list ({expected})"
    if expected.startswith("map[string]"):
        return f"a mapping ({expected})"
    return f"an object ({expected})"


def _article(kind: str) -> str:
    shown = {"array": "a list", "object": "a mapping", "number": "a number", "bool": "a boolean", "null": "null"}
    return shown.get(kind, "a " + kind)


def _type_hint(issue: Issue) -> str:
    value, expected = issue.value, issue.expected
    if isinstance(value, str) and expected in ("int32", "int64", "float64", "intOrString"):
        return f"write {value.strip()} without quotes" if _is_number(value) else "write a number"
    if isinstance(value, str) and expected == "bool":
        if value.lower() in ("true", "false"):
            return f"write {value.lower()} without quotes"
        return "write true or false"
    if isinstance(value, bool) and expected == "string":
        return "quote the value: YAML reads an unquoted yes, no, on, off, true or false as a boolean"
    if isinstance(value, int | float) and expected in ("string", "duration", "time"):
        return f'quote the value: "{value}"'
    if isinstance(value, list) and not expected.startswith("[]"):
        return "write a mapping (field: value), not a list"
    if not isinstance(value, list) and expected.startswith("[]"):
        return "write a list (one `- ` entry per item)"
    return ""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _quantity_hint(value: Any) -> str:
    if isinstance(value, str):
        try:
            Quantity.parse(value.strip())
        except QuantityError as error:
            text = str(error)
            if "did you mean" in text:
                return text[text.index("did you mean") :]
        except ValueError:
            pass
    return "a quantity is a number with an optional suffix, e.g. 80Gi, 500m, 2 or 1e3"


def structural_problems(objects: Sequence[LoadedObject]) -> list[Problem]:
    """Every structural problem and conversion note of ``objects`` (for callers that only need those)."""
    found: list[Problem] = []
    for obj in objects:
        read = read_object(obj)
        found += read.problems
        if read.note:
            found.append(note_problem(read))
    return found


def conversion_note(api_version: str) -> str:
    group, _ = split_api_version(api_version)
    if group not in (RESOURCE_GROUP, ""):
        return (f"read as {group}/v1beta2, converted as Kueue's conversion webhook does (printed as v1beta2); "
                f"{api_version} is deprecated: write v1beta2 (e.g. spec.cohortName, spec.admissionChecksStrategy)")
    return (f"read as {V1} (the API server converts it; printed as v1); a 1.36 API server serves {api_version} "
            "only where --runtime-config enables it")


def note_problem(read: ReadObject) -> Problem:
    """A conversion note as a warning of ``validate`` (the object is fine, but it is read as v1)."""
    obj = read.written
    return Problem(Severity.WARNING, obj.source.path, obj.line_of(("apiVersion",)), object_ref(obj), "apiVersion",
                   ProblemKind.CONVERTED, conversion_note(obj.api_version), json.dumps(obj.api_version))


"""What validation reports (Problem) and the small machinery every rule module shares.

Problems read like the API server's field errors (``spec.x: Invalid value: 0: must be ...``) with the
file, line and object in front, and a hint where dratwin can tell what was meant.
"""

from __future__ import annotations

import contextlib
import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dratwin.api.codec import object_ref, render_path
from dratwin.api.driver_shapes import Publications
from dratwin.api.duplicates import Replacement, render_field
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.quantity import Quantity
from dratwin.api.validation_formats import LONG_TEXT, did_you_mean, shorten, shorten_words
from dratwin.errors import QuantityError


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


class ProblemKind(enum.StrEnum):
    """The kinds of field errors, worded as Kubernetes words them (plus dratwin's own last three)."""

    REQUIRED = "Required value"
    INVALID = "Invalid value"
    UNSUPPORTED = "Unsupported value"
    TOO_MANY = "Too many"
    TOO_LONG = "Too long"
    DUPLICATE = "Duplicate value"
    FORBIDDEN = "Forbidden"
    NOT_FOUND = "Not found"
    UNKNOWN_FIELD = "Unknown field"
    NOT_CHECKED = "Not checked"
    CONVERTED = "Converted"  # read in an older version, converted to v1 as the API server does
    NOT_READ = "Not read"  # a file that cannot be read or parsed


@dataclass(frozen=True)
class Problem:
    """One thing wrong (error) or worth knowing (warning) about one object."""

    severity: Severity
    file: str
    line: int
    object: str
    field: str
    kind: ProblemKind
    message: str
    value: str | None = None
    hint: str = ""

    def __post_init__(self) -> None:
        # Every message shortens what it echoes: a 1,000,000-character name would otherwise be printed whole.
        for name in ("object", "field", "message", "hint"):
            object.__setattr__(self, name, shorten_words(getattr(self, name)))
        if self.value is not None and len(self.value) > LONG_TEXT:
            object.__setattr__(self, "value", _shorten_value(self.value))

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def describe(self) -> str:
        """``field: Kind: value: message (hint)``, the part after the object."""
        kind = self.kind.value if self.object or self.field else ""  # a whole file: its message says it all
        parts = [p for p in (self.field, kind, self.value, self.message) if p]
        text = ": ".join(parts)
        return f"{text} ({self.hint})" if self.hint else text

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        level = "warning: " if self.severity is Severity.WARNING else ""
        about = f"{self.object}: " if self.object else ""
        return f"{where}: {level}{about}{self.describe()}"

    def to_dict(self) -> dict[str, Any]:
        """For JSON output; ``value`` is the offending value itself (null when there is none)."""
        value: Any = self.value
        if value is not None:
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        return {
            "severity": self.severity.value, "file": self.file, "line": self.line, "object": self.object,
            "field": self.field, "type": self.kind.value, "value": value, "message": self.message,
            "hint": self.hint,
        }


def _shorten_value(value: str) -> str:
    """A long JSON value (``"aaaa..."``) shortened inside its quotes, so it still reads as a string."""
    if value.startswith('"') and value.endswith('"'):
        with contextlib.suppress(ValueError):
            return json.dumps(shorten(json.loads(value)), ensure_ascii=False)
    return shorten(value)


def kind_problem(obj: LoadedObject, error: Exception) -> Problem:
    """An object whose apiVersion or kind dratwin cannot judge (missing, unknown), as an error of that object."""
    text = str(error)
    prefix = f"{obj.source}: "
    message = text[len(prefix):] if text.startswith(prefix) else text
    missing = [name for name in ("apiVersion", "kind") if not isinstance(obj.raw.get(name), str) or not obj.raw[name]]
    if missing:
        kind, field_name = ProblemKind.REQUIRED, missing[0]
    else:
        kind = ProblemKind.UNSUPPORTED
        field_name = "apiVersion" if message.startswith(f"{obj.kind}: apiVersion") else "kind"
    return Problem(Severity.ERROR, obj.source.path, obj.line_of((field_name,)), object_ref(obj), field_name, kind,
                   message)


def replacement_problem(replacement: Replacement) -> Problem:
    """A repeated object: a warning when the later definition replaces the earlier one, an error when the API
    server refuses the update."""
    later = replacement.later
    severity = Severity.ERROR if replacement.refused else Severity.WARNING
    return Problem(severity, later.source.path, later.line_of(replacement.field), object_ref(later),
                   render_field(replacement.field), ProblemKind.DUPLICATE, replacement.describe())


class SelectorCompilerLike(Protocol):
    """What validation needs from ``dratwin.cel.SelectorCompiler``: ``compile`` raising CelCompileError."""

    def compile(self, expression: str) -> object: ...


class AdviceLike(Protocol):
    """One finding of ``dratwin.cel.advice``: level error or warning, a message, a hint, an offset or -1."""

    @property
    def level(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def hint(self) -> str: ...
    @property
    def offset(self) -> int: ...


@runtime_checkable
class SelectorAdvisorLike(Protocol):
    """A compiler that also says why a selector that compiles cannot work (``SelectorCompiler.advise``)."""

    def compile(self, expression: str) -> object: ...
    def advise(self, expression: str, publications: Publications) -> Sequence[AdviceLike]: ...


class FeatureGatesLike(Protocol):
    """The feature gates validation looks at (``dratwin.allocator.features.Features`` has them all)."""

    @property
    def prioritized_list(self) -> bool: ...
    @property
    def device_taints(self) -> bool: ...
    @property
    def partitionable_devices(self) -> bool: ...
    @property
    def consumable_capacity(self) -> bool: ...
    @property
    def binding_conditions(self) -> bool: ...
    @property
    def list_type_attributes(self) -> bool: ...
    @property
    def extended_resource(self) -> bool: ...


@dataclass(frozen=True)
class DefaultGates:
    """Kubernetes 1.36 defaults, used when the caller passes no gates."""

    prioritized_list: bool = True
    device_taints: bool = True
    partitionable_devices: bool = True
    consumable_capacity: bool = True
    binding_conditions: bool = True
    list_type_attributes: bool = False
    extended_resource: bool = True


@dataclass
class Context:
    """What one validation run shares between objects."""

    compiler: SelectorCompilerLike | None
    gates: FeatureGatesLike
    cel_results: dict[str, Exception | None] = field(default_factory=dict)
    # Selectors that compiled, for the checks that need every ResourceSlice of the input.
    selectors: list[tuple[Reporter, FieldPath, str]] = field(default_factory=list)
    # extendedResourceName -> DeviceClass, from the input's classes (for hints on deviceClassName).
    extended_resources: dict[str, str] = field(default_factory=dict)


_NO_VALUE = object()


def format_value(value: object) -> str:
    """A value the way the API server prints it in a field error: strings quoted, true/false, null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Quantity):
        return json.dumps(str(value))
    return json.dumps(value, ensure_ascii=False, default=str)


class Reporter:
    """Collects the problems of one object; every method takes the field path as a tuple."""

    def __init__(self, obj: LoadedObject, ref: str, sink: list[Problem]) -> None:
        self.obj = obj
        self.ref = ref
        self.sink = sink

    def add(
        self,
        kind: ProblemKind,
        path: FieldPath,
        message: str = "",
        value: object = _NO_VALUE,
        hint: str = "",
        severity: Severity = Severity.ERROR,
    ) -> None:
        shown = None if value is _NO_VALUE else format_value(value)
        self.sink.append(
            Problem(severity, self.obj.source.path, self.obj.line_of(path), self.ref, render_path(path), kind,
                    message, shown, hint)
        )

    def warn(self, kind: ProblemKind, path: FieldPath, message: str, hint: str = "") -> None:
        self.add(kind, path, message, hint=hint, severity=Severity.WARNING)

    def required(self, path: FieldPath, message: str = "", hint: str = "") -> None:
        self.add(ProblemKind.REQUIRED, path, message, hint=hint)

    def invalid(self, path: FieldPath, value: object, message: str, hint: str = "") -> None:
        self.add(ProblemKind.INVALID, path, message, value, hint)

    def invalid_all(self, path: FieldPath, value: object, messages: list[str], hint: str = "") -> bool:
        """One Invalid problem listing every message; False when there was nothing to report."""
        if messages:
            self.invalid(path, value, "; ".join(messages), hint)
        return bool(messages)

    def unsupported(self, path: FieldPath, value: str, supported: list[str], hint: str = "") -> None:
        listed = ", ".join(json.dumps(s) for s in supported)
        self.add(ProblemKind.UNSUPPORTED, path, f"supported values: {listed}", value,
                 hint or did_you_mean(value, supported))

    def too_many(self, path: FieldPath, count: int, limit: int, what: str = "items") -> None:
        self.add(ProblemKind.TOO_MANY, path, f"must have at most {limit} {what}", count)

    def too_long(self, path: FieldPath, limit: int, length: int, unit: str = "characters") -> None:
        self.add(ProblemKind.TOO_LONG, path, f"may not be more than {limit} {unit} (has {length})")

    def duplicate(self, path: FieldPath, value: object, message: str = "", hint: str = "") -> None:
        self.add(ProblemKind.DUPLICATE, path, message, value, hint)

    def forbidden(self, path: FieldPath, message: str, hint: str = "") -> None:
        self.add(ProblemKind.FORBIDDEN, path, message, hint=hint)

    def not_found(self, path: FieldPath, value: object, message: str, hint: str = "") -> None:
        self.add(ProblemKind.NOT_FOUND, path, message, value, hint)

    def quantity(self, path: FieldPath, value: object) -> Quantity | None:
        """Parse a quantity field; report it and return None when it is not a valid quantity."""
        try:
            if not isinstance(value, str | int | float):
                raise QuantityError(f"{value!r} is not a quantity")
            return Quantity.parse(value)
        except QuantityError as error:
            text = str(error)
            hint = text[text.index("did you mean") :] if "did you mean" in text else ""
            self.invalid(path, value, "must be a quantity: a number with an optional suffix such as 80Gi, "
                         "500m, 2k or 1e3", hint)
            return None
        except ValueError:  # a valid quantity the parser cannot read yet (the exa suffix "E"): not the user's fault
            return None

"""The structural check of a scenario file: every unknown field, wrong type and missing field at once.

msgspec stops at the first problem it meets, and a user fixing a file wants them all; so the file is first
walked against the msgspec types of :mod:`dratwin.scenario.format` (their ``msgspec.inspect`` description,
nothing written per field), and decoded by msgspec only when the walk found nothing. As in the API server's
strict decoding, ``null`` is the same as an absent field.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import msgspec.inspect as mi

from dratwin.api.loader import FieldPath
from dratwin.api.schema import MapKey
from dratwin.api.validation_base import ProblemKind
from dratwin.api.validation_formats import did_you_mean


@dataclass(frozen=True)
class Finding:
    """One structural problem, at a field path of the file's document."""

    kind: ProblemKind
    path: FieldPath
    message: str
    hint: str = ""
    value: object = None


@functools.cache
def _info(cls: type[msgspec.Struct]) -> mi.Type:
    return mi.type_info(cls)


def check_structure(value: Any, cls: type[msgspec.Struct]) -> list[Finding]:
    """Every structural problem of ``value`` (a decoded YAML document) against the format type ``cls``."""
    return list(_walk(value, _info(cls), ()))


def _walk(value: Any, expected: mi.Type, path: FieldPath) -> Iterator[Finding]:
    if value is None or isinstance(expected, mi.AnyType):
        return
    if isinstance(expected, mi.UnionType):
        yield from _union(value, expected, path)
    elif isinstance(expected, mi.StructType):
        yield from _struct(value, expected, path)
    elif isinstance(expected, mi.ListType):
        if not isinstance(value, list):
            yield _wrong(value, expected, path)
            return
        for index, item in enumerate(value):
            yield from _walk(item, expected.item_type, (*path, index))
    elif isinstance(expected, mi.DictType):
        if not isinstance(value, dict):
            yield _wrong(value, expected, path)
            return
        for key, item in value.items():
            yield from _walk(item, expected.value_type, (*path, MapKey(str(key))))
    elif isinstance(expected, mi.LiteralType):
        allowed = [str(v) for v in expected.values]
        if not isinstance(value, str) or value not in allowed:
            listed = ", ".join(f'"{v}"' for v in sorted(allowed))
            yield Finding(ProblemKind.UNSUPPORTED, path, f"supported values: {listed}",
                          did_you_mean(str(value), allowed), value)
    elif not _scalar_fits(value, expected):
        yield _wrong(value, expected, path)


def _struct(value: Any, expected: mi.StructType, path: FieldPath) -> Iterator[Finding]:
    if not isinstance(value, dict):
        yield _wrong(value, expected, path)
        return
    fields = {f.encode_name: f for f in expected.fields}
    for key, item in value.items():
        field = fields.get(key) if isinstance(key, str) else None
        if field is None:
            hint = did_you_mean(str(key), fields) or f"known fields: {', '.join(sorted(fields))}"
            yield Finding(ProblemKind.UNKNOWN_FIELD, (*path, str(key)), f'unknown field "{key}"', hint)
            continue
        yield from _walk(item, field.type, (*path, key))
    for field in expected.fields:
        if field.required and value.get(field.encode_name) is None:
            yield Finding(ProblemKind.REQUIRED, (*path, field.encode_name), f"{field.encode_name} is required")


def _union(value: Any, expected: mi.UnionType, path: FieldPath) -> Iterator[Finding]:
    choices = [t for t in expected.types if not isinstance(t, mi.NoneType)]
    structs = [t for t in choices if isinstance(t, mi.StructType)]
    for choice in choices:  # the choice of the value's own JSON type is judged as that type
        if _same_shape(value, choice):
            if isinstance(choice, mi.LiteralType) and value not in choice.values and structs:
                fields = ", ".join(f.encode_name for f in structs[0].fields)
                hint = did_you_mean(value, [str(v) for v in choice.values]) or f"or a mapping of: {fields}"
                yield Finding(ProblemKind.INVALID, path, f"must be {describe(expected)}", hint, value)
                return
            yield from _walk(value, choice, path)
            return
    yield _wrong(value, expected, path)


def _same_shape(value: Any, expected: mi.Type) -> bool:
    if isinstance(expected, mi.StructType | mi.DictType):
        return isinstance(value, dict)
    if isinstance(expected, mi.ListType):
        return isinstance(value, list)
    if isinstance(expected, mi.LiteralType):
        return isinstance(value, str)
    return _scalar_fits(value, expected)


def _scalar_fits(value: Any, expected: mi.Type) -> bool:
    if isinstance(expected, mi.StrType):
        return isinstance(value, str)
    if isinstance(expected, mi.BoolType):
        return isinstance(value, bool)
    if isinstance(expected, mi.IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(expected, mi.FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


def _wrong(value: Any, expected: mi.Type, path: FieldPath) -> Finding:
    wanted = describe(expected)
    hint = ""
    if "string" in wanted and isinstance(value, int | float) and not isinstance(value, bool):
        hint = f'quote it, with its unit where it has one: "{value}s" for a time, "{value}" otherwise'
    elif "a mapping" in wanted and isinstance(value, str):
        hint = "indent its fields below it (key: value lines)"
    return Finding(ProblemKind.INVALID, path, f"must be {wanted}, not {_shape(value)}", hint, value)


def describe(expected: mi.Type) -> str:
    """What a type is, for a message: ``a string``, ``a list of mappings``, ``a string or a mapping``."""
    if isinstance(expected, mi.UnionType):
        return " or ".join(describe(t) for t in expected.types if not isinstance(t, mi.NoneType))
    if isinstance(expected, mi.StructType | mi.DictType):
        return "a mapping"
    if isinstance(expected, mi.ListType):
        return f"a list of {describe(expected.item_type).removeprefix('a ').removeprefix('an ')}s"
    if isinstance(expected, mi.LiteralType):
        return "one of " + ", ".join(f'"{v}"' for v in expected.values)
    return {mi.StrType: "a string", mi.BoolType: "true or false", mi.IntType: "a whole number",
            mi.FloatType: "a number"}.get(type(expected), "a value")


def _shape(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"

"""Turning cel-cpp's messages into dratwin's errors, with hints for the usual mistakes.

A compile failure arrives as ``RuntimeError("INVALID_ARGUMENT: ERROR: <input>:L:C: text\\n | src\\n
| ..^\\nERROR: ...")``: one ``ERROR:`` entry per problem with a 1-based line and column, the source
line and a caret. The parser sometimes adds ``<input>:-1:-1: <<nil>> parsetree``, which says nothing
and is dropped. A runtime failure is an error *value* whose text starts with a status code
(``NOT_FOUND: Key not found in map : "memory"``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from dratwin.cel.environment import DEVICE_FIELDS
from dratwin.cel.source import ATTRIBUTE, CAPACITY, Path

_ENTRY = re.compile(r"ERROR: <input>:(-?\d+):(-?\d+): ")
_STATUS = re.compile(r"^[A-Z_]+: ")
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")
_MISSING_KEY = re.compile(r'Key not found in map : "((?:[^"\\]|\\.)*)"')

# Kubernetes CEL libraries dratwin does not model, by the names a selector would use.
UNSUPPORTED_LIBRARIES: dict[str, str] = {
    **dict.fromkeys(
        ["url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery"],
        "the Kubernetes URL library",
    ),
    **dict.fromkeys(
        [
            "ip",
            "isIP",
            "cidr",
            "isCIDR",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "containsIP",
            "containsCIDR",
            "prefixLength",
            "masked",
            "isCanonical",
        ],
        "the Kubernetes IP/CIDR library",
    ),
    **dict.fromkeys(
        ["authorizer", "serviceAccount", "subresource", "allowed", "errored", "fieldSelector", "labelSelector"],
        "the Kubernetes authz library (it has no authorizer to ask in a device selector anyway)",
    ),
    **dict.fromkeys(
        ["format", "dns1123Label", "dns1123Subdomain", "named", "validate"], "the Kubernetes format library"
    ),
    **dict.fromkeys(["mul", "div", "divInt"], "the quantity arithmetic beyond add/sub"),
    "quote": "strings.quote() of the strings library; call it as strings.quote(s)",
    "exists_one": "two-variable exists_one (use existsOne(i, v, ...))",
}
# Functions Kubernetes declares as global only (sign(q) works, q.sign() does not compile).
GLOBAL_FUNCTIONS = frozenset({"sign", "quantity", "isQuantity", "semver", "isSemver"})
KNOWN_FUNCTIONS = [
    *("quantity", "isQuantity", "compareTo", "isGreaterThan", "isLessThan", "add", "sub", "sign", "asInteger"),
    *("isInteger", "asApproximateFloat", "semver", "isSemver", "major", "minor", "patch", "isSorted", "sum"),
    *("min", "max", "indexOf", "lastIndexOf", "includes", "find", "findAll", "matches", "startsWith"),
    *("endsWith", "contains", "size", "exists", "all", "existsOne", "map", "filter", "has", "charAt"),
    *("lowerAscii", "upperAscii", "replace", "split", "substring", "trim", "join", "orValue", "hasValue"),
]


@dataclass(frozen=True)
class CompileFailure:
    message: str
    line: int
    column: int
    hint: str


def parse_compile_error(expression: str, text: str) -> CompileFailure:
    """The first real problem of a cel-cpp compile error, with its position and a hint."""
    entries: list[tuple[int, int, str]] = []
    starts = list(_ENTRY.finditer(text))
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[match.end() : end].split("\n", 1)[0].strip()
        body = re.sub(r"\s*\[[A-Z_]+\]$", "", body).replace(" (in container '')", "")
        if "<<nil>> parsetree" in body:
            continue
        entries.append((int(match.group(1)), int(match.group(2)), body))
    if not entries:
        return CompileFailure(_STATUS.sub("", text.strip()), 0, 0, "")
    line, column, message = entries[0]
    others = [body for _, _, body in entries[1:] if body != message]
    hint = compile_hint(expression, message, line, column)
    if others and not hint:
        message = f"{message} (and {len(others)} more)"
    return CompileFailure(message, max(line, 0), max(column, 0), hint)


def compile_hint(expression: str, message: str, line: int, column: int) -> str:
    undeclared = _UNDECLARED.search(message)
    if undeclared:
        return _undeclared_hint(undeclared.group(1))
    overload = _NO_OVERLOAD.search(message)
    if overload:
        return _overload_hint(overload.group(1), overload.group(2))
    at = _offset(expression, line, column)
    if "token recognition error at: '=" in message or (
        "Syntax error" in message and expression[at : at + 1] == "=" and expression[at : at + 2] != "=="
    ):
        return "use == to compare; a single = is not a CEL operator"
    found = re.search(r"(?:mismatched|extraneous) input '(and|or|not)'", message)
    if found:
        return {"and": "use && instead of and", "or": "use || instead of or", "not": "use ! instead of not"}[
            found.group(1)
        ]
    if "Syntax error" in message and "'<EOF>'" in message:
        return "the expression ends too early: check for an unclosed bracket, quote or a trailing operator"
    return ""


def _undeclared_hint(name: str) -> str:
    fields = ", ".join(f"device.{f}" for f in DEVICE_FIELDS)
    if name == "device":
        return (
            f"device on its own is not supported by dratwin; use its fields: {fields} "
            '(e.g. device.attributes["gpu.example.com"].model)'
        )
    if name.startswith("device."):
        wrong = name.split(".", 2)[1]
        close = difflib.get_close_matches(wrong, DEVICE_FIELDS, n=1, cutoff=0.6)
        if close:
            return f"did you mean device.{close[0]}?"
        return f"device has only the fields {fields}"
    if name in UNSUPPORTED_LIBRARIES:
        return f"{name}() belongs to {UNSUPPORTED_LIBRARIES[name]}, which is not supported by dratwin"
    if name in GLOBAL_FUNCTIONS:
        return f"{name} is a function, not a method: write {name}(x), not x.{name}()"
    if name in KNOWN_FUNCTIONS:
        return f"{name}() exists, but not in this form: check what it is called on and its arguments"
    close = difflib.get_close_matches(name, KNOWN_FUNCTIONS, n=1, cutoff=0.75)
    if close:
        return f"did you mean {close[0]}?"
    return f'the only variable is device; if {name} is a value, quote it: "{name}"'


def _overload_hint(function: str, types: str) -> str:
    if function in GLOBAL_FUNCTIONS:
        return f"{function} is a function, not a method: write {function}(x), not x.{function}()"
    if "kubernetes.Quantity" in types:
        if function in ("_<_", "_>_", "_<=_", "_>=_"):
            return (
                "quantities are compared with a.compareTo(b) (or isGreaterThan/isLessThan), e.g. "
                'device.capacity["d"].memory.compareTo(quantity("40Gi")) >= 0'
            )
        return 'write the other side as a quantity, e.g. quantity("40Gi")'
    if "kubernetes.Semver" in types:
        if function in ("_<_", "_>_", "_<=_", "_>=_"):
            return "versions are compared with a.compareTo(b) (or isGreaterThan/isLessThan)"
        return 'write the other side as a version, e.g. semver("1.2.3")'
    if (
        function in ("_<_", "_>_", "_<=_", "_>=_", "_==_", "_!=_")
        and "int" in types
        and ("uint" in types or "double" in types)
    ):
        return "dratwin's checker does not compare literals of different numeric types; write both alike (1 vs 1.0)"
    return ""


def _offset(expression: str, line: int, column: int) -> int:
    lines = expression.split("\n")
    if line < 1 or line > len(lines):
        return -1
    return sum(len(text) + 1 for text in lines[: line - 1]) + column - 1


def offset_position(expression: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a 0-based offset."""
    before = expression[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


# ---- runtime -------------------------------------------------------------------------------------


def strip_status(text: str) -> str:
    return _STATUS.sub("", text, count=1)


def runtime_failure(text: str, lookups: tuple[Path, ...], present: Callable[[Path], bool]) -> tuple[str, str]:
    """(message, hint) for a CEL error value; missing attributes are named with their domain."""
    missing = _MISSING_KEY.search(text)
    if missing:
        key = missing.group(1)
        for kind, domain, ident in lookups:
            if kind in (ATTRIBUTE, CAPACITY) and ident == key and not present((kind, domain, ident)):
                return _missing_path(kind, domain, ident)
        return (
            f"no such key: {key!r}",
            "guard the lookup with has(...) or the optional form m[?key].orValue(...); note that dratwin "
            "adds an empty map for an unknown domain only when the domain is written as a string literal",
        )
    message = strip_status(text)
    if "No matching overloads" in message or "no such overload" in message:
        return message, "a value has another type than the expression expects (check the attribute's type)"
    return message, ""


def _missing_path(kind: str, domain: str, ident: str) -> tuple[str, str]:
    what = "attribute" if kind == ATTRIBUTE else "capacity"
    base = f'device.{kind}["{domain}"]'
    select = f".{ident}" if re.fullmatch(r"[_a-zA-Z][_a-zA-Z0-9]*", ident) else f'["{ident}"]'
    optional = f".?{ident}" if select.startswith(".") else f'[?"{ident}"]'
    return (
        f'device has no {what} "{ident}" in domain "{domain}"',
        f"guard it: has({base}{select}), or use {base}{optional}.orValue(...)",
    )

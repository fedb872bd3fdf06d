"""The exact YAML reader: libyaml's event stream turned into plain values, without recursion, within bounds.

Values are typed as the API server's YAML reader (sigs.k8s.io/yaml over go-yaml v2) types them
(:func:`resolve_plain`: ``yes`` is true, ``0x1F`` is 31, ``1e3`` a float, an unquoted timestamp stays a string;
tags other than the standard ones are ignored), and what it does beyond that is reproduced:

- map keys become strings (``1`` → ``"1"``, ``true`` → ``"true"``); a null or a collection as a key is an error;
- a key written twice in one mapping is an error (kubectl decodes strictly);
- nesting deeper than :data:`MAX_DEPTH` levels is an error (go-yaml stops at 10,000; dratwin lower, so
  that no later step can run out of stack);
- alias expansion is capped by go-yaml's rule ("document contains excessive aliasing"): past 1,000 decoded
  nodes and 100 from aliases, at most 99 % of them may come from aliases, falling to 10 % at 4,000,000.

Positions are optional (``positions=True``): the line of every field, for error messages. Every error is an
:class:`~dratwin.errors.InputError` that names the file, line and column.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from dratwin.errors import InputError

FieldPath = tuple[str | int, ...]

MAX_DEPTH = 256
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000

_STR = "tag:yaml.org,2002:str"

_Parser: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present


@dataclass(frozen=True)
class Region:
    """Where one node was written: character offsets, and the 1-based line and 0-based column it starts at."""

    start: int
    end: int
    line: int
    column: int


@dataclass
class Document:
    """One YAML document: its value, the line its root starts on, and (when asked) the line of every field."""

    value: Any
    line: int
    lines: dict[FieldPath, int] = field(default_factory=dict)
    items: list[Region] | None = None  # the regions of the root's ``items`` entries (List kinds), when asked


class _Frame:
    __slots__ = ("anchor", "container", "count", "height", "is_map", "key", "key_line", "line", "merges", "path",
                 "region")

    def __init__(self, container: dict[str, Any] | list[Any], path: FieldPath, anchor: str | None,
                 line: int, region: tuple[int, int, int] | None) -> None:
        self.container = container
        self.is_map = isinstance(container, dict)
        self.path = path
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.key_line = 0
        self.count = 1
        self.height = 1
        self.merges: list[Any] = []
        self.line = line
        self.region = region  # (start index, line, column) when this is a List item whose extent is recorded


_NO_KEY = object()
_MERGE_KEY = object()


def read_documents(
    text: str, origin: str, *, positions: bool = False, first_line: int = 1, item_regions: bool = False
) -> Iterator[Document]:
    """Every document of ``text``; ``first_line`` is the line ``text`` starts on in its file."""
    reader = _Reader(origin, positions, first_line - 1, item_regions)
    try:
        events = yaml.parse(text, Loader=_Parser)
        yield from reader.run(events)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or str(error)
        lines = text.split("\n", mark.line + 1) if mark is not None else []
        line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""  # the mark may be at the end
        hint = " (YAML indents with spaces, never tabs)" if "\t" in line else _hint(problem)
        raise InputError(f"{reader.where(mark)}: not valid YAML: {problem}{hint}") from error
    except yaml.YAMLError as error:  # a reader error: a character YAML does not allow
        position = getattr(error, "position", None)
        where = f"{origin}:{_line_at(text, position) + first_line - 1}" if position is not None else origin
        reason = getattr(error, "reason", None) or str(error)
        raise InputError(f"{where}: not valid YAML: {reason} (is it a text file in UTF-8?)") from error


def _hint(problem: str) -> str:
    if "nesting depth" in problem:
        return f" (dratwin reads objects nested at most {MAX_DEPTH} levels deep)"
    return ""


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


class _Reader:
    """Builds values from events with an explicit stack; one instance per text."""

    def __init__(self, origin: str, positions: bool, line_offset: int, item_regions: bool) -> None:
        self.origin = origin
        self.positions = positions
        self.line_offset = line_offset
        self.item_regions = item_regions
        self.lines: dict[FieldPath, int] = {}
        self.items: list[Region] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, nodes decoded, height
        self.decoded = 0
        self.from_aliases = 0

    def where(self, mark: Any) -> str:
        if mark is None:
            return self.origin
        return f"{self.origin}:{mark.line + 1 + self.line_offset}:{mark.column + 1}"

    def fail(self, mark: Any, message: str) -> InputError:
        return InputError(f"{self.where(mark)}: {message}")

    def run(self, events: Iterator[Any]) -> Iterator[Document]:
        frames: list[_Frame] = []
        root: list[tuple[Any, int]] = []
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                self._count(event, 1, 0)
                self._attach(frames, root, event, self._scalar(event, frames), 1, 1, event.anchor)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                self._open(frames, event, kind is yaml.MappingStartEvent)
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                self._close(frames, root, event)
            elif kind is yaml.AliasEvent:
                self._alias(frames, root, event)
            elif kind is yaml.DocumentStartEvent:
                self.lines, self.items, self.anchors, root = {}, [], {}, []
                self.decoded = self.from_aliases = 0
            elif kind is yaml.DocumentEndEvent and root:
                value, line = root[0]
                items = self.items if self.item_regions else None
                yield Document(value, line, self.lines if self.positions else {}, items)

    # ---- nodes -------------------------------------------------------------------------------------

    def _open(self, frames: list[_Frame], event: Any, is_map: bool) -> None:
        self._count(event, 1, 0)
        parent = frames[-1] if frames else None
        if parent is not None and parent.is_map and parent.key is _NO_KEY:
            raise self.fail(event.start_mark, "a mapping key must be a single value (a string, number or boolean), "
                            "not a collection; the API server's YAML reader refuses complex keys")
        if len(frames) >= MAX_DEPTH:
            raise self.fail(event.start_mark, f"nested deeper than {MAX_DEPTH} levels; dratwin reads objects "
                            f"nested at most {MAX_DEPTH} levels deep (no Kubernetes object comes close)")
        path = self._child_path(parent) if parent is not None else ()
        line = event.start_mark.line + 1 + self.line_offset
        region = None
        if self.item_regions and len(frames) == 2 and path[:1] == ("items",) and parent is not None \
                and not parent.is_map:
            region = (event.start_mark.index, line, event.start_mark.column)
        container: dict[str, Any] | list[Any] = {} if is_map else []
        frames.append(_Frame(container, path, event.anchor, line, region))

    def _close(self, frames: list[_Frame], root: list[tuple[Any, int]], event: Any) -> None:
        frame = frames.pop()
        value: Any = frame.container
        if frame.merges:
            value = _merged(frame.merges, value)
        if frame.region is not None:
            start, line, column = frame.region
            self.items.append(Region(start, event.end_mark.index, line, column))
        self._attach(frames, root, event, value, frame.count, frame.height, frame.anchor, frame.line)

    def _alias(self, frames: list[_Frame], root: list[tuple[Any, int]], event: Any) -> None:
        target = self.anchors.get(event.anchor)
        if target is None:
            raise self.fail(event.start_mark, f"unknown anchor {event.anchor!r}: define it with &{event.anchor} first")
        value, count, height = target
        self._count(event, 1 + count, count)
        if len(frames) + height - 1 >= MAX_DEPTH and isinstance(value, dict | list):
            raise self.fail(event.start_mark, f"the alias *{event.anchor} nests deeper than {MAX_DEPTH} levels")
        self._attach(frames, root, event, _copy(value), 1 + count, height, None)

    def _count(self, event: Any, nodes: int, from_aliases: int) -> None:
        """go-yaml's guard against alias bombs, applied as each node is decoded."""
        self.decoded += nodes
        self.from_aliases += from_aliases
        if self.from_aliases > 100 and self.decoded > 1000 and \
                self.from_aliases / self.decoded > _allowed_alias_ratio(self.decoded):
            raise self.fail(event.start_mark, "document contains excessive aliasing: its aliases expand to "
                            f"{self.from_aliases:,} of {self.decoded:,} values (as the API server, dratwin refuses "
                            "such alias bombs; write the values out)")

    def _attach(self, frames: list[_Frame], root: list[tuple[Any, int]], event: Any, value: Any, count: int,
                height: int, anchor: str | None, line: int = 0) -> None:
        line = line or event.start_mark.line + 1 + self.line_offset
        if anchor is not None:
            self.anchors[anchor] = (value, count, height)
        if not frames:
            root.append((value, line))
            if self.positions:
                self.lines[()] = line
            return
        parent = frames[-1]
        parent.count += count
        parent.height = max(parent.height, height + 1)
        if not parent.is_map:
            items = parent.container
            assert isinstance(items, list)
            if self.positions:
                self.lines[(*parent.path, len(items))] = line
            items.append(value)
            return
        if parent.key is _NO_KEY:
            self._take_key(parent, event, value)
            return
        key, parent.key = parent.key, _NO_KEY
        if key is _MERGE_KEY:
            if not _mergeable(value):
                raise self.fail(event.start_mark, "a merge key (<<) takes a mapping or a list of mappings")
            parent.merges.append(value)
            return
        mapping = parent.container
        assert isinstance(mapping, dict)
        mapping[key] = value
        if self.positions:
            self.lines[(*parent.path, key)] = parent.key_line  # a field is where its key is written

    def _take_key(self, frame: _Frame, event: Any, value: Any) -> None:
        if value is _MERGE_KEY:
            frame.key = _MERGE_KEY
            return
        key = _key_string(value)
        if key is None:
            raise self.fail(event.start_mark, f"a mapping key must be a string, number or boolean, not "
                            f"{_describe(value)}; the API server's YAML reader refuses it (quote the key)")
        mapping = frame.container
        assert isinstance(mapping, dict)
        if key in mapping:
            raise self.fail(event.start_mark, f"key {key!r} already set in this mapping (kubectl refuses a key "
                            "written twice; keep one)")
        frame.key = key
        frame.key_line = event.start_mark.line + 1 + self.line_offset

    def _child_path(self, parent: _Frame) -> FieldPath:
        if parent.is_map:
            return (*parent.path, parent.key if isinstance(parent.key, str) else "<<")
        return (*parent.path, len(parent.container))

    # ---- scalars -----------------------------------------------------------------------------------

    def _scalar(self, event: Any, frames: list[_Frame]) -> Any:
        value: str = event.value
        tag = event.tag
        if not event.style and tag is None:
            if value == "<<" and frames and frames[-1].is_map and frames[-1].key is _NO_KEY:
                return _MERGE_KEY
            resolved = resolve_plain(value)
        elif tag is None or tag in ("!", _STR) or not tag.startswith(_TAG_PREFIX):
            return value  # quoted, or a tag go-yaml does not resolve: the text as written
        else:
            resolved = self._tagged(event, tag[len(_TAG_PREFIX):], value)
        if isinstance(resolved, float) and not math.isfinite(resolved):
            raise self.fail(event.start_mark, f"{value} is not a number JSON can carry (the API server receives "
                            "JSON, which has no infinity or NaN); quote it to make it a string")
        return resolved

    def _tagged(self, event: Any, tag: str, value: str) -> Any:
        """An explicit standard tag, as go-yaml applies it (``!!int "7"`` is 7; ``!!int foo`` is an error)."""
        if tag == "binary":
            try:
                return base64.b64decode(value.encode("ascii"), validate=False).decode("utf-8", "replace")
            except (binascii.Error, UnicodeEncodeError) as error:
                raise self.fail(event.start_mark, "!!binary value contains invalid base64 data") from error
        if tag not in ("int", "float", "bool", "null", "timestamp"):
            return value
        resolved = resolve_plain(value)
        if tag == "float" and isinstance(resolved, int) and not isinstance(resolved, bool):
            return float(resolved)
        expected = {"int": int, "float": float, "bool": bool, "null": type(None), "timestamp": str}[tag]
        if not isinstance(resolved, expected) or (tag == "int" and isinstance(resolved, bool)):
            raise self.fail(event.start_mark, f"cannot decode {value!r} as a !!{tag}")
        return resolved


_TAG_PREFIX = "tag:yaml.org,2002:"
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_INT = re.compile(r"[-+]?(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)|0(?P<legacy>[0-7]*)"
                     r"|(?P<dec>[1-9][0-9]*))")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
                        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?")
_INT64 = 2**63
_UINT64 = 2**64


def resolve_plain(text: str) -> Any:
    """A plain scalar as go-yaml v2 (the API server's YAML reader) types it: YAML 1.1 booleans and nulls,
    Go integer syntax (``0x1F``, ``0o17``, ``017``, ``1_000``), floats (``1e3``, ``.5``); an unquoted timestamp
    stays a string (go-yaml keeps it so for untyped values); everything else is a string."""
    if text in _WORDS:
        return _WORDS[text]
    first = text[0]
    if first == ".":
        return float(text) if _DOT_FLOAT.fullmatch(text) else text
    if not (first.isdigit() or first in "+-"):
        return text
    if _TIMESTAMP.fullmatch(text):
        return text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _GO_FLOAT.fullmatch(plain):
        value = float(plain)
        return value if math.isfinite(value) else text  # Go's ParseFloat refuses out-of-range values
    return text


def _go_int(plain: str) -> int | None:
    match = _GO_INT.fullmatch(plain)
    if match is None:
        return None
    digits, base = next((match[group], base) for group, base in (("hex", 16), ("oct", 8), ("bin", 2), ("legacy", 8),
                                                                 ("dec", 10)) if match[group] is not None)
    value = int(digits or "0", base) * (-1 if plain.startswith("-") else 1)
    if -_INT64 <= value < _UINT64 and not (value >= _INT64 and plain[0] in "+-"):
        return value
    return None


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def _mergeable(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and all(isinstance(v, dict) for v in value))


def _merged(merges: list[Any], explicit: dict[str, Any]) -> dict[str, Any]:
    """YAML merge keys as PyYAML applies them: keys written in the mapping win, then earlier sources."""
    pairs: list[tuple[str, Any]] = []
    for source in merges:
        for mapping in reversed(source) if isinstance(source, list) else [source]:
            pairs.extend(mapping.items())
    pairs.extend(explicit.items())
    return dict(pairs)


def _copy(value: Any) -> Any:
    """A deep copy of plain values without recursion (an alias gives each use its own value, as in Go)."""
    if not isinstance(value, dict | list):
        return value
    result: dict[str, Any] | list[Any] = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, result)]
    while stack:
        source, target = stack.pop()
        entries = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in entries:
            if isinstance(item, dict | list):
                child: dict[str, Any] | list[Any] = {} if isinstance(item, dict) else []
                stack.append((item, child))
                item = child
            if isinstance(target, dict):
                target[key] = item
            else:
                target.append(item)
    return result


def _key_string(value: Any) -> str | None:
    """A key as sigs.k8s.io/yaml turns it into a JSON object key; None when it cannot be one."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float32_string(value)
    return None


def go_float32_string(value: float) -> str:
    """A float key written as Go's ``strconv.FormatFloat(f, 'g', -1, 32)`` writes it (``.inf`` for infinity)."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    single = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent = text.split("e")
    exp = int(exponent)
    significant = mantissa.replace(".", "").replace("-", "").rstrip("0") or "0"
    sign = "-" if single < 0 else ""
    if exp < -4 or exp >= 6:  # Go switches to an exponent at 1e6 for the shortest form
        return f"{sign}{significant[0]}{'.' + significant[1:] if len(significant) > 1 else ''}e{exp:+03d}"
    return sign + _plain_decimal(significant, exp)


def _plain_decimal(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    whole, fraction = digits[: exp + 1], digits[exp + 1:]
    return whole.ljust(exp + 1, "0") + (f".{fraction}" if fraction else "")


def _describe(value: Any) -> str:
    return "null" if value is None else type(value).__name__

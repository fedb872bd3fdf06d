"""The fast YAML path for large inputs: a native parser (rapidyaml) that emits JSON, decoded by msgspec, used
only where it reads exactly what the exact reader (:mod:`dratwin.api.yaml_reader`) reads.

rapidyaml types plain scalars as JSON does (``017``, ``0x1F``, ``yes``, ``True`` stay strings) and ignores
tags, anchors and merge keys, where go-yaml (and so the exact reader) does not. Every such case is looked for
with whole-buffer byte operations that run at memory speed: indicator characters that begin a token in the
source, and, in the emitted JSON, the strings go-yaml would have typed (``"yes"``, ``"0x1F"``, ...). When one
may be present, or the native parser fails in any way, the caller reads the text with the exact reader.
Kubernetes dumps (``kubectl get -o yaml``) contain none of them: kubectl quotes every string a YAML reader
could mistake. One difference is not looked for: a map key written as a number in a form JSON lacks
(``1.0:``, ``0x10:``, ``1e3:``) stays as written, where go-yaml would write ``"1"``, ``"16"``, ``"1000"``.

Measured on a 60 MB ``kind: List`` of 2,500 p5.48xlarge nodes and their slices (2 cores, bench/RESULTS.md):
PyYAML ``CSafeLoader`` about 45 s, libyaml's events alone 4-8 s, yaml-rs 4.9 s, rapidyaml + msgspec 3.1 s.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import ryml

FAST_MIN_CHARS = 256 * 1024  # below this the exact reader takes well under a second
_MAX_INDICATORS = 20_000  # past this many indicator characters to inspect, the exact reader is as quick

_SAFE = bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("A"), ord("Z") + 1)) + b"0123456789 \n-._/:'()=,;$^+~\"#"
_RISKY_UNICODE = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")
_INDICATORS = b"!&*?%<@`[]{}|>"
_SEPARATORS = b" \n,[{"
_STRUCTURE = (b"\n" + b" " * 200, b"- - ", b"\n...\n", b"\n... ", b"\n--- ")  # deep nesting, document ends
_ADJACENT = (re.compile(rb"':[^ \n]"), re.compile(rb'":[^ \n]'))  # "a":b, a JSON-style key YAML 1.1 reads apart

# Plain values go-yaml types and rapidyaml leaves strings: YAML 1.1 booleans, nulls and infinities, and Go's
# number syntax beyond JSON's (``017``, ``0x1F``, ``+1``, ``1_000``); looked for after ": " and "- ".
_WORDS = rb"(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|~|Null|NULL" \
    rb"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))"
_GO_NUMBER = rb"(?:[-+]?0[0-9_xXoObB][0-9a-fA-F_.]*|\+[0-9.][0-9a-fA-F_.]*|[-+]?[0-9][0-9]*_[0-9_.]*)"
_TYPED_VALUES = tuple(re.compile(prefix + rb"(?:" + _WORDS + b"|" + _GO_NUMBER + rb")[ ]*(?:\n|#)")
                      for prefix in (rb": +", rb"- +"))
# Keys go-yaml types (then sigs.k8s.io/yaml writes them as "true"/"false", or refuses a null): looked for in
# the emitted JSON, where every key is written exactly as ``"WORD":``. One pass of a pattern that starts with a
# literal quote; in the source each word needed a pass of its own and a look at every ``generation:`` and
# ``memory:`` that ends like one (a quarter of loading). A quoted key is found too: read by the exact reader.
_KEY_WORDS = ("y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "true",
              "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~")
_TYPED_KEY = re.compile('"(?:' + "|".join(re.escape(w) for w in sorted(_KEY_WORDS, key=len, reverse=True)) + ')":')


def is_plain_text(data: bytes) -> bool:
    """Whether the source (UTF-8, with a leading newline) has nothing rapidyaml reads differently in it (but
    keys go-yaml types, which :func:`_parse` finds in the JSON)."""
    rest = data.translate(None, _SAFE)
    if rest and not _only_safe_extras(data, rest):
        return False
    if any(pattern in data for pattern in _STRUCTURE):
        return False
    return not any(pattern.search(data) for pattern in (*_ADJACENT, *_TYPED_VALUES))


def _only_safe_extras(data: bytes, rest: bytes) -> bool:
    """The characters left after the safe ones: non-ASCII text, and indicators that do not start a token."""
    ascii_rest = rest.translate(None, bytes(range(0x80, 0x100)))
    if ascii_rest.translate(None, _INDICATORS):  # tabs, CR, control characters, backslashes
        return False
    if _RISKY_UNICODE.search(rest) or len(ascii_rest) > _MAX_INDICATORS:
        return False
    for char in set(ascii_rest):
        index = data.find(bytes([char]))
        while index >= 0:
            if _starts_token(data, index):
                return False
            index = data.find(bytes([char]), index + 1)
    return True


def _starts_token(data: bytes, index: int) -> bool:
    """Whether the indicator at ``index`` begins a YAML token the native parser might read differently."""
    char, before, after = data[index], data[index - 1], data[index + 1: index + 3]
    if char in b"]}":
        return False  # a closer: the opener decides
    if char == ord("%"):
        return before == ord("\n")
    if before not in _SEPARATORS:
        return False
    if char == ord("?"):
        return after[:1] in (b"", b" ", b"\n")
    if char == ord("<"):
        return after[:1] == b"<"
    if char in b"[{":
        return after[:1] != (b"]" if char == ord("[") else b"}")
    if char in b"|>":
        return any(c in b"123456789" for c in after)  # an explicit indentation indicator
    return True  # ! tag, & anchor, * alias, @ and ` reserved


def has_dropped_keys(json: str, value: Any) -> bool:
    """Whether decoding dropped a key written twice (JSON keeps the last; kubectl refuses the file).

    Every key ends in ``":`` in both encodings, and a ``":`` inside a string is escaped alike in both, so
    the counts differ exactly when a key was dropped."""
    return json.count('":') != msgspec.json.encode(value).count(b'":')


@dataclass(frozen=True)
class FastDocument:
    """One document read by the native parser: its value and where its text lies (character offsets)."""

    value: Any
    start: int
    end: int
    line: int  # of the root's first content line
    first_line: int  # the line ``start`` is on


_CONTENT = re.compile(r"^(?!---(?:[ \n]|$))[ ]*[^ \n#]", re.M)


def read_fast(text: str) -> list[FastDocument] | None:
    """Every document of ``text`` read natively; None when the exact reader must read it."""
    if len(text) < FAST_MIN_CHARS:
        return None
    data = b"\n" + text.encode("utf-8")
    if not is_plain_text(data):
        return None
    documents: list[FastDocument] = []
    starts = [0] + [index + 1 for index in _line_starts(text, "---", 0, len(text))]
    line = 1
    with _quiet_stderr():
        for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
            region = text[start:end]
            content = _CONTENT.search(region)
            value = _parse(region) if content is not None else None  # only a marker and comments: empty
            if start > 0 and content is not None and value is not _FAILED:  # after "---": the stream, one document
                value = value[0] if isinstance(value, list) and len(value) == 1 else _FAILED
            if value is _FAILED or (value is not None and not isinstance(value, dict)):
                return None  # the exact reader says what is wrong, and where
            if value is not None or content is not None or start > 0:  # an empty document still counts
                first = line + (region.count("\n", 0, content.start()) if content else 0)
                documents.append(FastDocument(value, start, end, first, line))
            line += region.count("\n")
    return documents


_FAILED = object()


def _parse(region: str) -> Any:
    try:
        tree = ryml.parse_in_arena(region.encode("utf-8"))
        json: str = ryml.emit_json_malloc(tree, tree.root_id())
        del tree
        value = msgspec.json.decode(json)
    except (ryml.ExceptionBasic, msgspec.DecodeError, RecursionError, ValueError, TypeError, RuntimeError):
        return _FAILED
    if has_dropped_keys(json, value) or _TYPED_KEY.search(json):
        return _FAILED
    return value


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml prints its own errors to the process's stderr before raising; the exact reader reports them
    properly, so that text is discarded while the native parser runs."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def list_items(text: str, document: FastDocument, count: int) -> list[tuple[int, int, int, int]] | None:
    """Where each of the ``count`` entries of a ``kind: List`` document's block sequence ``items`` is written:
    (start, end, line, column) of the entry after its dash; None for any layout but the plain one."""
    region = text[document.start:document.end]
    key = _ITEMS_KEY.search(region)
    if key is None:
        return None
    first = _FIRST_ITEM.search(region, key.end())
    if first is None:
        return None
    indent = len(first[1])
    closer = "|".join([*(" " * k + r"[^ \n#]" for k in range(indent)), " " * indent + r"[^ \n#-]"])
    stop = re.compile(f"^(?:{closer})", re.M).search(region, first.start())
    end = stop.start() if stop else len(region)
    starts = [index + 1 for index in _line_starts(region, " " * indent + "-", first.start() - 1, end)]
    if len(starts) != count:
        return None
    items, line, previous = [], document.first_line, 0
    for index, start in enumerate(starts):
        line += region.count("\n", previous, start)
        previous = start
        stop_at = starts[index + 1] if index + 1 < len(starts) else end
        items.append((document.start + start + indent + 1, document.start + stop_at, line, indent + 1))
    return items


_ITEMS_KEY = re.compile(r"^items:[ ]*\n", re.M)
_FIRST_ITEM = re.compile(r"^( *)-(?=[ \n])", re.M)


def _line_starts(text: str, prefix: str, start: int, end: int) -> Iterator[int]:
    """The newlines in ``text[start:end]`` followed by ``prefix`` and then a space or a line end (a literal
    search, many times quicker than a multi-line regular expression on large texts)."""
    needle = "\n" + prefix
    index = text.find(needle, start, end)
    while index >= 0:
        after = text[index + len(needle): index + len(needle) + 1]
        if after in ("", " ", "\n"):
            yield index
        index = text.find(needle, index + 1, end)

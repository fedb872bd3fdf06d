"""Reading Kubernetes objects from files: multi-document YAML, JSON, ``kind: List``, directories.

Every object remembers where it came from (file, document, line) and can tell the line of each field, so
that validation can point at the exact place. Objects stay plain dicts here (``raw``); typed views are
decoded from them on demand (:mod:`dratwin.api.codec`), and output is produced from the raw dicts,
so no field a user wrote is ever dropped on a round trip.

Values are read as the API server's YAML reader reads them (:mod:`dratwin.api.yaml_reader`). Large texts
take a native fast path when nothing in them reads differently there (:mod:`dratwin.api.yaml_fast`); JSON
is decoded by msgspec. Field lines are needed only when a problem is reported, so they are found then, by
reading again just the object's own text (:meth:`LoadedObject.line_of`).
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from dratwin.api import yaml_fast
from dratwin.api.yaml_reader import MAX_DEPTH, read_documents
from dratwin.api.yaml_reader import FieldPath as FieldPath
from dratwin.errors import InputError

YAML_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class SourceLocation:
    """Where an object was read: a file path (or ``-``), the 0-based document index and a 1-based line."""

    path: str
    document: int = 0
    line: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass
class LoadedObject:
    """One Kubernetes object as written, with where it came from."""

    raw: dict[str, Any]
    source: SourceLocation
    lines: dict[FieldPath, int] = field(default_factory=dict, repr=False)
    locate: Callable[[], dict[FieldPath, int]] | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return str(self.raw.get("kind") or "")

    @property
    def api_version(self) -> str:
        return str(self.raw.get("apiVersion") or "")

    @property
    def name(self) -> str:
        meta = self.raw.get("metadata")
        return str(meta.get("name") or "") if isinstance(meta, dict) else ""

    @property
    def namespace(self) -> str:
        meta = self.raw.get("metadata")
        return str(meta.get("namespace") or "") if isinstance(meta, dict) else ""

    @property
    def ref(self) -> str:
        """``Kind ns/name`` or ``Kind name``, for messages."""
        key = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {key or '<unnamed>'}"

    def line_of(self, path: FieldPath) -> int:
        """The line of the deepest part of ``path`` that exists in the source; the object's own line else."""
        if self.locate is not None:
            locate, self.locate = self.locate, None
            self.lines = {**locate(), **self.lines}
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line:
                return line
        return self.source.line


def load_paths(paths: Sequence[str], recursive: bool = False) -> list[LoadedObject]:
    """Load every object from files and directories (``-`` is standard input), in a stable order.

    Like ``kubectl -f DIR``, a directory's own ``.yaml``/``.yml``/``.json`` files are read (its
    subdirectories too with ``recursive``, like ``kubectl -R``), in sorted order. Raises
    :class:`InputError` for a missing or unparsable file. An input without any object is not an error
    here: :mod:`dratwin.api.input_set` judges the whole input (one empty file among others is fine).
    """
    objects: list[LoadedObject] = []
    for path in paths:
        for file in _expand(path, recursive):
            objects.extend(load_text(_read(file), file))
    return objects


def expand_path(path: str, recursive: bool = False) -> list[str]:
    """The files ``load_paths`` reads for one path: the path itself, or a directory's files in order."""
    return list(_expand(path, recursive))


def load_text(text: str, origin: str = "<input>") -> list[LoadedObject]:
    """Load every object of one YAML or JSON text (several documents, or ``kind: List``)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark, as editors on Windows write it
    objects: list[LoadedObject] = []
    with _collector_paused():
        for index, document in enumerate(_documents(text, origin)):
            if document.value is not None:
                objects.extend(_unwrap(document, SourceLocation(origin, index, document.line)))
    return objects


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading builds millions of containers and no cycles; the cyclic collector would walk them all again
    and again (a third of the time on a 60 MB dump), so it waits until the objects are built."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Document:
    """A document's value, and how to find its objects' lines: ``lines`` read already, or ``locate`` on demand
    (``items`` gives each ``kind: List`` entry's own locator and line)."""

    value: Any
    line: int
    lines: dict[FieldPath, int] = field(default_factory=dict)
    locate: Callable[[], dict[FieldPath, int]] | None = None
    items: list[tuple[int, Callable[[], dict[FieldPath, int]]]] | None = None


def _documents(text: str, origin: str) -> Iterator[_Document]:
    if text.lstrip()[:1] in ("{", "["):
        document = _json_document(text, origin)
        if document is not None:
            yield document
            return
    fast = yaml_fast.read_fast(text)
    if fast is not None:
        yield from (_fast_document(text, origin, doc) for doc in fast)
        return
    small = len(text) < yaml_fast.FAST_MIN_CHARS
    for index, doc in enumerate(read_documents(text, origin, positions=small, item_regions=not small)):
        if small:
            yield _Document(doc.value, doc.line, doc.lines)
            continue
        whole = _WholeText(text, origin, index)
        items = None
        if doc.items is not None and _is_list(doc.value) and len(doc.items) == len(doc.value["items"]):
            items = [(r.line, _region_locator(text, origin, r.start, r.end, r.line, r.column)) for r in doc.items]
        yield _Document(doc.value, doc.line, locate=whole.lines, items=items)


def _json_document(text: str, origin: str) -> _Document | None:
    """A JSON object decoded natively; None when it is not JSON (YAML reads it, with positions for errors)."""
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(value, dict) or _depth_exceeds(value, MAX_DEPTH):
        return None
    whole = _WholeText(text, origin, 0)
    line = text[: len(text) - len(text.lstrip())].count("\n") + 1
    items = None
    if _is_list(value):  # each entry's line is needed at once: where the exact reader finds it
        try:
            regions = next(read_documents(text, origin, item_regions=True)).items or []
        except (InputError, StopIteration):
            regions = []
        if len(regions) == len(value["items"]):
            items = [(r.line, _region_locator(text, origin, r.start, r.end, r.line, r.column)) for r in regions]
    return _Document(value, line, locate=whole.lines, items=items)


def _fast_document(text: str, origin: str, doc: yaml_fast.FastDocument) -> _Document:
    locate = _region_locator(text, origin, doc.start, doc.end, doc.first_line, 0)
    items = None
    if _is_list(doc.value):
        regions = yaml_fast.list_items(text, doc, len(doc.value["items"]))
        if regions is None:  # an unusual layout: the exact reader finds where each entry is
            regions = [(r.start, r.end, r.line, r.column) for r in
                       next(read_documents(text[doc.start:doc.end], origin, first_line=doc.first_line,
                                           item_regions=True)).items or []]
            regions = [(doc.start + start, doc.start + end, line, column) for start, end, line, column in regions]
        if len(regions) == len(doc.value["items"]):
            items = [(line, _region_locator(text, origin, start, end, line, column))
                     for start, end, line, column in regions]
    return _Document(doc.value, doc.line, locate=locate, items=items)


def _region_locator(text: str, origin: str, start: int, end: int, line: int,
                    column: int) -> Callable[[], dict[FieldPath, int]]:
    """Reads one object's own text again, with positions, when a field's line is first asked for."""

    def locate() -> dict[FieldPath, int]:
        try:
            region = " " * column + text[start:end]
            found = next(read_documents(region, origin, positions=True, first_line=line), None)
        except InputError:
            return {}
        return found.lines if found is not None else {}

    return locate


class _WholeText:
    """The lines of one document of a large text, read once for all its objects when first needed."""

    def __init__(self, text: str, origin: str, index: int) -> None:
        self.text, self.origin, self.index = text, origin, index
        self.found: dict[FieldPath, int] | None = None

    def lines(self) -> dict[FieldPath, int]:
        if self.found is None:
            self.found = {}
            try:
                for index, doc in enumerate(read_documents(self.text, self.origin, positions=True)):
                    if index == self.index:
                        self.found = doc.lines
                        break
            except InputError:
                pass
            self.text = ""
        return self.found


def _is_list(value: Any) -> bool:
    kind = value.get("kind") if isinstance(value, dict) else None
    return isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _expand(path: str, recursive: bool) -> Iterator[str]:
    if path == "-":
        yield path
        return
    candidate = Path(path)
    if candidate.is_dir():
        walk = candidate.rglob("*") if recursive else candidate.glob("*")
        files = sorted(p for p in walk if p.is_file() and p.suffix in YAML_SUFFIXES)
        if not files:
            deeper = "" if recursive else " (use -R to read its subdirectories too)"
            raise InputError(f"{path}: directory holds no .yaml, .yml or .json file{deeper}")
        yield from (str(p) for p in files)
    elif candidate.is_file():
        yield path
    else:
        raise InputError(f"{path}: no such file or directory")


def _read(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{file}: cannot read: byte {error.start} is not UTF-8 ({error.reason}); Kubernetes "
                         "manifests are UTF-8 text (is it a binary file?)") from error
    except OSError as error:
        raise InputError(f"{file}: cannot read: {error.strerror or error}") from error


def _unwrap(document: _Document, source: SourceLocation) -> Iterator[LoadedObject]:
    value = document.value
    if not isinstance(value, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), found {_kind_of(value)}")
    if not _is_list(value):
        yield LoadedObject(value, source, document.lines, document.locate)
        return
    items = value["items"]
    if document.items is not None:
        for item, (line, locate) in zip(items, document.items, strict=True):
            yield from _unwrap(_Document(item, line, locate=locate), SourceLocation(source.path, source.document, line))
        return
    per_item = _split_item_lines(document.lines, len(items))
    for index, item in enumerate(items):
        lines = per_item[index]
        line = lines.get((), source.line)
        yield from _unwrap(_Document(item, line, lines, document.locate and _item_of(document.locate, index)),
                           SourceLocation(source.path, source.document, line))


def _split_item_lines(lines: dict[FieldPath, int], count: int) -> list[dict[FieldPath, int]]:
    """The lines of each ``items`` entry, relative to it, in one pass over the document's lines."""
    per_item: list[dict[FieldPath, int]] = [{} for _ in range(count)]
    for path, line in lines.items():
        if len(path) >= 2 and path[0] == "items" and isinstance(path[1], int) and path[1] < count:
            per_item[path[1]][path[2:]] = line
    return per_item


def _item_of(locate: Callable[[], dict[FieldPath, int]], index: int) -> Callable[[], dict[FieldPath, int]]:
    def item_lines() -> dict[FieldPath, int]:
        return {path[2:]: line for path, line in locate().items() if path[:2] == ("items", index)}

    return item_lines


def _kind_of(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), type(value).__name__)

"""Reading Kubernetes objects from files: multi-document YAML, JSON, ``kind: List``, directories.

Every object remembers where it came from (file, document, line) and the line of each field, so that
validation can point at the exact place. Objects stay plain dicts here (``raw``); typed views are
decoded from them on demand (:mod:`dratwin.api.codec`), and output is produced from the raw dicts,
so no field a user wrote is ever dropped on a round trip.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dratwin.errors import InputError

FieldPath = tuple[str | int, ...]
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
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line:
                return line
        return self.source.line


def load_paths(paths: Sequence[str], recursive: bool = False) -> list[LoadedObject]:
    """Load every object from files and directories (``-`` is standard input), in a stable order.

    Like ``kubectl -f DIR``, a directory's own ``.yaml``/``.yml``/``.json`` files are read (its
    subdirectories too with ``recursive``, like ``kubectl -R``), in sorted
    order. Raises :class:`InputError` for a missing or unparsable file.
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
    objects: list[LoadedObject] = []
    for index, (value, lines, line) in enumerate(_documents(text, origin)):
        if value is None:
            continue
        source = SourceLocation(origin, index, line)
        objects.extend(_unwrap(value, lines, source, ()))
    return objects


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
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{file}: cannot read: {error}") from error


def _documents(text: str, origin: str) -> Iterator[tuple[Any, dict[FieldPath, int], int]]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            pass  # YAML is a superset of JSON; the YAML parser gives a better position on errors.
        else:
            if not isinstance(value, list):
                json_lines = _json_lines(text)
                yield value, json_lines, json_lines.get((), 1)
                return
    try:
        for node in yaml.compose_all(text, Loader=_KubeYamlLoader):
            if node is None:
                continue
            lines: dict[FieldPath, int] = {}
            yield _construct(node, (), lines), lines, node.start_mark.line + 1
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise InputError(f"{origin}{where}: not valid YAML: {problem}") from error


def _json_lines(text: str) -> dict[FieldPath, int]:
    """The line of every field of a JSON document (read through the YAML parser, which keeps positions)."""
    lines: dict[FieldPath, int] = {}

    def walk(node: yaml.Node, path: FieldPath) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                walk(value_node, (*path, str(key_node.value)))
                lines[(*path, str(key_node.value))] = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))

    try:
        root = yaml.compose(text, Loader=_KubeYamlLoader)
    except yaml.YAMLError:
        return lines  # valid JSON that YAML 1.1 does not read (rare escapes): no positions, still loaded
    if root is not None:
        walk(root, ())
    return lines


_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 5x faster


class _KubeYamlLoader(_BaseLoader):  # type: ignore[valid-type, misc]
    """YAML 1.1 as kubectl reads it: an unquoted timestamp stays a string (the API has no date type)."""


_KubeYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SCALAR_LOADER = _KubeYamlLoader("")


def _construct(node: yaml.Node, path: FieldPath, lines: dict[FieldPath, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        _reject_duplicate_keys(node)
        _SCALAR_LOADER.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = _construct(key_node, (), {})
            key_path = (*path, str(key))
            result[key] = _construct(value_node, key_path, lines)
            lines[key_path] = key_node.start_mark.line + 1  # a field is where its key is written
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, index), lines) for index, item in enumerate(node.value)]
    return _SCALAR_LOADER.construct_object(node, deep=True)


def _reject_duplicate_keys(node: yaml.MappingNode) -> None:
    """kubectl refuses a key written twice in one mapping; PyYAML would silently keep the last one."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = _construct(key_node, (), {})
        if not isinstance(key, str | int | float | bool):
            continue
        if key in seen:
            raise yaml.MarkedYAMLError(problem=f"key {key!r} already set in this mapping",
                                       problem_mark=key_node.start_mark)
        seen.add(key)


def _unwrap(
    value: Any, lines: dict[FieldPath, int], source: SourceLocation, prefix: FieldPath
) -> Iterator[LoadedObject]:
    if not isinstance(value, dict):
        raise InputError(f"{source}: expected a Kubernetes object (a mapping), found {type(value).__name__}")
    kind = value.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list):
        for index, item in enumerate(value["items"]):
            item_prefix = (*prefix, "items", index)
            size = len(item_prefix)
            item_lines = {path[size:]: line for path, line in lines.items() if path[:size] == item_prefix}
            line = lines.get(item_prefix, source.line)
            yield from _unwrap(item, item_lines, SourceLocation(source.path, source.document, line), ())
        return
    yield LoadedObject(value, source, lines)

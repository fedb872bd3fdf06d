"""The objects of ``-f PATH ...`` as ``kubectl apply -f`` would send them, for every command.

- Files are read in the order given, a directory's files in sorted order (:func:`dratwin.api.loader.load_paths`).
- A file that a directory brought in but that holds no Kubernetes objects is skipped with a warning:
  Helm values and chart metadata (mappings without ``apiVersion`` and ``kind``), a Helm template that is
  not YAML (``{{ ... }}``), a kustomization, a document that is a list of strings or a number. Directories
  of manifests often hold such files, and ``kubectl apply -f`` users keep them next to the manifests. A
  file named on the command line is taken at its word: what is wrong with it is an error.
- The same object given twice is resolved as ``kubectl apply`` resolves it (:mod:`dratwin.api.duplicates`).

:func:`read_inputs` does the reading (the only I/O here); with ``keep_going`` a file that cannot be
read or parsed becomes an error note and the other files are still read (``validate``), otherwise it
raises :class:`~dratwin.errors.InputError` as before (``schedule``, ``plan``, ...).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dratwin.api.duplicates import Merged, merge_duplicates
from dratwin.api.loader import LoadedObject, expand_path, load_paths
from dratwin.errors import InputError

# Files that are known not to be manifests, by name, with what to do instead.
_KNOWN_FILES = {
    "values.yaml": "Helm chart values", "values.yml": "Helm chart values",
    "chart.yaml": "Helm chart metadata", "chart.yml": "Helm chart metadata",
    "kustomization.yaml": "a Kustomization", "kustomization.yml": "a Kustomization",
}


class NoteLevel(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class FileNote:
    """Something about a whole file (or the whole input): skipped, unreadable, empty."""

    level: NoteLevel
    file: str
    line: int
    message: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        level = "warning: " if self.level is NoteLevel.WARNING else ""
        text = f"{where}: {level}{self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass
class InputSet:
    """What was read: every object in input order, notes about files, and the files objects came from."""

    objects: list[LoadedObject] = field(default_factory=list)
    notes: list[FileNote] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # every file and path met, in reading order

    @property
    def unreadable(self) -> bool:
        """Nothing could be read at all: every path failed."""
        return not self.files and any(n.level is NoteLevel.ERROR for n in self.notes)

    @property
    def empty(self) -> bool:
        """Everything was read, and there is no object in it (kubectl: "no objects passed to apply")."""
        return not self.objects and not any(n.level is NoteLevel.ERROR for n in self.notes)

    def empty_note(self) -> FileNote:
        listed = ", ".join(self.paths)
        skipped = sum(n.level is NoteLevel.WARNING for n in self.notes)
        also = f" ({skipped} file{'s' * (skipped != 1)} skipped)" if skipped else ""
        return FileNote(NoteLevel.ERROR, listed, 0, f"no Kubernetes objects found in {listed}{also}",
                        "every object needs apiVersion and kind; kubectl apply says: no objects passed to apply")

    def merged(self) -> Merged:
        return merge_duplicates(self.objects)


def read_inputs(paths: Sequence[str], recursive: bool = False, keep_going: bool = False) -> InputSet:
    """Read every path (see the module docstring). Without ``keep_going``, the first error raises InputError."""
    found = InputSet(paths=list(paths))
    for path in paths:
        try:
            files = expand_path(path, recursive)
        except InputError as error:
            found.seen.append(path)
            _fail(found, path, error, keep_going)
            continue
        from_directory = files != [path]
        for file in files:
            _read_file(found, file, from_directory, keep_going)
    return found


def _fail(found: InputSet, file: str, error: InputError, keep_going: bool) -> None:
    if not keep_going:
        raise error
    # Loader messages start with the place: "FILE: ...", "FILE:LINE: ..." or "FILE:LINE:COLUMN: ...".
    placed = re.match(rf"{re.escape(file)}(?::(\d+)(?::\d+)?)?: (.*)", str(error), re.DOTALL)
    line, message = (int(placed[1] or 0), placed[2]) if placed else (0, str(error))
    found.notes.append(FileNote(NoteLevel.ERROR, file, line, message))


def _read_file(found: InputSet, file: str, from_directory: bool, keep_going: bool) -> None:
    found.seen.append(file)
    try:
        objects = load_paths([file])
    except InputError as error:
        reason = _not_kubernetes(file) if from_directory else None
        if reason is None:
            _fail(found, file, error, keep_going)
        else:
            found.notes.append(FileNote(NoteLevel.WARNING, file, 0, f"skipped: {reason}"))
        return
    if from_directory:
        reason = _skip_reason(file, objects)
        if reason is not None:
            found.notes.append(FileNote(NoteLevel.WARNING, file, 0, f"skipped: {reason}"))
            return
    found.objects.extend(objects)
    if objects:
        found.files.append(file)
    elif file not in found.files:
        found.files.append(file)  # an empty file was read


def _skip_reason(file: str, objects: Sequence[LoadedObject]) -> str | None:
    """Why a file from a directory that did parse is not a manifest, or None when it is one."""
    known = _KNOWN_FILES.get(Path(file).name.lower())
    if known == "a Kustomization":
        return ("a Kustomization, not a manifest (dratwin reads what it produces: "
                "kubectl kustomize DIR | dratwin validate -f -)")
    if objects and not any(_has_type(o.raw) for o in objects):
        what = known or "no document in it has apiVersion and kind"
        return f"{what}, not Kubernetes objects" if known else f"not a Kubernetes manifest ({what})"
    return None


def _has_type(raw: dict[str, Any]) -> bool:
    return bool(raw.get("apiVersion")) and bool(raw.get("kind"))


def _not_kubernetes(file: str) -> str | None:
    """Why a file from a directory that failed to load holds no manifests, or None when it looks like one."""
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # reported as unreadable
    if "{{" in text and "}}" in text:
        return "a template ({{ ... }}), not YAML; render it first, e.g. helm template CHART | dratwin validate -f -"
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return None  # broken YAML that may well be a manifest: an error
    if documents and not any(isinstance(d, dict) for d in documents):
        kinds = sorted({type(d).__name__ for d in documents})
        return f"not a Kubernetes manifest (its documents are {', '.join(kinds)}, not objects)"
    return None

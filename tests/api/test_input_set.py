"""Reading -f paths as kubectl apply -f: files of a directory that are no manifests are skipped, named ones
are taken at their word, and with keep_going every unreadable file is a note while the others are read."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.builders.validation import GPU_CLASS, as_yaml

from dratwin.api.input_set import NoteLevel, read_inputs
from dratwin.errors import InputError

MANIFEST = as_yaml([GPU_CLASS])
NOT_MANIFESTS = {
    "values.yaml": ("replicas: 2\nimage: {repository: x}\n", "Helm chart values"),
    "Chart.yaml": ("apiVersion: v2\nname: chart\nversion: 1.0.0\n", "Helm chart metadata"),
    "kustomization.yaml": ("resources: [a.yaml]\n", "a Kustomization"),
    "template.yaml": ("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Values.ns }}\n{{- if .Values.x }}\n",
                      "a template ({{ ... }}), not YAML"),
    "list.json": ('["a", "b"]\n', "its documents are list, not objects"),
    "strings.yaml": ("- a\n- b\n", "its documents are list, not objects"),
    "package.json": ('{"name": "x", "version": "1.0.0"}\n', "no document in it has apiVersion and kind"),
}


@pytest.mark.parametrize(("name", "text", "reason"), [(n, t, r) for n, (t, r) in NOT_MANIFESTS.items()],
                         ids=list(NOT_MANIFESTS))
def test_a_directory_file_that_is_no_manifest_is_skipped_with_a_warning(tmp_path: Path, name: str, text: str,
                                                                      reason: str) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "z-class.yaml").write_text(MANIFEST)
    found = read_inputs([str(tmp_path)])
    assert [o.kind for o in found.objects] == ["DeviceClass"]
    [note] = found.notes
    assert (note.level, note.file) == (NoteLevel.WARNING, str(tmp_path / name))
    assert note.message.startswith("skipped: ")
    assert reason in note.message


@pytest.mark.parametrize("name", ["template.yaml", "strings.yaml"])
def test_a_named_file_that_is_no_manifest_is_an_error(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(NOT_MANIFESTS[name][0])
    with pytest.raises(InputError):
        read_inputs([str(tmp_path / name)])
    found = read_inputs([str(tmp_path / name)], keep_going=True)
    [note] = found.notes
    assert note.level is NoteLevel.ERROR
    assert found.unreadable


def test_a_named_mapping_without_kind_is_passed_on_to_be_reported(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text(NOT_MANIFESTS["values.yaml"][0])
    found = read_inputs([str(tmp_path / "values.yaml")])
    assert len(found.objects) == 1
    assert found.notes == []


def test_broken_yaml_in_a_directory_is_an_error_not_a_skip(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: Pod\nmetadata:\n\tname: x\n")
    (tmp_path / "b.yaml").write_text(MANIFEST)
    with pytest.raises(InputError, match="not valid YAML"):
        read_inputs([str(tmp_path)])
    found = read_inputs([str(tmp_path)], keep_going=True)
    [note] = found.notes
    assert (note.level, note.file, note.line) == (NoteLevel.ERROR, str(tmp_path / "a.yaml"), 3)
    assert note.message.startswith("not valid YAML")
    assert [o.kind for o in found.objects] == ["DeviceClass"]
    assert not found.unreadable and not found.empty


def test_missing_paths_and_empty_inputs(tmp_path: Path) -> None:
    missing = read_inputs([str(tmp_path / "nope.yaml")], keep_going=True)
    assert missing.unreadable and not missing.empty
    assert missing.notes[0].message == "no such file or directory"
    (tmp_path / "empty.yaml").write_text("# only a comment\n---\n")
    empty = read_inputs([str(tmp_path / "empty.yaml")], keep_going=True)
    assert empty.empty and not empty.unreadable
    assert empty.empty_note().message == f"no Kubernetes objects found in {tmp_path / 'empty.yaml'}"


def test_a_directory_of_skipped_files_is_empty_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text(NOT_MANIFESTS["values.yaml"][0])
    found = read_inputs([str(tmp_path)], keep_going=True)
    assert found.empty
    assert found.empty_note().message.endswith("(1 file skipped)")

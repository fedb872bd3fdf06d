"""Loading objects: documents, JSON, lists, directories, stdin, line numbers, and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dratwin.api.loader import load_paths, load_text
from dratwin.errors import InputError

MULTI = """\
# a comment
apiVersion: v1
kind: Node
metadata:
  name: a
---
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "x"
"""


def test_multi_document_yaml_with_lines() -> None:
    node, device_class = load_text(MULTI, "m.yaml")
    assert (node.kind, node.name, node.source.line) == ("Node", "a", 2)
    assert (device_class.kind, device_class.source.document) == ("DeviceClass", 2)
    assert device_class.line_of(("spec", "selectors", 0, "cel", "expression")) == 15
    assert device_class.line_of(("spec", "selectors", 3, "cel")) == 13  # deepest existing part
    assert str(device_class.source) == "m.yaml:8"


def test_json_document_with_lines() -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}},
    ]}, indent=2)
    first, second = load_text(text, "l.json")
    assert (first.name, second.name) == ("a", "b")
    assert second.source.line > first.source.line > 1
    assert second.line_of(("metadata", "name")) > second.source.line


def test_list_kinds_are_unwrapped_with_item_lines() -> None:
    text = "apiVersion: v1\nkind: ResourceClaimList\nitems:\n- kind: ResourceClaim\n  metadata:\n    name: a\n"
    [claim] = load_text(text)
    assert claim.name == "a"
    assert claim.source.line == 4
    assert claim.line_of(("metadata", "name")) == 6


def test_timestamps_stay_strings_like_in_kubectl() -> None:
    [obj] = load_text("kind: X\nmetadata:\n  creationTimestamp: 2026-01-02T03:04:05Z\n")
    assert obj.raw["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"


def test_invalid_yaml_is_an_input_error_with_line() -> None:
    with pytest.raises(InputError, match=r"bad.yaml:3:\d+: not valid YAML"):
        load_text("kind: X\nmetadata:\n\tname: a\n", "bad.yaml")


def test_duplicate_keys_are_rejected_like_kubectl() -> None:
    with pytest.raises(InputError, match=r"d.yaml:3:1: .*'kind' already set"):
        load_text("kind: X\nmetadata: {}\nkind: Y\n", "d.yaml")


def test_a_document_that_is_not_a_mapping_is_an_input_error() -> None:
    with pytest.raises(InputError, match="expected a Kubernetes object"):
        load_text("- a\n- b\n")


def test_directories_are_read_like_kubectl_recursive_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.yml").write_text("kind: B\n")
    (tmp_path / "a.yaml").write_text("kind: A\n")
    (tmp_path / "c.json").write_text('{"kind": "C"}')
    (tmp_path / "notes.txt").write_text("kind: ignored\n")
    assert [o.kind for o in load_paths([str(tmp_path)])] == ["A", "C"]
    assert [o.kind for o in load_paths([str(tmp_path)], recursive=True)] == ["A", "B", "C"]


def test_missing_paths_and_empty_directories(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_paths([str(tmp_path / "nope.yaml")])
    with pytest.raises(InputError, match=r"holds no \.yaml"):
        load_paths([str(tmp_path)])


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("kind: A\n---\nkind: B\n"))
    assert [(o.kind, o.source.path) for o in load_paths(["-"])] == [("A", "-"), ("B", "-")]

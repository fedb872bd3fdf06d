"""Input that must never crash, hang or grow without bound: each is an InputError that says where, or loads."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders.inputs import alias_bomb, large_manifest

from dratwin.api.loader import load_paths, load_text
from dratwin.api.yaml_fast import FAST_MIN_CHARS
from dratwin.api.yaml_reader import MAX_DEPTH
from dratwin.cli.main import load_inputs, main
from dratwin.errors import InputError

NODE = "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n"


@dataclass(frozen=True)
class Hostile:
    name: str
    text: Callable[[], str]
    message: str  # a regular expression the error must match, position included


HOSTILE = [
    Hostile("alias bomb", alias_bomb, r"^h\.yaml:\d+:\d+: document contains excessive aliasing"),
    Hostile("JSON nested 1,000 deep", lambda: '{"a":' * 1000 + "1" + "}" * 1000, r"^h\.yaml:1:\d+: nested deeper"),
    Hostile("JSON nested 300 deep", lambda: '{"a":' * 300 + "1" + "}" * 300, r"^h\.yaml:1:\d+: nested deeper"),
    Hostile("YAML nested 500 deep", lambda: "".join("  " * i + "k:\n" for i in range(500)) + "  " * 500 + "v\n",
            r"^h\.yaml:257:\d+: nested deeper than 256 levels"),
    Hostile("unclosed flow nesting", lambda: "[" * 100_000, r"^h\.yaml:1:\d+: .*(nested deeper|nesting depth)"),
    Hostile("compact sequences 100,000 deep", lambda: "- " * 100_000 + "a\n",
            r"^h\.yaml:1:\d+: .*(nested deeper|nesting depth)"),
    Hostile("complex key", lambda: "? [a, b]\n: 1\n", r"^h\.yaml:1:3: a mapping key must be a single value"),
    Hostile("null key", lambda: "~: 1\n", r"^h\.yaml:1:1: a mapping key must be a string, number or boolean"),
    Hostile("control characters", lambda: "a: \x01\x02\n", r"^h\.yaml:1: not valid YAML: control characters"),
    Hostile("binary garbage", lambda: bytes(range(1, 256)).decode("latin-1") * 4, r"^h\.yaml:1: not valid YAML"),
    Hostile("tab indentation", lambda: "kind: X\nmetadata:\n\tname: a\n", r"^h\.yaml:3:1: .*never tabs"),
    Hostile("duplicate key", lambda: "kind: X\nmetadata: {}\nkind: Y\n", r"^h\.yaml:3:1: key 'kind' already set"),
    Hostile("unknown anchor", lambda: "kind: X\nspec: *nope\n", r"^h\.yaml:2:7: unknown anchor 'nope'"),
    Hostile("infinity", lambda: "kind: X\nspec:\n  x: .inf\n", r"^h\.yaml:3:6: \.inf is not a number JSON can carry"),
    Hostile("a list, not an object", lambda: "- a\n- b\n", r"^h\.yaml:1: expected a Kubernetes object"),
    Hostile("bad !!int", lambda: "kind: X\nn: !!int foo\n", r"^h\.yaml:2:4: cannot decode 'foo' as a !!int"),
    Hostile("large file, duplicate key deep inside", lambda: large_manifest(extra="  kind: twice\n"),
            r"^h\.yaml:\d{4,}:\d+: key 'kind' already set"),
    Hostile("large file, a tab deep inside", lambda: large_manifest(extra="\tx: 1\n"), r"^h\.yaml:\d{4,}:\d+: "),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_input_is_an_input_error_with_its_position(case: Hostile) -> None:
    with pytest.raises(InputError) as caught:
        load_text(case.text(), "h.yaml")
    assert re.search(case.message, str(caught.value)), str(caught.value)


@pytest.mark.parametrize("case", HOSTILE[:6] + HOSTILE[8:10], ids=[c.name for c in HOSTILE[:6] + HOSTILE[8:10]])
def test_the_command_exits_2_with_one_line(case: Hostile, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(case.text(), encoding="utf-8")
    assert main(["validate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dratwin validate: {path}:") and err.count("\n") == 1, err


@dataclass(frozen=True)
class Nothing:
    name: str
    text: str


NOTHING = [Nothing("empty file", ""), Nothing("only comments", "# nothing here\n\n# still nothing\n"),
           Nothing("empty documents", "---\n---\n...\n")]


@pytest.mark.parametrize("case", NOTHING, ids=[c.name for c in NOTHING])
def test_an_input_without_objects_says_so_and_where(case: Nothing, tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(case.text)
    assert load_paths([str(path)]) == []  # the input set judges the whole input
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: no Kubernetes objects found in {path}"):
        load_inputs([str(path)], False, "schedule")


def test_a_byte_order_mark_is_read_like_kubectl_reads_it() -> None:
    [obj] = load_text("\ufeff" + NODE)
    assert obj.name == "node-1" and obj.source.line == 1


def test_a_file_that_is_not_utf8_says_where(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_bytes(b"kind: X\nname: \xff\xfe\n")
    with pytest.raises(InputError, match=r"b\.yaml: cannot read: byte 14 is not UTF-8"):
        load_paths([str(path)])


def test_a_huge_single_scalar_loads_whole() -> None:
    text = NODE + "  annotations:\n    big: " + "x" * (16 * 1024 * 1024) + "\n"
    [obj] = load_text(text)
    assert len(obj.raw["metadata"]["annotations"]["big"]) == 16 * 1024 * 1024


def test_stdin_without_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("# only a comment\n"))
    with pytest.raises(InputError, match=r"^-: no Kubernetes objects found"):
        load_inputs(["-"], False, "schedule")


def test_large_manifests_take_the_fast_path() -> None:
    assert len(large_manifest()) > FAST_MIN_CHARS


@pytest.mark.parametrize("command", [["validate"], ["validate", "-o", "json"], ["schedule", "-o", "yaml"],
                                     ["schedule", "-o", "json"]], ids=" ".join)
def test_an_object_nested_just_within_the_limit_goes_through_every_step(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep: dict[str, object] = {}
    inner = deep
    for _ in range(MAX_DEPTH - 10):
        inner["x"] = inner = {}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}], "extra": deep}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "d"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}],
                                  "config": [{"opaque": {"driver": "gpu.example.com", "parameters": deep}}]}}}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod, claim]}))
    assert main([command[0], "-f", str(path), *command[1:]]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err

"""``dratwin validate`` end to end through ``main``: output, JSON, exit codes, and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dratwin.cli.main import main

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
"""

BAD_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: x
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        count: -2
"""

CRD = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: imex
spec:
  slotsPerWorker: 1
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_clean_input_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", _write(tmp_path, "c.yaml", CLASS)]) == 0
    assert capsys.readouterr().out == "valid: 1 object in 1 file, no problems\n"


def test_errors_exit_1_with_file_line_object_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claim = _write(tmp_path, "claim.yaml", BAD_CLAIM)
    assert main(["validate", "-f", _write(tmp_path, "class.yaml", CLASS), "-f", claim]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{claim}:11: ResourceClaim default/x: spec.devices.requests[0].exactly.count: Invalid value: -2: "
        "must be at least 1",
        "invalid: 1 error, 0 warnings in 2 objects in 2 files",
    ]


def test_warnings_alone_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", _write(tmp_path, "crd.yaml", CRD)]) == 0
    out = capsys.readouterr().out
    assert "warning: MPIJob imex: Not checked" in out
    assert out.endswith("valid: 0 errors, 1 warning in 1 object in 1 file\n")


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "all.yaml", "---\n".join([CLASS, BAD_CLAIM, CRD]))
    assert main(["validate", "-f", path, "-o", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False
    assert document["objects"] == 3
    assert (document["errors"], document["warnings"]) == (1, 1)
    error = next(p for p in document["problems"] if p["severity"] == "error")
    assert error == {
        "severity": "error", "file": path, "line": 20, "object": "ResourceClaim default/x",
        "field": "spec.devices.requests[0].exactly.count", "type": "Invalid value", "value": -2,
        "message": "must be at least 1", "hint": "",
    }


def test_directories_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "class.yaml", CLASS)
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD_CLAIM))
    assert main(["validate", "-f", str(tmp_path), "-f", "-"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("-:11: ResourceClaim default/x")


def test_cel_errors_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dratwin.cel")
    broken = CLASS.replace('device.driver == "gpu.example.com"', 'device.drivr == "gpu.example.com"')
    assert main(["validate", "-f", _write(tmp_path, "c.yaml", broken)]) == 1
    out = capsys.readouterr().out
    assert "spec.selectors[0].cel.expression: Invalid value:" in out
    assert "does not compile" in out


def test_feature_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = (CLASS + "---\n" + BAD_CLAIM.replace("count: -2", "count: 1").replace(
        "      exactly:\n        deviceClassName: gpu.example.com\n        count: 1\n",
        "      firstAvailable:\n      - name: a\n        deviceClassName: gpu.example.com\n"))
    path = _write(tmp_path, "c.yaml", template)
    assert main(["validate", "-f", path]) == 0
    capsys.readouterr()
    assert main(["validate", "-f", path, "--feature-gates", "DRAPrioritizedList=false"]) == 1
    assert "feature gate DRAPrioritizedList" in capsys.readouterr().out


# What each kind of bad input gives: files to write, extra arguments, exit status, a line of the text
# output (stdout, or stderr with status 2) and a part of the message of the problem in the JSON output.
BAD_INPUT: list[tuple[str, dict[str, str], list[str], int, str, str]] = [
    ("unknown-kind-then-valid", {"a.yaml": "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplat\n"
                                 "metadata: {name: x}\n---\n" + BAD_CLAIM}, [], 1,
     '{tmp}/a.yaml:2: ResourceClaimTemplat x: kind: Unsupported value: unknown kind "ResourceClaimTemplat" in '
     "resource.k8s.io/v1 (did you mean ResourceClaimTemplate?)", "unknown kind"),
    ("no-api-version", {"a.yaml": "kind: Pod\nmetadata: {name: x}\n"}, [], 1,
     "{tmp}/a.yaml:1: Pod x: apiVersion: Required value: object has no apiVersion", "object has no apiVersion"),
    ("invalid-yaml-only", {"a.yaml": "kind: Pod\nmetadata:\n\tname: x\n"}, [], 2,
     "dratwin validate: {tmp}/a.yaml:3: not valid YAML: found character that cannot start any token",
     "not valid YAML"),
    ("invalid-yaml-and-a-good-file", {"a.yaml": "kind: Pod\nmetadata:\n\tname: x\n", "b.yaml": CLASS}, [], 1,
     "{tmp}/a.yaml:3: not valid YAML", "not valid YAML"),
    ("named-list-of-strings", {"a.yaml": "- just\n- a list\n"}, [], 2,
     "dratwin validate: {tmp}/a.yaml:1: expected a Kubernetes object (a mapping), found a list",
     "expected a Kubernetes object"),
    ("missing-file", {}, ["-f", "{tmp}/nope.yaml"], 2, "dratwin validate: {tmp}/nope.yaml: no such file or directory",
     "no such file or directory"),
    ("missing-file-and-a-good-file", {"b.yaml": CLASS}, ["-f", "{tmp}/nope.yaml"], 1,
     "{tmp}/nope.yaml: no such file or directory", "no such file or directory"),
    ("empty-file", {"a.yaml": "# nothing here\n"}, [], 1, "{tmp}/a.yaml: no Kubernetes objects found in {tmp}/a.yaml",
     "no Kubernetes objects found"),
]
_BAD = [c[1:] for c in BAD_INPUT]
_BAD_IDS = [c[0] for c in BAD_INPUT]


def _run_bad(tmp_path: Path, files: dict[str, str], args: list[str], *output: str) -> int:
    named = [arg for name, content in files.items() for arg in ("-f", _write(tmp_path, name, content))]
    return main(["validate", *named, *(a.replace("{tmp}", str(tmp_path)) for a in args), *output])


@pytest.mark.parametrize(("files", "args", "status", "line", "fragment"), _BAD, ids=_BAD_IDS)
def test_bad_input_is_reported_and_the_rest_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      files: dict[str, str], args: list[str], status: int,
                                                      line: str, fragment: str) -> None:
    assert _run_bad(tmp_path, files, args) == status
    captured = capsys.readouterr()
    stream = captured.err if status == 2 else captured.out
    expected = line.replace("{tmp}", str(tmp_path))
    assert any(out.startswith(expected) for out in stream.splitlines()), stream
    assert "Traceback" not in captured.err
    if status == 2:
        assert captured.out == ""
    else:
        assert stream.splitlines()[-1].startswith("invalid: ")


@pytest.mark.parametrize(("files", "args", "status", "line", "fragment"), _BAD, ids=_BAD_IDS)
def test_json_output_on_every_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str],
                                      args: list[str], status: int, line: str, fragment: str) -> None:
    assert _run_bad(tmp_path, files, args, "-o", "json") == status
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False
    errors = [p for p in document["problems"] if p["severity"] == "error"]
    assert len(errors) == document["errors"] >= 1
    assert any(fragment in p["message"] for p in errors)


def test_unknown_kind_does_not_hide_the_next_objects_problems(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = "apiVersion: v1\nkind: Pdo\nmetadata: {name: x}\n---\n" + BAD_CLAIM + "---\n" + CLASS
    assert main(["validate", "-f", _write(tmp_path, "a.yaml", text), "-o", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [p["field"] for p in document["problems"]] == ["kind", "spec.devices.requests[0].exactly.count"]


def test_json_output_on_a_bad_feature_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "c.yaml", CLASS)
    assert main(["validate", "-f", path, "--feature-gates", "DRAPrioritisedList=false", "-o", "json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False
    assert "did you mean DRAPrioritizedList" in document["error"]


def test_missing_file_and_bad_gate_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
    path = _write(tmp_path, "c.yaml", CLASS)
    assert main(["validate", "-f", path, "--feature-gates", "DRAPrioritisedList=false"]) == 2
    assert "did you mean DRAPrioritizedList" in capsys.readouterr().err


def test_help_teaches_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "dratwin validate -f manifests/" in out
    assert "exit status" in out

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
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata:
  name: imex
spec:
  numNodes: 1
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
    assert "warning: ComputeDomain imex: Not checked" in out
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


@pytest.mark.parametrize(("text", "message"), [
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplat\nmetadata: {name: x}\n",
     "unknown kind \"ResourceClaimTemplat\" in resource.k8s.io/v1 (did you mean ResourceClaimTemplate?)"),
    ("kind: Pod\nmetadata: {name: x}\n", "object has no apiVersion"),
    ("kind: Pod\nmetadata:\n\tname: x\n", ":3:1: not valid YAML"),
    ("- just\n- a list\n", "expected a Kubernetes object"),
])
def test_bad_input_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                             message: str) -> None:
    assert main(["validate", "-f", _write(tmp_path, "bad.yaml", text)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("dratwin validate: ")
    assert message in captured.err
    assert "Traceback" not in captured.err


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

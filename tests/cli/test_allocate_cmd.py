"""``dratwin allocate``: outputs, exit codes and explanations, end to end through ``main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dratwin.cli.main import main

OBJECTS = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {topology.kubernetes.io/zone: us-east-1a}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-1-gpus}
spec:
  driver: gpu.example.com
  pool: {name: gpu-1, generation: 1, resourceSliceCount: 1}
  nodeName: gpu-1
  devices:
  - name: gpu-0
    attributes: {model: {string: a10}}
    capacity: {memory: {value: 24Gi}}
  - name: gpu-1
    attributes: {model: {string: l40s}}
    capacity: {memory: {value: 48Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: big
  namespace: ml
  labels: {team: research}
  annotations: {example.com/keep: "yes"}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: huge, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}
"""


@pytest.fixture()
def objects(tmp_path: Path) -> Path:
    path = tmp_path / "objects.yaml"
    path.write_text(OBJECTS)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_shows_the_device_of_each_claim(objects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "--claim", "ml/big")
    assert code == 0
    assert "node gpu-1: 1 claim(s) allocated" in out
    assert "ml/big" in out and "gpu.example.com/gpu-1/gpu-1" in out
    assert "metadata.name In gpu-1" in out


def test_yaml_keeps_what_the_user_wrote_and_adds_the_allocation(
    objects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "--claim", "ml/big", "-o", "yaml")
    assert code == 0
    claim = yaml.safe_load(out)
    assert claim["metadata"]["annotations"] == {"example.com/keep": "yes"}
    assert claim["metadata"]["labels"] == {"team": "research"}
    results = claim["status"]["allocation"]["devices"]["results"]
    assert results == [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-1", "device": "gpu-1"}]


def test_unsatisfiable_json_carries_the_explanation(objects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "--claim", "ml/huge", "-o", "json")
    assert code == 1
    body = json.loads(out)
    assert body["result"] == "unsatisfiable"
    request = body["explanation"]["requests"][0]
    assert request["considered"] == 2 and request["eligible"] == []
    reason = request["reasons"][0]
    assert reason["reason"] == "request selector false" and reason["devices"] == 2
    assert reason["values"] == ["memory=24Gi", "memory=48Gi"]


def test_unsatisfiable_table_says_why(objects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "--claim", "ml/huge")
    assert code == 1
    assert "cannot allocate on node gpu-1" in out
    assert "2 of 2 devices: selector #0 of request gpu was false" in out
    assert "memory=24Gi, memory=48Gi" in out


def test_all_unallocated_claims_are_allocated_one_by_one_by_default(
    objects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "-o", "json")
    assert code == 1  # "huge" fits nowhere; "big" is allocated all the same, as a pod of its own would be
    body = json.loads(out)
    assert (body["result"], body["mode"], list(body["allocations"])) == ("unsatisfiable", "one-by-one", ["ml/big"])


def test_together_allocates_all_unallocated_claims_jointly(objects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "allocate", "-f", str(objects), "--node", "gpu-1", "--together", "-o", "json")
    assert code == 1  # all or nothing
    assert (json.loads(out)["result"], json.loads(out)["allocations"]) == ("unsatisfiable", {})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--node", "gpu-9"], "node 'gpu-9' is not in the input; nodes in the input: gpu-1"),
        (["--node", "gpu-1", "--claim", "ml/nope"], "claim ml/nope is not in the input"),
        (["--node", "gpu-1", "--feature-gates", "DRAConsumableCapasity=false"], "did you mean DRAConsumableCapacity"),
    ],
    ids=["unknown-node", "unknown-claim", "misspelt-gate"],
)
def test_bad_usage_exits_2_with_a_hint(
    objects: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "allocate", "-f", str(objects), *argv)
    assert code == 2
    assert message in err


def test_allocator_errors_are_json_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "o.yaml"
    path.write_text(OBJECTS.replace("deviceClassName: gpu.example.com\n        selectors:\n        - cel: {expression: "
                                    "'device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) > 0'}",
                                    "deviceClassName: gpu.exmple.com", 1))
    code, out, _ = run(capsys, "allocate", "-f", str(path), "--node", "gpu-1", "--claim", "ml/big", "-o", "json")
    assert code == 2
    body = json.loads(out)
    assert body["result"] == "error"
    assert "could not retrieve device class gpu.exmple.com" in body["error"]

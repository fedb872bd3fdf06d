"""Every command with older API versions and with input the API server refuses: no traceback, the exit status
of each command, and the place of each problem (``FILE:LINE: KIND NS/NAME: FIELD: ...``)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from tests.conftest import DATA

from dratwin.cli.main import main

OLDER = DATA / "older-versions"

NODE_AND_SLICE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: device.driver == "d"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  nodeName: n1
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: g0}, {name: g1}]
"""
WRONG_TYPE_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: broken, namespace: ml}
spec:
  devices:
    requests:
    - name: a
      exactly: {deviceClassName: gpu, count: "2"}
"""
UNREADABLE_CLAIM = WRONG_TYPE_CLAIM.replace('count: "2"', "count: many")
EMPTY_CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: nothing}\nspec: {}\n"
JOB_WITH_LIST_METADATA = "apiVersion: batch/v1\nkind: Job\nmetadata: [x]\nspec: {}\n"
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ml}
spec:
  containers:
  - name: c
    image: nginx
    resources: {limits: {cpu: abc}}
"""
V1BETA1_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: old, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu
      count: 1
"""


def _write(folder: Path, name: str, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return str(folder / name)


# ---- validate -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidateCase:
    name: str
    text: str
    line: str  # the expected first output line, after the file name


VALIDATE_CASES = [
    ValidateCase("wrong-type", WRONG_TYPE_CLAIM, ':8: ResourceClaim ml/broken: spec.devices.requests[0].exactly.count: '
                 'Invalid value: "2": must be an integer (int64), not a string: the API server cannot decode it '
                 "(write 2 without quotes)"),
    ValidateCase("metadata-list", JOB_WITH_LIST_METADATA, ':3: Job default/<unnamed>: metadata: Invalid value: '
                 '"array": must be an object (v1.ObjectMeta), not a list: the API server cannot decode it (write a '
                 "mapping (field: value), not a list)"),
    ValidateCase("quantity", POD, ":8: Pod ml/web: spec.containers[0].resources.limits[cpu]: Invalid value: \"abc\": "
                 "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
                 "(a quantity is a number with an optional suffix, e.g. 80Gi, 500m, 2 or 1e3)"),
    # A null list item is no absent field: Go would decode a zero Container, which has no name (refused).
    ValidateCase("null-container", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [null]\n",
                 ':5: Pod default/p: spec.containers[0]: Invalid value: "null": must be an object (v1.Container), '
                 "not null: the API server cannot decode it"),
    ValidateCase("deployment-without-selector-and-template",
                 "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n",
                 ":4: Deployment default/d: spec.selector: Required value"),
]


@pytest.mark.parametrize("case", VALIDATE_CASES, ids=lambda c: c.name)
def test_validate_reports_each_problem_with_its_place(case: ValidateCase, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", case.text)
    assert main(["validate", "-f", path]) == 1
    assert capsys.readouterr().out.splitlines()[0] == path + case.line


def test_validate_names_the_case_of_apiversion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", "apiversion: v1\nkind: Pod\nmetadata: {name: p}\n")
    assert main(["validate", "-f", path]) == 1  # an error of the object: validation goes on with the others
    assert "it has `apiversion` (did you mean apiVersion?): field names are case-sensitive" in capsys.readouterr().out


def test_validate_a_v1beta1_object_warns_once_and_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", V1BETA1_CLAIM + "---\n" + NODE_AND_SLICE)
    assert main(["validate", "-f", path, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    [warning] = document["problems"]
    assert (warning["type"], warning["field"], warning["value"]) == ("Converted", "apiVersion",
                                                                     "resource.k8s.io/v1beta1")
    assert warning["line"] == 1 and "read as resource.k8s.io/v1" in warning["message"]


def test_the_driver_quickstarts_in_older_layouts_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", str(OLDER)]) == 0
    out = capsys.readouterr().out
    assert out.count("Converted") == 7  # one per v1beta1/v1beta2 object
    assert out.splitlines()[-1] == "valid: 0 errors, 7 warnings in 16 objects in 5 files"


# ---- schedule, explain, plan: refused objects are reported, the rest goes on ---------------------------


def test_the_driver_quickstarts_in_older_layouts_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "-f", str(OLDER), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    placed = {p["pod"]: p["node"] for p in report["scheduled"]}
    assert placed == {"gpu-test1/pod1": "gpu-node-1", "gpu-test1/pod2": "gpu-node-1", "gpu-test2/pod": "gpu-node-1",
                      "gpu-test3/pod0": "example-node"}
    assert sum("read as resource.k8s.io/v1" in n for n in report["notes"]) == 7


def test_schedule_prints_v1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "-f", str(OLDER), "-o", "yaml"]) == 0
    documents = yaml.safe_load(capsys.readouterr().out)
    versions = {o["apiVersion"] for o in documents["items"] if o["apiVersion"].startswith("resource.k8s.io")}
    assert versions == {"resource.k8s.io/v1"}


def test_schedule_goes_on_without_refused_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "in"
    shutil.copytree(OLDER, folder)
    bad = _write(folder, "zz-bad.yaml", "---\n".join([WRONG_TYPE_CLAIM, JOB_WITH_LIST_METADATA, POD]))
    assert main(["schedule", "-f", str(folder)]) == 1  # the input is not what the cluster would run
    out = capsys.readouterr().out
    assert out.startswith("4 of 4 pending pod(s) scheduled")
    refused = [line for line in out.splitlines() if "the API server refuses this object" in line]
    assert [line.split(": ")[0:3] for line in refused] == [
        ["WARNING", f"{bad}:8", "ResourceClaim ml/broken"],
        ["WARNING", f"{bad}:12", "Job default/<unnamed>"],
        ["WARNING", f"{bad}:22", "Pod ml/web"],
    ]


def test_explain_says_why_a_refused_pod_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", NODE_AND_SLICE + "---\n" + POD)
    assert main(["explain", "pod/ml/web", "-f", path]) == 2
    err = capsys.readouterr().err
    assert f"it was refused: {path}:27: Pod ml/web: spec.containers[0].resources.limits[cpu]" in err


def test_plan_reports_refused_objects_as_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = DATA.parent.parent / "examples"
    path = _write(tmp_path, "bad.yaml", WRONG_TYPE_CLAIM)
    main(["plan", "-f", str(examples / "deviceclasses.yaml"), "-f", str(examples / "plan"), "-f", path])
    out = capsys.readouterr().out
    assert f"note: {path}:8: ResourceClaim ml/broken: spec.devices.requests[0].exactly.count" in out


# ---- allocate ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllocateCase:
    name: str
    claim: str
    flags: tuple[str, ...]
    status: int
    stderr: str = ""  # a part of what stderr says


ALLOCATE_CASES = [
    AllocateCase("refused-wrong-type", WRONG_TYPE_CLAIM, (), 2,
                 ":27: ResourceClaim ml/broken: spec.devices.requests[0].exactly.count: Invalid value"),
    AllocateCase("skip-validation-reads-it-leniently", WRONG_TYPE_CLAIM, ("--skip-validation",), 0),
    AllocateCase("skip-validation-unreadable", UNREADABLE_CLAIM, ("--skip-validation",), 2,
                 ":27: ResourceClaim ml/broken: spec.devices.requests[0].exactly.count: expected int, got str"),
    AllocateCase("empty-claim-table", EMPTY_CLAIM, (), 0),
    AllocateCase("v1beta1", V1BETA1_CLAIM, (), 0, "note: resource.k8s.io/v1beta1 ResourceClaim ml/old read as"),
]


@pytest.mark.parametrize("case", ALLOCATE_CASES, ids=lambda c: c.name)
def test_allocate(case: AllocateCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", NODE_AND_SLICE + "---\n" + case.claim)
    assert main(["allocate", "-f", path, "--node", "n1", *case.flags]) == case.status
    captured = capsys.readouterr()
    assert case.stderr in captured.err
    if case.stderr.startswith(":"):
        assert f"{path}{case.stderr}" in captured.err


def test_allocate_a_claim_that_requests_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", NODE_AND_SLICE + "---\n" + EMPTY_CLAIM)
    assert main(["allocate", "-f", path, "--node", "n1"]) == 0
    assert "default/nothing  -        (no devices requested)  any node" in capsys.readouterr().out


def test_allocate_prints_v1beta1_claims_as_v1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "in.yaml", NODE_AND_SLICE + "---\n" + V1BETA1_CLAIM)
    assert main(["allocate", "-f", path, "--node", "n1", "-o", "yaml"]) == 0
    claim = yaml.safe_load(capsys.readouterr().out)
    assert claim["apiVersion"] == "resource.k8s.io/v1"
    assert claim["spec"]["devices"]["requests"] == [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}]
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["g0"]


NULL_SPECS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml, labels: null}
spec: null
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  nodeSelector: null
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: c}]
"""


def test_nulls_are_absent_as_for_the_api_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # spec: null is accepted by the API server (a claim that requests no device), and so is any other null.
    path = _write(tmp_path, "in.yaml", NODE_AND_SLICE + "---\n" + NULL_SPECS)
    assert main(["validate", "-f", path]) == 0
    capsys.readouterr()
    assert main(["schedule", "-f", path, "-o", "yaml"]) == 0
    objects = {o["kind"]: o for o in yaml.safe_load(capsys.readouterr().out)["items"]}
    assert "spec" not in objects["ResourceClaim"] and "labels" not in objects["ResourceClaim"]["metadata"]
    assert objects["Pod"]["spec"]["nodeName"] == "n1"

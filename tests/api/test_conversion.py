"""resource.k8s.io v1beta1 and v1beta2 read as v1, as the 1.36 API server converts them: per kind and version
the v1 object expected, and the line each moved field is reported at."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from dratwin.api.conversion import convert_to_v1, needs_conversion
from dratwin.api.intake import ConvertedObject, admit, read_object
from dratwin.api.loader import load_text

Wire = dict[str, Any]


@dataclass(frozen=True)
class Case:
    name: str
    written: str  # YAML as the user wrote it
    expected: str  # the v1 object, as YAML


CASES = [
    Case("v1beta1-claim-flat-request", """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: ml, annotations: {a: b}}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      selectors: [{cel: {expression: "true"}}]
      allocationMode: ExactCount
      count: 2
      adminAccess: false
      tolerations: [{key: k, operator: Exists}]
      capacity: {requests: {memory: 10Gi}}
status: {reservedFor: [{resource: pods, name: p, uid: u1}]}
""", """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml, annotations: {a: b}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors: [{cel: {expression: "true"}}]
        allocationMode: ExactCount
        count: 2
        adminAccess: false
        tolerations: [{key: k, operator: Exists}]
        capacity: {requests: {memory: 10Gi}}
status: {reservedFor: [{resource: pods, name: p, uid: u1}]}
"""),
    Case("v1beta1-claim-zero-values-and-first-available", """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: a
      deviceClassName: gpu
      count: 0
      selectors: []
    - name: b
      firstAvailable:
      - {name: big, deviceClassName: gpu, count: 2}
      - {name: small, deviceClassName: gpu}
    constraints: [{requests: [a, b], matchAttribute: gpu.nvidia.com/pcieRoot}]
""", """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: a
      exactly: {deviceClassName: gpu}
    - name: b
      firstAvailable:
      - {name: big, deviceClassName: gpu, count: 2}
      - {name: small, deviceClassName: gpu}
    constraints: [{requests: [a, b], matchAttribute: gpu.nvidia.com/pcieRoot}]
"""),
    Case("v1beta1-template", """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  metadata: {labels: {a: b}}
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu.nvidia.com}
""", """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  metadata: {labels: {a: b}}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
"""),
    Case("v1beta1-slice-basic-devices", """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: ""
  allNodes: false
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]}
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  sharedCounters: [{name: gpu-0, counters: {memory: {value: 80Gi}}}]
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: H100}}
      capacity: {memory: {value: 80Gi}}
      consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 80Gi}}}]
      taints: []
      allowMultipleAllocations: true
  - name: bare
""", """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]}
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  sharedCounters: [{name: gpu-0, counters: {memory: {value: 80Gi}}}]
  devices:
  - name: gpu-0
    attributes: {model: {string: H100}}
    capacity: {memory: {value: 80Gi}}
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 80Gi}}}]
    allowMultipleAllocations: true
  - name: bare
"""),
    Case("v1beta1-deviceclass", """\
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]}
""", """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]}
"""),
]
V1BETA2 = [
    ("DeviceClass", {"selectors": [{"cel": {"expression": "true"}}]}),
    ("ResourceClaim", {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}),
    ("ResourceClaimTemplate", {"spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu"}]}]}}}),
    ("ResourceSlice", {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
                       "devices": [{"name": "g", "attributes": {"a": {"int": 1}}}]}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_v1beta1_converts_as_the_api_server_does(case: Case) -> None:
    written = yaml.safe_load(case.written)
    before = copy.deepcopy(written)
    assert needs_conversion(written)
    converted = convert_to_v1(written)
    assert converted.raw == yaml.safe_load(case.expected)
    assert list(converted.raw) == list(yaml.safe_load(case.expected))  # field order kept
    assert written == before  # the input is not changed


@pytest.mark.parametrize(("kind", "spec"), V1BETA2, ids=[k for k, _ in V1BETA2])
def test_v1beta2_has_the_fields_of_v1(kind: str, spec: Wire) -> None:
    written = {"apiVersion": "resource.k8s.io/v1beta2", "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    assert convert_to_v1(written).raw == {**written, "apiVersion": "resource.k8s.io/v1"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_converted_objects_are_structurally_valid_v1(case: Case) -> None:
    [obj] = load_text(case.written)
    read = read_object(obj)
    assert [str(p) for p in read.problems] == []
    assert isinstance(read.obj, ConvertedObject) and read.obj.api_version == "resource.k8s.io/v1"
    assert read.note.startswith(f"resource.k8s.io/v1beta1 {obj.kind} ")
    assert "read as resource.k8s.io/v1 (the API server converts it; printed as v1)" in read.note


LINES = [
    # (case, path in the v1 object, line of the field as written)
    ("v1beta1-claim-flat-request", ("spec", "devices", "requests", 0, "exactly", "count"), 11),
    ("v1beta1-claim-flat-request", ("spec", "devices", "requests", 0, "exactly", "capacity", "requests"), 14),
    ("v1beta1-claim-flat-request", ("spec", "devices", "requests", 0, "exactly"), 7),
    ("v1beta1-claim-flat-request", ("spec", "devices", "requests", 0, "name"), 7),
    ("v1beta1-slice-basic-devices", ("spec", "devices", 0, "attributes", "model"), 14),
    ("v1beta1-slice-basic-devices", ("spec", "devices", 0, "allowMultipleAllocations"), 18),
    ("v1beta1-slice-basic-devices", ("spec", "devices", 0, "name"), 12),
    ("v1beta1-template", ("spec", "spec", "devices", "requests", 0, "exactly", "deviceClassName"), 9),
]


@pytest.mark.parametrize(("name", "path", "line"), LINES, ids=[f"{n}-{'.'.join(map(str, p))}" for n, p, _ in LINES])
def test_problems_in_the_v1_object_point_at_the_line_written(name: str, path: tuple[str | int, ...],
                                                              line: int) -> None:
    [case] = [c for c in CASES if c.name == name]
    [obj] = load_text(case.written, "in.yaml")
    converted = read_object(obj).obj
    assert converted.line_of(path) == line


def test_admit_converts_once_and_notes_once_per_object() -> None:
    text = CASES[0].written + "---\n" + CASES[2].written + "---\n" + CASES[2].written.replace("name: t,", "name: u,")
    admitted = admit(load_text(text))
    assert [o.api_version for o in admitted.objects] == ["resource.k8s.io/v1"] * 3
    assert len(admitted.notes) == 3
    assert admitted.notes[0].startswith("resource.k8s.io/v1beta1 ResourceClaim ml/c read as resource.k8s.io/v1")


def test_a_v1beta1_object_is_checked_against_v1beta1_fields() -> None:
    text = CASES[2].written.replace("deviceClassName: gpu.nvidia.com}", "exactly: {deviceClassName: g}}")
    [problem] = read_object(load_text(text)[0]).problems
    assert problem.field == "spec.spec.devices.requests[0].exactly"
    assert "deviceClassName" in problem.hint  # v1beta1 requests have their fields flat

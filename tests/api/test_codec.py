"""The codec: kinds, typed decoding with field paths, unknown fields, and YAML/JSON output."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
import yaml

from dratwin.api.codec import (
    FieldDecodeError,
    MapKey,
    Support,
    classify,
    copy_raw,
    decode,
    decode_as,
    dump_json,
    dump_yaml,
    object_ref,
    render_path,
    strip_nulls,
)
from dratwin.api.core import Node, Pod
from dratwin.api.loader import load_text
from dratwin.api.resource import ResourceClaim, ResourceSlice
from dratwin.errors import InputError, ObjectDecodeError

KUBECTL_DUMP = """\
apiVersion: v1
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata:
    creationTimestamp: "2026-01-02T03:04:05Z"
    managedFields:
    - apiVersion: resource.k8s.io/v1
      fieldsType: FieldsV1
      fieldsV1:
        f:spec:
          f:devices: {}
      manager: kubectl-client-side-apply
      operation: Update
      time: 2026-01-02T03:04:05Z
    name: gpu
    namespace: ml
    resourceVersion: "1234"
    uid: 0b0f4c6e-1111-2222-3333-444455556666
  spec:
    devices:
      requests:
      - exactly:
          allocationMode: ExactCount
          count: 1
          deviceClassName: gpu.example.com
        name: gpu
  status:
    allocation:
      devices:
        results:
        - device: gpu-0
          driver: gpu.example.com
          pool: node-1
          request: gpu
      nodeSelector:
        nodeSelectorTerms:
        - matchFields:
          - key: metadata.name
            operator: In
            values: [node-1]
    reservedFor:
    - {name: p, resource: pods, uid: 0b0f4c6e-aaaa-2222-3333-444455556666}
    futureStatusField: kept
kind: List
metadata:
  resourceVersion: ""
"""


def test_a_kubectl_dump_loads_and_decodes() -> None:
    [obj] = load_text(KUBECTL_DUMP, "dump.yaml")
    claim = decode(obj)
    assert isinstance(claim, ResourceClaim)
    assert claim.metadata.resource_version == "1234"
    assert claim.status.allocation is not None
    assert claim.status.allocation.devices.results[0].device == "gpu-0"
    assert object_ref(obj) == "ResourceClaim ml/gpu"


def test_round_trip_keeps_unknown_fields_and_managed_fields() -> None:
    [obj] = load_text(KUBECTL_DUMP, "dump.yaml")
    again = yaml.safe_load(dump_yaml([obj.raw]))
    assert again == obj.raw
    assert again["metadata"]["managedFields"][0]["manager"] == "kubectl-client-side-apply"
    assert again["status"]["futureStatusField"] == "kept"
    assert json.loads(dump_json([obj.raw])) == obj.raw


def test_dump_keeps_key_order_uses_block_style_and_literal_multiline_strings() -> None:
    raw = {"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "x"},
           "spec": {"selectors": [{"cel": {"expression": "a &&\nb"}}]}}
    text = dump_yaml([raw])
    assert text.splitlines()[:2] == ["kind: DeviceClass", "apiVersion: resource.k8s.io/v1"]
    assert "{" not in text
    assert "expression: |-\n" in text


def test_dump_several_objects_as_a_kubectl_list() -> None:
    document = yaml.safe_load(dump_yaml([{"kind": "A"}, {"kind": "B"}]))
    assert document == {"apiVersion": "v1", "items": [{"kind": "A"}, {"kind": "B"}], "kind": "List",
                        "metadata": {"resourceVersion": ""}}
    assert json.loads(dump_json([]))["items"] == []


def test_decode_error_names_object_and_field() -> None:
    [obj] = load_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                      "spec: {devices: {requests: [{name: a, exactly: {count: many}}]}}\n")
    with pytest.raises(ObjectDecodeError) as info:
        decode(obj)
    error = info.value
    assert isinstance(error, FieldDecodeError)
    assert error.path == ("spec", "devices", "requests", 0, "exactly", "count")
    assert str(error) == "ResourceClaim default/c: spec.devices.requests[0].exactly.count: expected int, got str"


def test_decode_error_inside_a_map_names_the_key() -> None:
    [obj] = load_text("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                      "spec:\n  devices:\n  - name: d\n    attributes:\n      good: {int: 1}\n"
                      "      bad: {int: [1]}\n")
    with pytest.raises(FieldDecodeError) as info:
        decode(obj)
    assert info.value.path == ("spec", "devices", 0, "attributes", "bad", "int")
    assert isinstance(info.value.path[4], MapKey)
    assert render_path(info.value.path) == "spec.devices[0].attributes[bad].int"


def test_nulls_count_as_absent() -> None:
    [obj] = load_text("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s, labels: null}\n"
                      "spec: {driver: d, devices: null, nodeName: node-1}\n")
    value = decode(obj)
    assert isinstance(value, ResourceSlice) and value.spec.devices == []


def test_classify() -> None:
    def kind_of(api_version: str, kind: str) -> Support:
        [obj] = load_text(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n")
        return classify(obj).support

    assert kind_of("v1", "Pod") is Support.MODELLED
    assert kind_of("resource.k8s.io/v1beta2", "DeviceClass") is Support.MODELLED
    assert kind_of("apps/v1", "Deployment") is Support.POD_TEMPLATE
    assert kind_of("v1", "ConfigMap") is Support.NOT_CHECKED
    assert kind_of("karpenter.sh/v1", "NodePool") is Support.MODELLED
    assert kind_of("kueue.x-k8s.io/v1beta1", "ClusterQueue") is Support.MODELLED  # converted to v1beta2
    assert kind_of("kueue.x-k8s.io/v1beta2", "MultiKueueConfig") is Support.NOT_CHECKED
    assert kind_of("resource.k8s.io/v1beta2", "DeviceTaintRule") is Support.NOT_CHECKED
    with pytest.raises(InputError, match="did you mean DeviceClass"):
        kind_of("resource.k8s.io/v1", "Deviceclass")


def test_pod_decodes_resource_claims() -> None:
    [obj] = load_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
                      "  - {name: g, resourceClaimTemplateName: t}\n  containers:\n"
                      "  - name: c\n    resources: {claims: [{name: g}], limits: {cpu: 1}}\n")
    pod = decode(obj)
    assert isinstance(pod, Pod)
    assert pod.spec.resource_claims[0].resource_claim_template_name == "t"
    assert pod.spec.containers[0].resources.claims[0].name == "g"


COPY_CASES = [
    pytest.param(load_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\n"
                           "spec: {containers: [{name: c, args: [x, '1'], resources: {limits: {cpu: 1}}}]}\n")[0].raw,
                 id="pod-as-read"),
    pytest.param({"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": None}]}], "replicas": 2.5}},
                 id="nulls-and-numbers"),
    pytest.param({"spec": {"containers": [], "tags": {"x", "y"}}}, id="a-set-copied-the-general-way"),
]


@pytest.mark.parametrize("raw", COPY_CASES)
def test_copy_raw_is_a_deep_copy(raw: dict[str, Any]) -> None:
    copied = copy_raw(raw)
    assert copied == raw
    before = json.dumps(raw, sort_keys=True, default=sorted)
    copied["spec"]["added"] = True
    copied["spec"]["containers"].append({"name": "more"})
    if "tags" in copied["spec"]:
        copied["spec"]["tags"].add("z")
    assert json.dumps(raw, sort_keys=True, default=sorted) == before, "the original must not change"


def test_copy_raw_makes_an_alias_two_independent_values() -> None:
    [obj] = load_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: &l {a: b}, annotations: *l}\n")
    copied = copy_raw(obj.raw)
    copied["metadata"]["labels"]["a"] = "changed"
    assert copied["metadata"]["annotations"] == {"a": "b"}


NULL_CASES = [
    pytest.param(Node, {"metadata": {"name": "n", "labels": None}, "spec": {"taints": None}}, id="node-null-lists"),
    pytest.param(Node, {"metadata": {"name": "n", "labels": {"a": None}}}, id="null-map-value"),
    pytest.param(Pod, {"metadata": {"name": "p"}, "spec": {"priority": None, "nodeName": None,
                                                          "containers": [{"name": "c", "resources": None}]}},
                 id="pod-null-optional-and-struct"),
    pytest.param(ResourceSlice, {"spec": {"driver": "d", "nodeName": "n", "devices": [
        {"name": "x", "attributes": {"a": {"int": None, "string": "v"}}, "capacity": None}]}}, id="slice-nulls"),
    pytest.param(ResourceClaim, {"metadata": {"name": "c"}, "spec": {"devices": {"config": [
        {"opaque": {"driver": "d", "parameters": {"keep": None, "x": 1}}}]}}}, id="any-field-drops-its-nulls"),
    pytest.param(Node, {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": None}}}, id="null-quantity"),
]


@pytest.mark.parametrize(("kind", "raw"), NULL_CASES)
def test_nulls_decode_as_if_absent(kind: type, raw: dict[str, Any]) -> None:
    """What the API server's decoder does: a null is an absent field, wherever it is."""
    assert decode_as(raw, kind, "x") == msgspec.convert(strip_nulls(raw), kind, strict=False)


def test_a_wrong_type_next_to_a_null_names_its_field() -> None:
    raw = {"metadata": {"name": "n", "labels": None}, "spec": {"unschedulable": "maybe"}}
    with pytest.raises(FieldDecodeError, match=r"spec\.unschedulable"):
        decode_as(raw, Node, "Node n")

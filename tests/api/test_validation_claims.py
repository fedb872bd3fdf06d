"""API rules of ResourceClaim / ResourceClaimTemplate / DeviceClass, one bad input per rule."""

from __future__ import annotations

from typing import Any

import pytest
from tests.builders.validation import GPU_CLASS, FakeCompiler, Wire, at, claim, errors, request, validate

from dratwin.api.validation import ProblemKind, Severity

OK_DEVICES: Wire = {
    "requests": [
        request("gpu", count=2, selectors=[{"cel": {"expression": "device.attributes['x'].y == 1"}}],
                tolerations=[{"key": "example.com/flaky", "operator": "Exists", "effect": "NoSchedule"}]),
        {"name": "alt", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.example.com", "allocationMode": "All"},
            {"name": "small", "deviceClassName": "gpu.example.com", "count": 1},
        ]},
    ],
    "constraints": [{"requests": ["gpu", "alt/big"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
    "config": [{"requests": ["alt"], "opaque": {"driver": "gpu.example.com", "parameters": {"kind": "GpuConfig"}}}],
}


def test_a_valid_claim_and_template_have_no_problems() -> None:
    for kind in ("ResourceClaim", "ResourceClaimTemplate"):
        assert validate(GPU_CLASS, claim(OK_DEVICES, kind=kind), compiler=FakeCompiler()) == []


def _requests(*items: Wire) -> Wire:
    return {"requests": list(items)}


def _sub(name: str = "s", **fields: Any) -> Wire:
    return {"name": name, "deviceClassName": "gpu.example.com", **fields}


CASES: list[tuple[str, Wire, str, ProblemKind, str]] = [
    # (id, spec.devices, field, kind, part of the message or hint)
    ("request-name-required", _requests({"exactly": {"deviceClassName": "gpu.example.com"}}),
     "spec.devices.requests[0].name", ProblemKind.REQUIRED, "request name"),
    ("request-name-dns-label", _requests(request("GPU_0")),
     "spec.devices.requests[0].name", ProblemKind.INVALID, 'try "gpu-0"'),
    ("request-name-duplicate", _requests(request("gpu"), request("gpu")),
     "spec.devices.requests[1].name", ProblemKind.DUPLICATE, "unique"),
    ("neither-exactly-nor-first-available", _requests({"name": "gpu"}),
     "spec.devices.requests[0]", ProblemKind.REQUIRED, "exactly one of"),
    ("both-exactly-and-first-available",
     _requests({**request("gpu"), "firstAvailable": [_sub()]}),
     "spec.devices.requests[0]", ProblemKind.INVALID, "not both"),
    ("class-name-required", _requests({"name": "gpu", "exactly": {"count": 1}}),
     "spec.devices.requests[0].exactly.deviceClassName", ProblemKind.REQUIRED, "DeviceClass"),
    ("class-name-format", _requests({"name": "gpu", "exactly": {"deviceClassName": "GPU Class"}}),
     "spec.devices.requests[0].exactly.deviceClassName", ProblemKind.INVALID, "DNS subdomain"),
    ("allocation-mode-enum", _requests(request(allocationMode="all")),
     "spec.devices.requests[0].exactly.allocationMode", ProblemKind.UNSUPPORTED, 'did you mean "All"'),
    ("count-negative", _requests(request(count=-1)),
     "spec.devices.requests[0].exactly.count", ProblemKind.INVALID, "at least 1"),
    ("count-with-all", _requests(request(allocationMode="All", count=2)),
     "spec.devices.requests[0].exactly.count", ProblemKind.INVALID, "allocationMode is All"),
    ("subrequest-count-negative", _requests({"name": "r", "firstAvailable": [_sub(count=-3)]}),
     "spec.devices.requests[0].firstAvailable[0].count", ProblemKind.INVALID, "at least 1"),
    ("subrequest-mode-enum", _requests({"name": "r", "firstAvailable": [_sub(allocationMode="Exact")]}),
     "spec.devices.requests[0].firstAvailable[0].allocationMode", ProblemKind.UNSUPPORTED, "ExactCount"),
    ("subrequest-admin-access", _requests({"name": "r", "firstAvailable": [_sub(adminAccess=True)]}),
     "spec.devices.requests[0].firstAvailable[0].adminAccess", ProblemKind.FORBIDDEN, "subrequests"),
    ("subrequest-name-duplicate", _requests({"name": "r", "firstAvailable": [_sub("a"), _sub("a")]}),
     "spec.devices.requests[0].firstAvailable[1].name", ProblemKind.DUPLICATE, "unique"),
    ("too-many-subrequests", _requests({"name": "r", "firstAvailable": [_sub(f"s{i}") for i in range(9)]}),
     "spec.devices.requests[0].firstAvailable", ProblemKind.TOO_MANY, "at most 8"),
    ("too-many-requests", _requests(*(request(f"r{i}") for i in range(33))),
     "spec.devices.requests", ProblemKind.TOO_MANY, "at most 32"),
    ("more-than-32-devices", _requests(request("a", count=20), request("b", count=13)),
     "spec.devices.requests", ProblemKind.TOO_MANY, "at least 33 devices"),
    ("too-many-selectors", _requests(request(selectors=[{"cel": {"expression": "true"}}] * 33)),
     "spec.devices.requests[0].exactly.selectors", ProblemKind.TOO_MANY, "at most 32"),
    ("selector-without-cel", _requests(request(selectors=[{}])),
     "spec.devices.requests[0].exactly.selectors[0].cel", ProblemKind.REQUIRED, "CEL"),
    ("selector-empty-expression", _requests(request(selectors=[{"cel": {"expression": " "}}])),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression", ProblemKind.REQUIRED, "empty"),
    ("selector-too-long", _requests(request(selectors=[{"cel": {"expression": "true && " * 2000 + "true"}}])),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression", ProblemKind.TOO_LONG, "10240"),
    ("too-many-tolerations", _requests(request(tolerations=[{"operator": "Exists"}] * 17)),
     "spec.devices.requests[0].exactly.tolerations", ProblemKind.TOO_MANY, "at most 16"),
    ("toleration-operator-enum", _requests(request(tolerations=[{"key": "k", "operator": "Exist"}])),
     "spec.devices.requests[0].exactly.tolerations[0].operator", ProblemKind.UNSUPPORTED, 'did you mean "Exists"'),
    ("toleration-effect-enum", _requests(request(tolerations=[{"operator": "Exists", "effect": "NoScheduled"}])),
     "spec.devices.requests[0].exactly.tolerations[0].effect", ProblemKind.UNSUPPORTED, "NoSchedule"),
    ("toleration-exists-with-value", _requests(request(tolerations=[{"key": "k", "operator": "Exists",
                                                                     "value": "v"}])),
     "spec.devices.requests[0].exactly.tolerations[0].value", ProblemKind.INVALID, "Exists"),
    ("toleration-key-format", _requests(request(tolerations=[{"key": "bad key!", "operator": "Exists"}])),
     "spec.devices.requests[0].exactly.tolerations[0].key", ProblemKind.INVALID, "name part"),
    ("capacity-request-quantity", _requests(request(capacity={"requests": {"memory": "4gi"}})),
     "spec.devices.requests[0].exactly.capacity.requests[memory]", ProblemKind.INVALID, "did you mean 4Gi"),
    ("capacity-request-name", _requests(request(capacity={"requests": {"9memory": "4Gi"}})),
     "spec.devices.requests[0].exactly.capacity.requests[9memory]", ProblemKind.INVALID, "C identifier"),
    ("constraint-unknown-request", {**_requests(request("gpu")),
                                    "constraints": [{"requests": ["gpus"], "matchAttribute": "a.b/c"}]},
     "spec.devices.constraints[0].requests[0]", ProblemKind.INVALID, 'did you mean "gpu"'),
    ("constraint-unknown-subrequest", {**_requests({"name": "r", "firstAvailable": [_sub("a")]}),
                                       "constraints": [{"requests": ["r/b"], "matchAttribute": "a.b/c"}]},
     "spec.devices.constraints[0].requests[0]", ProblemKind.INVALID, "request/subrequest"),
    ("constraint-subrequest-of-exactly", {**_requests(request("gpu")),
                                          "constraints": [{"requests": ["gpu/x"], "matchAttribute": "a.b/c"}]},
     "spec.devices.constraints[0].requests[0]", ProblemKind.INVALID, "request/subrequest"),
    ("constraint-duplicate-request", {**_requests(request("gpu")),
                                      "constraints": [{"requests": ["gpu", "gpu"], "matchAttribute": "a.b/c"}]},
     "spec.devices.constraints[0].requests[1]", ProblemKind.DUPLICATE, ""),
    ("constraint-not-fully-qualified", {**_requests(request("gpu")),
                                        "constraints": [{"matchAttribute": "pcieRoot"}]},
     "spec.devices.constraints[0].matchAttribute", ProblemKind.INVALID, "fully qualified"),
    ("constraint-distinct-not-fully-qualified", {**_requests(request("gpu")),
                                                 "constraints": [{"distinctAttribute": "uuid"}]},
     "spec.devices.constraints[0].distinctAttribute", ProblemKind.INVALID, "fully qualified"),
    ("constraint-without-attribute", {**_requests(request("gpu")), "constraints": [{"requests": ["gpu"]}]},
     "spec.devices.constraints[0]", ProblemKind.REQUIRED, "matchAttribute"),
    ("constraint-both-attributes", {**_requests(request("gpu")),
                                    "constraints": [{"matchAttribute": "a.b/c", "distinctAttribute": "a.b/d"}]},
     "spec.devices.constraints[0]", ProblemKind.INVALID, "not both"),
    ("too-many-constraints", {**_requests(request("gpu")), "constraints": [{"matchAttribute": "a.b/c"}] * 33},
     "spec.devices.constraints", ProblemKind.TOO_MANY, "at most 32"),
    ("config-unknown-request", {**_requests(request("gpu")), "config": [
        {"requests": ["nic"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
     "spec.devices.config[0].requests[0]", ProblemKind.INVALID, "has: gpu"),
    ("config-without-opaque", {**_requests(request("gpu")), "config": [{"requests": ["gpu"]}]},
     "spec.devices.config[0].opaque", ProblemKind.REQUIRED, "opaque"),
    ("config-driver-required", {**_requests(request("gpu")), "config": [{"opaque": {"parameters": {"a": 1}}}]},
     "spec.devices.config[0].opaque.driver", ProblemKind.REQUIRED, "driver"),
    ("config-driver-format", {**_requests(request("gpu")), "config": [
        {"opaque": {"driver": "GPU_driver!", "parameters": {"a": 1}}}]},
     "spec.devices.config[0].opaque.driver", ProblemKind.INVALID, "DNS subdomain"),
    ("config-parameters-required", {**_requests(request("gpu")), "config": [{"opaque": {"driver": "a.b"}}]},
     "spec.devices.config[0].opaque.parameters", ProblemKind.REQUIRED, "configuration object"),
    ("config-parameters-not-object", {**_requests(request("gpu")), "config": [
        {"opaque": {"driver": "a.b", "parameters": 5}}]},
     "spec.devices.config[0].opaque.parameters", ProblemKind.INVALID, "JSON object"),
    ("config-parameters-too-big", {**_requests(request("gpu")), "config": [
        {"opaque": {"driver": "a.b", "parameters": {"blob": "x" * 11000}}}]},
     "spec.devices.config[0].opaque.parameters", ProblemKind.TOO_LONG, "10240"),
    ("too-many-configs", {**_requests(request("gpu")), "config": [
        {"opaque": {"driver": "a.b", "parameters": {"a": 1}}}] * 33},
     "spec.devices.config", ProblemKind.TOO_MANY, "at most 32"),
    ("flat-v1beta1-request", _requests({"name": "gpu", "deviceClassName": "gpu.example.com"}),
     "spec.devices.requests[0].deviceClassName", ProblemKind.UNKNOWN_FIELD, "under `exactly`"),
    ("unknown-field-typo", _requests(request(selector=[{"cel": {"expression": "true"}}])),
     "spec.devices.requests[0].exactly.selector", ProblemKind.UNKNOWN_FIELD, 'did you mean "selectors"'),
    ("wrong-type", _requests(request(count="two")),
     "spec.devices.requests[0].exactly.count", ProblemKind.INVALID, "expected int"),
]


@pytest.mark.parametrize(("devices", "field", "kind", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_claim_rule(devices: Wire, field: str, kind: ProblemKind, text: str) -> None:
    for claim_kind, prefix in (("ResourceClaim", "spec."), ("ResourceClaimTemplate", "spec.spec.")):
        problems = validate(GPU_CLASS, claim(devices, kind=claim_kind), compiler=FakeCompiler())
        full = prefix + field[len("spec."):]
        found = [p for p in at(problems, full) if p.kind is kind]
        assert found, f"no {kind.value} at {full}; got: {[str(p) for p in problems]}"
        assert any(text in f"{p.message} ({p.hint})" for p in found), [str(p) for p in found]
        assert all(p.is_error for p in found)
        assert found[0].line > 1  # points into the document, not at its start


def test_problem_text_reads_like_a_kubernetes_field_error() -> None:
    problems = validate(GPU_CLASS, claim(_requests(request(count=-1)), name="x"))
    text = str(at(problems, "spec.devices.requests[0].exactly.count")[0])
    assert text.startswith("test.yaml:")
    line = int(text.split(":")[1])
    assert line > 0
    assert text.endswith("ResourceClaim default/x: spec.devices.requests[0].exactly.count: Invalid value: -1: "
                         "must be at least 1")


def test_count_zero_is_defaulted_to_one_with_a_warning() -> None:
    # v1 defaulting turns count 0 into 1 for ExactCount, so the API server accepts it.
    problems = validate(GPU_CLASS, claim(_requests(request(count=0))))
    assert errors(problems) == []
    assert [p.severity for p in at(problems, "spec.devices.requests[0].exactly.count")] == [Severity.WARNING]


def test_a_request_under_32_devices_with_all_mode_is_fine() -> None:
    devices = _requests(request("a", count=32), request("b", allocationMode="All"))
    assert errors(validate(GPU_CLASS, claim(devices))) == []


def test_first_available_minimum_counts_the_smallest_subrequest() -> None:
    devices = _requests(request("a", count=31), {"name": "b", "firstAvailable": [_sub("x", count=4), _sub("y")]})
    assert errors(validate(GPU_CLASS, claim(devices))) == []


DEVICE_CLASS_CASES: list[tuple[str, Wire, str, ProblemKind, str]] = [
    ("class-name", {"metadata": {"name": "GPU"}}, "metadata.name", ProblemKind.INVALID, 'try "gpu"'),
    ("class-selector-without-cel", {"spec": {"selectors": [{}]}}, "spec.selectors[0].cel", ProblemKind.REQUIRED, ""),
    ("class-too-many-selectors", {"spec": {"selectors": [{"cel": {"expression": "true"}}] * 33}},
     "spec.selectors", ProblemKind.TOO_MANY, ""),
    ("class-config-driver", {"spec": {"config": [{"opaque": {"parameters": {"a": 1}}}]}},
     "spec.config[0].opaque.driver", ProblemKind.REQUIRED, ""),
    ("class-extended-resource-native", {"spec": {"extendedResourceName": "gpu"}},
     "spec.extendedResourceName", ProblemKind.INVALID, "extended resource name"),
    ("class-extended-resource-kubernetes-io", {"spec": {"extendedResourceName": "kubernetes.io/gpu"}},
     "spec.extendedResourceName", ProblemKind.INVALID, "outside kubernetes.io"),
    ("class-unknown-field", {"spec": {"selectors": [], "extendedResource": "nvidia.com/gpu"}},
     "spec.extendedResource", ProblemKind.UNKNOWN_FIELD, 'did you mean "extendedResourceName"'),
]


@pytest.mark.parametrize(("patch", "field", "kind", "text"), [c[1:] for c in DEVICE_CLASS_CASES],
                         ids=[c[0] for c in DEVICE_CLASS_CASES])
def test_device_class_rule(patch: Wire, field: str, kind: ProblemKind, text: str) -> None:
    device_class = {**GPU_CLASS, **patch}
    found = [p for p in at(validate(device_class, compiler=FakeCompiler()), field) if p.kind is kind]
    assert found and any(text in f"{p.message} ({p.hint})" for p in found)


def test_extended_resource_name_ok() -> None:
    device_class = {**GPU_CLASS, "spec": {"extendedResourceName": "nvidia.com/gpu"}}
    assert validate(device_class) == []


METADATA_CASES: list[tuple[str, Wire, str, ProblemKind]] = [
    ("name-required", {"namespace": "default"}, "metadata.name", ProblemKind.REQUIRED),
    ("name-too-long", {"name": "a" * 254}, "metadata.name", ProblemKind.INVALID),
    ("namespace-dns-label", {"name": "c", "namespace": "ML.team"}, "metadata.namespace", ProblemKind.INVALID),
    ("label-key", {"name": "c", "labels": {"-bad": "x"}}, "metadata.labels[-bad]", ProblemKind.INVALID),
    ("label-value", {"name": "c", "labels": {"ok": "not ok!"}}, "metadata.labels[ok]", ProblemKind.INVALID),
    ("generate-name", {"generateName": "Bad-"}, "metadata.generateName", ProblemKind.INVALID),
]


@pytest.mark.parametrize(("metadata", "field", "kind"), [c[1:] for c in METADATA_CASES],
                         ids=[c[0] for c in METADATA_CASES])
def test_metadata_rule(metadata: Wire, field: str, kind: ProblemKind) -> None:
    obj = {**claim(_requests(request())), "metadata": metadata}
    assert [p.kind for p in at(validate(GPU_CLASS, obj), field)] == [kind]


def test_generate_name_with_trailing_dash_is_fine() -> None:
    obj = {**claim(_requests(request())), "metadata": {"generateName": "gpu-claim-"}}
    assert validate(GPU_CLASS, obj) == []


def test_template_metadata_labels_are_checked() -> None:
    template = claim(_requests(request()), kind="ResourceClaimTemplate")
    template["spec"]["metadata"] = {"labels": {"app": "bad value!"}}
    assert [p.field for p in validate(GPU_CLASS, template)] == ["spec.metadata.labels[app]"]

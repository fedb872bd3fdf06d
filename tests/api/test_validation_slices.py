"""API rules of ResourceSlice, and the checks across the slices of a pool."""

from __future__ import annotations

from typing import Any

import pytest
from tests.builders.validation import Wire, at, device, errors, resource_slice, validate

from dratwin.api.validation import ProblemKind, Severity

GOOD_DEVICE = device(
    "gpu-0",
    attributes={
        "model": {"string": "H100"},
        "index": {"int": 0},
        "mig": {"bool": False},
        "driverVersion": {"version": "580.126.9"},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:44"},
    },
    capacity={"memory": {"value": "80Gi"}},
)


def test_a_valid_slice_has_no_problems() -> None:
    assert validate(resource_slice([GOOD_DEVICE, device("gpu-1")])) == []


def _counters_slice(**counters: Any) -> Wire:
    return resource_slice(name="counters", sharedCounters=[{"name": "gpu-0-set", "counters": counters}])


def _attrs(**attributes: Any) -> list[Wire]:
    return [device(attributes=attributes)]


def _with(**fields: Any) -> list[Wire]:
    return [device(**fields)]


SPEC_CASES: list[tuple[str, Wire, str, ProblemKind, str]] = [
    ("driver-required", resource_slice([], driver=""), "spec.driver", ProblemKind.REQUIRED, ""),
    ("driver-format", resource_slice([], driver="GPU_driver"), "spec.driver", ProblemKind.INVALID, "DNS subdomain"),
    ("driver-too-long", resource_slice([], driver="a" * 64), "spec.driver", ProblemKind.INVALID, "63"),
    ("pool-name-required", resource_slice([], pool={"name": "", "resourceSliceCount": 1}),
     "spec.pool.name", ProblemKind.REQUIRED, ""),
    ("pool-name-format", resource_slice([], pool={"name": "a/B_c", "resourceSliceCount": 1}),
     "spec.pool.name", ProblemKind.INVALID, "DNS subdomain"),
    ("pool-slice-count", resource_slice([], pool={"name": "p", "resourceSliceCount": 0}),
     "spec.pool.resourceSliceCount", ProblemKind.INVALID, "greater than zero"),
    ("pool-generation", resource_slice([], pool={"name": "p", "generation": -1, "resourceSliceCount": 1}),
     "spec.pool.generation", ProblemKind.INVALID, "zero or greater"),
    ("no-node-selection", resource_slice([], nodeName=None), "spec", ProblemKind.REQUIRED, "exactly one of"),
    ("two-node-selections", resource_slice([], allNodes=True), "spec", ProblemKind.INVALID, "exactly one of"),
    ("all-nodes-false", resource_slice([], nodeName=None, allNodes=False),
     "spec.allNodes", ProblemKind.INVALID, "unset or true"),
    ("node-name-empty", resource_slice([], nodeName=""), "spec.nodeName", ProblemKind.INVALID, ""),
    ("node-selector-two-terms", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}),
     "spec.nodeSelector.nodeSelectorTerms", ProblemKind.INVALID, "exactly one"),
    ("node-selector-operator", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator", ProblemKind.UNSUPPORTED, '"In"'),
    ("node-selector-in-without-values", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "In"}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", ProblemKind.REQUIRED, "In"),
    ("node-selector-exists-with-values", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", ProblemKind.FORBIDDEN, "Exists"),
    ("node-selector-gt-not-int", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", ProblemKind.INVALID, "integer"),
    ("node-selector-field-key", resource_slice([], nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["n"]}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key", ProblemKind.UNSUPPORTED, "metadata.name"),
    ("devices-and-counters", resource_slice([device()], sharedCounters=[{"name": "c", "counters": {"a": {
        "value": "1"}}}]), "spec", ProblemKind.INVALID, "only one of"),
    ("too-many-devices", resource_slice([device(f"d{i}") for i in range(129)]),
     "spec.devices", ProblemKind.TOO_MANY, "at most 128"),
    ("too-many-tainted-devices", resource_slice(
        [device(f"d{i}", taints=[{"key": "k", "effect": "NoSchedule"}] if i == 0 else []) for i in range(65)]),
     "spec.devices", ProblemKind.TOO_MANY, "at most 64"),
    ("too-many-counter-sets", resource_slice(None, sharedCounters=[
        {"name": f"s{i}", "counters": {"a": {"value": "1"}}} for i in range(9)]),
     "spec.sharedCounters", ProblemKind.TOO_MANY, "at most 8"),
    ("counter-set-name-duplicate", resource_slice(None, sharedCounters=[
        {"name": "s", "counters": {"a": {"value": "1"}}}] * 2),
     "spec.sharedCounters[1].name", ProblemKind.DUPLICATE, ""),
    ("counter-set-without-counters", resource_slice(None, sharedCounters=[{"name": "s"}]),
     "spec.sharedCounters[0].counters", ProblemKind.REQUIRED, ""),
    ("counter-name-format", resource_slice(None, sharedCounters=[{"name": "s", "counters": {"Mem": {"value": 1}}}]),
     "spec.sharedCounters[0].counters[Mem]", ProblemKind.INVALID, "DNS label"),
    ("counter-value-quantity", resource_slice(None, sharedCounters=[{"name": "s", "counters": {"m": {
        "value": "lots"}}}]), "spec.sharedCounters[0].counters[m].value", ProblemKind.INVALID, "quantity"),
]

DEVICE_CASES: list[tuple[str, list[Wire], str, ProblemKind, str]] = [
    ("device-name-required", [device("")], "spec.devices[0].name", ProblemKind.REQUIRED, ""),
    ("device-name-format", [device("GPU.0")], "spec.devices[0].name", ProblemKind.INVALID, 'try "gpu-0"'),
    ("device-name-duplicate", [device("a"), device("a")], "spec.devices[1].name", ProblemKind.DUPLICATE, ""),
    ("attribute-no-value", _attrs(model={}), "spec.devices[0].attributes[model]", ProblemKind.INVALID, "no value"),
    ("attribute-two-values", _attrs(model={"string": "a", "int": 1}),
     "spec.devices[0].attributes[model]", ProblemKind.INVALID, "several values"),
    ("attribute-name-format", _attrs(**{"bad-name": {"int": 1}}),
     "spec.devices[0].attributes[bad-name]", ProblemKind.INVALID, "C identifier"),
    ("attribute-name-too-long", _attrs(**{"a" * 33: {"int": 1}}),
     f"spec.devices[0].attributes[{'a' * 33}]", ProblemKind.INVALID, "32"),
    ("attribute-domain-format", _attrs(**{"Bad_Domain/x": {"int": 1}}),
     "spec.devices[0].attributes[Bad_Domain/x]", ProblemKind.INVALID, "domain"),
    ("attribute-two-slashes", _attrs(**{"a.b/c/d": {"int": 1}}),
     "spec.devices[0].attributes[a.b/c/d]", ProblemKind.INVALID, "one '/'"),
    ("string-too-long", _attrs(model={"string": "x" * 65}),
     "spec.devices[0].attributes[model].string", ProblemKind.TOO_LONG, "64"),
    ("version-not-semver", _attrs(cuda={"version": "v12.4"}),
     "spec.devices[0].attributes[cuda].version", ProblemKind.INVALID, 'try "12.4.0"'),
    ("version-leading-zero", _attrs(driver={"version": "535.104.05"}),
     "spec.devices[0].attributes[driver].version", ProblemKind.INVALID, 'try "535.104.5"'),
    ("list-attribute-empty", _attrs(numa={"ints": []}),
     "spec.devices[0].attributes[numa].ints", ProblemKind.INVALID, "empty"),
    ("too-many-attributes", _attrs(**{f"a{i}": {"int": i} for i in range(33)}),
     "spec.devices[0]", ProblemKind.TOO_MANY, "at most 32"),
    ("attributes-plus-capacities", [device(attributes={f"a{i}": {"int": i} for i in range(20)},
                                           capacity={f"c{i}": {"value": "1"} for i in range(13)})],
     "spec.devices[0]", ProblemKind.TOO_MANY, "at most 32"),
    ("capacity-quantity", _with(capacity={"memory": {"value": "80GiB"}}),
     "spec.devices[0].capacity[memory].value", ProblemKind.INVALID, "did you mean 80Gi"),
    ("request-policy-without-multi", _with(capacity={"memory": {"value": "80Gi", "requestPolicy": {
        "default": "1Gi"}}}), "spec.devices[0].capacity[memory].requestPolicy", ProblemKind.FORBIDDEN,
     "allowMultipleAllocations"),
    ("request-policy-both", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8", "requestPolicy": {
        "default": "1", "validValues": ["1"], "validRange": {"min": "1"}}}}),
     "spec.devices[0].capacity[m].requestPolicy", ProblemKind.FORBIDDEN, "only one of"),
    ("valid-values-need-default", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"validValues": ["1", "2"]}}}),
     "spec.devices[0].capacity[m].requestPolicy.default", ProblemKind.REQUIRED, "validValues"),
    ("valid-values-sorted", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "1", "validValues": ["2", "1"]}}}),
     "spec.devices[0].capacity[m].requestPolicy.validValues[1]", ProblemKind.INVALID, "ascending"),
    ("valid-values-over-capacity", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "1", "validValues": ["1", "16"]}}}),
     "spec.devices[0].capacity[m].requestPolicy.validValues[1]", ProblemKind.INVALID, "larger than the capacity"),
    ("valid-values-default-missing", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "3", "validValues": ["1", "2"]}}}),
     "spec.devices[0].capacity[m].requestPolicy.validValues", ProblemKind.INVALID, "default"),
    ("too-many-valid-values", _with(allowMultipleAllocations=True, capacity={"m": {"value": "100",
        "requestPolicy": {"default": "1", "validValues": [str(i) for i in range(1, 12)]}}}),
     "spec.devices[0].capacity[m].requestPolicy.validValues", ProblemKind.TOO_MANY, "at most 10"),
    ("range-needs-min", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "1", "validRange": {"max": "4"}}}}),
     "spec.devices[0].capacity[m].requestPolicy.validRange.min", ProblemKind.REQUIRED, ""),
    ("range-default-below-min", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8Gi",
        "requestPolicy": {"default": "512Mi", "validRange": {"min": "1Gi"}}}}),
     "spec.devices[0].capacity[m].requestPolicy.validRange.default", ProblemKind.INVALID, "less than min"),
    ("range-step-misaligned", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8Gi",
        "requestPolicy": {"default": "1536Mi", "validRange": {"min": "1Gi", "step": "1Gi"}}}}),
     "spec.devices[0].capacity[m].requestPolicy.validRange.step", ProblemKind.INVALID, "multiple of step"),
    ("range-step-zero", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "0"}}}}),
     "spec.devices[0].capacity[m].requestPolicy.validRange.step", ProblemKind.INVALID, "greater than zero"),
    ("range-max-over-capacity", _with(allowMultipleAllocations=True, capacity={"m": {"value": "8",
        "requestPolicy": {"default": "1", "validRange": {"min": "1", "max": "9"}}}}),
     "spec.devices[0].capacity[m].requestPolicy.validRange.max", ProblemKind.INVALID, "larger than the capacity"),
    ("too-many-taints", _with(taints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(17)]),
     "spec.devices[0].taints", ProblemKind.TOO_MANY, "at most 16"),
    ("taint-effect-required", _with(taints=[{"key": "k"}]), "spec.devices[0].taints[0].effect",
     ProblemKind.REQUIRED, ""),
    ("taint-effect-enum", _with(taints=[{"key": "k", "effect": "NoSchedul"}]),
     "spec.devices[0].taints[0].effect", ProblemKind.UNSUPPORTED, 'did you mean "NoSchedule"'),
    ("taint-key-required", _with(taints=[{"effect": "NoSchedule"}]),
     "spec.devices[0].taints[0].key", ProblemKind.INVALID, "empty"),
    ("too-many-consumptions", _with(consumesCounters=[{"counterSet": f"s{i}", "counters": {"a": {"value": 1}}}
                                                      for i in range(3)]),
     "spec.devices[0].consumesCounters", ProblemKind.TOO_MANY, "at most 2"),
    ("consumption-duplicate-set", _with(consumesCounters=[{"counterSet": "s", "counters": {"a": {"value": 1}}}] * 2),
     "spec.devices[0].consumesCounters[1].counterSet", ProblemKind.DUPLICATE, ""),
    ("consumption-without-counters", _with(consumesCounters=[{"counterSet": "s"}]),
     "spec.devices[0].consumesCounters[0].counters", ProblemKind.REQUIRED, ""),
    ("device-node-name-without-per-device", _with(nodeName="n"),
     "spec.devices[0].nodeName", ProblemKind.INVALID, "perDeviceNodeSelection"),
    ("binding-conditions-need-failures", _with(bindingConditions=["ready"]),
     "spec.devices[0].bindingFailureConditions", ProblemKind.INVALID, "required"),
    ("binding-conditions-overlap", _with(bindingConditions=["a"], bindingFailureConditions=["a"]),
     "spec.devices[0].bindingFailureConditions[0]", ProblemKind.INVALID, "binding condition"),
    ("too-many-binding-conditions", _with(bindingConditions=["a", "b", "c", "d", "e"],
                                          bindingFailureConditions=["f"]),
     "spec.devices[0].bindingConditions", ProblemKind.TOO_MANY, "at most 4"),
    ("v1beta1-basic", [{"name": "gpu-0", "basic": {"attributes": {}}}],
     "spec.devices[0].basic", ProblemKind.UNKNOWN_FIELD, "up one level"),
]


def _check(obj: Wire, field: str, kind: ProblemKind, text: str) -> None:
    problems = validate(obj)
    found = [p for p in at(problems, field) if p.kind is kind and p.is_error]
    assert found, f"no {kind.value} at {field}; got: {[str(p) for p in problems]}"
    assert any(text in f"{p.message} ({p.hint})" for p in found), [str(p) for p in found]


@pytest.mark.parametrize(("obj", "field", "kind", "text"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_slice_rule(obj: Wire, field: str, kind: ProblemKind, text: str) -> None:
    _check(obj, field, kind, text)


@pytest.mark.parametrize(("devices", "field", "kind", "text"), [c[1:] for c in DEVICE_CASES],
                         ids=[c[0] for c in DEVICE_CASES])
def test_device_rule(devices: list[Wire], field: str, kind: ProblemKind, text: str) -> None:
    _check(resource_slice(devices), field, kind, text)


def test_per_device_node_selection_needs_one_choice_per_device() -> None:
    obj = resource_slice([device("a", nodeName="n1"), device("b"), device("c", allNodes=True, nodeName="n2")],
                         nodeName=None, perDeviceNodeSelection=True)
    problems = errors(validate(obj))
    assert [(p.field, p.kind) for p in problems] == [
        ("spec.devices[1]", ProblemKind.REQUIRED),
        ("spec.devices[2]", ProblemKind.INVALID),
    ]


def test_128_plain_devices_and_64_tainted_ones_are_fine() -> None:
    assert validate(resource_slice([device(f"d{i}") for i in range(128)])) == []
    tainted = [device(f"d{i}", taints=[{"key": "k", "effect": "NoSchedule"}]) for i in range(64)]
    assert validate(resource_slice(tainted)) == []


def test_range_policy_aligned_to_step_is_fine() -> None:
    policy = {"default": "2Gi", "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}}
    capacity = {"m": {"value": "8Gi", "requestPolicy": policy}}
    obj = resource_slice(_with(allowMultipleAllocations=True, capacity=capacity))
    assert validate(obj) == []


# ---- pools ---------------------------------------------------------------------------------------


def _pool(count: int, **fields: Any) -> Wire:
    return {"name": "node-1", "generation": 1, "resourceSliceCount": count, **fields}


def test_counter_references_across_slices_of_a_complete_pool() -> None:
    counters = resource_slice(name="counters", pool=_pool(2),
                              sharedCounters=[{"name": "gpu-0-set", "counters": {"memory": {"value": "40Gi"}}}])
    devices = resource_slice([
        device("ok", consumesCounters=[{"counterSet": "gpu-0-set", "counters": {"memory": {"value": "5Gi"}}}]),
        device("bad-set", consumesCounters=[{"counterSet": "gpu-0-sets", "counters": {"memory": {"value": "1"}}}]),
        device("bad-counter", consumesCounters=[{"counterSet": "gpu-0-set", "counters": {"memroy": {"value": "1"}}}]),
    ], name="devices", pool=_pool(2))
    problems = errors(validate(counters, devices))
    assert [(p.field, p.kind, p.hint) for p in problems] == [
        ("spec.devices[1].consumesCounters[0].counterSet", ProblemKind.NOT_FOUND, 'did you mean "gpu-0-set"?'),
        ("spec.devices[2].consumesCounters[0].counters[memroy]", ProblemKind.NOT_FOUND, 'did you mean "memory"?'),
    ]


def test_duplicate_device_across_slices_of_a_pool() -> None:
    first = resource_slice([device("gpu-0")], name="a", pool=_pool(2))
    second = resource_slice([device("gpu-0")], name="b", pool=_pool(2))
    problems = validate(first, second)
    assert [(p.object, p.field, p.kind) for p in problems] == [
        ("ResourceSlice b", "spec.devices[0].name", ProblemKind.DUPLICATE)]


def test_incomplete_pool_is_a_warning() -> None:
    problems = validate(resource_slice([device("gpu-0", consumesCounters=[
        {"counterSet": "elsewhere", "counters": {"m": {"value": "1"}}}])], pool=_pool(2)))
    assert [(p.field, p.severity) for p in problems] == [("spec.pool.resourceSliceCount", Severity.WARNING)]
    assert "incomplete" in problems[0].message


def test_more_slices_than_declared_is_a_warning() -> None:
    problems = validate(resource_slice([device("a")], name="a"), resource_slice([device("b")], name="b"))
    assert [(p.field, p.severity) for p in problems] == [("spec.pool.resourceSliceCount", Severity.WARNING)]


def test_older_generation_is_reported_as_ignored() -> None:
    old = resource_slice([device("a")], name="old", pool=_pool(1, generation=1))
    new = resource_slice([device("a")], name="new", pool=_pool(1, generation=2))
    problems = validate(old, new)
    assert [(p.object, p.severity) for p in problems] == [("ResourceSlice old", Severity.WARNING)]

"""Structural checks as strict as the API server under kubectl's ``--validate=strict``: one table per class of
problem (unknown fields, wrong types, quantities, required fields), each case a real object with one
mistake, the field it is reported at, and the hint or message the user gets."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.validation import as_yaml

from dratwin.api.intake import read_object
from dratwin.api.loader import load_text
from dratwin.api.schema import QUANTITY_FORMAT, IssueKind, builtin_schema, check_structure
from dratwin.api.validation_base import Problem, ProblemKind

Wire = dict[str, Any]

POD: Wire = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "labels": {"app": "x"}},
    "spec": {
        "containers": [{"name": "c", "image": "busybox", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                        "securityContext": {"allowPrivilegeEscalation": False}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
    },
}
DEPLOYMENT: Wire = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
             "template": {"metadata": {"labels": {"app": "x"}}, "spec": copy.deepcopy(POD["spec"])}},
}
CRONJOB: Wire = {
    "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
    "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}},
}
CLAIM: Wire = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}},
}
SLICE: Wire = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "generation": 1,
                                                                     "resourceSliceCount": 1},
             "devices": [{"name": "g0", "attributes": {"model": {"string": "A100"}},
                          "capacity": {"memory": {"value": "80Gi"}}}]},
}
NODEPOOL: Wire = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
    "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]}]}}},
}
EC2NODECLASS: Wire = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
    "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
             "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
             "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
             "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "200Gi"}}]},
}
NODE: Wire = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
              "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 8}}}


def with_value(base: Wire, path: str, value: Any) -> Wire:
    """A copy of ``base`` with ``value`` at the dotted ``path`` (numbers index lists); None deletes."""
    obj = copy.deepcopy(base)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = obj
    for part in parents:
        node = node[part]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return obj


def problems_of(obj: Wire) -> list[Problem]:
    [loaded] = load_text(as_yaml([obj]), "in.yaml")
    return read_object(loaded).problems


def at(problems: list[Problem], field: str) -> list[Problem]:
    return [p for p in problems if p.field == field]


# ---- every sample is valid as it is ----------------------------------------------------------------


@pytest.mark.parametrize("obj", [POD, DEPLOYMENT, CRONJOB, CLAIM, SLICE, NODEPOOL, EC2NODECLASS, NODE],
                         ids=lambda o: o["kind"])
def test_the_samples_have_no_structural_problem(obj: Wire) -> None:
    assert [str(p) for p in problems_of(obj)] == []


# ---- unknown fields ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unknown:
    name: str
    obj: Wire
    field: str
    hint: str


UNKNOWN = [
    # The reproducers of the issue: Karpenter's own GPU example, a container's claims, an operator.
    Unknown("security-context", with_value(POD, "spec.containers.0.securityContext",
                                           {"allowPrivilegedEscalation": False}),
            "spec.containers[0].securityContext.allowPrivilegedEscalation", 'did you mean "allowPrivilegeEscalation"?'),
    Unknown("container-claim", with_value(POD, "spec.containers.0.resources.claim", [{"name": "gpu"}]),
            "spec.containers[0].resources.claim", 'did you mean "claims"?'),
    Unknown("pod-resource-claim-singular", with_value(POD, "spec.resourceClaim", []),
            "spec.resourceClaim", 'did you mean "resourceClaims"?'),
    Unknown("case-first", with_value(POD, "spec.Containers", []), "spec.Containers", 'did you mean "containers"?'),
    Unknown("nodepool-operater", with_value(NODEPOOL, "spec.template.spec.requirements.0.operater", "In"),
            "spec.template.spec.requirements[0].operater", 'did you mean "operator"?'),
    Unknown("metadata", with_value(POD, "metadata.label", {"a": "b"}), "metadata.label", 'did you mean "labels"?'),
    Unknown("deployment", with_value(DEPLOYMENT, "spec.replica", 2), "spec.replica", 'did you mean "replicas"?'),
    Unknown("template-container", with_value(DEPLOYMENT, "spec.template.spec.containers.0.imagePullPolicyy", "x"),
            "spec.template.spec.containers[0].imagePullPolicyy", 'did you mean "imagePullPolicy"?'),
    Unknown("cronjob", with_value(CRONJOB, "spec.jobTemplate.spec.backofLimit", 1), "spec.jobTemplate.spec.backofLimit",
            'did you mean "backoffLimit"?'),
    Unknown("node", with_value(NODE, "spec", {"unschedulabel": True}), "spec.unschedulabel",
            'did you mean "unschedulable"?'),
    Unknown("claim-v1-flat-field", with_value(CLAIM, "spec.devices.requests.0.count", 1),
            "spec.devices.requests[0].count", "under `exactly`"),
    Unknown("slice-attribute", with_value(SLICE, "spec.devices.0.attributes.model", {"strng": "A100"}),
            "spec.devices[0].attributes[model].strng", 'did you mean "string"?'),
    Unknown("slice-v1-basic", with_value(SLICE, "spec.devices.0.basic", {}), "spec.devices[0].basic",
            "move the fields inside `basic` up one level"),
    Unknown("ec2nodeclass-full-spec", with_value(EC2NODECLASS, "spec.blockDeviceMappings.0.ebs.volumeSise", "1Gi"),
            "spec.blockDeviceMappings[0].ebs.volumeSise", 'did you mean "volumeSize"?'),
    Unknown("top-level", with_value(CLAIM, "specs", {}), "specs", 'did you mean "spec"?'),
]


@pytest.mark.parametrize("case", UNKNOWN, ids=lambda c: c.name)
def test_unknown_fields_are_errors_with_a_hint(case: Unknown) -> None:
    found = at(problems_of(case.obj), case.field)
    assert [p.kind for p in found] == [ProblemKind.UNKNOWN_FIELD], [str(p) for p in found]
    assert found[0].is_error and case.hint in found[0].hint


def test_every_unknown_field_of_an_object_is_reported_with_its_line() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n"
            "    imagee: y\n  nodeSelectr: {a: b}\n")
    [loaded] = load_text(text, "pod.yaml")
    problems = read_object(loaded).problems
    assert [(p.line, p.field) for p in problems] == [(8, "spec.containers[0].imagee"), (9, "spec.nodeSelectr")]
    assert str(problems[0]).startswith("pod.yaml:8: Pod default/p: spec.containers[0].imagee: Unknown field: ")


# ---- wrong types ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WrongType:
    name: str
    obj: Wire
    field: str
    message: str
    hint: str = ""


WRONG_TYPES = [
    WrongType("count-quoted", with_value(CLAIM, "spec.devices.requests.0.exactly.count", "2"),
              "spec.devices.requests[0].exactly.count", "must be an integer (int64), not a string",
              "write 2 without quotes"),
    WrongType("int-for-string", with_value(POD, "spec.containers.0.image", 1), "spec.containers[0].image",
              "must be a string, not a number", 'quote the value: "1"'),
    WrongType("yaml-bool-for-string", with_value(POD, "metadata.labels.app", True), "metadata.labels[app]",
              "must be a string, not a boolean", "YAML reads an unquoted yes, no, on, off"),
    WrongType("string-for-bool", with_value(POD, "spec.containers.0.securityContext.allowPrivilegeEscalation",
                                            "false"),
              "spec.containers[0].securityContext.allowPrivilegeEscalation", "must be a boolean",
              "write false without quotes"),
    WrongType("metadata-list", with_value(POD, "metadata", ["a"]), "metadata", "must be an object (v1.ObjectMeta), "
              "not a list", "write a mapping"),
    WrongType("containers-mapping", with_value(POD, "spec.containers", {"name": "c"}), "spec.containers",
              "must be a list ([]v1.Container), not a mapping", "write a list"),
    WrongType("fraction-for-int", with_value(DEPLOYMENT, "spec.replicas", 1.5), "spec.replicas",
              "must be an integer (int32), not a number"),
    WrongType("int32-overflow", with_value(DEPLOYMENT, "spec.replicas", 2**31), "spec.replicas",
              "must be an integer (int32)"),
    WrongType("time", with_value(POD, "metadata.creationTimestamp", "yesterday"), "metadata.creationTimestamp",
              "must be a time in RFC 3339 format"),
    WrongType("int-or-string", with_value(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": 1.5}}),
              "spec.strategy.rollingUpdate.maxSurge", "must be an integer or a string"),
    WrongType("attribute", with_value(SLICE, "spec.devices.0.attributes.model", {"int": "7"}),
              "spec.devices[0].attributes[model].int", "must be an integer (int64)", "write 7 without quotes"),
    WrongType("crd-field", with_value(NODEPOOL, "spec.weight", "10"), "spec.weight", "must be an integer (int32)"),
]


@pytest.mark.parametrize("case", WRONG_TYPES, ids=lambda c: c.name)
def test_wrong_types_are_errors(case: WrongType) -> None:
    found = at(problems_of(case.obj), case.field)
    assert [p.kind for p in found] == [ProblemKind.INVALID], [str(p) for p in found]
    assert case.message in found[0].message
    assert case.hint in found[0].hint


@pytest.mark.parametrize(("name", "obj"), [
    ("integral-float", with_value(DEPLOYMENT, "spec.replicas", 2.0)),  # YAML 2.0 reaches the server as 2
    ("null-is-absent", with_value(CLAIM, "spec", None) | {"spec": None}),
    ("null-field", with_value(POD, "spec.nodeSelector", {}) | {"status": None}),
    ("int-or-string-percent", with_value(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": "25%"}})),
    ("opaque-parameters", with_value(CLAIM, "spec.devices.config", [{"opaque": {"driver": "d", "parameters": {
        "any": [1, {"thing": True}]}}}])),
])
def test_values_the_decoder_accepts(name: str, obj: Wire) -> None:
    assert [str(p) for p in problems_of(obj)] == []


def test_an_object_with_a_wrong_type_is_not_typed() -> None:
    [loaded] = load_text(as_yaml([with_value(CLAIM, "spec.devices.requests.0.exactly.count", "2")]))
    assert read_object(loaded).typed is False
    [loaded] = load_text(as_yaml([with_value(CLAIM, "spec.devices.requests.0.exactly.cnt", 2)]))
    assert read_object(loaded).typed is True  # an unknown field alone leaves the rest readable


# ---- quantities -------------------------------------------------------------------------------------

QUANTITIES = [
    ("limits-word", with_value(POD, "spec.containers.0.resources.limits.cpu", "abc"),
     "spec.containers[0].resources.limits[cpu]"),
    ("limits-two-dots", with_value(POD, "spec.containers.0.resources.limits.memory", "1.5.5Gi"),
     "spec.containers[0].resources.limits[memory]"),
    ("suffix-case", with_value(POD, "spec.containers.0.resources.limits.memory", "1gi"),
     "spec.containers[0].resources.limits[memory]"),
    ("overhead", with_value(POD, "spec.overhead", {"cpu": "1 core"}), "spec.overhead[cpu]"),
    ("capacity", with_value(SLICE, "spec.devices.0.capacity.memory.value", "80GB"),
     "spec.devices[0].capacity[memory].value"),
    ("node-allocatable", with_value(NODE, "status.allocatable.memory", True), "status.allocatable[memory]"),
    ("claim-capacity-request", with_value(CLAIM, "spec.devices.requests.0.exactly.capacity",
                                          {"requests": {"memory": "lots"}}),
     "spec.devices.requests[0].exactly.capacity.requests[memory]"),
]


@pytest.mark.parametrize(("name", "obj", "field"), QUANTITIES, ids=[c[0] for c in QUANTITIES])
def test_invalid_quantities_get_the_api_servers_message(name: str, obj: Wire, field: str) -> None:
    found = at(problems_of(obj), field)
    assert [(p.kind, p.message) for p in found] == [(ProblemKind.INVALID, QUANTITY_FORMAT)], [str(p) for p in found]


@pytest.mark.parametrize("value", ["100m", "1e3", "1.5Gi", 2, 0.5, "+1", ".5", "1E", " 2Gi "])
def test_valid_quantities(value: Any) -> None:
    assert problems_of(with_value(POD, "spec.containers.0.resources.limits.memory", value)) == []


def test_a_misspelt_suffix_gets_a_did_you_mean() -> None:
    [problem] = at(problems_of(with_value(POD, "spec.containers.0.resources.limits.memory", "1gi")),
                   "spec.containers[0].resources.limits[memory]")
    assert "Gi" in problem.hint


# ---- required fields --------------------------------------------------------------------------------

REQUIRED = [
    ("pod-without-containers", with_value(POD, "spec.containers", None), "spec.containers"),
    ("pod-without-spec", with_value(POD, "spec", None), "spec.containers"),
    ("container-without-name", with_value(POD, "spec.containers.0.name", None), "spec.containers[0].name"),
    ("container-without-image", with_value(POD, "spec.containers.0.image", None), "spec.containers[0].image"),
    ("init-container-without-image", with_value(POD, "spec.initContainers", [{"name": "i"}]),
     "spec.initContainers[0].image"),
    ("env-without-name", with_value(POD, "spec.containers.0.env", [{"value": "1"}]), "spec.containers[0].env[0].name"),
    ("deployment-without-selector", with_value(DEPLOYMENT, "spec.selector", None), "spec.selector"),
    ("deployment-without-template", with_value(DEPLOYMENT, "spec.template", None), "spec.template.spec.containers"),
    ("cronjob-without-schedule", with_value(CRONJOB, "spec.schedule", None), "spec.schedule"),
    ("template-without-containers", with_value(CRONJOB, "spec.jobTemplate.spec.template.spec.containers", None),
     "spec.jobTemplate.spec.template.spec.containers"),
    ("nodepool-crd-required", with_value(NODEPOOL, "spec.template.spec.nodeClassRef", None),
     "spec.template.spec.nodeClassRef"),
]


@pytest.mark.parametrize(("name", "obj", "field"), REQUIRED, ids=[c[0] for c in REQUIRED])
def test_required_fields(name: str, obj: Wire, field: str) -> None:
    found = at(problems_of(obj), field)
    assert [p.kind for p in found] == [ProblemKind.REQUIRED], [str(p) for p in problems_of(obj)]


def test_a_crd_status_is_not_checked_for_required_fields() -> None:
    status = {"conditions": [{"type": "Ready", "status": "True"}]}  # lastTransitionTime etc. are required
    assert problems_of(NODEPOOL | {"status": status}) == []


def test_the_schema_knows_every_kind_dratwin_reads() -> None:
    kinds = set(builtin_schema().kinds)
    for version in ("v1", "v1beta2", "v1beta1"):
        for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"):
            assert f"resource.k8s.io/{version}/{kind}" in kinds
    assert {"v1/Pod", "v1/Node", "v1/Namespace", "v1/ReplicationController", "v1/PodTemplate", "apps/v1/Deployment",
            "apps/v1/ReplicaSet", "apps/v1/StatefulSet", "apps/v1/DaemonSet", "batch/v1/Job", "batch/v1/CronJob",
            "karpenter.sh/v1/NodePool", "karpenter.sh/v1/NodeClaim", "karpenter.k8s.aws/v1/EC2NodeClass"} <= kinds
    assert "k8s.io/api v0.36.2" in builtin_schema().source["builtin"]


def test_issues_come_in_document_order_with_paths() -> None:
    root = builtin_schema().kind("v1", "Pod")
    assert root is not None
    obj = with_value(with_value(POD, "spec.containers.0.imagee", "x"), "spec.priority", "high")
    issues = check_structure(obj, root)
    assert [(i.kind, i.path) for i in issues] == [
        (IssueKind.UNKNOWN_FIELD, ("spec", "containers", 0, "imagee")),
        (IssueKind.WRONG_TYPE, ("spec", "priority")),
    ]

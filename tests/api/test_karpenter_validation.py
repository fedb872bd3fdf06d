"""Rules of NodePool, NodeClaim and EC2NodeClass, one bad input per rule, and their references."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.validation import Wire, as_yaml, at, validate

from dratwin.api.validation import ProblemKind, Severity

ERROR, WARNING = Severity.ERROR, Severity.WARNING
DELETE = object()
REQS = "spec.template.spec.requirements"

NODEPOOL: Wire = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu"},
    "spec": {
        "template": {
            "metadata": {"labels": {"example.com/team": "ml"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5", "p5en"],
                     "minValues": 2},
                    {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["8"]},
                    {"key": "example.com/team", "operator": "In", "values": ["ml"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                "startupTaints": [{"key": "example.com/agent-not-ready", "value": "true", "effect": "NoExecute"}],
                "expireAfter": "720h",
                "terminationGracePeriod": "1h30m",
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m",
                       "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": "@daily", "duration": "8h",
                                                      "reasons": ["Drifted", "Underutilized"]}]},
        "limits": {"cpu": "1000", "nvidia.com/gpu": 64},
        "weight": 10,
    },
}
EC2NODECLASS: Wire = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "gpu", "annotations": {"karpenter.k8s.aws/nvidia-consumable-capacity": "memory"}},
    "spec": {
        "role": "KarpenterNodeRole-demo",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "subnet-0abc"}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True,
                                 "ebs": {"volumeSize": "200Gi", "volumeType": "gp3"}}],
        "networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                              {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}],
        "kubelet": {"maxPods": 110, "systemReserved": {"cpu": "100m"}, "kubeReserved": {"memory": "1Gi"}},
    },
}
NODECLAIM: Wire = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodeClaim",
    "metadata": {"name": "gpu-x7k2p", "labels": {"karpenter.sh/nodepool": "gpu"}},
    "spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
        "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["gpu"]},
                         {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}],
        "resources": {"requests": {"cpu": "1500m", "nvidia.com/gpu": "8"}},
    },
}


def edited(base: Wire, *changes: tuple[str, Any]) -> Wire:
    """A copy of ``base`` with each dotted path set (DELETE removes it; digits index lists, one past the end
    appends)."""
    obj = copy.deepcopy(base)
    for path, value in changes:
        *parents, last = path.split(".")
        target: Any = obj
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        key: Any = int(last) if last.isdigit() else last
        if value is DELETE:
            del target[key]
        elif isinstance(target, list) and key == len(target):
            target.append(value)
        else:
            target[key] = value
    return obj


def pool(*changes: tuple[str, Any]) -> list[Wire]:
    return [edited(NODEPOOL, *changes), EC2NODECLASS]


def node_class(*changes: tuple[str, Any]) -> list[Wire]:
    return [NODEPOOL, edited(EC2NODECLASS, *changes)]


def claim(*changes: tuple[str, Any]) -> list[Wire]:
    return [edited(NODECLAIM, *changes), EC2NODECLASS]


def requirement(key: str, operator: str, *values: str, **extra: Any) -> Wire:
    return {"key": key, "operator": operator, "values": list(values), **extra}


def interface(card: int, device: int, interface_type: str) -> Wire:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": interface_type}


def one(*requirements: Wire) -> tuple[str, list[Wire]]:
    return (REQS, list(requirements))


@dataclass(frozen=True)
class Case:
    name: str
    objects: list[Wire]
    field: str
    kind: ProblemKind
    expect: str  # part of the message or hint
    severity: Severity = ERROR


CASES = [
    # ---- NodePool requirements
    Case("requirements-required", pool((REQS, DELETE)), REQS, ProblemKind.REQUIRED, "empty list"),
    Case("too-many-requirements", pool(one(*[requirement(f"example.com/k{i}", "Exists") for i in range(101)])),
         REQS, ProblemKind.TOO_MANY, "at most 100"),
    Case("operator-enum", pool(one(requirement("example.com/a", "in", "x"))), f"{REQS}[0].operator",
         ProblemKind.UNSUPPORTED, 'did you mean "In"'),
    Case("operator-required", pool(one({"key": "example.com/a", "values": ["x"]})), f"{REQS}[0].operator",
         ProblemKind.REQUIRED, "Gte"),
    Case("key-required", pool(one(requirement("", "Exists"))), f"{REQS}[0].key", ProblemKind.REQUIRED, "label key"),
    Case("key-format", pool(one(requirement("example.com/a b", "Exists"))), f"{REQS}[0].key", ProblemKind.INVALID,
         "name part"),
    Case("value-format", pool(one(requirement("example.com/a", "In", "a b"))), f"{REQS}[0].values[0]",
         ProblemKind.INVALID, "letters, digits"),
    Case("in-needs-values", pool(one(requirement("example.com/a", "In"))), f"{REQS}[0].values",
         ProblemKind.REQUIRED, "requirements with operator 'In' must have a value defined"),
    Case("gt-not-an-integer", pool(one(requirement("karpenter.k8s.aws/instance-cpu", "Gt", "4x"))),
         f"{REQS}[0].values", ProblemKind.INVALID, 'must have a single positive integer value (e.g. values: ["4"])'),
    Case("lt-negative", pool(one(requirement("karpenter.k8s.aws/instance-cpu", "Lt", "-1"))), f"{REQS}[0].values",
         ProblemKind.INVALID, "single positive integer"),
    Case("gte-two-values", pool(one(requirement("karpenter.k8s.aws/instance-cpu", "Gte", "1", "2"))),
         f"{REQS}[0].values", ProblemKind.INVALID, "single positive integer"),
    Case("exists-ignores-values", pool(one(requirement("example.com/a", "Exists", "x"))), f"{REQS}[0].values",
         ProblemKind.INVALID, "ignored with operator Exists", WARNING),
    Case("min-values-above-50", pool(one(requirement("example.com/a", "Exists", minValues=51))),
         f"{REQS}[0].minValues", ProblemKind.INVALID, "between 1 and 50"),
    Case("min-values-zero", pool(one(requirement("example.com/a", "Exists", minValues=0))),
         f"{REQS}[0].minValues", ProblemKind.INVALID, "between 1 and 50"),
    Case("min-values-more-than-values", pool(one(requirement("karpenter.k8s.aws/instance-family", "In", "p5", "p4d",
                                                             minValues=3))),
         f"{REQS}[0].minValues", ProblemKind.INVALID, "at least that many values specified in the 'values' field"),
    Case("nodepool-key-restricted", pool(one(requirement("karpenter.sh/nodepool", "In", "a"))), f"{REQS}[0].key",
         ProblemKind.INVALID, 'label "karpenter.sh/nodepool" is restricted'),
    Case("karpenter-domain-restricted", pool(one(requirement("karpenter.sh/initialized", "Exists"))),
         f"{REQS}[0].key", ProblemKind.INVALID, 'label domain "karpenter.sh" is restricted'),
    Case("aws-domain-restricted-with-hint", pool(one(requirement("karpenter.k8s.aws/instance-gpu", "Exists"))),
         f"{REQS}[0].key", ProblemKind.INVALID, 'did you mean "karpenter.k8s.aws/instance-gpu-count"?'),
    Case("hostname-restricted", pool(one(requirement("kubernetes.io/hostname", "In", "n1"))), f"{REQS}[0].key",
         ProblemKind.INVALID, 'label "kubernetes.io/hostname" is restricted'),
    Case("capacity-type-no-valid-value", pool(one(requirement("karpenter.sh/capacity-type", "In", "ondemand"))),
         f"{REQS}[0].values", ProblemKind.INVALID, 'would not become Ready (did you mean "on-demand"?)'),
    Case("capacity-type-some-invalid", pool(one(requirement("karpenter.sh/capacity-type", "In", "spot", "Spot2"))),
         f"{REQS}[0].values", ProblemKind.INVALID, "Karpenter ignores it", WARNING),
    Case("capacity-type-min-values-counts-valid-values",
         pool(one(requirement("karpenter.sh/capacity-type", "In", "spot", "cheap", minValues=2))),
         f"{REQS}[0].minValues", ProblemKind.INVALID, "not enough valid values"),
    Case("tenancy-values", pool(one(requirement("karpenter.k8s.aws/instance-tenancy", "In", "shared"))),
         f"{REQS}[0].values", ProblemKind.INVALID, "dedicated, default"),
    Case("typo-of-a-well-known-label", pool(one(requirement("node.kubernetes.io/instance-typ", "In", "p5.48xlarge"))),
         f"{REQS}[0].key", ProblemKind.INVALID, 'did you mean "node.kubernetes.io/instance-type"?', WARNING),
    Case("same-name-in-another-domain", pool(one(requirement("kubernetes.io/instance-type", "In", "p5.48xlarge"))),
         f"{REQS}[0].key", ProblemKind.INVALID, 'did you mean "node.kubernetes.io/instance-type"?', WARNING),
    # ---- NodePool template labels and taints
    Case("label-restricted-domain", pool(("spec.template.metadata.labels", {"karpenter.sh/team": "a"})),
         "spec.template.metadata.labels[karpenter.sh/team]", ProblemKind.INVALID, 'label domain "karpenter.sh"'),
    Case("label-nodepool", pool(("spec.template.metadata.labels", {"karpenter.sh/nodepool": "a"})),
         "spec.template.metadata.labels[karpenter.sh/nodepool]", ProblemKind.INVALID, "NodePool's name"),
    Case("label-value-format", pool(("spec.template.metadata.labels", {"example.com/team": "m l"})),
         "spec.template.metadata.labels[example.com/team]", ProblemKind.INVALID, "letters, digits"),
    Case("label-contradicts-requirement", pool(("spec.template.metadata.labels", {"example.com/team": "infra"})),
         "spec.template.metadata.labels[example.com/team]", ProblemKind.INVALID,
         'requirement "example.com/team In [ml]": pods that select example.com/team can never use', WARNING),
    Case("taint-effect-enum", pool(("spec.template.spec.taints.0.effect", "NoScheduled")),
         "spec.template.spec.taints[0].effect", ProblemKind.UNSUPPORTED, 'did you mean "NoSchedule"'),
    Case("taint-effect-required", pool(("spec.template.spec.taints.0.effect", DELETE)),
         "spec.template.spec.taints[0].effect", ProblemKind.REQUIRED, "PreferNoSchedule"),
    Case("taint-key-required", pool(("spec.template.spec.taints.0.key", DELETE)),
         "spec.template.spec.taints[0].key", ProblemKind.REQUIRED, ""),
    Case("taint-value-format", pool(("spec.template.spec.taints.0.value", "a b")),
         "spec.template.spec.taints[0].value", ProblemKind.INVALID, "name part"),
    Case("taint-duplicated-in-startup-taints",
         pool(("spec.template.spec.startupTaints", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])),
         "spec.template.spec.startupTaints[0]", ProblemKind.DUPLICATE, "duplicate taint Key/Effect pair"),
    # ---- NodePool nodeClassRef and durations
    Case("node-class-ref-required", pool(("spec.template.spec.nodeClassRef", DELETE)),
         "spec.template.spec.nodeClassRef", ProblemKind.REQUIRED, "kind: EC2NodeClass"),
    Case("node-class-ref-group-empty", pool(("spec.template.spec.nodeClassRef.group", "")),
         "spec.template.spec.nodeClassRef.group", ProblemKind.REQUIRED, "group may not be empty"),
    Case("node-class-ref-group-with-version", pool(("spec.template.spec.nodeClassRef.group", "karpenter.k8s.aws/v1")),
         "spec.template.spec.nodeClassRef.group", ProblemKind.INVALID, 'use "karpenter.k8s.aws"'),
    Case("node-class-ref-kind-empty", pool(("spec.template.spec.nodeClassRef.kind", DELETE)),
         "spec.template.spec.nodeClassRef.kind", ProblemKind.REQUIRED, "kind may not be empty"),
    Case("node-class-ref-name-empty", pool(("spec.template.spec.nodeClassRef.name", "")),
         "spec.template.spec.nodeClassRef.name", ProblemKind.REQUIRED, "name may not be empty"),
    Case("node-class-ref-kind-typo", pool(("spec.template.spec.nodeClassRef.kind", "EC2NodeClas")),
         "spec.template.spec.nodeClassRef.kind", ProblemKind.UNSUPPORTED, 'did you mean "EC2NodeClass"'),
    Case("v1beta1-node-class-ref", pool(("spec.template.spec.nodeClassRef.apiVersion", "karpenter.k8s.aws/v1beta1")),
         "spec.template.spec.nodeClassRef.apiVersion", ProblemKind.UNKNOWN_FIELD, "group without version"),
    Case("v1beta1-kubelet", pool(("spec.template.spec.kubelet", {"maxPods": 110})),
         "spec.template.spec.kubelet", ProblemKind.UNKNOWN_FIELD, "moved kubelet to the EC2NodeClass"),
    Case("expire-after-in-days", pool(("spec.template.spec.expireAfter", "30d")), "spec.template.spec.expireAfter",
         ProblemKind.INVALID, "use 720h"),
    Case("expire-after-never-spelling", pool(("spec.template.spec.expireAfter", "never")),
         "spec.template.spec.expireAfter", ProblemKind.INVALID, 'write "Never"'),
    Case("termination-grace-period-never", pool(("spec.template.spec.terminationGracePeriod", "Never")),
         "spec.template.spec.terminationGracePeriod", ProblemKind.INVALID, "cannot be Never"),
    Case("consolidate-after-fraction", pool(("spec.disruption.consolidateAfter", "1.5h")),
         "spec.disruption.consolidateAfter", ProblemKind.INVALID, "whole numbers of s, m or h"),
    # ---- NodePool disruption, limits, weight, static pools
    Case("consolidation-policy-enum", pool(("spec.disruption.consolidationPolicy", "WhenUnderutilized")),
         "spec.disruption.consolidationPolicy", ProblemKind.UNSUPPORTED, 'did you mean "WhenEmptyOrUnderutilized"'),
    Case("budget-nodes-unquoted", pool(("spec.disruption.budgets.0.nodes", 5)), "spec.disruption.budgets[0].nodes",
         ProblemKind.INVALID, 'quote it: nodes: "5"'),
    Case("budget-nodes-over-100-percent", pool(("spec.disruption.budgets.0.nodes", "150%")),
         "spec.disruption.budgets[0].nodes", ProblemKind.INVALID, "percentage from 0% to 100%"),
    Case("budget-nodes-required", pool(("spec.disruption.budgets.0", {"reasons": ["Empty"]})),
         "spec.disruption.budgets[0].nodes", ProblemKind.REQUIRED, '"0" blocks disruption'),
    Case("budget-schedule-without-duration", pool(("spec.disruption.budgets.1.duration", DELETE)),
         "spec.disruption.budgets[1]", ProblemKind.INVALID, "'schedule' must be set with 'duration'"),
    Case("budget-duration-in-seconds", pool(("spec.disruption.budgets.1.duration", "30s")),
         "spec.disruption.budgets[1].duration", ProblemKind.INVALID, "whole hours and minutes"),
    Case("budget-schedule-format", pool(("spec.disruption.budgets.1.schedule", "daily")),
         "spec.disruption.budgets[1].schedule", ProblemKind.INVALID, "cron"),
    Case("budget-reason-enum", pool(("spec.disruption.budgets.1.reasons", ["Drift"])),
         "spec.disruption.budgets[1].reasons[0]", ProblemKind.UNSUPPORTED, 'did you mean "Drifted"'),
    Case("budget-reason-duplicate", pool(("spec.disruption.budgets.1.reasons", ["Empty", "Empty"])),
         "spec.disruption.budgets[1].reasons[1]", ProblemKind.DUPLICATE, ""),
    Case("too-many-budgets", pool(("spec.disruption.budgets", [{"nodes": "1"}] * 51)), "spec.disruption.budgets",
         ProblemKind.TOO_MANY, "at most 50"),
    Case("weight-zero", pool(("spec.weight", 0)), "spec.weight", ProblemKind.INVALID, "between 1 and 100"),
    Case("weight-over-100", pool(("spec.weight", 101)), "spec.weight", ProblemKind.INVALID, "between 1 and 100"),
    Case("limit-not-a-quantity", pool(("spec.limits", {"memory": "10GB"})), "spec.limits[memory]",
         ProblemKind.INVALID, "must be a quantity"),
    Case("static-pool-with-cpu-limit", pool(("spec.replicas", 2), ("spec.weight", DELETE)), "spec.limits",
         ProblemKind.INVALID, "only 'limits.nodes' is supported on static NodePools"),
    Case("static-pool-with-weight", pool(("spec.replicas", 2), ("spec.limits", {"nodes": 4})), "spec.weight",
         ProblemKind.FORBIDDEN, "'weight' is not supported on static NodePools"),
    Case("static-pool-negative-replicas", pool(("spec.replicas", -1), ("spec.limits", {}), ("spec.weight", DELETE)),
         "spec.replicas", ProblemKind.INVALID, "0 or more"),
    Case("name-too-long-for-the-nodepool-label", pool(("metadata.name", "gpu-" + "x" * 60)), "metadata.name",
         ProblemKind.INVALID, "at most 63 characters", WARNING),
    # ---- references
    Case("node-class-not-in-input", [NODEPOOL], "spec.template.spec.nodeClassRef.name", ProblemKind.NOT_FOUND,
         "the input has no EC2NodeClass", WARNING),
    Case("node-class-typo", pool(("spec.template.spec.nodeClassRef.name", "gpus")),
         "spec.template.spec.nodeClassRef.name", ProblemKind.NOT_FOUND, 'did you mean "gpu"?', WARNING),
    Case("other-node-class-group", pool(("spec.template.spec.nodeClassRef", {"group": "karpenter.azure.com",
                                                                              "kind": "AKSNodeClass", "name": "x"})),
         "spec.template.spec.nodeClassRef.group", ProblemKind.NOT_CHECKED, "is not modelled", WARNING),
    Case("auto-mode-custom-node-class",
         pool(("spec.template.spec.nodeClassRef", {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "gpu"})),
         "spec.template.spec.nodeClassRef", ProblemKind.NOT_CHECKED, "EKS Auto Mode NodeClass gpu", WARNING),
    # ---- NodeClaim
    Case("nodeclaim-requirement-rules", claim(("spec.requirements.1.operator", "Gt")), "spec.requirements[1].values",
         ProblemKind.INVALID, "single positive integer"),
    Case("nodeclaim-request-quantity", claim(("spec.resources.requests", {"cpu": "lots"})),
         "spec.resources.requests[cpu]", ProblemKind.INVALID, "must be a quantity"),
    Case("nodeclaim-node-class-ref-required", claim(("spec.nodeClassRef", DELETE)), "spec.nodeClassRef",
         ProblemKind.REQUIRED, "nodeClassRef is required"),
    Case("nodeclaim-node-class-not-in-input", [NODECLAIM], "spec.nodeClassRef.name", ProblemKind.NOT_FOUND,
         "the NodeClaim cannot launch", WARNING),
    # ---- EC2NodeClass
    Case("role-and-instance-profile", node_class(("spec.instanceProfile", "p")), "spec", ProblemKind.INVALID,
         "exactly one of ['role', 'instanceProfile']"),
    Case("neither-role-nor-instance-profile", node_class(("spec.role", DELETE)), "spec", ProblemKind.INVALID,
         "exactly one of ['role', 'instanceProfile']"),
    Case("role-empty", node_class(("spec.role", "")), "spec.role", ProblemKind.REQUIRED, "role cannot be empty"),
    Case("ami-terms-required", node_class(("spec.amiSelectorTerms", [])), "spec.amiSelectorTerms",
         ProblemKind.REQUIRED, "alias: al2023@latest"),
    Case("ami-term-empty", node_class(("spec.amiSelectorTerms", [{}]), ("spec.amiFamily", "AL2023")),
         "spec.amiSelectorTerms[0]", ProblemKind.INVALID, "expected at least one, got none"),
    Case("ami-alias-format", node_class(("spec.amiSelectorTerms.0.alias", "al2023")),
         "spec.amiSelectorTerms[0].alias", ProblemKind.INVALID, "must match the format 'family@version'"),
    Case("ami-alias-family", node_class(("spec.amiSelectorTerms.0.alias", "al2024@latest")),
         "spec.amiSelectorTerms[0].alias", ProblemKind.INVALID, 'did you mean "al2023"'),
    Case("ami-windows-pinned", node_class(("spec.amiSelectorTerms.0.alias", "windows2022@v1")),
         "spec.amiSelectorTerms[0].alias", ProblemKind.INVALID, "only specify version 'latest'"),
    Case("ami-alias-with-other-terms", node_class(("spec.amiSelectorTerms.1", {"id": "ami-0abc"})),
         "spec.amiSelectorTerms[0]", ProblemKind.INVALID, "combination of other amiSelectorTerms"),
    Case("ami-alias-with-tags", node_class(("spec.amiSelectorTerms.0.tags", {"a": "b"})),
         "spec.amiSelectorTerms[0]", ProblemKind.INVALID, "combination of other fields in amiSelectorTerms"),
    Case("ami-id-with-name", node_class(("spec.amiSelectorTerms", [{"id": "ami-0abc", "name": "x"}]),
                                        ("spec.amiFamily", "AL2023")),
         "spec.amiSelectorTerms[0]", ProblemKind.INVALID, "'id' is mutually exclusive"),
    Case("ami-family-required", node_class(("spec.amiSelectorTerms", [{"id": "ami-0abc"}])), "spec.amiFamily",
         ProblemKind.REQUIRED, "does not contain an alias"),
    Case("ami-family-enum", node_class(("spec.amiFamily", "AL2024")), "spec.amiFamily", ProblemKind.UNSUPPORTED,
         'did you mean "AL2023"'),
    Case("ami-family-against-alias", node_class(("spec.amiFamily", "Bottlerocket")), "spec.amiFamily",
         ProblemKind.INVALID, "must be 'AL2023' or 'Custom' when using an AL2023 alias"),
    Case("subnet-terms-required", node_class(("spec.subnetSelectorTerms", DELETE)), "spec.subnetSelectorTerms",
         ProblemKind.REQUIRED, "cannot be empty"),
    Case("subnet-term-empty", node_class(("spec.subnetSelectorTerms.1", {})), "spec.subnetSelectorTerms[1]",
         ProblemKind.INVALID, "['tags', 'id']"),
    Case("subnet-id-format", node_class(("spec.subnetSelectorTerms.1.id", "sn-0abc")),
         "spec.subnetSelectorTerms[1].id", ProblemKind.INVALID, "subnet id"),
    Case("subnet-id-with-tags-in-every-term", node_class(("spec.subnetSelectorTerms", [{"id": "subnet-1",
                                                                                        "tags": {"a": "b"}}])),
         "spec.subnetSelectorTerms[0]", ProblemKind.INVALID, "'id' is mutually exclusive"),
    Case("tag-value-empty", node_class(("spec.subnetSelectorTerms.0.tags", {"karpenter.sh/discovery": ""})),
         "spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]", ProblemKind.INVALID, 'use "*"'),
    Case("security-group-terms-required", node_class(("spec.securityGroupSelectorTerms", [])),
         "spec.securityGroupSelectorTerms", ProblemKind.REQUIRED, "cannot be empty"),
    Case("security-group-name-with-id", node_class(("spec.securityGroupSelectorTerms", [{"id": "sg-1", "name": "x"}])),
         "spec.securityGroupSelectorTerms[0]", ProblemKind.INVALID, "'name' is mutually exclusive"),
    Case("two-root-volumes",
         node_class(("spec.blockDeviceMappings.1", {"rootVolume": True, "ebs": {"volumeSize": "1Gi"}})),
         "spec.blockDeviceMappings", ProblemKind.INVALID, "only one blockDeviceMappings with rootVolume"),
    Case("ebs-size-or-snapshot", node_class(("spec.blockDeviceMappings.0.ebs", {"volumeType": "gp3"})),
         "spec.blockDeviceMappings[0].ebs", ProblemKind.REQUIRED, "snapshotID or volumeSize"),
    Case("ebs-size-format", node_class(("spec.blockDeviceMappings.0.ebs.volumeSize", "200GB")),
         "spec.blockDeviceMappings[0].ebs.volumeSize", ProblemKind.INVALID, "Gi, G, Ti or T"),
    Case("ebs-volume-type", node_class(("spec.blockDeviceMappings.0.ebs.volumeType", "gp4")),
         "spec.blockDeviceMappings[0].ebs.volumeType", ProblemKind.UNSUPPORTED, "gp3"),
    Case("network-interfaces-need-a-primary", node_class(("spec.networkInterfaces.0.deviceIndex", 1)),
         "spec.networkInterfaces", ProblemKind.INVALID, "must include a primary interface"),
    Case("network-interfaces-two-efa-on-a-card",
         node_class(("spec.networkInterfaces.2", interface(1, 1, "efa-only"))),
         "spec.networkInterfaces[2]", ProblemKind.INVALID, "at most one efa device per network card"),
    Case("network-interfaces-duplicate-pair",
         node_class(("spec.networkInterfaces.2", interface(1, 0, "interface"))),
         "spec.networkInterfaces[2]", ProblemKind.INVALID, "duplicate networkCardIndex and deviceIndex"),
    Case("network-interface-type", node_class(("spec.networkInterfaces.1.interfaceType", "efa")),
         "spec.networkInterfaces[1].interfaceType", ProblemKind.UNSUPPORTED, "efa-only"),
    Case("kubelet-reserved-resource", node_class(("spec.kubelet.kubeReserved", {"nvidia.com/gpu": "1"})),
         "spec.kubelet.kubeReserved[nvidia.com/gpu]", ProblemKind.UNSUPPORTED, "ephemeral-storage"),
    Case("kubelet-max-pods-negative", node_class(("spec.kubelet.maxPods", -1)), "spec.kubelet.maxPods",
         ProblemKind.INVALID, "0 or more"),
    Case("consumable-capacity-annotation", node_class(("metadata.annotations", {
        "karpenter.k8s.aws/nvidia-consumable-capacity": "shares"})),
         "metadata.annotations[karpenter.k8s.aws/nvidia-consumable-capacity]", ProblemKind.INVALID,
         "consumableShares", WARNING),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rule(case: Case) -> None:
    problems = validate(*case.objects)
    found = [p for p in at(problems, case.field) if p.kind is case.kind and p.severity is case.severity]
    assert found, "\n".join(str(p) for p in problems)
    assert any(case.expect in f"{p.message} ({p.hint})" for p in found), "\n".join(str(p) for p in found)


def test_valid_objects_have_no_problems() -> None:
    assert validate(NODEPOOL, EC2NODECLASS, NODECLAIM) == []


@pytest.mark.parametrize(
    "changes",
    [
        [one(requirement("karpenter.k8s.aws/instance-gpu-count", "Lte", "8"),
             requirement("karpenter.k8s.aws/instance-generation", "Gt", "4"),
             requirement("failure-domain.beta.kubernetes.io/zone", "In", "us-east-1a"),
             requirement("eks.amazonaws.com/instance-family", "In", "p5"),
             requirement("kubernetes.io/custom", "Exists"))],
        [("spec.template.spec.expireAfter", "Never"), ("spec.disruption.consolidateAfter", "Never")],
        [("spec.disruption.consolidationPolicy", "Balanced"), ("spec.disruption.budgets", [{"nodes": "100%"}])],
        [("spec.replicas", 3), ("spec.limits", {"nodes": 5}), ("spec.weight", DELETE)],
        [(REQS, [])],
    ],
    ids=["bounds-aliases-and-auto-mode-labels", "never", "balanced", "static", "no-requirements"],
)
def test_accepted_variants(changes: list[tuple[str, Any]]) -> None:
    assert validate(*pool(*changes)) == []


def test_the_built_in_auto_mode_node_class_needs_no_object() -> None:
    auto = edited(NODEPOOL, ("spec.template.spec.nodeClassRef", {"group": "eks.amazonaws.com", "kind": "NodeClass",
                                                                 "name": "default"}))
    assert validate(auto) == []


def test_problems_read_like_field_errors_with_line_numbers() -> None:
    objects = pool(("spec.weight", 0))
    line = as_yaml(objects).splitlines().index("  weight: 0") + 1
    assert [str(p) for p in validate(*objects)] == [
        f"test.yaml:{line}: NodePool gpu: spec.weight: Invalid value: 0: must be between 1 and 100 (NodePools with "
        "higher weights are tried first; leave it unset for the lowest priority)"
    ]

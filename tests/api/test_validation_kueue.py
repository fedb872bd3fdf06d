"""Kueue's objects as its CRDs and webhooks take them (kueue.x-k8s.io v1beta2, sigs.k8s.io/kueue v0.17):
structure from the CRDs, the webhooks' rules with their wording, v1beta1 converted with a note."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from tests.builders.kueue import (
    cluster_queue,
    cohort,
    configuration,
    flavor_quotas,
    group,
    local_queue,
    pod_set,
    quota,
    resource_flavor,
    workload,
)
from tests.builders.validation import Wire, validate

from dratwin.api.validation import ProblemKind, Severity

E, W = Severity.ERROR, Severity.WARNING
H100 = resource_flavor("h100", {"node.kubernetes.io/instance-type": "p5.48xlarge"})
GPU_GROUP = group(["cpu", "example.com/gpu"], flavor_quotas("h100", quota("cpu", 64), quota("example.com/gpu", 8)))


@dataclass(frozen=True)
class Case:
    name: str
    cite: str  # the Kueue file the rule follows
    objects: list[Wire]
    # (severity, kind, field, message fragment) of every problem, in order
    expect: list[tuple[Severity, ProblemKind, str, str]] = field(default_factory=list)


RG = "spec.resourceGroups"
MUST_MATCH = "must match the name in coveredResources"
CASES = [
    Case("valid-queue", "site/.../concepts/cluster_queue.md", [H100, cluster_queue("cq", GPU_GROUP)]),
    Case("unknown-field-with-did-you-mean", "CRD schema (strict field validation)",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", {"name": "cpu", "nominalQuota": 1,
                                                                          "borowingLimit": 1})), cohort="c")],
         [(E, ProblemKind.UNKNOWN_FIELD, f"{RG}[0].flavors[0].resources[0].borowingLimit", "no such field")]),
    Case("nominal-quota-required", "CRD: resources[].required [name, nominalQuota]",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", {"name": "cpu"})))],
         [(E, ProblemKind.REQUIRED, f"{RG}[0].flavors[0].resources[0].nominalQuota", "")]),
    Case("more-than-16-groups", "CRD: resourceGroups maxItems 16",
         [cluster_queue("cq", *[group([f"r{i}"], flavor_quotas(f"f{i}", quota(f"r{i}", 1))) for i in range(17)])],
         [(E, ProblemKind.TOO_MANY, RG, "at most 16")] + [(W, ProblemKind.NOT_FOUND, f"{RG}[{i}].flavors[0].name",
                                                           "no ResourceFlavor") for i in range(17)]),
    Case("flavor-misses-a-covered-resource", "CRD rule: flavors must have the same number of resources",
         [H100, cluster_queue("cq", group(["cpu", "memory"], flavor_quotas("h100", quota("cpu", 1))))],
         [(E, ProblemKind.INVALID, f"{RG}[0]", "flavors must have the same number of resources as the "
                                              "coveredResources")]),
    Case("resources-out-of-order", "clusterqueue_webhook.go validateFlavorQuotas",
         [H100, cluster_queue("cq", group(["cpu", "memory"], flavor_quotas("h100", quota("memory", 1),
                                                                             quota("cpu", 1))))],
         [(E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[0].name", MUST_MATCH),
          (E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[1].name", MUST_MATCH)]),
    Case("resource-in-two-groups", "clusterqueue_webhook.go validateResourceGroups",
         [H100, resource_flavor("a100"), cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", 1))),
                                                      group(["cpu"], flavor_quotas("a100", quota("cpu", 1))))],
         [(E, ProblemKind.DUPLICATE, f"{RG}[1].coveredResources[0]", "")]),
    Case("flavor-in-two-groups", "clusterqueue_webhook.go validateResourceGroups",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", 1))),
                              group(["memory"], flavor_quotas("h100", quota("memory", 1))))],
         [(E, ProblemKind.DUPLICATE, f"{RG}[1].flavors[0].name", "")]),
    Case("negative-quota", "clusterqueue_webhook.go validateResourceQuantity",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", "-1"))))],
         [(E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[0].nominalQuota", "greater than or equal to 0")]),
    Case("borrowing-limit-without-cohort", "CRD rule / validateLimit",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", 4, borrowing=2))))],
         [(E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[0].borrowingLimit",
           "must be nil when cohort is empty")]),
    Case("lending-limit-above-nominal", "clusterqueue_webhook.go validateLendingLimit",
         [H100, cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", 4, lending=5))), cohort="r")],
         [(E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[0].lendingLimit",
           "must be less than or equal to the nominalQuota")]),
    Case("cohort-limit-without-parent", "cohort_webhook.go validateCohort",
         [H100, cohort("research", group(["cpu"], flavor_quotas("h100", quota("cpu", 4, lending=2))))],
         [(E, ProblemKind.INVALID, f"{RG}[0].flavors[0].resources[0].lendingLimit",
           "must be nil when parent is empty")]),
    Case("misspelt-queueing-strategy", "CRD enum StrictFIFO/BestEffortFIFO",
         [H100, cluster_queue("cq", GPU_GROUP, queueingStrategy="StrictFifo")],
         [(E, ProblemKind.UNSUPPORTED, "spec.queueingStrategy", '"StrictFIFO"')]),
    Case("borrow-within-cohort-without-reclaim", "CRD rule on spec.preemption",
         [H100, cluster_queue("cq", GPU_GROUP, preemption={"borrowWithinCohort": {"policy": "LowerPriority"}})],
         [(E, ProblemKind.INVALID, "spec.preemption",
           "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")]),
    Case("fungibility-preference-needs-try-next", "CRD rule on spec.flavorFungibility",
         [H100, cluster_queue("cq", GPU_GROUP, flavorFungibility={"preference": "PreemptionOverBorrowing"})],
         [(E, ProblemKind.INVALID, "spec.flavorFungibility.preference", "preference can only be set when both")]),
    Case("fair-sharing-weight-too-small", "webhooks/common.go validateFairSharing",
         [H100, cluster_queue("cq", GPU_GROUP, fairSharing={"weight": "1n"})],
         [(E, ProblemKind.INVALID, "spec.fairSharing.weight", "When not 0, weight must be > 10e-9")]),
    Case("duplicate-flavor-taints", "resourceflavor_webhook.go validateNodeTaints",
         [resource_flavor("spot", taints=[{"key": "spot", "effect": "NoSchedule"},
                                           {"key": "spot", "value": "x", "effect": "NoSchedule"}])],
         [(E, ProblemKind.DUPLICATE, "spec.nodeTaints[1]", "taints must be unique by key and effect pair")]),
    Case("missing-flavor-makes-the-queue-inactive", "cluster_queue.md: inactive if a flavor is missing",
         [cluster_queue("cq", GPU_GROUP)],
         [(W, ProblemKind.NOT_FOUND, f"{RG}[0].flavors[0].name", "FlavorNotFound")]),
    Case("local-queue-names-a-missing-cluster-queue", "local_queue.md",
         [H100, cluster_queue("cq", GPU_GROUP), local_queue("lq", "gpu-cq")],
         [(W, ProblemKind.NOT_FOUND, "spec.clusterQueue", 'no ClusterQueue "gpu-cq"')]),
    Case("workload-min-count-above-count", "workload_types.go PodSet.minCount",
         [workload("w", pod_set(count=2, minCount=3))],
         [(E, ProblemKind.INVALID, "spec.podSets[0].minCount", "less than or equal to count")]),
    Case("workload-unknown-pod-field", "CRD: podSets[].template is a PodTemplateSpec",
         [workload("w", pod_set(spec={"containers": [{"name": "c", "image": "i", "resource": {}}]}))],
         [(E, ProblemKind.UNKNOWN_FIELD, "spec.podSets[0].template.spec.containers[0].resource", 'no such field')]),
    Case("configuration-class-in-two-mappings", "configuration_types.go DeviceClassMapping",
         [configuration(resources={"deviceClassMappings": [
             {"name": "example.com/gpu", "deviceClassNames": ["gpu.example.com"]},
             {"name": "gpus", "deviceClassNames": ["gpu.example.com"]}]})],
         [(E, ProblemKind.DUPLICATE, "resources.deviceClassMappings[1].deviceClassNames[0]", "")]),
    Case("configuration-mixed-sources", "dynamic_resource_allocation.md: counter and capacity do not mix",
         [configuration(resources={"deviceClassMappings": [
             {"name": "gpu.memory", "deviceClassNames": ["mig.example.com"],
              "sources": [{"counter": {"name": "memory", "driver": "gpu.example.com"}},
                          {"capacity": {"name": "memory", "driver": "gpu.example.com"}}]}]})],
         [(E, ProblemKind.INVALID, "resources.deviceClassMappings[0].sources", "cannot be mixed")]),
    Case("configuration-unknown-field", "Kueue reads its Configuration strictly",
         [configuration(fairSharing={"enabled": True})],
         [(E, ProblemKind.UNKNOWN_FIELD, "fairSharing.enabled", "no such field")]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kueue_rules(case: Case) -> None:
    problems = validate(*case.objects)
    got = [(p.severity, p.kind, p.field, p.message) for p in problems]
    assert len(got) == len(case.expect), got
    for actual, expected in zip(got, case.expect, strict=True):
        assert actual[:3] == expected[:3]
        assert expected[3] in actual[3]


def test_v1beta1_is_converted_with_a_note_and_problems_point_at_the_line_written() -> None:
    """apis/kueue/v1beta1/clusterqueue_conversion.go: spec.cohort → cohortName, admissionChecks → strategy."""
    old = cluster_queue("cq", group(["cpu"], flavor_quotas("h100", quota("cpu", 4, lending=9))))
    old["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    old["spec"]["cohort"] = "research"
    problems = validate(H100, old)
    note, error = problems
    assert (note.severity, note.kind) == (W, ProblemKind.CONVERTED)
    assert "kueue.x-k8s.io/v1beta2" in note.message
    assert error.field.endswith("lendingLimit") and "nominalQuota" in error.message  # a cohort: no nil error


def test_an_unmodelled_kueue_kind_is_skipped_with_a_warning() -> None:
    config = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig", "metadata": {"name": "p"}}
    [problem] = validate(config)
    assert (problem.severity, problem.kind) == (W, ProblemKind.NOT_CHECKED)


def test_an_unknown_kueue_kind_has_a_did_you_mean() -> None:
    [problem] = validate({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Clusterqueue", "metadata": {"name": "x"}})
    assert problem.is_error and "did you mean ClusterQueue?" in problem.message

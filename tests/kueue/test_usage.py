"""A PodSet's quota usage as Kueue computes it (pkg/workload/workload.go totalRequestsFromPodSets) and DRA
counting through deviceClassMappings (pkg/dra/claims.go, pkg/dra/extended_resources.go, ff69552)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import (
    claim_template,
    configuration,
    container,
    device_class,
    dra_inputs,
    pod_set,
    pod_spec,
    workload,
)
from tests.builders.validation import device, resource_slice

from dratwin.api.kueue import Configuration, Workload
from dratwin.kueue.dra import DraInputs
from dratwin.kueue.usage import Inadmissible, WorkloadUsage, workload_usage

GPU = "gpu.example.com"
MAPPED = {"resources": {"deviceClassMappings": [{"name": "example.com/gpu", "deviceClassNames": [GPU]}]}}


def _gpu_request(name: str = "gpu", **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": GPU, **exactly}}


def _claimed(*containers: dict[str, Any], template: str = "gpus") -> dict[str, Any]:
    return pod_spec(*containers, resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": template}])


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    pod: dict[str, Any]
    count: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    dra: DraInputs | None = None
    total: dict[str, int] | None = None  # None: inadmissible
    message: str = ""


FOUR_GPUS = [device(f"gpu-{i}", attributes={"model": {"string": "h100" if i < 3 else "a100"}}) for i in range(4)]
SLICES = [resource_slice(FOUR_GPUS, driver=GPU)]
CASES = [
    Case("containers-summed-times-count", "workload.go: PodRequests × count",
         pod_spec(container({"cpu": "500m", "memory": "1Gi"}), container({"cpu": "1"}, name="d")), count=3,
         total={"cpu": 4500, "memory": 3 * 2**30}),
    Case("limits-as-requests", "PodRequests: a limit stands for a missing request",
         pod_spec(container(limits={"example.com/gpu": 2})), count=2, total={"example.com/gpu": 4}),
    Case("init-container-peak-and-overhead", "PodRequests: max(init, sum) + overhead",
         pod_spec(container({"cpu": "1"}), initContainers=[container({"cpu": "3"}, name="i")],
                  overhead={"cpu": "250m"}), total={"cpu": 3250}),
    Case("excluded-prefixes", "Configuration resources.excludeResourcePrefixes",
         pod_spec(container({"cpu": "1", "networking.example.com/vpc": 1})), config={
             "resources": {"excludeResourcePrefixes": ["networking.example.com/"]}}, total={"cpu": 1000}),
    Case("transformation-replace", "workload.go applyResourceTransformations (Replace)",
         pod_spec(container({"nvidia.com/mig-1g.5gb": 2})), count=2, config={"resources": {"transformations": [
             {"input": "nvidia.com/mig-1g.5gb", "strategy": "Replace", "outputs": {"example.com/gpu-memory": "5Gi"}}]}},
         total={"example.com/gpu-memory": 2 * 2 * 5 * 2**30}),
    Case("transformation-retain", "workload.go applyResourceTransformations (Retain, the default)",
         pod_spec(container({"nvidia.com/gpu": 1})), config={"resources": {"transformations": [
             {"input": "nvidia.com/gpu", "outputs": {"credits": "10"}}]}}, total={"credits": 10, "nvidia.com/gpu": 1}),
    Case("dra-count-mapped", "claims.go countDevicesPerClass (ExactCount, count 2)",
         _claimed(container({"cpu": "1"})), count=4, config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request(count=2))]),
         total={"cpu": 4000, "example.com/gpu": 8}),
    Case("dra-count-default-one", "claims.go: count defaults to 1", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request())]), total={"example.com/gpu": 1}),
    Case("dra-admin-access-no-quota", "claims.go isAdminAccessRequest: skipped", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request(adminAccess=True))]), total={}),
    Case("dra-resource-claim-name", "workload_controller.go handleDRA",
         pod_spec(resourceClaims=[{"name": "gpu", "resourceClaimName": "shared"}]), config=MAPPED,
         dra=dra_inputs(), message="KueueDRAIntegration feature does not support use of resource claims"),
    Case("dra-first-available", "claims.go: FirstAvailable refused", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", {"name": "gpu", "firstAvailable": [{"name": "a",
                                                                                   "deviceClassName": GPU}]})]),
         message="spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: null: "
                 "ResourceClaimTemplate gpus: FirstAvailable device selection is not supported"),
    Case("dra-allocation-mode-all", "claims.go: AllocationMode All refused", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request(allocationMode="All"))]),
         message="AllocationMode 'All' is not supported"),
    Case("dra-unmapped-class", "claims.go: DeviceClass not mapped", _claimed(),
         dra=dra_inputs([claim_template("gpus", _gpu_request())]),
         message='resourceClaimTemplateName: Not found: "DeviceClass gpu.example.com is not mapped in DRA '
                 'configuration for podset main"'),
    Case("dra-missing-template", "claims.go getClaimSpec", _claimed(template="nope"), config=MAPPED,
         dra=dra_inputs(), message="failed to get claim spec for ResourceClaimTemplate nope in podset main"),
    Case("dra-cel-enough-devices", "claims.go countMatchingDevices", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request(count=3, selectors=[
             {"cel": {"expression": f'device.attributes["{GPU}"].model == "h100"'}}]))],
             [device_class(GPU, f'device.driver == "{GPU}"')], SLICES), total={"example.com/gpu": 3}),
    Case("dra-cel-too-few-devices", "claims.go: insufficient matching devices", _claimed(), config=MAPPED,
         dra=dra_inputs([claim_template("gpus", _gpu_request(count=2, selectors=[
             {"cel": {"expression": f'device.attributes["{GPU}"].model == "a100"'}}]))],
             [device_class(GPU, f'device.driver == "{GPU}"')], SLICES),
         message="insufficient matching devices for CEL selector in DeviceClass gpu.example.com: 1 device(s) match "
                 "in the cluster but 2 requested"),
    Case("dra-counter-mode", "dynamic_resource_allocation.md: counter-based (max consumption × count)",
         _claimed(), count=2, config={"resources": {"deviceClassMappings": [{
             "name": "gpu.memory", "deviceClassNames": [GPU], "sources": [{"counter": {"name": "memory",
                                                                                      "driver": GPU}}]}]}},
         dra=dra_inputs([claim_template("gpus", _gpu_request(count=2))], [device_class(GPU)], [resource_slice([
             device("mig-1", consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": "10Gi"}}}]),
             device("mig-2", consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": "20Gi"}}}]),
         ], driver=GPU)]), total={"gpu.memory": 2 * 2 * 20 * 2**30}),
    Case("extended-resource-charged-under-the-mapping", "extended_resources.go resolveQuotaKey",
         pod_spec(container({"nvidia.com/gpu": 2, "cpu": "1"})), config=MAPPED,
         dra=dra_inputs(classes=[device_class(GPU, extended_resource="nvidia.com/gpu")]),
         total={"cpu": 1000, "example.com/gpu": 2}),
    Case("extended-resource-without-class", "extended_resources.go: no DeviceClass, a plain extended resource",
         pod_spec(container({"nvidia.com/gpu": 2})), config=MAPPED, dra=dra_inputs(), total={"nvidia.com/gpu": 2}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_usage(case: Case) -> None:
    wl = msgspec.convert(workload("w", pod_set(count=case.count, spec=case.pod)), Workload)
    config = msgspec.convert(configuration(**case.config), Configuration)
    result = workload_usage(wl, config, case.dra)
    if case.total is None:
        assert isinstance(result, Inadmissible), result
        assert result.reason == "Misconfigured"
        assert case.message in result.message
        return
    assert isinstance(result, WorkloadUsage), result
    assert result.total() == case.total
    [usage] = result.pod_sets
    assert {k: v * case.count for k, v in usage.per_pod.items()} == case.total

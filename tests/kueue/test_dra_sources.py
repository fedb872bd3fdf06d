"""DRA quota from deviceClassMappings sources: capacity mode (consumable capacity, pkg/dra/capacity.go; the
cases of capacity_test.go TestRoundToValidValues, TestRoundToValidRange, TestComputeCapacityCharge), behind the
alpha gate KueueDRAIntegrationConsumableCapacity, and counter mode (partitionable devices, pkg/dra/counters.go
processCounterCharge), at Kueue ff69552."""

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
from dratwin.kueue.usage import Inadmissible, WorkloadUsage, workload_usage

Wire = dict[str, Any]
DRIVER = "gpu.example.com"
CLASS = "shared-gpu.example.com"
GATE = {"KueueDRAIntegrationConsumableCapacity": True}
A100 = f'device.attributes["{DRIVER}"].model == "a100"'
WHERE = "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]"


def _mapping(*sources: Wire) -> Wire:
    return {"resources": {"deviceClassMappings": [{"name": "gpu-memory", "deviceClassNames": [CLASS],
                                                   "sources": list(sources)}]}}


def _memory(selector: str | None = None, name: str = "memory") -> Wire:
    source: Wire = {"name": name, "driver": DRIVER}
    if selector:
        source["deviceSelector"] = {"cel": {"expression": selector}}
    return {"capacity": source}


def _gpu(name: str, value: str = "80Gi", **policy: Any) -> Wire:
    capacity: Wire = {"value": value}
    if policy:
        capacity["requestPolicy"] = policy
    return device(name, capacity={"memory": capacity}, attributes={"model": {"string": name.split("-")[0]}})


def _request(count: int = 1, memory: str | None = None, **exactly: Any) -> Wire:
    body: Wire = {"deviceClassName": CLASS, "count": count, **exactly}
    if memory is not None:
        body["capacity"] = {"requests": {"memory": memory}}
    return {"name": "gpu", "exactly": body}


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    request: Wire
    devices: list[Wire]
    sources: list[Wire] = field(default_factory=lambda: [_memory()])
    gates: dict[str, bool] = field(default_factory=lambda: dict(GATE))
    count: int = 1  # the PodSet's pods
    charge: int | None = None  # gpu-memory in bytes for the whole PodSet; None: inadmissible
    message: str = ""
    slices: list[Wire] | None = None  # instead of one complete slice of ``devices``


GI = 2**30
CASES = [
    Case("explicit-request", "TestComputeCapacityCharge 'explicit request with single device'",
         _request(memory="20Gi"), [_gpu("h100-0")], charge=20 * GI),
    Case("device-default", "'no request uses device Default'", _request(), [_gpu("h100-0", default="40Gi")],
         charge=40 * GI),
    Case("whole-capacity-without-request-or-default", "chargeForDevice: the capacity's value",
         _request(), [_gpu("h100-0")], charge=80 * GI),
    Case("heterogeneous-defaults-take-the-max", "'heterogeneous Defaults uses max'", _request(),
         [_gpu("h100-0", default="40Gi"), _gpu("h100-1", "100Gi", default="10Gi")], charge=40 * GI),
    Case("valid-values-round-up", "TestRoundToValidValues 'round up to next'", _request(memory="15Gi"),
         [_gpu("h100-0", validValues=["10Gi", "20Gi", "40Gi"])], charge=20 * GI),
    Case("valid-range-step", "TestRoundToValidRange 'round up to step'", _request(memory="15500Mi"),
         [_gpu("h100-0", validRange={"min": "1Gi", "max": "80Gi", "step": "1Gi"})], charge=16 * GI),
    Case("valid-range-below-min", "'below min rounds to min'", _request(memory="500Mi"),
         [_gpu("h100-0", validRange={"min": "1Gi", "max": "80Gi", "step": "1Gi"})], charge=GI),
    Case("valid-range-large-step", "'large step alignment': 25Gi → 10Gi + 1×20Gi", _request(memory="25Gi"),
         [_gpu("h100-0", validRange={"min": "10Gi", "max": "80Gi", "step": "20Gi"})], charge=30 * GI),
    Case("valid-range-step-without-min", "'step without min skips alignment'", _request(memory="15500Mi"),
         [_gpu("h100-0", validRange={"max": "80Gi", "step": "1Gi"})], charge=15500 * 2**20),
    Case("times-request-and-pod-counts", "computeCapacityCharge: × count; the usage pipeline: × PodSet count",
         _request(count=2, memory="20Gi"), [_gpu("h100-0"), _gpu("h100-1")], count=3, charge=3 * 2 * 20 * GI),
    Case("source-selector-picks-the-devices", "matchDevicesForSource: the source's deviceSelector",
         _request(), [_gpu("h100-0", "80Gi"), _gpu("a100-0", "40Gi")],
         sources=[_memory(A100)], charge=40 * GI),
    Case("incomplete-pool-skipped", "matchDevicesWithSelectors: pools not complete are skipped", _request(),
         [], slices=[resource_slice([_gpu("h100-0", "80Gi")], name="a", driver=DRIVER,
                                    pool={"name": "p1", "generation": 1, "resourceSliceCount": 2}),
                     resource_slice([_gpu("a100-0", "40Gi")], name="b", driver=DRIVER,
                                    pool={"name": "p2", "generation": 1, "resourceSliceCount": 1})],
         charge=40 * GI),
    Case("older-generation-ignored", "groupSlicesByPool: the newest generation of a pool", _request(), [],
         slices=[resource_slice([_gpu("h100-0", "80Gi")], name="old", driver=DRIVER,
                                pool={"name": "p", "generation": 1, "resourceSliceCount": 1}),
                 resource_slice([_gpu("h100-1", "60Gi")], name="new", driver=DRIVER,
                                pool={"name": "p", "generation": 2, "resourceSliceCount": 1})],
         charge=60 * GI),
    Case("gate-off-counts-devices", "claims.go: without the gate the class is counted like any other",
         _request(count=2), [_gpu("h100-0")], gates={}, charge=2),
    Case("too-few-devices", "processCapacityCharge: fewer matches than the count", _request(count=3),
         [_gpu("h100-0"), _gpu("h100-1")],
         message=f"{WHERE}: Internal error: insufficient matching devices for capacity driver: 2 device(s) match "
                 "but 3 requested"),
    Case("cel-check-among-the-capacity-drivers", "claims.go validateCELSelectorsAgainstDevices: the configured "
         "drivers' devices", _request(count=2, selectors=[{"cel": {"expression": A100}}]),
         [_gpu("a100-0"), _gpu("h100-0")],
         message=f"{WHERE}.exactly.selectors: Internal error: insufficient matching devices for CEL selector in "
                 f"DeviceClass {CLASS}: 1 device(s) match in the cluster but 2 requested"),
    Case("no-capacity-dimension", "'no capacity dimension returns InternalError'", _request(), [device("h100-0")],
         message=f'{WHERE}: Internal error: matched devices have no capacity dimension "memory"'),
    Case("every-policy-refuses", "'all policies reject returns Invalid not InternalError'", _request(memory="50Gi"),
         [_gpu("h100-0", validValues=["10Gi", "20Gi"]), _gpu("h100-1", validValues=["10Gi", "30Gi"])],
         message=f"{WHERE}: Invalid value: null: capacity request cannot be satisfied by any matched device's "
                 'RequestPolicy for dimension "memory"'),
    Case("range-max-exceeded", "TestRoundToValidRange 'exceeds max after rounding'", _request(memory="81Gi"),
         [_gpu("h100-0", validRange={"min": "1Gi", "max": "80Gi", "step": "1Gi"})],
         message="capacity request cannot be satisfied"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_capacity_charge(case: Case) -> None:
    spec = pod_spec(container(), resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpus"}])
    wl = msgspec.convert(workload("w", pod_set(count=case.count, spec=spec)), Workload)
    config = msgspec.convert(configuration(featureGates=case.gates, **_mapping(*case.sources)), Configuration)
    slices = case.slices if case.slices is not None else [resource_slice(case.devices, driver=DRIVER)]
    inputs = dra_inputs([claim_template("gpus", case.request)], [device_class(CLASS)], slices)
    result = workload_usage(wl, config, inputs)
    if case.charge is None:
        assert isinstance(result, Inadmissible), result
        assert result.reason == "Misconfigured"
        assert case.message in result.message, result.message
        return
    assert isinstance(result, WorkloadUsage), result
    assert result.total() == {"gpu-memory": case.charge}, case.cite


def _counter_source(selector: str | None = None) -> Wire:
    source: Wire = {"name": "memory", "driver": DRIVER}
    if selector:
        source["deviceSelector"] = {"cel": {"expression": selector}}
    return {"counter": source}


def _partition(name: str, *amounts: str) -> Wire:
    """A device consuming ``amounts`` of counter memory, one consumption entry per counter set."""
    return device(name, attributes={"model": {"string": name.split("-")[0]}}, consumesCounters=[
        {"counterSet": f"set-{i}", "counters": {"memory": {"value": amount}}} for i, amount in enumerate(amounts)])


@dataclass(frozen=True)
class CounterCase:
    name: str
    cite: str
    devices: list[Wire]
    request_count: int = 1
    selector: str | None = None
    charge: int | None = None
    message: str = ""


COUNTER_CASES = [
    CounterCase("largest-consumption-entry", "computeCounterCharges: the max over consumption entries, × count",
                [_partition("a100-0", "10Gi", "30Gi"), _partition("h100-0", "20Gi")], request_count=2,
                charge=2 * 30 * GI),
    CounterCase("source-selector", "matchDevicesForSource: the source's deviceSelector",
                [_partition("a100-0", "10Gi"), _partition("h100-0", "20Gi")], selector=A100, charge=10 * GI),
    CounterCase("too-few-devices", "processCounterCharge: fewer matches than the count",
                [_partition("a100-0", "10Gi")], request_count=2,
                message=f"{WHERE}: Internal error: insufficient matching devices for counter driver: 1 device(s) "
                        "match but 2 requested"),
    CounterCase("no-consumes-counters", "processCounterCharge: matched devices consume no such counter",
                [device("a100-0")],
                message=f'{WHERE}: Internal error: matched devices have no consumesCounters entry for counter '
                        '"memory"'),
]


@pytest.mark.parametrize("case", COUNTER_CASES, ids=lambda c: c.name)
def test_counter_charge(case: CounterCase) -> None:
    spec = pod_spec(container(), resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpus"}])
    wl = msgspec.convert(workload("w", pod_set(spec=spec)), Workload)
    config = msgspec.convert(configuration(**_mapping(_counter_source(case.selector))), Configuration)
    inputs = dra_inputs([claim_template("gpus", _request(count=case.request_count))], [device_class(CLASS)],
                        [resource_slice(case.devices, driver=DRIVER)])
    result = workload_usage(wl, config, inputs)
    if case.charge is None:
        assert isinstance(result, Inadmissible), result
        assert result.message == case.message
        return
    assert isinstance(result, WorkloadUsage), result
    assert result.total() == {"gpu-memory": case.charge}, case.cite

"""DeviceTaintRules: which devices a rule taints (as the 1.36 resourceslice tracker applies them), what a
cluster with or without the DRADeviceTaintRules gate does with the objects, and NoExecute on devices that
running pods hold."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.manifests import device_taint_rule, gpu_slice, manifest, resource_claim

from dratwin.allocator.features import Features
from dratwin.allocator.state import DeviceID
from dratwin.api.loader import load_text
from dratwin.api.resource import DeviceTaint, ResourceClaim, ResourceSlice
from dratwin.cluster.device_taint_rules import (
    DeviceTaintRule,
    apply_taint_rules,
    device_taint_view,
    untolerated_no_execute,
)

Raw = dict[str, Any]
ON = Features.from_gates("DRADeviceTaintRules=true")


def slices(*raws: Raw) -> list[ResourceSlice]:
    return [msgspec.convert(r, ResourceSlice, strict=False) for r in raws]


def rule(name: str = "r", **kwargs: Any) -> DeviceTaintRule:
    return msgspec.convert(device_taint_rule(name, **kwargs), DeviceTaintRule, strict=False)


TWO_NODES = (gpu_slice("n0", 2), gpu_slice("n1", 2), gpu_slice("n0", 1, driver="nic.example.com"))


def tainted(result: list[ResourceSlice]) -> dict[str, list[str]]:
    """device id -> its taints as key=value:effect, for devices with taints."""
    return {
        f"{s.spec.driver}/{s.spec.pool.name}/{d.name}": [f"{t.key}={t.value}:{t.effect}" for t in d.taints]
        for s in result for d in s.spec.devices if d.taints
    }


M = "maintenance=true:NoSchedule"


@dataclass(frozen=True)
class SelectCase:
    name: str
    rules: list[DeviceTaintRule]
    expected: dict[str, list[str]]


SELECT_CASES = [
    SelectCase("no-selector-taints-every-device", [rule()], {
        "gpu.example.com/n0/gpu-0": [M], "gpu.example.com/n0/gpu-1": [M], "gpu.example.com/n1/gpu-0": [M],
        "gpu.example.com/n1/gpu-1": [M], "nic.example.com/n0/gpu-0": [M]}),
    SelectCase("driver", [rule(driver="nic.example.com")], {"nic.example.com/n0/gpu-0": [M]}),
    SelectCase("pool-of-every-driver", [rule(pool="n0")], {
        "gpu.example.com/n0/gpu-0": [M], "gpu.example.com/n0/gpu-1": [M], "nic.example.com/n0/gpu-0": [M]}),
    SelectCase("device-name-in-every-pool", [rule(device="gpu-1")], {
        "gpu.example.com/n0/gpu-1": [M], "gpu.example.com/n1/gpu-1": [M]}),
    SelectCase("driver-pool-device", [rule(driver="gpu.example.com", pool="n1", device="gpu-0")],
               {"gpu.example.com/n1/gpu-0": [M]}),
    SelectCase("nothing-matches", [rule(driver="gpu.example.com", pool="n9")], {}),
    SelectCase("two-rules-on-one-device-in-rule-order",
               [rule("a", device="gpu-0", pool="n1", driver="gpu.example.com"),
                rule("b", key="fault", value="ecc", effect="NoExecute", pool="n1", device="gpu-0")],
               {"gpu.example.com/n1/gpu-0": [M, "fault=ecc:NoExecute"]}),
]


@pytest.mark.parametrize("case", SELECT_CASES, ids=lambda c: c.name)
def test_which_devices_a_rule_taints(case: SelectCase) -> None:
    result, sources = apply_taint_rules(slices(*TWO_NODES), case.rules)
    assert tainted(result) == case.expected
    assert {str(d): [f"{t.taint.key}={t.taint.value}:{t.taint.effect}" for t in ts] for d, ts in sources.items()} \
        == case.expected


def test_slices_are_copied_not_changed_and_untouched_slices_are_kept() -> None:
    given = slices(*TWO_NODES)
    given[0].spec.devices[0].taints = [DeviceTaint(key="driver", effect="None")]
    result, _ = apply_taint_rules(given, [rule(pool="n0", driver="gpu.example.com", device="gpu-0")])
    assert [t.key for t in given[0].spec.devices[0].taints] == ["driver"]  # the input is not changed
    assert [t.key for t in result[0].spec.devices[0].taints] == ["driver", "maintenance"]  # appended after
    assert result[1] is given[1] and result[2] is given[2]


@dataclass(frozen=True)
class ViewCase:
    name: str
    objects: list[Raw]
    features: Features
    tainted: dict[str, list[str]]
    warnings: list[str] = field(default_factory=list)  # the start of each warning


VIEW_CASES = [
    ViewCase("gate-off-the-default-refuses-the-rule", [device_taint_rule("m", pool="n0")], Features(), {},
             ["DeviceTaintRule m (resource.k8s.io/v1beta2) is refused: the API server serves DeviceTaintRule only "
              "with the feature gate DRADeviceTaintRules (beta, off by default in 1.36)"]),
    ViewCase("gate-on-v1beta2", [device_taint_rule("m", pool="n1")], ON,
             {"gpu.example.com/n1/gpu-0": [M], "gpu.example.com/n1/gpu-1": [M]}),
    ViewCase("gate-on-v1alpha3", [device_taint_rule("m", pool="n1", version="v1alpha3")], ON,
             {"gpu.example.com/n1/gpu-0": [M], "gpu.example.com/n1/gpu-1": [M]}),
    ViewCase("not-served-in-v1", [device_taint_rule("m", pool="n1", version="v1")], ON, {},
             ["DeviceTaintRule m: Kubernetes 1.36 serves DeviceTaintRule in resource.k8s.io/v1beta2 and "
              "resource.k8s.io/v1alpha3, not in resource.k8s.io/v1"]),
    ViewCase("selects-nothing", [device_taint_rule("m", pool="n9")], ON, {},
             ["DeviceTaintRule m selects no device (pool=n9)"]),
    ViewCase("device-taints-off", [device_taint_rule("m", device="gpu-0", pool="n0", driver="nic.example.com")],
             Features.from_gates("DRADeviceTaintRules=true,DRADeviceTaints=false"),
             {"nic.example.com/n0/gpu-0": [M]},
             ["DRADeviceTaints is off: the allocator ignores device taints"]),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.name)
def test_device_taint_view(case: ViewCase) -> None:
    view = device_taint_view(load_text(manifest(case.objects)), slices(*TWO_NODES), case.features)
    assert tainted(view.slices) == case.tainted
    assert len(view.warnings) == len(case.warnings)
    for warning, start in zip(view.warnings, case.warnings, strict=True):
        assert warning.startswith(start), warning


def test_removed_selector_fields_are_dropped_with_a_warning() -> None:
    raw = device_taint_rule("m", pool="n0", version="v1alpha3")
    raw["spec"]["deviceSelector"]["deviceClassName"] = "gpu.example.com"
    view = device_taint_view(load_text(manifest(raw)), slices(*TWO_NODES), ON)
    assert view.warnings == [
        "DeviceTaintRule m: spec.deviceSelector.deviceClassName was removed in Kubernetes 1.35 and is dropped by the "
        "API server: the rule matches on driver, pool and device only, so it may taint more devices than meant"
    ]
    assert len(tainted(view.slices)) == 3  # every device of pool n0, of both drivers


def test_each_rule_gets_a_note_with_its_devices() -> None:
    view = device_taint_view(load_text(manifest(device_taint_rule("m", effect="NoExecute", pool="n1"))),
                             slices(*TWO_NODES), ON)
    assert view.notes == [
        "DeviceTaintRule m taints 2 device(s) with maintenance=true:NoExecute (claims that do not tolerate it get "
        "none of them, and pods already using them are evicted): gpu.example.com/n1/gpu-0, gpu.example.com/n1/gpu-1"
    ]


def allocated(name: str, device: str, tolerations: list[Raw] | None = None) -> ResourceClaim:
    raw = resource_claim(name)
    result: Raw = {"request": "gpu", "driver": "gpu.example.com", "pool": "n0", "device": device}
    if tolerations:
        result["tolerations"] = tolerations
    raw["status"] = {"allocation": {"devices": {"results": [result]}},
                     "reservedFor": [{"resource": "pods", "name": f"{name}-pod", "uid": "u"}]}
    return msgspec.convert(raw, ResourceClaim, strict=False)


@dataclass(frozen=True)
class EvictCase:
    name: str
    effect: str
    tolerations: list[Raw] | None
    evicted: bool


EVICT_CASES = [
    EvictCase("no-execute-not-tolerated", "NoExecute", None, True),
    EvictCase("no-execute-tolerated-by-the-allocation", "NoExecute",
              [{"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}], False),
    EvictCase("tolerated-for-another-key", "NoExecute", [{"key": "other", "operator": "Exists"}], True),
    EvictCase("no-schedule-never-evicts", "NoSchedule", None, False),
    EvictCase("none-never-evicts", "None", None, False),
]


@pytest.mark.parametrize("case", EVICT_CASES, ids=lambda c: c.name)
def test_running_pods_on_no_execute_devices(case: EvictCase) -> None:
    rules = [rule("fault", effect=case.effect, pool="n0", device="gpu-1")]
    view, sources = apply_taint_rules(slices(gpu_slice("n0", 2)), rules)
    claims = [allocated("a", "gpu-0"), allocated("b", "gpu-1", case.tolerations)]
    found = untolerated_no_execute(claims, view, sources)
    if case.evicted:
        assert found == [
            "claim default/b (reserved for b-pod) holds device gpu.example.com/n0/gpu-1, tainted "
            "maintenance=true:NoExecute (DeviceTaintRule fault), and does not tolerate it: kube-controller-manager's "
            "device taint eviction deletes the pods using it; dratwin does not model eviction and keeps them bound"
        ]
    else:
        assert found == []
    assert DeviceID("gpu.example.com", "n0", "gpu-1") in sources

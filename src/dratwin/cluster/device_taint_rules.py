"""DeviceTaintRules: the taints they add to devices, in the ResourceSlices the scheduler sees.

A DeviceTaintRule (``resource.k8s.io/v1beta2``, new in 1.36, or ``v1alpha3``) adds one taint to every device
its selector matches. The ResourceSlice objects are not changed: kube-scheduler (and kube-controller-
manager's eviction) read the slices through the resourceslice tracker of
``k8s.io/dynamic-resource-allocation``, which, when the feature gate DRADeviceTaintRules is on, hands out
copies in which each matching rule's taint is appended to the device's own taints. The allocator then
treats them like taints written by the driver (DRADeviceTaints). :func:`device_taint_view` builds that view
once for every command; the typed structs here read a rule as the API server stores it.

Upstream behaviour kept, quirks included:

- DRADeviceTaintRules is beta and off by default in 1.36: with the gate off the API server does not serve the
  kind, so ``kubectl apply`` fails for the rule and no taint is added;
- the selector matches on ``driver``, ``pool`` and ``device`` (each optional; all set ones must be equal);
  ``deviceClassName`` and CEL ``selectors`` were removed in 1.35 and are dropped by the API server;
- a rule without ``deviceSelector`` taints every device (the tracker indexes it as ``*/*/*``, although the
  API documentation says it matches none);
- ``NoExecute`` also makes kube-controller-manager evict running pods whose claims do not tolerate the taint:
  the twin has no controller loop and keeps them bound, and says so (:func:`untolerated_no_execute`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import msgspec

from dratwin.allocator.features import Features
from dratwin.allocator.search import taint_prevents
from dratwin.allocator.state import DeviceID
from dratwin.api.codec import decode_as, split_api_version
from dratwin.api.loader import LoadedObject
from dratwin.api.meta import ObjectMeta
from dratwin.api.resource import Device, DeviceTaint, ResourceClaim, ResourceSlice

GROUP = "resource.k8s.io"
KIND = "DeviceTaintRule"
SERVED_VERSIONS = ("v1beta2", "v1alpha3")
GATE = "DRADeviceTaintRules"
MAX_DEVICES = 3
REMOVED_SELECTOR_FIELDS = ("deviceClassName", "selectors")


class _Struct(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    pass


class DeviceTaintSelector(_Struct):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(_Struct):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = msgspec.field(default_factory=DeviceTaint)


class DeviceTaintRule(_Struct):
    api_version: str = f"{GROUP}/v1beta2"
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = msgspec.field(default_factory=DeviceTaintRuleSpec)

    def selects(self, driver: str, pool: str, device: str) -> bool:
        selector = self.spec.device_selector
        if selector is None:
            return True
        return all(
            wanted is None or wanted == actual
            for wanted, actual in ((selector.driver, driver), (selector.pool, pool), (selector.device, device))
        )

    def describe_selector(self) -> str:
        selector = self.spec.device_selector
        if selector is None:
            return "no deviceSelector: every device"
        parts = [f"{name}={value}" for name, value in msgspec.structs.asdict(selector).items() if value is not None]
        return ", ".join(parts) or "an empty deviceSelector: every device"


def taint_text(taint: DeviceTaint) -> str:
    return f"{taint.key}={taint.value}:{taint.effect}"


@dataclass(frozen=True)
class RuleTaint:
    """One taint a rule added to a device."""

    rule: str
    taint: DeviceTaint

    def __str__(self) -> str:
        return f"DeviceTaintRule {self.rule}: {taint_text(self.taint)}"


@dataclass
class DeviceTaintView:
    """The slices as the scheduler sees them, which rule tainted which device, and what to tell people."""

    slices: list[ResourceSlice]
    sources: dict[DeviceID, list[RuleTaint]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what each rule does
    warnings: list[str] = field(default_factory=list)  # rules refused, selecting nothing, or without effect


def is_taint_rule(obj: LoadedObject) -> bool:
    return obj.kind == KIND and split_api_version(obj.api_version)[0] == GROUP


def apply_taint_rules(
    slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule]
) -> tuple[list[ResourceSlice], dict[DeviceID, list[RuleTaint]]]:
    """Each slice with every matching rule's taint appended to its devices' taints (rules in the given
    order); slices no rule matches are returned as they are."""
    out: list[ResourceSlice] = []
    sources: dict[DeviceID, list[RuleTaint]] = {}
    for resource_slice in slices:
        spec = resource_slice.spec
        devices: list[Device] = []
        changed = False
        for device in spec.devices:
            added = [r for r in rules if r.selects(spec.driver, spec.pool.name, device.name)]
            if added:
                changed = True
                device = msgspec.structs.replace(device, taints=[*device.taints, *(r.spec.taint for r in added)])
                key = DeviceID(spec.driver, spec.pool.name, device.name)
                sources.setdefault(key, []).extend(RuleTaint(r.metadata.name, r.spec.taint) for r in added)
            devices.append(device)
        if changed:
            resource_slice = msgspec.structs.replace(
                resource_slice, spec=msgspec.structs.replace(spec, devices=devices)
            )
        out.append(resource_slice)
    return out, sources


def device_taint_view(
    objects: Sequence[LoadedObject], slices: Sequence[ResourceSlice], features: Features
) -> DeviceTaintView:
    """The rules of ``objects`` applied to ``slices`` as a 1.36 cluster with ``features`` applies them."""
    found = [obj for obj in objects if is_taint_rule(obj)]
    view = DeviceTaintView(list(slices))
    if not found:
        return view
    served: list[DeviceTaintRule] = []
    for obj in found:
        version = split_api_version(obj.api_version)[1]
        if not features.device_taint_rules:
            view.warnings.append(
                f"{obj.ref} ({obj.api_version}) is refused: the API server serves DeviceTaintRule only with the "
                f"feature gate {GATE} (beta, off by default in 1.36), so its taint is not applied; run with "
                f"--feature-gates {GATE}=true to see its effect (the cluster also needs the gate on kube-apiserver, "
                "kube-scheduler and kube-controller-manager, and the API version enabled with --runtime-config)"
            )
        elif version not in SERVED_VERSIONS:
            view.warnings.append(
                f"{obj.ref}: Kubernetes 1.36 serves DeviceTaintRule in {GROUP}/v1beta2 and {GROUP}/v1alpha3, not "
                f"in {obj.api_version}: the API server refuses it and its taint is not applied"
            )
        else:
            rule = decode_as(obj.raw, DeviceTaintRule, f"{obj.source}: {obj.ref}")
            view.warnings += _removed_fields(obj)
            served.append(rule)
    if not served:
        return view
    view.slices, view.sources = apply_taint_rules(slices, served)
    for rule in served:
        view.notes.append(_rule_note(rule, view.sources))
        if not any(rule.metadata.name == t.rule for ts in view.sources.values() for t in ts):
            view.warnings.append(
                f"DeviceTaintRule {rule.metadata.name} selects no device ({rule.describe_selector()}): check the "
                "driver, pool and device names against the ResourceSlices"
            )
    if not features.device_taints:
        view.warnings.append(
            "DRADeviceTaints is off: the allocator ignores device taints, so the DeviceTaintRules have no effect"
        )
    return view


def _rule_note(rule: DeviceTaintRule, sources: dict[DeviceID, list[RuleTaint]]) -> str:
    devices = [str(d) for d, taints in sources.items() if any(t.rule == rule.metadata.name for t in taints)]
    effect = rule.spec.taint.effect
    meaning = {
        "NoSchedule": "claims that do not tolerate it get none of them",
        "NoExecute": "claims that do not tolerate it get none of them, and pods already using them are evicted",
    }.get(effect, "informational only: allocation ignores it")
    more = len(devices) - MAX_DEVICES
    shown = ", ".join(devices[:MAX_DEVICES]) + (f" and {more} more" if more > 0 else "")
    return (
        f"DeviceTaintRule {rule.metadata.name} taints {len(devices)} device(s) with {taint_text(rule.spec.taint)} "
        f"({meaning})" + (f": {shown}" if devices else "")
    )


def _removed_fields(obj: LoadedObject) -> list[str]:
    selector = (obj.raw.get("spec") or {}).get("deviceSelector") or {}
    if not isinstance(selector, dict):
        return []
    return [
        f"{obj.ref}: spec.deviceSelector.{name} was removed in Kubernetes 1.35 and is dropped by the API server: "
        "the rule matches on driver, pool and device only, so it may taint more devices than meant"
        for name in REMOVED_SELECTOR_FIELDS
        if name in selector
    ]


def untolerated_no_execute(
    claims: Iterable[ResourceClaim], slices: Sequence[ResourceSlice], sources: dict[DeviceID, list[RuleTaint]]
) -> list[str]:
    """Allocated claims holding a device with a NoExecute taint that the allocation does not tolerate: the
    device taint eviction controller would evict the pods using them (not modelled)."""
    devices = {
        DeviceID(s.spec.driver, s.spec.pool.name, d.name): d for s in slices for d in s.spec.devices if d.taints
    }
    found = []
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for result in allocation.devices.results:
            device_id = DeviceID(result.driver, result.pool, result.device)
            device = devices.get(device_id)
            if device is None:
                continue
            no_execute = [t for t in device.taints if t.effect == "NoExecute"]
            untolerated = [t for t in no_execute
                           if taint_prevents(msgspec.structs.replace(device, taints=[t]), result.tolerations)]
            if not untolerated:
                continue
            by_rule = {taint_text(t.taint): t.rule for t in sources.get(device_id, [])}
            what = ", ".join(
                taint_text(t) + (f" (DeviceTaintRule {by_rule[taint_text(t)]})" if taint_text(t) in by_rule else "")
                for t in untolerated
            )
            users = ", ".join(r.name for r in claim.status.reserved_for) or "no pod"
            found.append(
                f"claim {claim.metadata.namespace}/{claim.metadata.name} (reserved for {users}) holds device "
                f"{device_id}, tainted {what}, and does not tolerate it: kube-controller-manager's device taint "
                "eviction deletes the pods using it; dratwin does not model eviction and keeps them bound"
            )
    return found

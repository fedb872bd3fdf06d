"""Why claims cannot be allocated on a node: every device considered, and why each was turned down.

This is a diagnostic pass beside the search, run only when the search found no solution. It checks
each device against each request on its own (in upstream's order of checks) and reports the first
reason that rules it out, then aggregates the reasons so that thousands of devices read in a few
lines. When every request has enough eligible devices on its own, the failure is joint (constraints
across requests or claims competing for the same devices) and the explanation says so.
"""

from __future__ import annotations

import enum
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dratwin.allocator import capacity as cap
from dratwin.allocator.constraints import attribute_value, lookup_attribute
from dratwin.allocator.ignored import ignored_slices
from dratwin.allocator.nodes import node_matches
from dratwin.allocator.pools import Pool
from dratwin.allocator.requests import ALL, RequestView, view_exact, view_sub
from dratwin.allocator.search import taint_prevents
from dratwin.allocator.state import DeviceID
from dratwin.api.core import Node
from dratwin.api.resource import Device, DeviceSelector, ResourceClaim, ResourceSlice
from dratwin.errors import CelError

if TYPE_CHECKING:
    from dratwin.allocator.allocator import Allocator


MAX_VALUES = 6


class Reason(enum.Enum):
    POOL_INCOMPLETE = "pool incomplete"
    POOL_INVALID = "pool invalid"
    IN_USE = "in use"
    BINDING_CONDITIONS_OFF = "binding conditions unsupported"
    CLASS_SELECTOR_FALSE = "class selector false"
    REQUEST_SELECTOR_FALSE = "request selector false"
    CEL_ERROR = "CEL error"
    NODE_MISMATCH = "not available on this node"
    CAPACITY = "capacity exhausted"
    COUNTERS_OFF = "partitionable devices disabled"
    COUNTERS = "counters exhausted"
    TAINT = "taint not tolerated"


@dataclass(frozen=True)
class Rejection:
    """One device turned down for one request, with the reason as data."""

    device: DeviceID
    reason: Reason
    detail: str  # e.g. "selector 1 of class gpu.nvidia.com" or "in use by claim default/train"
    values: tuple[str, ...] = ()  # the device's values of the attributes the failing selector reads


@dataclass
class RequestExplanation:
    claim: str
    request: str
    device_class: str
    needed: int | str  # a count, or "all"
    considered: int = 0
    eligible: list[DeviceID] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    error: str = ""

    @property
    def short(self) -> bool:
        return isinstance(self.needed, int) and len(self.eligible) < self.needed

    def groups(self) -> list[tuple[Reason, str, int, list[str], list[str]]]:
        """(reason, detail, count, sample devices, distinct values), largest groups first."""
        grouped: dict[tuple[Reason, str], list[Rejection]] = defaultdict(list)
        for rejection in self.rejections:
            grouped[(rejection.reason, rejection.detail)].append(rejection)
        rows = []
        for (reason, detail), items in grouped.items():
            values = sorted({v for r in items for v in r.values})
            shown = values[:MAX_VALUES] + ([f"+{len(values) - MAX_VALUES} more"] if len(values) > MAX_VALUES else [])
            rows.append((reason, detail, len(items), [str(r.device) for r in items[:3]], shown))
        return sorted(rows, key=lambda row: (-row[2], row[0].value, row[1]))

    def summary_lines(self) -> list[str]:
        lines = []
        for reason, detail, count, _sample, values in self.groups():
            seen = f": {', '.join(values)}" if values else ""
            lines.append(f"{count} of {self.considered} devices: {describe(reason, detail)}{seen}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "deviceClass": self.device_class,
            "needed": self.needed,
            "considered": self.considered,
            "eligible": [str(d) for d in self.eligible],
            "error": self.error or None,
            "reasons": [
                {"reason": r.value, "detail": d, "devices": n, "examples": s, "values": v}
                for r, d, n, s, v in self.groups()
            ],
        }


@dataclass
class Explanation:
    """Why the claims cannot be allocated on ``node``; ``verdict`` is the one-line answer."""

    node: str
    verdict: str
    requests: list[RequestExplanation]
    pools: list[str]
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # slices whose devices are not considered, and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "verdict": self.verdict,
            "pools": self.pools,
            "requests": [r.to_dict() for r in self.requests],
            "ignoredSlices": self.ignored,
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        out = [f"cannot allocate on node {self.node}: {self.verdict}"]
        for request in self.requests:
            have = f"{len(request.eligible)} eligible" + (f", needs {request.needed}" if request.needed else "")
            out.append(f"  claim {request.claim}, request {request.request} (class {request.device_class}): {have}")
            if request.error:
                out.append(f"    error: {request.error}")
            out.extend(f"    {line}" for line in request.summary_lines())
        out.extend(f"  {line}" for line in self.ignored)
        out.extend(f"  note: {note}" for note in self.notes)
        return out


def describe(reason: Reason, detail: str) -> str:
    """One phrase for people: selector reasons read "selector #0 of class X was false: <expression>"."""
    if reason in (Reason.CLASS_SELECTOR_FALSE, Reason.REQUEST_SELECTOR_FALSE):
        where, _, expression = detail.partition(": ")
        return f"{where} was false: {expression}"
    return f"{reason.value} ({detail})" if detail else reason.value


def explain(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> Explanation:
    """Diagnose why ``claims`` do not fit on ``node``. Never raises for CEL errors: they become reasons."""
    pools = allocator.pools_for(node)
    requests: list[RequestExplanation] = []
    notes: list[str] = []
    for claim in claims:
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        for request in claim.spec.devices.requests:
            views = [view_sub(request, s) for s in request.first_available or []]
            if not views and request.exactly is not None:
                views = [view_exact(request, request.exactly)]
            for view in views:
                requests.append(_explain_request(allocator, node, pools, claim, key, view))
        notes.extend(_constraint_notes(claim, key, requests))
    pool_notes = [f"{p.pool_id}: {'incomplete' if p.incomplete else p.invalid_reason}" for p in pools if not p.usable]
    ignored = ignored_slices(allocator.index, node, allocator.features, pools)
    verdict = _verdict(requests, claims, ignored)
    return Explanation(node.metadata.name, verdict, requests, pool_notes, notes, ignored)


def _explain_request(
    allocator: Allocator, node: Node, pools: list[Pool], claim: ResourceClaim, key: str, view: RequestView
) -> RequestExplanation:
    needed: int | str = "all" if view.allocation_mode == ALL else view.count
    explanation = RequestExplanation(key, view.full_name, view.device_class_name, needed)
    view.device_class = allocator.classes.get(view.device_class_name)
    if view.device_class is None:
        explanation.error = (
            f"DeviceClass {view.device_class_name!r} does not exist: the claim stays pending until it is created"
        )
        return explanation
    for pool in pools:
        for resource_slice in pool.device_slices:
            for device in resource_slice.spec.devices:
                device_id = DeviceID(pool.driver, pool.name, device.name)
                explanation.considered += 1
                rejection = _first_rejection(allocator, node, pool, resource_slice, device, device_id, view, claim)
                if rejection is None:
                    explanation.eligible.append(device_id)
                else:
                    explanation.rejections.append(rejection)
    return explanation


def _first_rejection(
    allocator: Allocator,
    node: Node,
    pool: Pool,
    resource_slice: ResourceSlice,
    device: Device,
    device_id: DeviceID,
    view: RequestView,
    claim: ResourceClaim,
) -> Rejection | None:
    features = allocator.features
    if pool.incomplete:
        return Rejection(device_id, Reason.POOL_INCOMPLETE, f"pool {pool.pool_id} is being updated")
    if pool.invalid:
        return Rejection(device_id, Reason.POOL_INVALID, pool.invalid_reason)
    if not view.admin_access and device_id in allocator.state.exclusive:
        owners = tuple(allocator.state.owners.get(device_id, [])) or ("another claim",)
        return Rejection(device_id, Reason.IN_USE, "allocated to another claim", owners)
    if device.binding_conditions and not features.binding_conditions:
        return Rejection(device_id, Reason.BINDING_CONDITIONS_OFF, "DRADeviceBindingConditions is off")
    selector_rejection = _selector_rejection(allocator, resource_slice, device, device_id, view, claim)
    if selector_rejection is not None:
        return selector_rejection
    if resource_slice.spec.per_device_node_selection and not node_matches(
        node, device.node_name, device.all_nodes, device.node_selector
    ):
        return Rejection(device_id, Reason.NODE_MISMATCH, "the device's own node selection excludes this node")
    if features.consumable_capacity:
        fits = cap.request_fits(
            view.capacity_requests,
            device.capacity,
            allocator.state.aggregated_capacity.get(device_id),
            None,
        )
        if not fits:
            detail = "requests a capacity the device does not have" if fits is None else "not enough capacity left"
            return Rejection(device_id, Reason.CAPACITY, detail)
    if device.consumes_counters and not features.partitionable_devices:
        return Rejection(device_id, Reason.COUNTERS_OFF, "DRAPartitionableDevices is off")
    if device.consumes_counters and not _counters_fit(allocator, pool, device):
        return Rejection(device_id, Reason.COUNTERS, _counter_detail(allocator, pool))
    if features.device_taints and taint_prevents(device, view.tolerations):
        keys = sorted(
            {f"{t.key}={t.value}:{t.effect}" for t in device.taints if t.effect in ("NoSchedule", "NoExecute")}
        )
        return Rejection(device_id, Reason.TAINT, ", ".join(keys))
    return None


def _selector_rejection(
    allocator: Allocator,
    resource_slice: ResourceSlice,
    device: Device,
    device_id: DeviceID,
    view: RequestView,
    claim: ResourceClaim,
) -> Rejection | None:
    assert view.device_class is not None
    checks: list[tuple[Reason, str, list[DeviceSelector]]] = [
        (Reason.CLASS_SELECTOR_FALSE, f"class {view.device_class.metadata.name}", view.device_class.spec.selectors),
        (Reason.REQUEST_SELECTOR_FALSE, f"request {view.full_name}", view.selectors),
    ]
    for reason, owner, selectors in checks:
        for index, selector in enumerate(selectors):
            if selector.cel is None:
                return Rejection(device_id, Reason.CEL_ERROR, f"selector #{index} of {owner} has no CEL expression")
            expression = selector.cel.expression
            try:
                matched = allocator.compiler.compile(expression).matches(allocator.cel_device(resource_slice, device))
            except CelError as error:
                return Rejection(device_id, Reason.CEL_ERROR, f"selector #{index} of {owner}: {error}")
            if not matched:
                values = referenced_values(expression, resource_slice.spec.driver, device)
                one_line = " ".join(expression.split())
                return Rejection(device_id, reason, f"selector #{index} of {owner}: {one_line}", values)
    return None


_REFERENCE = re.compile(
    r"device\.(attributes|capacity)\[\s*[\"']([^\"']+)[\"']\s*\]\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*[\"']([^\"']+)[\"']\s*\])"
)


def referenced_values(expression: str, driver: str, device: Device) -> tuple[str, ...]:
    """The device's values of the attributes and capacities an expression reads, as ``name=value``."""
    found = [f"driver={driver}"] if "device.driver" in expression else []
    for kind, domain, ident, quoted in _REFERENCE.findall(expression):
        name = ident or quoted
        qualified = f"{domain}/{name}"
        if kind == "capacity":
            capacity = device.capacity.get(qualified) or (device.capacity.get(name) if domain == driver else None)
            found.append(f"{name}={capacity.value if capacity else '<none>'}")
        else:
            attribute = lookup_attribute(device, driver, qualified)
            value = attribute_value(attribute) if attribute is not None else None
            found.append(f"{name}={value[1] if value else '<none>'}")
    return tuple(dict.fromkeys(found))


def _counters_fit(allocator: Allocator, pool: Pool, device: Device) -> bool:
    available = allocator.available_counters(pool)
    for set_name, name, amount in allocator.consumption(device):
        if amount > available.get(set_name, {}).get(name, 0):
            return False
    return True


def _counter_detail(allocator: Allocator, pool: Pool) -> str:
    available = allocator.available_counters(pool)
    exhausted = sorted(f"{s}/{n}" for s, counters in available.items() for n, v in counters.items() if v <= 0)
    return "exhausted: " + ", ".join(exhausted[:4]) if exhausted else "not enough left in the counter sets"


def _constraint_notes(claim: ResourceClaim, key: str, requests: list[RequestExplanation]) -> list[str]:
    notes = []
    for constraint in claim.spec.devices.constraints:
        name = constraint.match_attribute or constraint.distinct_attribute
        kind = "matchAttribute" if constraint.match_attribute else "distinctAttribute"
        scope = ", ".join(constraint.requests) or "all requests"
        notes.append(f"claim {key}: {kind} {name} over {scope} narrows the eligible devices further")
    return notes


def _verdict(requests: list[RequestExplanation], claims: Sequence[ResourceClaim], ignored: list[str]) -> str:
    missing_class = [r for r in requests if r.error]
    if missing_class:
        return missing_class[0].error
    # A firstAvailable request falls short only when every one of its subrequests does.
    by_request: dict[tuple[str, str], list[RequestExplanation]] = defaultdict(list)
    for request in requests:
        by_request[(request.claim, request.request.split("/")[0])].append(request)
    short = [views[-1] for views in by_request.values() if all(v.short for v in views)]
    if short and short[0].considered == 0:
        if ignored:
            return f"the node has no devices the allocator considers: {ignored[0]}"
        return "the node has no devices: no ResourceSlice publishes any for it"
    if short:
        first = short[0]
        return (
            f"request {first.request} of claim {first.claim} needs {first.needed} device(s), "
            f"{len(first.eligible)} of {first.considered} are eligible"
        )
    empty_all = [r for r in requests if r.needed == "all" and not r.eligible]
    if empty_all:
        return f"request {empty_all[0].request} asks for all matching devices and none matches"
    if any(c.spec.devices.constraints for c in claims):
        return (
            "every request has enough eligible devices on its own, but no combination satisfies the claim constraints"
        )
    counts: Counter[DeviceID] = Counter(d for r in requests for d in r.eligible)
    if any(n > 1 for n in counts.values()):
        return "the requests compete for the same devices and together need more than are free"
    return "no combination of eligible devices satisfies all requests together"

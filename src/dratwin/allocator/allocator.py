"""The DRA structured-parameters allocator with Kubernetes 1.36 default semantics.

``Allocator`` holds the long-lived inputs of one scheduling cycle (features, classes, slices, devices
in use, compiled selectors, per-device CEL views) and can be called for many nodes. Each
``allocate(node, claims)`` call is pure: it returns an ``AllocationOutcome`` (results for all claims,
or none when they cannot be allocated on this node) or raises ``AllocationError`` for input that
upstream refuses. Claims are allocated jointly: all of them or none.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from dratwin.allocator.constraints import Constraint, DistinctAttribute, MatchAttribute
from dratwin.allocator.features import Features
from dratwin.allocator.pools import Pool, SliceIndex, gather_pools
from dratwin.allocator.requests import ALL, EXACT_COUNT, RequestView, view_exact, view_sub
from dratwin.allocator.results import build_result
from dratwin.allocator.search import MAX_RESULTS, Candidate, ClaimPlan, Search
from dratwin.allocator.state import AllocatedState, DeviceID
from dratwin.api.core import Node
from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
)
from dratwin.cel import CelDevice, CompiledSelector, SelectorCompiler
from dratwin.errors import AllocationError, CelCompileError, CelRuntimeError


class NodeAllocationError(AllocationError):
    """No solution on this node and an invalid pool was seen: unschedulable here only."""


@dataclass(frozen=True)
class AllocationOutcome:
    """Results in claim order, or ``None`` when the claims cannot be allocated on this node."""

    results: list[AllocationResult] | None
    steps: int
    pools: list[Pool]

    @property
    def allocated(self) -> bool:
        return self.results is not None


class Allocator:
    """Long-lived allocator inputs; see the module docstring."""

    def __init__(
        self,
        features: Features,
        classes: Sequence[DeviceClass] | Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice] | SliceIndex,
        state: AllocatedState | None = None,
        compiler: SelectorCompiler | None = None,
        device_views: dict[int, CelDevice] | None = None,
    ) -> None:
        """``slices`` may be a prebuilt SliceIndex and ``device_views`` a cache shared across cycles:
        kube-scheduler builds an allocator per pod, so whatever does not change between pods is
        passed in rather than rebuilt."""
        self.features = features
        self.classes = dict(classes) if isinstance(classes, Mapping) else {c.metadata.name: c for c in classes}
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.state = state or AllocatedState()
        self.compiler = compiler or SelectorCompiler(list_type_attributes=features.list_type_attributes)
        self._cel_devices = device_views if device_views is not None else {}
        self._available: dict[tuple[str, str, int], dict[str, dict[str, Fraction]]] = {}

    # ---- public ----------------------------------------------------------------------------------

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> AllocationOutcome:
        pools = gather_pools(self.index, node, self.features)
        search = Search(self, node, pools, [])
        for index, claim in enumerate(claims):
            search.plans.append(ClaimPlan(claim, [], []))
            self._plan_claim(search, index, claim, pools)
        if not search.run():
            invalid = [p for p in pools if p.invalid]
            if invalid:
                reasons = "; ".join(f"{p.pool_id}: {p.invalid_reason}" for p in invalid)
                raise NodeAllocationError(f"invalid resource pools were encountered ({reasons})")
            return AllocationOutcome(None, search.steps, pools)
        results = [build_result(plan, node.metadata.name, self.features) for plan in search.plans]
        return AllocationOutcome(results, search.steps, pools)

    def selectors_match(
        self,
        request: RequestView,
        claim: ResourceClaim,
        resource_slice: ResourceSlice,
        device: Device,
        device_id: DeviceID,
    ) -> bool:
        """All class selectors, then all request selectors; CEL errors become AllocationError."""
        device_class = request.device_class
        if device_class is not None:
            where = f"class {device_class.metadata.name}"
            if not self._all_true(device_class.spec.selectors, where, resource_slice, device, device_id):
                return False
        return self._all_true(request.selectors, f"claim {_key(claim)}", resource_slice, device, device_id)

    def cel_device(self, resource_slice: ResourceSlice, device: Device) -> CelDevice:
        """The CEL view of a device, built once per device object for the allocator's lifetime."""
        view = self._cel_devices.get(id(device))
        if view is None:
            view = CelDevice.build(
                resource_slice.spec.driver, device, list_type_attributes=self.features.list_type_attributes
            )
            self._cel_devices[id(device)] = view
        return view

    def available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """Counter-set values minus what devices already allocated in the cluster consume."""
        key = (pool.driver, pool.name, pool.generation)
        cached = self._available.get(key)
        if cached is not None:
            return cached
        available = {
            name: {counter: Quantity.parse(c.value).value for counter, c in counter_set.counters.items()}
            for name, counter_set in pool.counter_sets.items()
        }
        for resource_slice in (*pool.device_slices, *pool.other_device_slices):
            for device in resource_slice.spec.devices:
                if not self.state.is_allocated(DeviceID(pool.driver, pool.name, device.name)):
                    continue
                for consumption in device.consumes_counters:
                    counters = available.get(consumption.counter_set, {})
                    for name, counter in consumption.counters.items():
                        if name in counters:
                            counters[name] -= Quantity.parse(counter.value).value
        self._available[key] = available
        return available

    # ---- per-call checks ---------------------------------------------------------------------------

    def _plan_claim(self, search: Search, ci: int, claim: ResourceClaim, pools: list[Pool]) -> None:
        plan = search.plans[ci]
        minimum = 0
        for ri, request in enumerate(claim.spec.devices.requests):
            where = f"claim {_key(claim)}, request {request.name}"
            if request.first_available and not self.features.prioritized_list:
                raise AllocationError(f"{where}: has subrequests, but the DRAPrioritizedList feature is disabled")
            if not self.features.consumable_capacity:
                self._refuse_capacity(claim, request.name, request)
            if request.first_available:
                views = [view_sub(request, sub) for sub in request.first_available]
            elif request.exactly is not None:
                views = [view_exact(request, request.exactly)]
            else:
                raise AllocationError(f"{where}: neither exactly nor firstAvailable is set (unsupported request type?)")
            plan.requests.append(views)
            for si, view in enumerate(views):
                self._check_request(search, ci, ri, si, view, claim, pools)
            minimum += min(v.num_devices for v in views)
        if minimum > MAX_RESULTS:
            raise AllocationError(
                f"claim {_key(claim)}: number of requested devices {minimum} exceeds the claim limit of {MAX_RESULTS}"
            )
        plan.constraints = self._constraints(claim)

    def _refuse_capacity(self, claim: ResourceClaim, name: str, request: object) -> None:
        exact = getattr(request, "exactly", None)
        if exact is not None and exact.capacity is not None:
            raise AllocationError(
                f"claim {_key(claim)}, request {name}: has capacity requests, "
                "but the DRAConsumableCapacity feature is disabled"
            )
        for sub in getattr(request, "first_available", None) or []:
            if sub.capacity is not None:
                raise AllocationError(
                    f"claim {_key(claim)}, subrequest {sub.name}: has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled"
                )

    def _check_request(
        self, search: Search, ci: int, ri: int, si: int, view: RequestView, claim: ResourceClaim, pools: list[Pool]
    ) -> None:
        where = f"claim {_key(claim)}, request {view.name}"
        for index, selector in enumerate(view.selectors):
            if selector.cel is None:
                raise AllocationError(f"{where}, selector #{index}: CEL expression empty (unsupported selector type?)")
        if view.has_admin_access and not self.features.admin_access:
            raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
        if not view.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.classes.get(view.device_class_name)
        if device_class is None:
            close = difflib.get_close_matches(view.device_class_name, self.classes, n=1)
            hint = f" (did you mean {close[0]}?)" if close else " (create the DeviceClass, or fix the name)"
            raise AllocationError(
                f"{where}: could not retrieve device class {view.device_class_name}: "
                f'deviceclass.resource.k8s.io "{view.device_class_name}" not found{hint}'
            )
        view.device_class = device_class
        if view.allocation_mode == EXACT_COUNT:
            view.num_devices = view.count
        elif view.allocation_mode == ALL:
            view.all_devices = list(self._all_devices(search, ci, ri, si, view, pools, where))
            view.num_devices = len(view.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {view.allocation_mode}")

    def _all_devices(
        self, search: Search, ci: int, ri: int, si: int, view: RequestView, pools: list[Pool], where: str
    ) -> list[Candidate]:
        found = []
        for pi, pool in enumerate(pools):
            if pool.incomplete:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently invalid"
                )
            for sli, resource_slice in enumerate(pool.device_slices):
                for dvi, device in enumerate(resource_slice.spec.devices):
                    device_id = DeviceID(pool.driver, pool.name, device.name)
                    if not search.is_selectable(ci, ri, si, view, resource_slice, device, device_id):
                        continue
                    if self.features.consumable_capacity and not search._capacity_fits(view, device, device_id):
                        continue
                    found.append(Candidate(device_id, device, resource_slice, pool, (pi, sli, dvi)))
        return found

    def _constraints(self, claim: ResourceClaim) -> list[Constraint]:
        constraints: list[Constraint] = []
        lists = self.features.list_type_attributes
        for index, constraint in enumerate(claim.spec.devices.constraints):
            if constraint.match_attribute is not None:
                constraints.append(MatchAttribute(constraint.requests, constraint.match_attribute, lists))
            elif constraint.distinct_attribute is not None and self.features.variant != "stable":
                constraints.append(DistinctAttribute(constraint.requests, constraint.distinct_attribute, lists))
            else:
                raise AllocationError(
                    f"claim {_key(claim)}, constraint #{index}: empty constraint (unsupported constraint type?)"
                )
        return constraints

    def _all_true(
        self,
        selectors: list[DeviceSelector],
        where: str,
        resource_slice: ResourceSlice,
        device: Device,
        device_id: DeviceID,
    ) -> bool:
        for index, selector in enumerate(selectors):
            if selector.cel is None:
                raise AllocationError(f"{where}: selector #{index}: CEL expression empty (unsupported selector type?)")
            compiled = self._compile(selector.cel.expression, where, index)
            try:
                if not compiled.matches(self.cel_device(resource_slice, device)):
                    return False
            except CelRuntimeError as error:
                raise AllocationError(f"{where}: selector #{index} on device {device_id}: {error}") from error
        return True

    def _compile(self, expression: str, where: str, index: int) -> CompiledSelector:
        try:
            return self.compiler.compile(expression)
        except CelCompileError as error:
            raise AllocationError(f"{where}: selector #{index}: {error}") from error


def _key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"

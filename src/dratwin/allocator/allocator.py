"""The DRA structured-parameters allocator with Kubernetes 1.36 semantics.

``Allocator`` holds the long-lived inputs of one scheduling cycle (features, classes, slices, devices
in use, compiled selectors, per-device CEL views) and can be called for many nodes. It behaves like
the allocator copy upstream picks for the features (:mod:`dratwin.allocator.variants`). Each
``allocate(node, claims)`` call is pure: it returns an ``AllocationOutcome`` (results for all claims,
or none when they cannot be allocated on this node) or raises ``AllocationError`` for input that
upstream refuses, and ``AllocationTimeout`` when the search uses up its effort budget
(:mod:`dratwin.allocator.effort`). Claims are allocated jointly: all of them or none.

``locations`` maps ``(kind, name)`` (``("ResourceClaim", "ns/name")``, ``("DeviceClass", name)``,
``("ResourceSlice", name)``) to where the object was written; errors about an object then say so.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import msgspec

from dratwin.allocator.constraints import Constraint, DistinctAttribute, MatchAttribute
from dratwin.allocator.effort import DEFAULT_BUDGET, EffortBudget
from dratwin.allocator.errors import NodeAllocationError
from dratwin.allocator.features import Features
from dratwin.allocator.pools import Pool, SliceIndex, gather_pools
from dratwin.allocator.requests import ALL, EXACT_COUNT, RequestView, view_exact, view_sub
from dratwin.allocator.results import build_result
from dratwin.allocator.search import MAX_RESULTS, Candidate, ClaimPlan, Search, shared_pool_name_warning
from dratwin.allocator.state import AllocatedState, DeviceID
from dratwin.allocator.variants import Variant, select_variant
from dratwin.api.core import Node
from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
)
from dratwin.cel import CelDevice, CompiledSelector, SelectorCompiler
from dratwin.errors import AllocationError, CelCompileError, CelRuntimeError

__all__ = ["AllocationOutcome", "Allocator", "NodeAllocationError"]


@dataclass(frozen=True)
class AllocationOutcome:
    """Results in claim order, or ``None`` when the claims cannot be allocated on this node.

    ``steps`` are the search steps taken (upstream's ``numAllocateOneInvocations``); ``warnings``
    name upstream quirks that shaped this answer."""

    results: list[AllocationResult] | None
    steps: int
    pools: list[Pool]
    variant: str = ""
    warnings: list[str] = field(default_factory=list)

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
        *,
        variant: Variant | None = None,
        budget: EffortBudget = DEFAULT_BUDGET,
        locations: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        """``slices`` may be a prebuilt SliceIndex and ``device_views`` a cache shared across cycles:
        kube-scheduler builds an allocator per pod, so whatever does not change between pods is
        passed in rather than rebuilt. ``variant`` defaults to the copy upstream picks for
        ``features``; ``budget`` to kube-scheduler's default filter timeout."""
        self.features = features
        self.variant = variant or select_variant(features)
        self.budget = budget
        self.locations = locations or {}
        self.classes = dict(classes) if isinstance(classes, Mapping) else {c.metadata.name: c for c in classes}
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.state = state or AllocatedState()
        self.compiler = compiler or SelectorCompiler(list_type_attributes=features.list_type_attributes)
        self._cel_devices = device_views if device_views is not None else {}
        self._hidden_multi: dict[int, CelDevice] = {}
        # Keyed by pool name alone and kept for the allocator's lifetime, as upstream keeps it: the first
        # pool of a name to be computed (driver, counters) is what every pool of that name gets.
        self._available: dict[str, CounterBook] = {}
        self._consumption: dict[int, list[tuple[str, str, Amount]]] = {}

    # ---- public ----------------------------------------------------------------------------------

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim], *, pool_order: Sequence[int] | None = None
    ) -> AllocationOutcome:
        """``pool_order`` visits the node's pools in another order (a permutation of their indices),
        as the stable variant's random map order may; see :mod:`dratwin.allocator.order`."""
        try:
            return self._allocate(node, claims, pool_order)
        except AllocationError as error:
            if error.subject is not None:
                error.locate(self.locations.get(error.subject, ""))
            raise

    def _allocate(
        self, node: Node, claims: Sequence[ResourceClaim], pool_order: Sequence[int] | None
    ) -> AllocationOutcome:
        pools = self.pools_for(node)
        if pool_order is not None:
            pools = [pools[i] for i in pool_order]
        search = Search(self, node, pools, [], None if self.budget.unlimited else self.budget)
        for index, claim in enumerate(claims):
            search.plans.append(ClaimPlan(claim, [], []))
            self._plan_claim(search, index, claim, pools)
        if not search.run():
            invalid = [p for p in pools if p.invalid]
            if invalid:
                reasons = "; ".join(f"{p.pool_id}: {p.invalid_reason}" for p in invalid)
                subject = ("ResourceSlice", invalid[0].slices[0].metadata.name) if invalid[0].slices else None
                raise NodeAllocationError(f"invalid resource pools were encountered ({reasons})", subject=subject)
            return AllocationOutcome(None, search.steps, pools, self.variant.name, search.warnings)
        results = [build_result(plan, node.metadata.name, self.features, self.variant) for plan in search.plans]
        return AllocationOutcome(results, search.steps, pools, self.variant.name, search.warnings)

    def pools_for(self, node: Node) -> list[Pool]:
        """The node's pools in the order this allocator's variant visits them."""
        return gather_pools(self.index, node, self.features, self.variant)

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
        if device_class is not None and device_class.spec.selectors:
            name = device_class.metadata.name
            owner = (f"class {name}", ("DeviceClass", name))
            if not self._all_true(device_class.spec.selectors, owner, resource_slice, device, device_id):
                return False
        if not request.selectors:
            return True  # most requests select by class alone: no names to build for messages
        owner = (f"claim {_key(claim)}", ("ResourceClaim", _key(claim)))
        return self._all_true(request.selectors, owner, resource_slice, device, device_id)

    def cel_device(self, resource_slice: ResourceSlice, device: Device) -> CelDevice:
        """The CEL view of a device, built once per device object for the allocator's lifetime.

        The stable variant does not pass ``allowMultipleAllocations`` to CEL: there it reads false."""
        views = self._cel_devices if self.variant.cel_sees_multiple_allocations else self._hidden_multi
        view = views.get(id(device))
        if view is None:
            shown = device
            if not self.variant.cel_sees_multiple_allocations and device.allow_multiple_allocations:
                shown = msgspec.structs.replace(device, allow_multiple_allocations=None)
            view = CelDevice.build(
                resource_slice.spec.driver, shown, list_type_attributes=self.features.list_type_attributes
            )
            views[id(device)] = view
        return view

    def available_counters(self, pool: Pool, search: Search | None = None) -> dict[str, dict[str, Amount]]:
        """Counter-set values minus what devices already allocated in the cluster consume (in
        :func:`scaled` units, as :meth:`consumption` gives them)."""
        return self.counter_book(pool, search).available

    def counter_book(self, pool: Pool, search: Search | None = None) -> CounterBook:
        """The pool's available counters, computed once per pool *name* and kept for the allocator's
        lifetime, as upstream does: a pool of another driver with the same name gets the first one's
        counters (``search`` is told, to warn about it)."""
        cached = self._available.get(pool.name)
        if cached is not None:
            if cached.driver != pool.driver and search is not None:
                search.warn(shared_pool_name_warning(pool.name, cached.driver, pool.driver))
            return cached
        available = {
            name: {counter: scaled(Quantity.parse(c.value).value) for counter, c in counter_set.counters.items()}
            for name, counter_set in pool.counter_sets.items()
        }
        for resource_slice in (*pool.device_slices, *pool.other_device_slices):
            for device in resource_slice.spec.devices:
                if not self.state.is_allocated(DeviceID(pool.driver, pool.name, device.name)):
                    continue
                for set_name, name, amount in self.consumption(device):
                    counters = available.get(set_name, {})
                    if name in counters:
                        counters[name] -= amount
        book = CounterBook(pool.driver, available)
        self._available[pool.name] = book
        return book

    def consumption(self, device: Device) -> list[tuple[str, str, Amount]]:
        """(counter set, counter, amount) for every counter the device consumes, parsed once."""
        found = self._consumption.get(id(device))
        if found is None:
            found = [
                (c.counter_set, name, scaled(Quantity.parse(counter.value).value))
                for c in device.consumes_counters
                for name, counter in c.counters.items()
            ]
            self._consumption[id(device)] = found
        return found

    # ---- per-call checks ---------------------------------------------------------------------------

    def _plan_claim(self, search: Search, ci: int, claim: ResourceClaim, pools: list[Pool]) -> None:
        plan = search.plans[ci]
        minimum = 0
        refuse = _Refusal(claim)
        for ri, request in enumerate(claim.spec.devices.requests):
            where = f"claim {_key(claim)}, request {request.name}"
            if request.first_available and not self.features.prioritized_list:
                raise refuse(f"{where}: has subrequests, but the DRAPrioritizedList feature is disabled")
            if not self.features.consumable_capacity and self.variant.refuses_capacity_requests:
                self._refuse_capacity(refuse, request)
            if request.first_available:
                views = [view_sub(request, sub) for sub in request.first_available]
            elif request.exactly is not None:
                views = [view_exact(request, request.exactly)]
            else:
                raise refuse(f"{where}: neither exactly nor firstAvailable is set (unsupported request type?)")
            plan.requests.append(views)
            for si, view in enumerate(views):
                self._check_request(search, ci, ri, si, view, refuse, pools)
            minimum += min(v.num_devices for v in views)
        if minimum > MAX_RESULTS:
            raise refuse(
                f"claim {_key(claim)}: number of requested devices {minimum} exceeds the claim limit of {MAX_RESULTS}"
            )
        plan.constraints = self._constraints(claim, refuse)

    def _refuse_capacity(self, refuse: _Refusal, request: DeviceRequest) -> None:
        """incubating and experimental refuse capacity requests while DRAConsumableCapacity is off."""
        key = _key(refuse.claim)
        if request.exactly is not None and request.exactly.capacity is not None:
            raise refuse(
                f"claim {key}, request {request.name}: has capacity requests, "
                "but the DRAConsumableCapacity feature is disabled"
            )
        for sub in request.first_available or []:
            if sub.capacity is not None:
                raise refuse(
                    f"claim {key}, subrequest {sub.name}: has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled"
                )

    def _check_request(
        self, search: Search, ci: int, ri: int, si: int, view: RequestView, refuse: _Refusal, pools: list[Pool]
    ) -> None:
        where = f"claim {_key(refuse.claim)}, request {view.name}"
        for index, selector in enumerate(view.selectors):
            if selector.cel is None:
                raise refuse(f"{where}, selector #{index}: CEL expression empty (unsupported selector type?)")
        if view.has_admin_access and not self.features.admin_access:
            raise refuse(f"{where}: admin access is requested, but the feature is disabled")
        if not view.device_class_name:
            raise refuse(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.classes.get(view.device_class_name)
        if device_class is None:
            close = difflib.get_close_matches(view.device_class_name, self.classes, n=1)
            hint = f" (did you mean {close[0]}?)" if close else " (create the DeviceClass, or fix the name)"
            raise refuse(
                f"{where}: could not retrieve device class {view.device_class_name}: "
                f'deviceclass.resource.k8s.io "{view.device_class_name}" not found{hint}'
            )
        view.device_class = device_class
        if view.allocation_mode == EXACT_COUNT:
            view.num_devices = view.count
        elif view.allocation_mode == ALL:
            view.all_devices = list(self._all_devices(search, ci, ri, si, view, pools, where, refuse))
            view.num_devices = len(view.all_devices)
        else:
            raise refuse(f"{where}: unsupported count mode {view.allocation_mode}")

    def _all_devices(
        self,
        search: Search,
        ci: int,
        ri: int,
        si: int,
        view: RequestView,
        pools: list[Pool],
        where: str,
        refuse: _Refusal,
    ) -> list[Candidate]:
        found = []
        for pi, pool in enumerate(pools):
            if pool.incomplete:
                state = "being updated"
            elif pool.invalid:
                state = "invalid"
            else:
                state = ""
            if state:
                raise refuse(f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently {state}")
            for sli, resource_slice in enumerate(pool.device_slices):
                ids = pool.device_ids(sli)
                for dvi, device in enumerate(resource_slice.spec.devices):
                    device_id = ids[dvi]
                    if not search.is_selectable(ci, ri, si, view, resource_slice, device, device_id):
                        continue
                    if self.features.consumable_capacity and not search._capacity_fits(view, device, device_id):
                        continue
                    found.append(Candidate(device_id, device, resource_slice, pool, (pi, sli, dvi)))
        return found

    def _constraints(self, claim: ResourceClaim, refuse: _Refusal) -> list[Constraint]:
        constraints: list[Constraint] = []
        lists = self.features.list_type_attributes
        for index, constraint in enumerate(claim.spec.devices.constraints):
            if constraint.match_attribute is not None:
                constraints.append(MatchAttribute(constraint.requests, constraint.match_attribute, lists))
            elif constraint.distinct_attribute is not None and self.variant.distinct_attribute:
                constraints.append(DistinctAttribute(constraint.requests, constraint.distinct_attribute, lists))
            else:
                where = f"claim {_key(claim)}, constraint #{index}"
                raise refuse(f"{where}: empty constraint (unsupported constraint type?)")
        return constraints

    def _all_true(
        self,
        selectors: list[DeviceSelector],
        owner: tuple[str, tuple[str, str]],
        resource_slice: ResourceSlice,
        device: Device,
        device_id: DeviceID,
    ) -> bool:
        """``owner``: how messages name the selectors' object, and that object as an error subject."""
        where, subject = owner
        for index, selector in enumerate(selectors):
            if selector.cel is None:
                raise AllocationError(
                    f"{where}: selector #{index}: CEL expression empty (unsupported selector type?)", subject=subject
                )
            compiled = self._compile(selector.cel.expression, where, subject, index)
            try:
                if not compiled.matches(self.cel_device(resource_slice, device)):
                    return False
            except CelRuntimeError as error:
                raise AllocationError(
                    f"{where}: selector #{index} on device {device_id}: {error}", subject=subject
                ) from error
        return True

    def _compile(self, expression: str, where: str, subject: tuple[str, str], index: int) -> CompiledSelector:
        try:
            return self.compiler.compile(expression)
        except CelCompileError as error:
            raise AllocationError(f"{where}: selector #{index}: {error}", subject=subject) from error


Amount = int | Fraction  # a counter amount in nano-units; a Fraction only below that precision


def scaled(value: Fraction) -> Amount:
    """A quantity in nano-units, an int whenever exact (Kubernetes quantities have nano precision), so
    that the search adds and compares counters as ints."""
    nano = value * 1_000_000_000
    return nano.numerator if nano.denominator == 1 else nano


def _key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


@dataclass
class CounterBook:
    """A pool's counters as available to a search: set -> counter -> amount, and what that implies."""

    driver: str  # whose pool they were computed for
    available: dict[str, dict[str, Amount]]
    size: int = 0  # how many counters upstream compares on each device taken
    over_from_start: bool = False  # some counter is below zero: no device consuming counters fits

    def __post_init__(self) -> None:
        self.size = sum(len(c) for c in self.available.values())
        self.over_from_start = any(v < 0 for c in self.available.values() for v in c.values())


@dataclass(frozen=True)
class _Refusal:
    """Builds the errors about one claim, with the claim as their subject."""

    claim: ResourceClaim

    def __call__(self, message: str) -> AllocationError:
        return AllocationError(message, subject=("ResourceClaim", _key(self.claim)))

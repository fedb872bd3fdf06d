"""The backtracking search of the 1.36 allocator, with per-call scratch state.

Depth-first over claims -> requests -> (subrequests) -> devices; the first full solution wins.
Where the variant searches combinations (incubating, experimental), the next device of a request is
only searched after the previous one; the stable variant starts from the first device each time.
Every tentative choice returns its undo, and a failed branch undoes exactly what it did, except
where upstream deliberately does not (counter consumption of a candidate that fails a later check is
kept for the rest of the call; see ``_take``).

``steps`` counts what upstream's ``numAllocateOneInvocations`` counts (one per ``_next``), so the two
searches can be compared step for step; with ``visits`` and ``counter_checks`` it is what the effort
budget (:mod:`dratwin.allocator.effort`) charges.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from dratwin.allocator import capacity as cap
from dratwin.allocator.constraints import Constraint
from dratwin.allocator.effort import CHECK_EVERY, EffortBudget, upstream_ns
from dratwin.allocator.errors import AllocationTimeout
from dratwin.allocator.nodes import node_matches
from dratwin.allocator.pools import Pool
from dratwin.allocator.requests import ALL, RequestView
from dratwin.allocator.state import DeviceID
from dratwin.allocator.variants import Variant
from dratwin.api.core import Node
from dratwin.api.resource import Device, DeviceToleration, ResourceClaim, ResourceSlice
from dratwin.errors import AllocationError

if TYPE_CHECKING:
    from dratwin.allocator.allocator import Allocator

MAX_RESULTS = 32  # AllocationResultsMaxSize


class MaxSizeExceeded(Exception):
    """Internal signal: this branch would put more than 32 results into a claim."""


@dataclass(frozen=True)
class Candidate:
    """A device at its position in the search order."""

    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool
    position: tuple[int, int, int]  # pool, slice, device index


@dataclass
class DeviceResult:
    """One chosen device of a claim, before it becomes an API result."""

    request: RequestView
    candidate: Candidate
    share_id: str | None = None
    consumed: dict[str, Fraction] | None = None


@dataclass
class ClaimPlan:
    """Per claim: the views of its requests (several for firstAvailable) and its constraints."""

    claim: ResourceClaim
    requests: list[list[RequestView]]
    constraints: list[Constraint]
    chosen_sub: dict[int, int] = field(default_factory=dict)
    results: list[DeviceResult] = field(default_factory=list)


class Search:
    """Scratch state of one ``Allocator.allocate`` call; discarded when it returns."""

    def __init__(
        self,
        allocator: Allocator,
        node: Node,
        pools: list[Pool],
        plans: list[ClaimPlan],
        budget: EffortBudget | None = None,
    ) -> None:
        self.allocator = allocator
        self.features = allocator.features
        self.variant: Variant = allocator.variant
        self.state = allocator.state
        self.node = node
        self.pools = pools
        self.plans = plans
        self.budget = budget
        self.next_look = CHECK_EVERY if budget is not None else -1
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # Keyed by pool name alone, as upstream keys them (two drivers' pools of one name share them).
        self.consumed_counters: dict[str, dict[str, dict[str, int | Fraction]]] = {}
        self.counter_users: dict[str, str] = {}  # pool name -> the first driver whose device consumed there
        self.matches: dict[tuple[int, int, int], dict[DeviceID, bool]] = {}
        self.warnings: list[str] = []
        self.steps = 0
        self.visits = 0  # devices looked at by the search loops
        self.counter_checks = 0  # counters upstream compares while taking devices that consume counters

    # ---- entry ---------------------------------------------------------------------------------

    def run(self) -> bool:
        try:
            return self._next(0, 0, 0, 0, False, None)
        except MaxSizeExceeded:
            return False

    def _look_at_budget(self) -> None:
        assert self.budget is not None
        if upstream_ns(self.steps, self.visits, self.counter_checks) > self.budget.nanoseconds:
            raise AllocationTimeout(self.budget, self.steps)
        self.next_look += CHECK_EVERY

    @property
    def upstream_seconds(self) -> float:
        """How long upstream's search would have taken for the work done so far (an estimate)."""
        return upstream_ns(self.steps, self.visits, self.counter_checks) / 1e9

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    # ---- recursion -----------------------------------------------------------------------------

    def _next(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int] | None) -> bool:
        self.steps += 1
        if self.steps == self.next_look:
            self._look_at_budget()
        if ci >= len(self.plans):
            return True
        plan = self.plans[ci]
        if ri >= len(plan.requests):
            try:
                return self._next(ci + 1, 0, 0, 0, False, None)
            except MaxSizeExceeded:
                # Not fatal: another choice in an earlier claim may allow a smaller subrequest here.
                return False
        views = plan.requests[ri]
        if not in_sub and views[0].parent:
            return self._try_subrequests(ci, ri, views)
        request = views[si]
        if request.allocation_mode == ALL and not request.all_devices:
            return False
        if di >= request.num_devices:
            return self._next(ci, ri + 1, 0, 0, False, None)
        if len(plan.results) + request.num_devices - di > MAX_RESULTS:
            raise MaxSizeExceeded
        if request.allocation_mode == ALL:
            return self._next_of_all(ci, ri, si, di, in_sub, request)
        return self._next_exact(ci, ri, si, di, in_sub, request, start)

    def _try_subrequests(self, ci: int, ri: int, views: list[RequestView]) -> bool:
        all_exceeded = True
        for si in range(len(views)):
            try:
                done = self._next(ci, ri, si, 0, True, None)
            except MaxSizeExceeded:
                continue
            all_exceeded = False
            if done:
                self.plans[ci].chosen_sub[ri] = si
                return True
        if all_exceeded:
            raise MaxSizeExceeded
        return False

    def _next_of_all(self, ci: int, ri: int, si: int, di: int, in_sub: bool, request: RequestView) -> bool:
        candidate = request.all_devices[di]
        assert isinstance(candidate, Candidate)
        undo = self._take(ci, request, candidate, must=True)
        if undo is None:
            return False  # Order does not matter for All: one device that cannot be taken ends it.
        try:
            done = self._next(ci, ri, si, di + 1, in_sub, None)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _next_exact(
        self, ci: int, ri: int, si: int, di: int, in_sub: bool, request: RequestView, start: tuple[int, int, int] | None
    ) -> bool:
        start_pool, start_slice, start_device = start or (0, 0, 0)
        exclusive, allocating = self.state.exclusive, self.allocating
        admin = request.admin_access
        known = self.matches.setdefault((ci, ri, si), {})
        check_capacity = self.features.consumable_capacity
        combinations = self.variant.combinations
        for pi in range(start_pool, len(self.pools)):
            pool = self.pools[pi]
            if not pool.usable:
                continue
            first_slice = start_slice if pi == start_pool else 0
            for sli in range(first_slice, len(pool.device_slices)):
                resource_slice = pool.device_slices[sli]
                devices = resource_slice.spec.devices
                ids = pool.device_ids(sli)
                first_device = start_device if (pi == start_pool and sli == start_slice) else 0
                self.visits += len(devices) - first_device
                for dvi in range(first_device, len(devices)):
                    device_id = ids[dvi]
                    # Checking for "in use" is cheap and comes first, as upstream does.
                    if admin:
                        if ci in allocating.get(device_id, ()):
                            continue
                    elif device_id in exclusive or allocating.get(device_id):
                        continue
                    selectable = known.get(device_id)
                    if selectable is None:
                        selectable = self._selectable(ci, request, resource_slice, devices[dvi], device_id)
                        known[device_id] = selectable
                    if not selectable:
                        continue
                    if check_capacity and not self._capacity_fits(request, devices[dvi], device_id):
                        continue
                    candidate = Candidate(device_id, devices[dvi], resource_slice, pool, (pi, sli, dvi))
                    undo = self._take(ci, request, candidate, must=False)
                    if undo is None:
                        continue
                    following = (pi, sli, dvi + 1) if combinations else None
                    try:
                        done = self._next(ci, ri, si, di + 1, in_sub, following)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    # ---- checks --------------------------------------------------------------------------------

    def in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.state.exclusive or bool(self.allocating.get(device_id))

    def is_selectable(
        self,
        ci: int,
        ri: int,
        si: int,
        request: RequestView,
        resource_slice: ResourceSlice,
        device: Device,
        device_id: DeviceID,
    ) -> bool:
        """Class and request selectors, binding-condition support and per-device node selection,
        remembered per device and (sub)request for the rest of the call."""
        known = self.matches.setdefault((ci, ri, si), {})
        result = known.get(device_id)
        if result is None:
            result = self._selectable(ci, request, resource_slice, device, device_id)
            known[device_id] = result
        return result

    def _selectable(
        self, ci: int, request: RequestView, resource_slice: ResourceSlice, device: Device, device_id: DeviceID
    ) -> bool:
        if device.binding_conditions and not self.features.binding_conditions:
            return False
        claim = self.plans[ci].claim
        result = self.allocator.selectors_match(request, claim, resource_slice, device, device_id)
        if result and resource_slice.spec.per_device_node_selection:
            result = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
        return result

    def _capacity_fits(self, request: RequestView, device: Device, device_id: DeviceID) -> bool:
        if request.capacity_requests is None and not device.allow_multiple_allocations:
            # An exclusive device asked for nothing in particular: it takes its whole capacity, which always
            # fits (request policies need allowMultipleAllocations), so skip the arithmetic.
            return True
        fits = cap.request_fits(
            request.capacity_requests,
            device.capacity,
            self.state.aggregated_capacity.get(device_id),
            self.allocating_capacity.get(device_id),
        )
        return bool(fits)

    def _multi(self, device: Device) -> bool:
        return self.features.consumable_capacity and bool(device.allow_multiple_allocations)

    def _take(self, ci: int, request: RequestView, candidate: Candidate, must: bool) -> Callable[[], None] | None:
        """Check one candidate and record it as chosen; returns its undo, or None when it cannot be taken."""
        device, device_id = candidate.device, candidate.id
        multi = self._multi(device)
        if not multi and request.admin_access and ci in self.allocating.get(device_id, ()):
            return None
        if not request.admin_access and self.in_use(device_id):
            return None
        if device.consumes_counters and not self.features.partitionable_devices:
            return None
        counters_taken = False
        shared_in_use = device_id in self.state.aggregated_capacity or device_id in self.allocating_capacity
        if device.consumes_counters and not (multi and shared_in_use):
            if not self._take_counters(candidate):
                return None
            counters_taken = True
        # From here on a refusal keeps the counters just taken, as upstream does.
        if self.features.device_taints and taint_prevents(device, request.tolerations):
            return None
        plan = self.plans[ci]
        added: list[Constraint] = []
        for constraint in plan.constraints:
            if not constraint.add(request.base_name, request.sub_name, device, candidate.pool.driver):
                for earlier in added:
                    earlier.remove(request.base_name, request.sub_name, device, candidate.pool.driver)
                if must:
                    raise AllocationError(
                        f"claim {_claim_key(plan.claim)}, request {request.name}: cannot add device "
                        f"{device_id} because a claim constraint would not be satisfied",
                        subject=("ResourceClaim", _claim_key(plan.claim)),
                    )
                return None
            added.append(constraint)
        if not multi:
            self.allocating.setdefault(device_id, set()).add(ci)
        result = DeviceResult(request, candidate)
        if self.features.consumable_capacity:
            if not self._capacity_fits(request, device, device_id):
                return None  # Cannot happen after the pre-check; upstream does not roll back here either.
            if multi:
                result.consumed = cap.consumed_share(request.capacity_requests, device.capacity)
                result.share_id = str(uuid.uuid4())
                _add_amounts(self.allocating_capacity.setdefault(device_id, {}), result.consumed)
        plan.results.append(result)
        count_before = len(plan.results) - 1

        def undo() -> None:
            for constraint in plan.constraints:
                constraint.remove(request.base_name, request.sub_name, device, candidate.pool.driver)
            self.allocating.get(device_id, set()).discard(ci)
            if multi:
                # Upstream records a share's consumption only when it has some, and forgets a device's
                # total once it is all zero, even while other shares of it are still chosen.
                if result.consumed:
                    _remove_amounts(self.allocating_capacity, device_id, result.consumed)
            elif counters_taken:
                self._release_counters(candidate)
            del plan.results[count_before:]

        return undo

    # ---- counters ------------------------------------------------------------------------------

    def _take_counters(self, candidate: Candidate) -> bool:
        """Add the device's consumption and check the pool's counters, as upstream does.

        Upstream compares every counter of the pool after each addition. Only the counters this device
        adds to can have gone over (the others were within their availability after the previous
        addition), unless some counter was over from the start (more consumed by allocated devices than
        the set holds), which blocks every device of the pool. The comparisons upstream makes are
        still what the effort budget counts."""
        pool = candidate.pool
        book = self.allocator.counter_book(pool, self)
        first_user = self.counter_users.setdefault(pool.name, pool.driver)
        if first_user != pool.driver:
            self.warn(shared_pool_name_warning(pool.name, first_user, pool.driver))
        self.counter_checks += book.size
        consumed = self.consumed_counters.setdefault(pool.name, {})
        over = book.over_from_start
        for set_name, name, amount in self.allocator.consumption(candidate.device):
            counters = consumed.setdefault(set_name, {})
            total = counters.get(name, 0) + amount
            counters[name] = total
            limit = book.available.get(set_name, {}).get(name)
            if limit is not None and total > limit:
                over = True
        if over:
            self._release_counters(candidate)
            return False
        return True

    def _release_counters(self, candidate: Candidate) -> None:
        consumed = self.consumed_counters[candidate.pool.name]
        for set_name, name, amount in self.allocator.consumption(candidate.device):
            consumed[set_name][name] -= amount


def shared_pool_name_warning(name: str, first: str, other: str) -> str:
    """Upstream 1.36 keeps shared counters per pool *name*: say so where two drivers meet in one."""
    return (
        f"pools {first}/{name} and {other}/{name} have the same name: Kubernetes 1.36 keeps shared counters "
        f"per pool name, not per driver, so the devices of {other} are checked against the counter sets of "
        f"{first} and their consumption adds up (give the pools different names to keep them apart)"
    )


def taint_prevents(device: Device, tolerations: list[DeviceToleration]) -> bool:
    """Only NoSchedule and NoExecute taints prevent allocation; each must be tolerated."""
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            _tolerates(toleration, taint.key, taint.value, taint.effect) for toleration in tolerations
        ):
            return True
    return False


def _tolerates(toleration: DeviceToleration, key: str, value: str, effect: str) -> bool:
    if toleration.effect and toleration.effect != effect:
        return False
    if toleration.key and toleration.key != key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in ("", "Equal"):
        return toleration.value == value
    return False


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _add_amounts(total: dict[str, Fraction], amounts: dict[str, Fraction]) -> None:
    for name, value in amounts.items():
        total[name] = total.get(name, Fraction(0)) + value


def _remove_amounts(
    totals: dict[DeviceID, dict[str, Fraction]], device_id: DeviceID, amounts: dict[str, Fraction]
) -> None:
    """Upstream's ConsumedCapacityCollection.Remove: nothing to do for a device no longer recorded."""
    total = totals.get(device_id)
    if total is None:
        return
    for name, value in amounts.items():
        if name in total:
            total[name] -= value
    if all(v == 0 for v in total.values()):
        del totals[device_id]

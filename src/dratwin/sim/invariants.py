"""What must hold after every event of a run; the engine's debug option checks them (tests turn it on).

A violation raises :class:`InvariantError` naming the time, the object and the rule, so a failing test
points at the first event that broke the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from dratwin.allocator.state import DeviceID
from dratwin.api.quantity import Quantity
from dratwin.api.resource import Device
from dratwin.cluster.state import pod_claim_keys
from dratwin.kueue.quota import cq_key
from dratwin.sim.accounting import Accountant
from dratwin.sim.kueue import KueueController
from dratwin.sim.store import Store
from dratwin.sim.workloads import workload_of


class InvariantError(AssertionError):
    pass


@dataclass
class InvariantChecker:
    store: Store
    accountant: Accountant
    kueue: KueueController | None = None
    last_time: float = 0.0
    cost_usd: float = 0.0  # integrated event by event, to check the accountant's node lifetimes × price
    checks: int = 0
    _rate: float = field(default=0.0)  # USD per hour of the nodes up since the last check

    def __post_init__(self) -> None:
        self._rate = self._current_rate()

    def _current_rate(self) -> float:
        return sum(self.accountant.node_price(n) or 0.0 for n in self.store.state.nodes)

    def __call__(self) -> None:
        now = self.store.clock.now()
        if now < self.last_time:
            raise InvariantError(f"t={now}: simulated time went back from {self.last_time}")
        self.cost_usd += self._rate * (now - self.last_time) / 3600.0
        self.last_time = now
        self._rate = self._current_rate()
        self.checks += 1
        self._pods_on_one_node(now)
        self._devices_within_limits(now)
        self._running_pods_hold_their_claims(now)
        if self.kueue is not None:
            self._cluster_queues_within_limits(now, self.kueue)
            self._running_pods_are_admitted(now, self.kueue)

    def finish(self, until: float) -> None:
        """At the end of the run: the cost equals the sum of node lifetimes × price."""
        self.cost_usd += self._rate * (until - self.last_time) / 3600.0
        self.last_time = until
        booked = sum(cost.usd for cost in self.accountant.costs(until))
        if abs(booked - self.cost_usd) > 1e-6 * max(1.0, self.cost_usd):
            raise InvariantError(f"cost {booked} USD != node lifetimes x price {self.cost_usd} USD")

    def _pods_on_one_node(self, now: float) -> None:
        state = self.store.state
        seen: dict[str, str] = {}
        for name, info in state.nodes.items():
            for booked in info.pods:
                if booked.key in seen:
                    raise InvariantError(f"t={now}: pod {booked.key} is on nodes {seen[booked.key]} and {name}")
                seen[booked.key] = name
        for key, record in state.pods.items():
            node = record.pod.spec.node_name
            if node and node in state.nodes and seen.get(key) != node:
                raise InvariantError(f"t={now}: pod {key} is bound to {node} but booked on {seen.get(key)}")

    def _devices_within_limits(self, now: float) -> None:
        state = self.store.state
        allocated = state.allocated
        devices: dict[DeviceID, Device] = {}
        counters: dict[tuple[str, str, str, str], Fraction] = {}
        for resource_slice in state.slices:
            spec = resource_slice.spec
            for device in spec.devices:
                devices[DeviceID(spec.driver, spec.pool.name, device.name)] = device
            for counter_set in spec.shared_counters:
                for name, counter in counter_set.counters.items():
                    key = (spec.driver, spec.pool.name, counter_set.name, name)
                    counters[key] = Quantity.parse(counter.value).value
        for held in allocated.exclusive:
            holders = allocated.owners.get(held, [])
            if len(holders) > 1:
                raise InvariantError(f"t={now}: device {held} is held by {len(holders)} claims: {', '.join(holders)}")
        for shared, totals in allocated.aggregated_capacity.items():
            capacity = devices[shared].capacity if shared in devices else {}
            for name, amount in totals.items():
                if name in capacity and amount > Quantity.parse(capacity[name].value).value:
                    raise InvariantError(f"t={now}: device {shared}: {name} {amount} over its capacity")
        consumed: dict[tuple[str, str, str, str], Fraction] = {}
        for device_id in sorted(set(allocated.exclusive) | set(allocated.aggregated_capacity)):
            found = devices.get(device_id)
            for consumption in found.consumes_counters if found is not None else []:
                for name, counter in consumption.counters.items():
                    key = (device_id.driver, device_id.pool, consumption.counter_set, name)
                    consumed[key] = consumed.get(key, Fraction(0)) + Quantity.parse(counter.value).value
        for key, total in consumed.items():
            if key in counters and total > counters[key]:
                raise InvariantError(f"t={now}: counter {'/'.join(key)}: {total} used of {counters[key]}")

    def _running_pods_hold_their_claims(self, now: float) -> None:
        state = self.store.state
        for key, record in state.pods.items():
            if (record.raw.get("status") or {}).get("phase") != "Running":
                continue
            for claim_key in pod_claim_keys(record.pod):
                claim = state.claims.get(claim_key)
                if claim is None or claim.claim.status.allocation is None:
                    raise InvariantError(f"t={now}: running pod {key}: claim {claim_key} is not allocated")
                reserved = {r.uid for r in claim.claim.status.reserved_for}
                if record.pod.metadata.uid not in reserved:
                    raise InvariantError(f"t={now}: running pod {key}: claim {claim_key} is not reserved for it")

    def _cluster_queues_within_limits(self, now: float, kueue: KueueController) -> None:
        """No ClusterQueue uses more of a flavor's resource than its nominal quota plus its borrowingLimit."""
        tree = kueue.tree
        for name in kueue.objects.cluster_queues:
            key = cq_key(name)
            for fr, used in tree.nodes[key].usage.items():
                quota = tree.quota(key, fr)
                if quota.borrowing_limit is not None and used > quota.nominal + quota.borrowing_limit:
                    raise InvariantError(f"t={now}: ClusterQueue {name} uses {used} of {fr[1]} in flavor {fr[0]}: over "
                                         f"nominal {quota.nominal} + borrowingLimit {quota.borrowing_limit}")
                if used > tree.potential_available(key, fr):
                    raise InvariantError(f"t={now}: ClusterQueue {name} uses {used} of {fr[1]} in flavor {fr[0]}: "
                                         f"more than the cohort could ever lend it")

    def _running_pods_are_admitted(self, now: float, kueue: KueueController) -> None:
        """A pod of a Job Kueue manages runs only while the Job's Workload holds its admission."""
        for key, record in self.store.state.pods.items():
            if (record.raw.get("status") or {}).get("phase") != "Running":
                continue
            workload = kueue.by_job.get(workload_of(record.raw))
            found = kueue.records.get(workload) if workload else None
            if found is not None and (found.admitted is None or found.admitted_at is None):
                raise InvariantError(f"t={now}: pod {key} runs but its Workload {workload} is not admitted")

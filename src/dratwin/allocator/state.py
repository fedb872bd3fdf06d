"""Devices already in use in the cluster, derived from allocated claims the way kube-scheduler does.

This is an input of the allocator and is never changed by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from dratwin.allocator.features import Features
from dratwin.api.quantity import Quantity
from dratwin.api.resource import AllocationResult, ResourceClaim


class DeviceID(NamedTuple):
    """A device's identity in the cluster: driver, pool and device name."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass
class AllocatedState:
    """What allocated claims hold: exclusive devices, shared allocations and their summed capacity.

    ``owners`` remembers which claim holds a device, only to explain a "no".
    """

    exclusive: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    owners: dict[DeviceID, list[str]] = field(default_factory=dict)

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim], features: Features) -> AllocatedState:
        """Collect the devices held by every claim with ``status.allocation``.

        Results with admin access never block anything. With consumable capacity on, a result with a
        shareID is a share whose consumed capacity adds up per device; every other result holds its
        device exclusively (also a shareID result while the feature is off, as upstream does).
        """
        state = cls()
        for claim in claims:
            if claim.status.allocation is not None:
                state.hold(f"{claim.metadata.namespace}/{claim.metadata.name}", claim.status.allocation, features)
        return state

    def hold(self, owner: str, allocation: AllocationResult, features: Features) -> list[DeviceID]:
        """Record the devices of one allocation as in use by ``owner``; returns the devices touched."""
        touched = []
        for result in allocation.devices.results:
            if result.admin_access:
                continue
            device = DeviceID(result.driver, result.pool, result.device)
            touched.append(device)
            self.owners.setdefault(device, []).append(owner)
            if features.consumable_capacity and result.share_id:
                self._add_share(device, result.share_id, result.consumed_capacity)
            else:
                self.exclusive.add(device)
        return touched

    def release(self, owner: str, allocation: AllocationResult, features: Features) -> list[DeviceID]:
        """Undo :meth:`hold` for one allocation (the claim was deallocated); returns the devices touched."""
        touched = []
        for result in allocation.devices.results:
            if result.admin_access:
                continue
            device = DeviceID(result.driver, result.pool, result.device)
            touched.append(device)
            owners = self.owners.get(device, [])
            if owner in owners:
                owners.remove(owner)
            if not owners:
                self.owners.pop(device, None)
            if features.consumable_capacity and result.share_id:
                self.shared.discard((device, result.share_id))
                totals = self.aggregated_capacity.get(device, {})
                for name, value in result.consumed_capacity.items():
                    totals[name] = totals.get(name, Fraction(0)) - Quantity.parse(value).value
                if not any(device == d for d, _ in self.shared):
                    self.aggregated_capacity.pop(device, None)
            else:
                self.exclusive.discard(device)
        return touched

    def _add_share(self, device: DeviceID, share_id: str, consumed: dict[str, str | int | float]) -> None:
        self.shared.add((device, share_id))
        totals = self.aggregated_capacity.setdefault(device, {})
        for name, value in consumed.items():
            totals[name] = totals.get(name, Fraction(0)) + Quantity.parse(value).value

    def is_allocated(self, device: DeviceID) -> bool:
        """Held exclusively or shared: either way its counters are consumed (1.36)."""
        return device in self.exclusive or device in self.aggregated_capacity

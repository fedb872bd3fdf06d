"""Ready replicas grouped by what decides their load, so that one evaluation serves a whole class.

With the load split by weight (equal, or by capacity), every ready replica of a service with the same
weight is offered the same requests; isolated replicas (a whole GPU, a MIG slice) with the same capacity
then serve the same; time-sliced devices holding the same mix of replicas share their time the same way.
A fleet of hundreds of identical replicas is evaluated as a handful of classes: the load model's hot path
(the rate is evaluated at many times while the placement stays fixed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Member = tuple[str, float, float]  # (service, weight, requests per second on one whole GPU)
IsolatedKey = tuple[str, float, float]  # (service, weight, capacity in requests per second)
SharedKey = tuple[float, tuple[Member, ...]]  # (the device's compute budget, its members in a fixed order)


@dataclass
class Layout:
    service_of: dict[str, str] = field(default_factory=dict)
    weight_total: dict[str, float] = field(default_factory=dict)
    isolated: dict[IsolatedKey, list[str]] = field(default_factory=dict)
    class_of: dict[str, IsolatedKey] = field(default_factory=dict)  # an isolated replica's class
    shared: dict[SharedKey, list[tuple[str, ...]]] = field(default_factory=dict)  # replica names in member order

    def add_isolated(self, name: str, service: str, weight: float, capacity: float) -> None:
        self._count(name, service, weight)
        key = (service, weight, capacity)
        self.isolated.setdefault(key, []).append(name)
        self.class_of[name] = key

    def add_shared(self, budget: float, members: Iterable[tuple[str, Member]]) -> None:
        """One time-sliced device and the replicas on it."""
        ordered = sorted(members, key=lambda m: (m[1], m[0]))
        for name, (service, weight, _) in ordered:
            self._count(name, service, weight)
        key = (budget, tuple(member for _, member in ordered))
        self.shared.setdefault(key, []).append(tuple(name for name, _ in ordered))

    def _count(self, name: str, service: str, weight: float) -> None:
        self.service_of[name] = service
        self.weight_total[service] = self.weight_total.get(service, 0.0) + weight


@dataclass(frozen=True)
class Values:
    """One replica's load at one moment (requests per second; ``busy`` the fraction of its device's or slice's
    time it keeps busy; ``capacity`` what it could serve, given the others' load)."""

    offered: float
    served: float
    busy: float
    capacity: float


def _offered(layout: Layout, rates: Mapping[str, float], service: str, weight: float) -> float:
    total = layout.weight_total[service]
    return rates[service] * weight / total if total else 0.0


def served_by_service(layout: Layout, rates: Mapping[str, float]) -> dict[str, float]:
    """Requests per second each service's ready replicas serve, at the given rates."""
    served: dict[str, float] = {}
    totals = layout.weight_total
    for (service, weight, capacity), names in layout.isolated.items():
        total = totals[service]  # _offered, inlined: this runs several times per accounted interval
        each = min(rates[service] * weight / total if total else 0.0, capacity)
        served[service] = served.get(service, 0.0) + each * len(names)
    for (budget, members), devices in layout.shared.items():
        for (service, _, rps), grant in zip(members, _grants(layout, rates, budget, members), strict=True):
            served[service] = served.get(service, 0.0) + grant * rps * len(devices)
    return served


def isolated_values(layout: Layout, rates: Mapping[str, float]) -> dict[IsolatedKey, Values]:
    """The values every isolated replica of a class has (they are offered, and serve, the same)."""
    result = {}
    for key in layout.isolated:
        service, weight, capacity = key
        offered = _offered(layout, rates, service, weight)
        served = min(offered, capacity)
        result[key] = Values(offered, served, served / capacity if capacity else 0.0, capacity)
    return result


def shared_values(layout: Layout, rates: Mapping[str, float]) -> dict[str, Values]:
    """The values of each replica on a time-sliced device, by name."""
    result = {}
    for (budget, members), devices in layout.shared.items():
        grants = _grants(layout, rates, budget, members)
        alone = _alone(layout, rates, budget, members)
        for on_device in devices:
            for i, (name, (service, weight, rps)) in enumerate(zip(on_device, members, strict=True)):
                result[name] = Values(_offered(layout, rates, service, weight), grants[i] * rps, grants[i],
                                      alone[i] * rps)
    return result


def _demands(layout: Layout, rates: Mapping[str, float], members: tuple[Member, ...]) -> list[float]:
    return [_offered(layout, rates, service, weight) / rps for service, weight, rps in members]


def _grants(layout: Layout, rates: Mapping[str, float], budget: float, members: tuple[Member, ...]) -> list[float]:
    return max_min_fair(_demands(layout, rates, members), budget)


def _alone(layout: Layout, rates: Mapping[str, float], budget: float, members: tuple[Member, ...]) -> list[float]:
    """Each member's share if its own demand were unbounded: the time the others leave it."""
    demands = _demands(layout, rates, members)
    return [max_min_fair([*demands[:i], math.inf, *demands[i + 1 :]], budget)[i] for i in range(len(members))]


def max_min_fair(demands: list[float], budget: float) -> list[float]:
    """Water-filling: the smallest demands are met in full, the rest share what is left equally."""
    grants = [0.0] * len(demands)
    left = budget
    waiting = sorted(range(len(demands)), key=lambda i: demands[i])
    while waiting:
        share = left / len(waiting)
        first = waiting[0]
        if demands[first] > share:
            for i in waiting:
                grants[i] = share
            break
        grants[first] = demands[first]
        left -= demands[first]
        waiting.pop(0)
    return grants

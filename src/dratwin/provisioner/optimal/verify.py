"""A packing turned into the fleet the caller reads, and the independent check every returned fleet passes."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence

from dratwin.provisioner.optimal.heuristic import Packing
from dratwin.provisioner.optimal.model import (
    SLOT_SEP,
    ExistingNode,
    NodeOption,
    OptimalFleet,
    PodGroup,
    Problem,
    Status,
    is_allowed,
)


def to_fleet(
    prob: Problem, packing: Packing, status: Status, lower_bound: float, started: float, notes: Iterable[str]
) -> OptimalFleet:
    by_option: dict[int, list[dict[int, int]]] = {}
    for o, counts in packing.new_nodes:
        if any(counts.values()):
            by_option.setdefault(o, []).append(counts)
    placement: dict[str, dict[str, int]] = {}
    nodes: dict[str, int] = {}
    launched: dict[str, str] = {}

    def add(gi: int, slot: str, k: int) -> None:
        if k > 0:
            placement.setdefault(prob.groups[gi].name, {})[slot] = k

    for ei, counts in enumerate(packing.on_existing):
        for gi in sorted(counts):
            add(gi, prob.existing[ei].name, counts[gi])
    for o in sorted(by_option):
        name = prob.options[o].name
        # canonical slot order: identical slots are interchangeable, so number them by their contents
        slots = sorted(by_option[o], key=lambda c: tuple(-c.get(gi, 0) for gi in range(len(prob.groups))))
        nodes[name] = len(slots)
        for i, counts in enumerate(slots, start=1):
            slot = f"{name}{SLOT_SEP}{i}"
            launched[slot] = name
            for gi in sorted(counts):
                add(gi, slot, counts[gi])
    placement = {g.name: placement[g.name] for g in prob.groups if g.name in placement}
    unplaced = dict(packing.unplaced)
    for gi, n in prob.trivially_unplaceable.items():
        unplaced[gi] = unplaced.get(gi, 0) + n
    unplaceable = {prob.groups[gi].name: unplaced[gi] for gi in sorted(unplaced) if unplaced[gi]}
    cost = math.fsum(prob.options[o].price_per_hour * len(s) for o, s in by_option.items())
    return OptimalFleet(
        status,
        cost,
        nodes,
        placement,
        unplaceable,
        time.perf_counter() - started,
        max(0.0, min(lower_bound, cost)),
        launched,
        tuple(notes),
    )


def verify_fleet(
    fleet: OptimalFleet,
    groups: Sequence[PodGroup],
    options: Sequence[NodeOption],
    existing: Sequence[ExistingNode] = (),
    *,
    limits: Mapping[str, int] | None = None,
    pool_limits: Mapping[str, Mapping[str, int]] | None = None,
) -> list[str]:
    """Every way ``fleet`` breaks the input's rules (empty: it is valid), checked in exact integers.

    Each group's placed and unplaceable pods add up to its count; each slot's summed requests are within
    its capacity (free capacity for existing nodes) in every dimension and it carries only groups it
    ``fits``; launched slots match ``nodes``; ``max_count``, ``limits`` and ``pool_limits`` hold; the cost
    is the sum of the prices; the lower bound does not exceed it.
    """
    problems: list[str] = []
    by_group = {g.name: g for g in groups}
    by_option = {o.name: o for o in options}
    by_existing = {e.name: e for e in existing}
    for name, n in fleet.nodes.items():
        o = by_option.get(name)
        if o is None:
            problems.append(f"nodes names unknown option {name!r}")
        elif n < 0 or (o.max_count is not None and n > o.max_count):
            problems.append(f"{n} nodes of {name!r} break max_count {o.max_count}")
    expected_slots = {
        f"{name}{SLOT_SEP}{i}": name for name, n in fleet.nodes.items() if name in by_option for i in range(1, n + 1)
    }
    if fleet.launched != expected_slots:
        problems.append("launched slots do not match nodes")
    load: dict[str, dict[str, int]] = {}
    for gname, slots in fleet.placement.items():
        g = by_group.get(gname)
        if g is None:
            problems.append(f"placement names unknown pod group {gname!r}")
            continue
        for slot, k in slots.items():
            if k <= 0:
                problems.append(f"{gname!r} has {k} pods on {slot!r}")
            if slot in by_existing:
                fits = by_existing[slot].fits
            elif slot in expected_slots:
                fits = by_option[expected_slots[slot]].fits
            else:
                problems.append(f"{gname!r} is placed on unknown slot {slot!r}")
                continue
            if not is_allowed(fits, gname):
                problems.append(f"{gname!r} is not allowed on {slot!r}")
            acc = load.setdefault(slot, {})
            for d, r in g.requests.items():
                acc[d] = acc.get(d, 0) + r * k
    for g in groups:
        placed = sum(fleet.placement.get(g.name, {}).values())
        unplaced = fleet.unplaceable.get(g.name, 0)
        if placed + unplaced != g.count or unplaced < 0:
            problems.append(f"{g.name!r}: {placed} placed + {unplaced} unplaceable != {g.count}")
    for slot, acc in load.items():
        capacity = by_existing[slot].free if slot in by_existing else by_option[expected_slots[slot]].capacity
        for d, used in acc.items():
            if used > capacity.get(d, 0):
                problems.append(f"{slot!r}: {d} requests {used} > capacity {capacity.get(d, 0)}")
    scopes: list[tuple[str, Mapping[str, int], list[NodeOption]]] = []
    if limits:
        scopes.append(("limits", limits, list(options)))
    for pool, lims in (pool_limits or {}).items():
        scopes.append((f"pool {pool!r}", lims, [o for o in options if o.pool == pool]))
    for scope, lims, members in scopes:
        for resource, bound in lims.items():
            total = sum(
                fleet.nodes.get(o.name, 0)
                * (o.limit_capacity if o.limit_capacity is not None else o.capacity).get(resource, 0)
                for o in members
            )
            if total > bound:
                problems.append(f"{scope}: {resource} {total} > limit {bound}")
    cost = math.fsum(by_option[n].price_per_hour * k for n, k in fleet.nodes.items() if n in by_option)
    if not math.isclose(cost, fleet.cost_per_hour, rel_tol=1e-9, abs_tol=1e-9):
        problems.append(f"cost_per_hour {fleet.cost_per_hour} != sum of prices {cost}")
    if fleet.lower_bound > fleet.cost_per_hour + 1e-9:
        problems.append(f"lower_bound {fleet.lower_bound} > cost_per_hour {fleet.cost_per_hour}")
    return problems

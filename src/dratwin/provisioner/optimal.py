"""The cost-optimal fleet for a set of pending pods: an exact per-node MILP solved by HiGHS.

A pure solver: no I/O, no cluster objects. The caller turns pods into :class:`PodGroup` (identical pods,
requests in abstract integer dimensions), instance types (or type × offering) into :class:`NodeOption`
and the free capacity of the cluster into :class:`ExistingNode`, then calls :func:`solve_optimal`::

    >>> gpu = "device:gpu.nvidia.com"
    >>> fleet = solve_optimal(
    ...     [PodGroup("train", 3, {gpu: 1, "pods": 1})],
    ...     [NodeOption("x4", 10.0, {gpu: 4, "pods": 110}), NodeOption("x1", 4.0, {gpu: 1, "pods": 110})],
    ... )
    >>> fleet.status, fleet.cost_per_hour, fleet.nodes
    ('optimal', 10.0, {'x4': 1})

Dimensions are free-form names (``cpu`` in millicores, ``memory`` in bytes, ``pods``, extended resources,
``device:<class>`` = number of devices of that class); a dimension that a capacity does not name is 0 there.

Aggregating per option ("Σ requests ≤ Σ capacity of the option's nodes") is not exact for bin packing: the
free capacity left on many nodes is pooled into pods that fit no single node. Both models here are per node:

1. **Pattern form** (Dantzig–Wolfe of the per-node model). A pattern is how many pods of each group one node
   of an option carries; integer ``λ[o,p]`` nodes are launched with it. Column generation solves its LP
   relaxation (pricing: per option, the most valuable pattern under the demand duals, a small knapsack MILP,
   greedy first) and gives the lower bound, valid at every round priced exactly for every option
   (``z_LP + Σ_o U_o·min(0, least reduced cost of o)``). The integer program over the generated patterns then
   gives a fleet, node by node. When its cost meets the bound (within ``rel_gap``) it is proved optimal.
2. **Compact per-node model**, run only if step 1 proved nothing and it has at most ``max_columns`` columns:
   for every option ``o`` node slots ``k = 1..U_o`` with binary ``y[o,k]``, integer ``x[g,o,k]`` (pods of
   group ``g`` on the slot), a capacity row per slot and dimension, symmetry breaking ``y[o,k] ≥ y[o,k+1]``,
   existing nodes as free slots. HiGHS's branch and bound proves optimality on small instances.

Both have existing nodes as free capacity, NodePool-style limits as rows over the summed ``limit_capacity`` of
launched nodes, ``max_count`` and, only when first fit could not place every pod, integer ``u[g]`` unplaced
pods with a penalty larger than any fleet's cost: the models are always feasible and place as many pods as
possible, then minimise Σ price.

Model size is kept in check by grouping identical pods (integer counts, not one variable per pod), by
dropping dominated options (another option without ``max_count``, at most as expensive, with at least the
capacity, the groups and no more limit usage), and by capping ``U_o`` by what an optimal fleet can need: at
most ``max_count`` and what the limits allow, the first-fit-decreasing count of nodes of ``o`` alone that hold
every pod allowed on ``o`` (an optimal fleet's pods on ``o`` can be repacked into that many), and
``cost(best fleet) / price_o``.

:func:`first_fit_decreasing` is the quick feasible fleet that sizes ``U_o``, the incumbent the solvers must
beat, and the answer when highspy is not installed or time runs out first. Every fleet returned has passed
:func:`verify_fleet`.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from dratwin.errors import DratwinError

if TYPE_CHECKING:
    import highspy

__all__ = [
    "DEFAULT_MAX_COLUMNS",
    "DEFAULT_REL_GAP",
    "DEFAULT_TIME_LIMIT",
    "ExistingNode",
    "FleetInputError",
    "NodeOption",
    "OptimalFleet",
    "PodGroup",
    "Status",
    "first_fit_decreasing",
    "solve_optimal",
    "verify_fleet",
]

Status = Literal["optimal", "feasible", "infeasible", "time_limit"]
DEFAULT_TIME_LIMIT = 10.0
DEFAULT_REL_GAP = 1e-4
DEFAULT_MAX_COLUMNS = 20_000
_CG_SHARE = 0.5  # of the time left, for column generation
_MASTER_SHARE = 0.5  # of the time then left, for the integer master
_SLOT_SEP = "#"


class FleetInputError(DratwinError, ValueError):
    """Input to the fleet solver that is malformed (negative counts or requests, duplicate names)."""


def _check_quantities(owner: str, what: str, values: Mapping[str, int]) -> None:
    for key, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise FleetInputError(f"{owner}: {what}[{key!r}] must be a non-negative integer, got {value!r}")


@dataclass(frozen=True)
class PodGroup:
    """``count`` identical pods, each requesting ``requests`` (cpu millicores, memory bytes, pods=1, ...)."""

    name: str
    count: int
    requests: Mapping[str, int]

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or self.count < 0:
            raise FleetInputError(f"pod group {self.name!r}: count must be a non-negative integer")
        _check_quantities(f"pod group {self.name!r}", "requests", self.requests)


@dataclass(frozen=True)
class NodeOption:
    """One node type that can be launched (an instance type, or a type × offering).

    ``capacity`` is the allocatable of one node in the pods' dimensions. ``fits`` restricts the pod groups
    allowed on it (None: every group whose requests fit). ``max_count`` caps how many may be launched.
    ``pool`` names the NodePool whose ``pool_limits`` apply, and ``limit_capacity`` is what one node counts
    against limits (Karpenter counts capacity, not allocatable; default: ``capacity``).
    """

    name: str
    price_per_hour: float
    capacity: Mapping[str, int]
    max_count: int | None = None
    fits: frozenset[str] | None = None
    pool: str = ""
    limit_capacity: Mapping[str, int] | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.price_per_hour) or self.price_per_hour < 0:
            raise FleetInputError(f"node option {self.name!r}: price_per_hour must be finite and >= 0")
        if self.max_count is not None and self.max_count < 0:
            raise FleetInputError(f"node option {self.name!r}: max_count must be >= 0")
        _check_quantities(f"node option {self.name!r}", "capacity", self.capacity)
        if self.limit_capacity is not None:
            _check_quantities(f"node option {self.name!r}", "limit_capacity", self.limit_capacity)


@dataclass(frozen=True)
class ExistingNode:
    """Capacity already in the cluster, free of cost: what is still ``free`` on the node."""

    name: str
    free: Mapping[str, int]
    fits: frozenset[str] | None = None

    def __post_init__(self) -> None:
        _check_quantities(f"existing node {self.name!r}", "free", self.free)


@dataclass(frozen=True)
class OptimalFleet:
    """A fleet: what to launch and where every pod goes.

    ``status``: ``optimal`` (proved cost-optimal within the relative gap, every pod placed); ``infeasible``
    (proved that not every pod can be placed: ``unplaceable`` is as small as it can be and the fleet is the
    cheapest that places the rest); ``time_limit`` (the solver was cut off: the best fleet found, with
    ``lower_bound``); ``feasible`` (no proof: the first-fit-decreasing fleet, e.g. highspy is missing).

    ``nodes``: option name → number launched. ``placement``: group → slot → pods, where a slot is an existing
    node's name or ``"<option>#<i>"`` for the i-th launched node of an option (``launched`` maps those slots
    to their option). ``lower_bound``: no fleet that places at least as many pods costs less per hour.
    """

    status: Status
    cost_per_hour: float
    nodes: dict[str, int]
    placement: dict[str, dict[str, int]]
    unplaceable: dict[str, int]
    solve_seconds: float
    lower_bound: float
    launched: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        """Relative distance between the fleet's cost and the lower bound (0 when proved optimal)."""
        if self.cost_per_hour <= 0:
            return 0.0
        return max(0.0, (self.cost_per_hour - self.lower_bound) / self.cost_per_hour)

    @property
    def placed_pods(self) -> int:
        return sum(sum(slots.values()) for slots in self.placement.values())


# --------------------------------------------------------------------------------------------------
# the problem in index form


@dataclass
class _Limit:
    scope: str  # "" for the global limits, else the pool name
    resource: str
    bound: int
    usage: dict[int, int]  # option index → what one node counts


@dataclass
class _Problem:
    groups: list[PodGroup]
    options: list[NodeOption]
    existing: list[ExistingNode]
    dims: tuple[str, ...]
    req: list[tuple[int, ...]]
    cap: list[tuple[int, ...]]
    free: list[tuple[int, ...]]
    opt_allows: list[frozenset[int]]  # groups allowed and fitting on an empty node of the option
    ex_allows: list[frozenset[int]]  # groups allowed on the existing node (fit is checked as it fills)
    limits: list[_Limit]
    launchable: list[int]  # per option: how many could be launched at all (max_count, limits alone)
    active: list[int]  # groups with pods that fit somewhere
    trivially_unplaceable: dict[int, int]  # group → pods that fit on no option and no existing node


def _fit(req: Sequence[int], cap: Sequence[int], bound: int) -> int:
    n = bound
    for r, c in zip(req, cap, strict=True):
        if r > 0:
            n = min(n, c // r)
            if n <= 0:
                return 0
    return n


def _allowed(fits: frozenset[str] | None, name: str) -> bool:
    return fits is None or name in fits


def _build_problem(
    groups: Sequence[PodGroup],
    options: Sequence[NodeOption],
    existing: Sequence[ExistingNode],
    limits: Mapping[str, int] | None,
    pool_limits: Mapping[str, Mapping[str, int]] | None,
) -> _Problem:
    for kind, names in (
        ("pod group", [g.name for g in groups]),
        ("node option", [o.name for o in options]),
        ("existing node", [e.name for e in existing]),
    ):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise FleetInputError(f"duplicate {kind} name {name!r}")
            seen.add(name)
    option_names = {o.name for o in options}
    for e in existing:
        head, sep, tail = e.name.rpartition(_SLOT_SEP)
        if sep and tail.isdigit() and head in option_names:
            raise FleetInputError(f"existing node {e.name!r} clashes with the slot names of option {head!r}")
    for scope, lims in [
        ("limits", limits or {}),
        *((f"pool_limits[{p!r}]", v) for p, v in (pool_limits or {}).items()),
    ]:
        for key, value in lims.items():
            if not isinstance(value, int) or value < 0:
                raise FleetInputError(f"{scope}[{key!r}] must be a non-negative integer, got {value!r}")

    dims = tuple(sorted({d for g in groups if g.count > 0 for d, v in g.requests.items() if v > 0}))
    req = [tuple(g.requests.get(d, 0) for d in dims) for g in groups]
    cap = [tuple(o.capacity.get(d, 0) for d in dims) for o in options]
    free = [tuple(e.free.get(d, 0) for d in dims) for e in existing]

    lim: list[_Limit] = []
    scopes: list[tuple[str, Mapping[str, int], list[int]]] = []
    if limits:
        scopes.append(("", limits, list(range(len(options)))))
    for pool, lims in sorted((pool_limits or {}).items()):
        scopes.append((pool, lims, [i for i, o in enumerate(options) if o.pool == pool]))
    for scope, lims, members in scopes:
        for resource, bound in sorted(lims.items()):
            usage: dict[int, int] = {}
            for i in members:
                o = options[i]
                amount = (o.limit_capacity if o.limit_capacity is not None else o.capacity).get(resource, 0)
                if amount > 0:
                    usage[i] = amount
            if usage:
                lim.append(_Limit(scope, resource, bound, usage))

    launchable: list[int] = []
    for i, o in enumerate(options):
        n = o.max_count if o.max_count is not None else sys.maxsize
        for row in lim:
            if i in row.usage:
                n = min(n, row.bound // row.usage[i])
        launchable.append(n)

    opt_allows = [
        frozenset(
            gi
            for gi, g in enumerate(groups)
            if g.count > 0 and _allowed(o.fits, g.name) and _fit(req[gi], cap[oi], 1) > 0
        )
        if launchable[oi] > 0
        else frozenset()
        for oi, o in enumerate(options)
    ]
    ex_allows = [
        frozenset(
            gi
            for gi, g in enumerate(groups)
            if g.count > 0 and _allowed(e.fits, g.name) and _fit(req[gi], free[ei], 1) > 0
        )
        for ei, e in enumerate(existing)
    ]
    active: list[int] = []
    trivial: dict[int, int] = {}
    for gi, g in enumerate(groups):
        if g.count == 0:
            continue
        if any(gi in a for a in opt_allows) or any(gi in a for a in ex_allows):
            active.append(gi)
        else:
            trivial[gi] = g.count
    return _Problem(
        list(groups),
        list(options),
        list(existing),
        dims,
        req,
        cap,
        free,
        opt_allows,
        ex_allows,
        lim,
        launchable,
        active,
        trivial,
    )


# --------------------------------------------------------------------------------------------------
# packings and first fit decreasing


@dataclass
class _Packing:
    """A solution in index form: launched nodes (option, group → pods), pods on existing nodes, unplaced."""

    new_nodes: list[tuple[int, dict[int, int]]]
    on_existing: list[dict[int, int]]
    unplaced: dict[int, int]

    def cost(self, prob: _Problem) -> float:
        return math.fsum(prob.options[o].price_per_hour for o, _ in self.new_nodes)

    def unplaced_pods(self) -> int:
        return sum(self.unplaced.values())

    def key(self, prob: _Problem) -> tuple[int, float]:
        """Lexicographic objective: fewest unplaced pods, then cheapest."""
        return (self.unplaced_pods(), self.cost(prob))


class _LimitTracker:
    def __init__(self, prob: _Problem) -> None:
        self.prob = prob
        self.used = [0] * len(prob.limits)
        self.count = [0] * len(prob.options)

    def can_launch(self, o: int, replacing: int | None = None) -> bool:
        prob = self.prob
        mc = prob.options[o].max_count
        if mc is not None and self.count[o] - (1 if replacing == o else 0) >= mc:
            return False
        for r, row in enumerate(prob.limits):
            add = row.usage.get(o, 0)
            freed = row.usage.get(replacing, 0) if replacing is not None else 0
            if add and self.used[r] + add - freed > row.bound:
                return False
        return True

    def launch(self, o: int, sign: int = 1) -> None:
        self.count[o] += sign
        for r, row in enumerate(self.prob.limits):
            self.used[r] += sign * row.usage.get(o, 0)


class _Packer:
    """Mutable first-fit state: free capacity of existing and launched nodes, limit usage, unplaced pods."""

    def __init__(self, prob: _Problem) -> None:
        self.prob = prob
        self.ex_free = [list(f) for f in prob.free]
        self.on_existing: list[dict[int, int]] = [{} for _ in prob.existing]
        self.nodes: list[tuple[int, list[int], dict[int, int]]] = []
        self.unplaced: dict[int, int] = {}
        self.tracker = _LimitTracker(prob)

    def put(self, free_vec: list[int], counts: dict[int, int], gi: int, n: int) -> int:
        """Place up to ``n`` pods of ``gi`` in ``free_vec``; return how many were placed."""
        r = self.prob.req[gi]
        k = _fit(r, free_vec, n)
        if k > 0:
            for d in range(len(r)):
                free_vec[d] -= k * r[d]
            counts[gi] = counts.get(gi, 0) + k
        return k

    def fill_existing(self, gi: int, n: int) -> int:
        for ei in range(len(self.prob.existing)):
            if n and gi in self.prob.ex_allows[ei]:
                n -= self.put(self.ex_free[ei], self.on_existing[ei], gi, n)
        return n

    def fill_nodes(self, gi: int, n: int, indices: Iterable[int]) -> int:
        for i in indices:
            if not n:
                break
            o, free_vec, counts = self.nodes[i]
            if gi in self.prob.opt_allows[o]:
                n -= self.put(free_vec, counts, gi, n)
        return n

    def launch(self, o: int) -> bool:
        if not self.tracker.can_launch(o):
            return False
        self.tracker.launch(o)
        self.nodes.append((o, list(self.prob.cap[o]), {}))
        return True

    def place(self, gi: int, n: int, rule: str) -> None:
        """First fit on existing, then launched nodes; then launch the option cheapest per pod placed
        (``rule="pod"``) or per pod a full node holds (``rule="full"``)."""
        prob = self.prob
        n = self.fill_existing(gi, n)
        n = self.fill_nodes(gi, n, range(len(self.nodes)))
        while n > 0:
            best: tuple[float, int, int] | None = None
            for o in range(len(prob.options)):
                if gi not in prob.opt_allows[o] or not self.tracker.can_launch(o):
                    continue
                full = _fit(prob.req[gi], prob.cap[o], prob.groups[gi].count)
                per = full if rule == "full" else min(n, full)
                score = (prob.options[o].price_per_hour / per, -per, o)
                if best is None or score < best:
                    best = score
            if best is None:
                self.unplaced[gi] = self.unplaced.get(gi, 0) + n
                return
            self.launch(best[2])
            n = self.fill_nodes(gi, n, [len(self.nodes) - 1])

    def packing(self) -> _Packing:
        """The packing, with empty nodes dropped and each node swapped for the cheapest option holding it."""
        prob = self.prob
        kept: list[tuple[int, dict[int, int]]] = []
        for o, _, counts in self.nodes:
            if any(counts.values()):
                kept.append((o, counts))
            else:
                self.tracker.launch(o, -1)
        nd = len(prob.dims)
        for idx, (o, counts) in enumerate(kept):
            used = [sum(prob.req[gi][d] * k for gi, k in counts.items()) for d in range(nd)]
            best = o
            for alt in range(len(prob.options)):
                if prob.options[alt].price_per_hour >= prob.options[best].price_per_hour:
                    continue
                if not all(gi in prob.opt_allows[alt] for gi in counts):
                    continue
                if any(u > c for u, c in zip(used, prob.cap[alt], strict=True)):
                    continue
                if self.tracker.can_launch(alt, replacing=o):
                    best = alt
            if best != o:
                self.tracker.launch(o, -1)
                self.tracker.launch(best)
                kept[idx] = (best, counts)
        return _Packing(kept, [dict(c) for c in self.on_existing], dict(self.unplaced))


def _group_order(prob: _Problem, groups: Iterable[int], key: str, cap: Sequence[int] | None = None) -> list[int]:
    """Largest first: by dominant share (``key="max"``) or summed share of ``cap`` (default: the largest
    capacity of any node in each dimension); ties by name."""
    nd = len(prob.dims)
    if cap is None:
        ref = [max([c[d] for c in prob.cap] + [f[d] for f in prob.free] + [1]) for d in range(nd)]
    else:
        ref = [max(c, 1) for c in cap]

    def size(gi: int) -> tuple[float, str]:
        shares = [r / ref[d] for d, r in enumerate(prob.req[gi])]
        value = (max(shares) if key == "max" else sum(shares)) if shares else 0.0
        return (-value, prob.groups[gi].name)

    return sorted(groups, key=size)


def _best_heuristic(prob: _Problem) -> _Packing:
    """The best of four first-fit-decreasing packings (two orders × two launch rules)."""
    best: _Packing | None = None
    for key in ("max", "sum"):
        order = _group_order(prob, prob.active, key)
        for rule in ("pod", "full"):
            packer = _Packer(prob)
            for gi in order:
                packer.place(gi, prob.groups[gi].count, rule)
            packing = packer.packing()
            if best is None or packing.key(prob) < best.key(prob):
                best = packing
    assert best is not None
    return best


def _single_option_bins(prob: _Problem, o: int) -> int:
    """First-fit-decreasing count of nodes of option ``o`` that hold every pod allowed on it."""
    cap = prob.cap[o]
    nd = len(prob.dims)
    bins: list[list[int]] = []
    for gi in _group_order(prob, prob.opt_allows[o], "max", cap):
        n = prob.groups[gi].count
        r = prob.req[gi]
        for b in bins:
            k = _fit(r, b, n)
            if k:
                for d in range(nd):
                    b[d] -= k * r[d]
                n -= k
                if not n:
                    break
        per = _fit(r, cap, n)
        while n > 0:
            k = min(per, n)
            bins.append([c - k * x for c, x in zip(cap, r, strict=True)])
            n -= k
    return len(bins)


def _fractional_bound(prob: _Problem) -> float:
    """Per dimension, the demand existing nodes cannot take times the cheapest price per unit of an option
    the pods may use; a lower bound for fleets that place every pod that fits somewhere."""
    best = 0.0
    for d in range(len(prob.dims)):
        existing = sum(f[d] for f in prob.free)
        demands: list[tuple[float, int]] = []
        for gi in prob.active:
            amount = prob.req[gi][d] * prob.groups[gi].count
            if amount == 0:
                continue
            rates = [
                prob.options[o].price_per_hour / prob.cap[o][d]
                for o in range(len(prob.options))
                if gi in prob.opt_allows[o]
            ]
            demands.append((min(rates) if rates else math.inf, amount))
        demands.sort(key=lambda t: -t[0])  # existing capacity takes the dearest demand first
        total = 0.0
        for rate, amount in demands:
            absorbed = min(existing, amount)
            existing -= absorbed
            if amount > absorbed:
                if math.isinf(rate):
                    return 0.0  # these pods cannot all be placed: no bound for "every pod placed"
                total += rate * (amount - absorbed)
        best = max(best, total)
    return best


# --------------------------------------------------------------------------------------------------
# reporting and verification


def _to_fleet(
    prob: _Problem, packing: _Packing, status: Status, lower_bound: float, started: float, notes: Iterable[str]
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
            slot = f"{name}{_SLOT_SEP}{i}"
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
        f"{name}{_SLOT_SEP}{i}": name for name, n in fleet.nodes.items() if name in by_option for i in range(1, n + 1)
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
            if not _allowed(fits, gname):
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


# --------------------------------------------------------------------------------------------------
# HiGHS


_BANNER_LOCK = threading.Lock()
_banner_done = False


def _new_highs() -> highspy.Highs:
    """A silent ``highspy.Highs``. The first one in a process prints a copyright banner on the C-level
    stdout whatever the options, which would corrupt JSON/YAML output, so fd 1 points at /dev/null then."""
    global _banner_done
    import highspy

    with _BANNER_LOCK:
        if _banner_done:
            h = highspy.Highs()  # type: ignore[no-untyped-call]
        else:
            sys.stdout.flush()
            saved = devnull = -1
            try:
                saved = os.dup(1)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
            except OSError:
                pass
            try:
                h = highspy.Highs()  # type: ignore[no-untyped-call]
            finally:
                if saved >= 0:
                    os.dup2(saved, 1)
                    os.close(saved)
                if devnull >= 0:
                    os.close(devnull)
            _banner_done = True
    h.setOptionValue("output_flag", False)
    return h


@dataclass
class _Run:
    """What one HiGHS run returned."""

    optimal: bool
    timed_out: bool
    values: list[float] | None
    dual_bound: float
    status_text: str
    nodes: int
    seconds: float


def _eps(value: float) -> float:
    return 1e-9 * max(1.0, abs(value))


def _gcd(values: Iterable[int]) -> int:
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g or 1


class _Model:
    """An integer program in column and row lists, handed to HiGHS in bulk (every column is integer)."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.ub: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.starts: list[int] = []
        self.index: list[int] = []
        self.value: list[float] = []

    def col(self, cost: float, ub: float) -> int:
        self.cost.append(cost)
        self.ub.append(ub)
        return len(self.cost) - 1

    def row(self, lo: float, hi: float, entries: Iterable[tuple[int, float]]) -> None:
        self.starts.append(len(self.index))
        for c, v in entries:
            self.index.append(c)
            self.value.append(v)
        self.lo.append(lo)
        self.hi.append(hi)

    def size(self) -> str:
        return f"{len(self.cost)} columns, {len(self.lo)} rows, {len(self.index)} nonzeros"

    def load(self, h: highspy.Highs) -> None:
        import highspy
        import numpy as np

        n = len(self.cost)
        inf = highspy.kHighsInf
        empty_i = np.zeros(0, dtype=np.int32)
        h.addCols(n, np.array(self.cost), np.zeros(n), np.array(self.ub), 0, empty_i, empty_i, np.zeros(0))
        integer = np.full(n, highspy.HighsVarType.kInteger.value, dtype=np.uint8)
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), integer)
        if self.lo:
            h.addRows(
                len(self.lo),
                np.maximum(np.array(self.lo), -inf),
                np.minimum(np.array(self.hi), inf),
                len(self.index),
                np.array(self.starts, dtype=np.int32),
                np.array(self.index, dtype=np.int32),
                np.array(self.value),
            )

    def run(self, time_limit: float, rel_gap: float) -> _Run:
        began = time.perf_counter()
        h = _new_highs()
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.setOptionValue("mip_rel_gap", rel_gap)
        h.setOptionValue("random_seed", 0)
        self.load(h)
        h.run()
        return _read_run(h, began)


def _read_run(h: highspy.Highs, began: float) -> _Run:
    import highspy

    model_status = h.getModelStatus()
    info = h.getInfo()
    values = list(h.getSolution().col_value) if info.primal_solution_status == 2 else None
    ms = highspy.HighsModelStatus
    return _Run(
        model_status == ms.kOptimal,
        model_status == ms.kTimeLimit,
        values,
        float(info.mip_dual_bound),
        h.modelStatusToString(model_status),
        int(info.mip_node_count),
        time.perf_counter() - began,
    )


def _finish(
    prob: _Problem,
    new_nodes: list[tuple[int, dict[int, int]]],
    on_existing: list[dict[int, int]],
    unplaced: dict[int, int],
) -> _Packing:
    """A packing from a covering solution: surplus pods trimmed (unplaced first, then from the last nodes),
    empty nodes dropped, each node swapped for the cheapest option that holds what it carries."""
    totals: dict[int, int] = {}
    for counts in [*(c for _, c in new_nodes), *on_existing, unplaced]:
        for gi, n in counts.items():
            totals[gi] = totals.get(gi, 0) + n
    for gi, total in totals.items():
        surplus = total - prob.groups[gi].count
        for counts in [unplaced, *(c for _, c in reversed(new_nodes)), *on_existing]:
            if surplus <= 0:
                break
            take = min(surplus, counts.get(gi, 0))
            if take:
                counts[gi] -= take
                surplus -= take
                if not counts[gi]:
                    del counts[gi]
    packer = _Packer(prob)
    for o, counts in new_nodes:
        packer.tracker.launch(o)
        free = [c - sum(prob.req[gi][d] * n for gi, n in counts.items()) for d, c in enumerate(prob.cap[o])]
        packer.nodes.append((o, free, counts))
    packer.on_existing = on_existing
    packer.unplaced = unplaced
    return packer.packing()


def _dominated(prob: _Problem, a: int) -> bool:
    """Whether another option can take over every node of ``a`` at no more cost: it has no max_count, is at
    most as expensive, has at least the capacity in every dimension, allows every group ``a`` allows, and
    counts no more against any limit. Of equivalent options the first is kept."""
    pa = prob.options[a].price_per_hour
    for b in range(len(prob.options)):
        ob = prob.options[b]
        if b == a or ob.max_count is not None or ob.price_per_hour > pa:
            continue
        if any(cb < ca for ca, cb in zip(prob.cap[a], prob.cap[b], strict=True)):
            continue
        if not prob.opt_allows[a] <= prob.opt_allows[b]:
            continue
        if any(row.usage.get(b, 0) > row.usage.get(a, 0) for row in prob.limits):
            continue
        equivalent = (
            ob.price_per_hour == pa
            and prob.cap[a] == prob.cap[b]
            and prob.opt_allows[a] == prob.opt_allows[b]
            and all(row.usage.get(b, 0) == row.usage.get(a, 0) for row in prob.limits)
        )
        if not equivalent or b < a:
            return True
    return False


class _Formulation:
    """What the aggregated and the per-node models share: kept options, bounds, scaling, the penalty."""

    def __init__(self, prob: _Problem) -> None:
        self.prob = prob
        self.candidates = [o for o in range(len(prob.options)) if prob.opt_allows[o] and not _dominated(prob, o)]
        self.bins = {o: _single_option_bins(prob, o) for o in self.candidates}
        nd = len(prob.dims)
        # requests are integers, so Σ r·x ≤ c ⇔ Σ (r/s)·x ≤ ⌊c/s⌋ with s the gcd of the requests
        self.scale = [_gcd(prob.req[gi][d] for gi in prob.active) for d in range(nd)]
        pods = sum(prob.groups[gi].count for gi in prob.active)
        # more than any fleet of the models costs (no model launches more nodes of an option than pods)
        self.penalty = 1.0 + math.fsum(
            prob.options[o].price_per_hour * min(prob.launchable[o], pods) for o in range(len(prob.options))
        )

    def objective(self, packing: _Packing) -> float:
        return self.penalty * packing.unplaced_pods() + packing.cost(self.prob)

    def slot_bounds(self, best: _Packing) -> dict[int, int]:
        """``U_o`` for every option worth modelling: an optimal fleet (there is one) needs no more nodes."""
        prob = self.prob
        used: dict[int, int] = {}
        for o, _ in best.new_nodes:
            used[o] = used.get(o, 0) + 1
        cost = best.cost(prob)
        bounds: dict[int, int] = {}
        for o in sorted(set(self.candidates) | set(used)):
            u = min(prob.launchable[o], self.bins.get(o, 0))
            price = prob.options[o].price_per_hour
            if best.unplaced_pods() == 0 and price > 0:
                u = min(u, math.floor(cost / price + 1e-9))
            u = max(u, used.get(o, 0))
            if u > 0:
                bounds[o] = u
        return bounds

    def cap_scaled(self, o: int, d: int) -> int:
        return self.prob.cap[o][d] // self.scale[d]

    def req_scaled(self, gi: int, d: int) -> int:
        return self.prob.req[gi][d] // self.scale[d]

    def add_existing(self, m: _Model, xe: dict[tuple[int, int], int]) -> None:
        prob = self.prob
        for ei in range(len(prob.existing)):
            for gi in sorted(prob.ex_allows[ei]):
                bound = _fit(prob.req[gi], prob.free[ei], prob.groups[gi].count)
                if bound > 0:
                    xe[gi, ei] = m.col(0.0, float(bound))

    def add_existing_rows(self, m: _Model, xe: dict[tuple[int, int], int]) -> None:
        prob = self.prob
        for ei in range(len(prob.existing)):
            groups_e = [gi for gi in sorted(prob.ex_allows[ei]) if (gi, ei) in xe]
            for d in range(len(prob.dims)):
                entries = [(xe[gi, ei], float(self.req_scaled(gi, d))) for gi in groups_e if prob.req[gi][d] > 0]
                free_d = prob.free[ei][d] // self.scale[d]
                if entries and sum(v * m.ub[c] for c, v in entries) > free_d:
                    m.row(-math.inf, float(free_d), entries)

    def add_demand_and_limits(
        self,
        m: _Model,
        placed: dict[int, list[int]],
        u: dict[int, int],
        launches: dict[int, list[int]],
        bounds: dict[int, int],
    ) -> None:
        """Every active pod is placed (or counted in ``u``); the limits hold over the launch columns."""
        prob = self.prob
        for gi in prob.active:
            n = float(prob.groups[gi].count)
            cols = [*placed.get(gi, []), *([u[gi]] if gi in u else [])]
            m.row(n, n, ((c, 1.0) for c in cols))
        for lim in prob.limits:
            terms = [(o, amount) for o, amount in lim.usage.items() if o in bounds]
            if sum(a * bounds[o] for o, a in terms) <= lim.bound:
                continue
            s = _gcd(a for _, a in terms)
            m.row(-math.inf, float(lim.bound // s), [(c, float(a // s)) for o, a in terms for c in launches[o]])


class _Patterns:
    """The pattern (Dantzig–Wolfe) form of the per-node model: a column per (option, pattern), where a
    pattern is how many pods of each group one node carries; λ[o,p] nodes are launched with it.

    Column generation solves its LP relaxation (pricing: for each option, the most valuable pattern under
    the demand rows' duals, a small knapsack MILP) and gives a lower bound that is much stronger than the
    aggregated one; the integer master over the generated patterns then gives a fleet, node by node."""

    def __init__(self, form: _Formulation, bounds: dict[int, int], start: _Packing) -> None:
        import highspy
        import numpy as np

        self.np = np
        self.form = form
        prob = form.prob
        self.bounds = bounds
        self.inf = highspy.kHighsInf
        h = _new_highs()
        self.h = h
        nd = len(prob.dims)
        self.n_rows = 0

        self.row_lo: list[float] = []
        self.row_hi: list[float] = []
        self.col_cost: list[float] = []
        self.col_ub: list[float] = []
        self.col_entries: list[list[tuple[int, float]]] = []

        def add_row(lo: float, hi: float) -> int:
            h.addRow(lo, hi, 0, np.zeros(0, dtype=np.int32), np.zeros(0))
            self.row_lo.append(lo)
            self.row_hi.append(hi)
            self.n_rows += 1
            return self.n_rows - 1

        # demand rows (≥: a pattern may carry more pods than remain; the surplus is trimmed afterwards)
        self.demand = {gi: add_row(float(prob.groups[gi].count), self.inf) for gi in prob.active}
        self.cap_rows: list[tuple[int, int, int]] = []  # (row, existing, dim)
        for ei in range(len(prob.existing)):
            for d in range(nd):
                if any(prob.req[gi][d] for gi in prob.ex_allows[ei]):
                    self.cap_rows.append((add_row(-self.inf, float(prob.free[ei][d] // form.scale[d])), ei, d))
        self.max_rows = {
            o: add_row(-self.inf, float(prob.options[o].max_count or 0))
            for o in bounds
            if prob.options[o].max_count is not None
        }
        self.limit_rows: list[tuple[int, _Limit, int]] = []
        for lim in prob.limits:
            terms = [a for o, a in lim.usage.items() if o in bounds]
            if terms:
                s = _gcd(terms)
                self.limit_rows.append((add_row(-self.inf, float(lim.bound // s)), lim, s))
        self.columns: list[tuple[int, tuple[tuple[int, int], ...]] | None] = []  # pattern columns, else None
        self.seen: set[tuple[int, tuple[tuple[int, int], ...]]] = set()
        self.xe: dict[tuple[int, int], int] = {}
        for ei in range(len(prob.existing)):
            for gi in sorted(prob.ex_allows[ei]):
                bound = _fit(prob.req[gi], prob.free[ei], prob.groups[gi].count)
                if bound <= 0:
                    continue
                entries = [(self.demand[gi], 1.0)]
                entries += [
                    (r, float(form.req_scaled(gi, d))) for r, e, d in self.cap_rows if e == ei and prob.req[gi][d]
                ]
                self.xe[gi, ei] = self._add_column(0.0, float(bound), entries, None)
        self.u: dict[int, int] = {}
        if start.unplaced_pods():
            for gi in prob.active:
                self.u[gi] = self._add_column(form.penalty, self.inf, [(self.demand[gi], 1.0)], None)
        for o, counts in start.new_nodes:
            self.add_pattern(o, counts)
        self.pricers = {o: self._pricer(o) for o in bounds}

    def _add_column(
        self,
        cost: float,
        ub: float,
        entries: list[tuple[int, float]],
        key: tuple[int, tuple[tuple[int, int], ...]] | None,
    ) -> int:
        np = self.np
        self.h.addCol(
            cost,
            0.0,
            ub,
            len(entries),
            np.array([r for r, _ in entries], dtype=np.int32),
            np.array([v for _, v in entries]),
        )
        self.columns.append(key)
        self.col_cost.append(cost)
        self.col_ub.append(ub)
        self.col_entries.append(entries)
        return len(self.columns) - 1

    def _entries(self, o: int, counts: Mapping[int, int]) -> list[tuple[int, float]]:
        entries = [(self.demand[gi], float(n)) for gi, n in sorted(counts.items()) if n]
        if o in self.max_rows:
            entries.append((self.max_rows[o], 1.0))
        for r, lim, s in self.limit_rows:
            if o in lim.usage:
                entries.append((r, float(lim.usage[o] // s)))
        return entries

    def add_pattern(self, o: int, counts: Mapping[int, int]) -> bool:
        key = (o, tuple(sorted((gi, n) for gi, n in counts.items() if n)))
        if key in self.seen or not key[1]:
            return False
        self.seen.add(key)
        self._add_column(self.form.prob.options[o].price_per_hour, self.inf, self._entries(o, counts), key)
        return True

    def _pricer(self, o: int) -> highspy.Highs:
        """max Σ π_g·n_g over the patterns of ``o``, as a small MILP whose costs change every round."""
        np = self.np
        form = self.form
        prob = form.prob
        groups = sorted(prob.opt_allows[o])
        m = _Model()
        for gi in groups:
            m.col(0.0, float(_fit(prob.req[gi], prob.cap[o], prob.groups[gi].count)))
        for d in range(len(prob.dims)):
            entries = [(j, float(form.req_scaled(gi, d))) for j, gi in enumerate(groups) if prob.req[gi][d]]
            if entries and sum(v * m.ub[j] for j, v in entries) > form.cap_scaled(o, d):
                m.row(-math.inf, float(form.cap_scaled(o, d)), entries)
        h = _new_highs()
        m.load(h)
        h.setOptionValue("mip_rel_gap", 1e-9)
        del np
        return h

    def _greedy(self, o: int, duals: Sequence[float]) -> tuple[float, dict[int, int]]:
        prob = self.form.prob
        cap = prob.cap[o]
        best: tuple[float, dict[int, int]] = (0.0, {})
        items = [gi for gi in prob.opt_allows[o] if duals[self.demand[gi]] > 1e-12]
        for key in ("max", "sum"):

            def density(gi: int, key: str = key) -> tuple[float, int]:
                shares = [r / c for r, c in zip(prob.req[gi], cap, strict=True) if r]
                size = (max(shares) if key == "max" else sum(shares)) if shares else 1e-9
                return (-duals[self.demand[gi]] / max(size, 1e-12), gi)

            free = list(cap)
            counts: dict[int, int] = {}
            value = 0.0
            for gi in sorted(items, key=density):
                k = _fit(prob.req[gi], free, prob.groups[gi].count)
                if k:
                    counts[gi] = k
                    value += k * duals[self.demand[gi]]
                    for d, r in enumerate(prob.req[gi]):
                        free[d] -= k * r
            if value > best[0]:
                best = (value, counts)
        return best

    def _exact(self, o: int, duals: Sequence[float], time_limit: float) -> tuple[float, float, dict[int, int]]:
        """(value of the best pattern found, upper bound on any pattern's value, the pattern)."""
        np = self.np
        prob = self.form.prob
        groups = sorted(prob.opt_allows[o])
        h = self.pricers[o]
        costs = np.array([-max(duals[self.demand[gi]], 0.0) for gi in groups])
        h.changeColsCost(len(groups), np.arange(len(groups), dtype=np.int32), costs)
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.run()
        info = h.getInfo()
        if info.primal_solution_status != 2:
            return (0.0, math.inf, {})
        values = h.getSolution().col_value
        counts = {gi: round(values[j]) for j, gi in enumerate(groups) if round(values[j]) > 0}
        value = sum(duals[self.demand[gi]] * n for gi, n in counts.items())
        dual = float(info.mip_dual_bound)
        bound = -dual if math.isfinite(dual) else math.inf
        return (value, max(bound, value), counts)

    def column_generation(self, deadline: float) -> tuple[float, bool, int]:
        """Solve the LP relaxation by column generation until no pattern has a negative reduced cost or the
        deadline; return (lower bound, converged, rounds). The bound is valid at every round whose pricing
        was exact for every option (z_LP + Σ_o U_o·min(0, least reduced cost of o))."""
        import highspy

        optimal = highspy.HighsModelStatus.kOptimal
        h = self.h
        lower = -math.inf
        rounds = 0
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return (lower, False, rounds)
            h.setOptionValue("time_limit", left)
            h.run()
            if h.getModelStatus() != optimal:
                return (lower, False, rounds)
            rounds += 1
            z = h.getInfo().objective_function_value
            duals = h.getSolution().row_dual
            const = {o: self._launch_cost(o, duals) for o in self.bounds}
            # greedy pricing first; the exact pricing MILPs (about 10 ms each) only when it finds nothing
            added = 0
            for o in self.bounds:
                value, counts = self._greedy(o, duals)
                if const[o] - value < -_eps(const[o]) and self.add_pattern(o, counts):
                    added += 1
            if added:
                continue
            lagrangian = 0.0
            for o in self.bounds:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return (lower, False, rounds)
                found, bound, counts = self._exact(o, duals, left)
                if const[o] - found < -_eps(const[o]) and self.add_pattern(o, counts):
                    added += 1
                lagrangian += self.bounds[o] * min(0.0, const[o] - bound)
            lower = max(lower, z + lagrangian)
            if not added:
                return (max(lower, z), True, rounds)

    def _launch_cost(self, o: int, duals: Sequence[float]) -> float:
        """Price of a node of ``o`` less the duals of the max_count and limit rows it is counted in."""
        return self.form.prob.options[o].price_per_hour - sum(v * duals[r] for r, v in self._entries(o, {}))

    def integer_master(self, time_limit: float, rel_gap: float) -> tuple[_Packing | None, _Run]:
        """The integer program over the generated patterns (a restriction: its fleet is feasible, its bound is not
        a bound of the full problem)."""
        import highspy

        np = self.np
        # No MIP start (setSolution) here or in the per-node model: with presolve on, HiGHS 1.16 took a start as
        # optimal with a wrong objective (the presolve offset lost) on this very model. The caller keeps the
        # better of the heuristic's fleet and the solver's instead.
        h = _new_highs()
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.setOptionValue("mip_rel_gap", rel_gap)
        h.setOptionValue("random_seed", 0)
        n = len(self.columns)
        empty_i = np.zeros(0, dtype=np.int32)
        h.addRows(len(self.row_lo), np.array(self.row_lo), np.array(self.row_hi), 0, empty_i, empty_i, np.zeros(0))
        starts: list[int] = []
        rows: list[int] = []
        vals: list[float] = []
        for entries in self.col_entries:
            starts.append(len(rows))
            rows.extend(r for r, _ in entries)
            vals.extend(v for _, v in entries)
        h.addCols(
            n,
            np.array(self.col_cost),
            np.zeros(n),
            np.array(self.col_ub),
            len(rows),
            np.array(starts, dtype=np.int32),
            np.array(rows, dtype=np.int32),
            np.array(vals),
        )
        integer = np.full(n, highspy.HighsVarType.kInteger.value, dtype=np.uint8)
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), integer)
        began = time.perf_counter()
        h.run()
        run = _read_run(h, began)
        if run.values is None:
            return (None, run)
        return (self._read(run.values), run)

    def _read(self, values: Sequence[float]) -> _Packing:
        prob = self.form.prob
        new_nodes: list[tuple[int, dict[int, int]]] = []
        for j, key in enumerate(self.columns):
            if key is not None:
                for _ in range(round(values[j])):
                    new_nodes.append((key[0], dict(key[1])))
        on_existing: list[dict[int, int]] = [{} for _ in prob.existing]
        for (gi, ei), c in self.xe.items():
            if round(values[c]) > 0:
                on_existing[ei][gi] = round(values[c])
        unplaced = {gi: round(values[c]) for gi, c in self.u.items() if round(values[c]) > 0}
        return _finish(prob, new_nodes, on_existing, unplaced)


class _PerNode:
    """The exact model: binary y[o,k] per node slot, integer x[g,o,k], capacity per slot and dimension,
    y[o,k] ≥ y[o,k+1]; existing nodes as free slots."""

    def __init__(self, form: _Formulation, bounds: dict[int, int], start: _Packing) -> None:
        self.form = form
        prob = form.prob
        nd = len(prob.dims)
        m = _Model()
        self.m = m
        self.bounds = bounds
        self.y: dict[tuple[int, int], int] = {}
        self.x: dict[tuple[int, int, int], int] = {}
        self.xe: dict[tuple[int, int], int] = {}
        self.u: dict[int, int] = {}
        for o, slots in bounds.items():
            groups_o = sorted(prob.opt_allows[o])
            for k in range(slots):
                self.y[o, k] = m.col(prob.options[o].price_per_hour, 1.0)
                for gi in groups_o:
                    self.x[gi, o, k] = m.col(0.0, float(_fit(prob.req[gi], prob.cap[o], prob.groups[gi].count)))
        form.add_existing(m, self.xe)
        if start.unplaced_pods():
            for gi in prob.active:
                self.u[gi] = m.col(form.penalty, float(prob.groups[gi].count))
        placed: dict[int, list[int]] = {}
        for (gi, _, _), c in self.x.items():
            placed.setdefault(gi, []).append(c)
        for (gi, _), c in self.xe.items():
            placed.setdefault(gi, []).append(c)
        launches = {o: [self.y[o, k] for k in range(slots)] for o, slots in bounds.items()}
        form.add_demand_and_limits(m, placed, self.u, launches, bounds)
        for o, slots in bounds.items():
            groups_o = sorted(prob.opt_allows[o])
            fits = {gi: _fit(prob.req[gi], prob.cap[o], prob.groups[gi].count) for gi in groups_o}
            # rows that can never bind are left out; every x is still tied to its slot's y by some row
            binding = [
                d
                for d in range(nd)
                if any(prob.req[gi][d] for gi in groups_o)
                and sum(form.req_scaled(gi, d) * fits[gi] for gi in groups_o) > form.cap_scaled(o, d)
            ]
            loose = [gi for gi in groups_o if not any(prob.req[gi][d] for d in binding)]
            for k in range(slots):
                yk = self.y[o, k]
                for d in binding:
                    entries = [(self.x[gi, o, k], float(form.req_scaled(gi, d))) for gi in groups_o if prob.req[gi][d]]
                    m.row(-math.inf, 0.0, [*entries, (yk, -float(form.cap_scaled(o, d)))])
                for gi in loose:
                    m.row(-math.inf, 0.0, [(self.x[gi, o, k], 1.0), (yk, -float(fits[gi]))])
                if k + 1 < slots:
                    m.row(-math.inf, 0.0, [(self.y[o, k + 1], 1.0), (yk, -1.0)])
        form.add_existing_rows(m, self.xe)

    def read(self, values: list[float]) -> _Packing | None:
        """The fleet in the solution, or None when rounding does not give back every pod exactly."""
        prob = self.form.prob
        new_nodes: list[tuple[int, dict[int, int]]] = []
        for (o, k), yc in self.y.items():
            if values[yc] > 0.5:
                counts = {gi: round(values[self.x[gi, o, k]]) for gi in sorted(prob.opt_allows[o])}
                counts = {gi: c for gi, c in counts.items() if c > 0}
                if counts:
                    new_nodes.append((o, counts))
        on_existing: list[dict[int, int]] = [{} for _ in prob.existing]
        for (gi, ei), c in self.xe.items():
            if round(values[c]) > 0:
                on_existing[ei][gi] = round(values[c])
        unplaced = {gi: round(values[c]) for gi, c in self.u.items() if round(values[c]) > 0}
        totals = dict(unplaced)
        for counts in [*(c for _, c in new_nodes), *on_existing]:
            for gi, c in counts.items():
                totals[gi] = totals.get(gi, 0) + c
        if any(totals.get(gi, 0) != prob.groups[gi].count for gi in prob.active):
            return None
        return _Packing(new_nodes, on_existing, unplaced)


# --------------------------------------------------------------------------------------------------
# public entry points


def first_fit_decreasing(
    groups: Sequence[PodGroup],
    options: Sequence[NodeOption],
    existing: Sequence[ExistingNode] = (),
    *,
    limits: Mapping[str, int] | None = None,
    pool_limits: Mapping[str, Mapping[str, int]] | None = None,
) -> OptimalFleet:
    """A quick feasible fleet (status ``feasible``): the best of four first-fit-decreasing packings.

    Groups go largest first (by dominant share, or by summed share); each fills existing nodes, then nodes
    already launched, then launches the option cheapest per pod placed (or per pod a full node holds);
    afterwards every launched node is swapped for the cheapest option that holds its pods.
    ``lower_bound`` is a per-dimension fractional bound (0 when some pod is left unplaced).
    """
    started = time.perf_counter()
    prob = _build_problem(groups, options, existing, limits, pool_limits)
    packing = _best_heuristic(prob)
    bound = _fractional_bound(prob) if packing.unplaced_pods() == 0 else 0.0
    return _to_fleet(prob, packing, "feasible", bound, started, ["first-fit-decreasing"])


def solve_optimal(
    groups: Sequence[PodGroup],
    options: Sequence[NodeOption],
    existing: Sequence[ExistingNode] = (),
    *,
    limits: Mapping[str, int] | None = None,
    pool_limits: Mapping[str, Mapping[str, int]] | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    rel_gap: float = DEFAULT_REL_GAP,
    max_columns: int = DEFAULT_MAX_COLUMNS,
) -> OptimalFleet:
    """The cheapest fleet that places the pods (see the module docstring for the models).

    ``limits`` bound the summed ``limit_capacity`` of all launched nodes, ``pool_limits[pool]`` that of the
    nodes of options with that ``pool`` (like a NodePool's ``spec.limits``: subtract what the pool's
    existing nodes already count). ``time_limit`` (seconds) covers everything; ``rel_gap`` is the relative
    gap (on the cost) at which a fleet counts as optimal (0: exact); the compact per-node model is not built
    when it would have more than ``max_columns`` columns (the fleet then comes from the pattern form, with its
    bound, and status ``feasible`` unless it is proved).
    """
    started = time.perf_counter()
    deadline = started + time_limit
    prob = _build_problem(groups, options, existing, limits, pool_limits)
    best = _best_heuristic(prob)
    frac = _fractional_bound(prob) if best.unplaced_pods() == 0 else 0.0
    if not prob.active:
        status: Status = "infeasible" if prob.trivially_unplaceable else "optimal"
        return _to_fleet(prob, best, status, 0.0, started, [])
    try:
        import highspy  # noqa: F401  (imported lazily: 65 ms)
    except ImportError:
        note = "highspy is not installed: first-fit-decreasing fleet, not proved optimal"
        return _to_fleet(prob, best, "feasible", frac, started, [note])

    form = _Formulation(prob)
    notes: list[str] = []
    dual = -math.inf  # lower bound on the penalised objective
    proved = timed_out = False

    def meets_bound(packing: _Packing) -> bool:
        # the gap is measured on the cost, also when the penalised objective carries unplaced pods
        return form.objective(packing) <= dual + 1e-6 + rel_gap * packing.cost(prob)

    # 1. the pattern form: column generation for the bound, then the integer master for a fleet
    remaining = deadline - time.perf_counter()
    if remaining > 0:
        patterns = _Patterns(form, form.slot_bounds(best), best)
        began = time.perf_counter()
        bound, converged, rounds = patterns.column_generation(began + remaining * _CG_SHARE)
        dual = max(dual, bound)
        notes.append(
            f"column generation: {rounds} rounds, {len(patterns.seen)} patterns, "
            f"{time.perf_counter() - began:.2f}s, {'converged' if converged else 'stopped'}, bound {bound:.6g}"
        )
        remaining = deadline - time.perf_counter()
        if remaining > 0:
            found, run = patterns.integer_master(remaining * _MASTER_SHARE, rel_gap)
            timed_out |= run.timed_out
            if found is not None and found.key(prob) < best.key(prob):
                best = found
            notes.append(f"integer master: {run.status_text} in {run.seconds:.2f}s, {run.nodes} B&B nodes")
        else:
            timed_out = True
        proved = meets_bound(best)
    # 2. the compact per-node model, started from the best fleet so far
    remaining = deadline - time.perf_counter()
    if not proved and remaining > 0:
        bounds = form.slot_bounds(best)
        columns = sum(n * (1 + len(prob.opt_allows[o])) for o, n in bounds.items())
        if columns > max_columns:
            notes.append(f"per-node model not built: {columns} columns > max_columns {max_columns}")
        else:
            exact = _PerNode(form, bounds, best)
            run = exact.m.run(remaining, rel_gap)
            timed_out |= run.timed_out
            dual = max(dual, run.dual_bound)
            found = exact.read(run.values) if run.values is not None else None
            if found is not None and found.key(prob) < best.key(prob):
                best = found
            proved = meets_bound(best)
            notes.append(
                f"per-node model ({exact.m.size()}, {sum(bounds.values())} slots over {len(bounds)} options): "
                f"{run.status_text} in {run.seconds:.2f}s, {run.nodes} B&B nodes"
            )
    elif not proved:
        timed_out = True

    lower = dual - form.penalty * best.unplaced_pods() if math.isfinite(dual) else 0.0
    if best.unplaced_pods() == 0:
        lower = max(lower, frac)
    if proved:
        status = "infeasible" if best.unplaced_pods() or prob.trivially_unplaceable else "optimal"
    else:
        status = "time_limit" if timed_out else "feasible"
    fleet = _to_fleet(prob, best, status, lower, started, notes)
    problems = verify_fleet(fleet, groups, options, existing, limits=limits, pool_limits=pool_limits)
    if problems:  # pragma: no cover - a bug, not an input problem
        raise AssertionError(f"the fleet solver built an invalid fleet: {problems}")
    return fleet

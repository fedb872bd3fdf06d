"""The optimal-fleet problem's inputs and answer (pod groups, node options, existing nodes, the fleet) and the
problem in index form the solvers share: requests and capacities as integer vectors, which groups each
option may take, NodePool limits."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dratwin.errors import DratwinError

Status = Literal["optimal", "feasible", "infeasible", "time_limit"]
DEFAULT_TIME_LIMIT = 10.0
DEFAULT_REL_GAP = 1e-4
DEFAULT_MAX_COLUMNS = 20_000
SLOT_SEP = "#"


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


@dataclass
class Limit:
    scope: str  # "" for the global limits, else the pool name
    resource: str
    bound: int
    usage: dict[int, int]  # option index → what one node counts


@dataclass
class Problem:
    groups: list[PodGroup]
    options: list[NodeOption]
    existing: list[ExistingNode]
    dims: tuple[str, ...]
    req: list[tuple[int, ...]]
    cap: list[tuple[int, ...]]
    free: list[tuple[int, ...]]
    opt_allows: list[frozenset[int]]  # groups allowed and fitting on an empty node of the option
    ex_allows: list[frozenset[int]]  # groups allowed on the existing node (fit is checked as it fills)
    limits: list[Limit]
    launchable: list[int]  # per option: how many could be launched at all (max_count, limits alone)
    active: list[int]  # groups with pods that fit somewhere
    trivially_unplaceable: dict[int, int]  # group → pods that fit on no option and no existing node


def fit_count(req: Sequence[int], cap: Sequence[int], bound: int) -> int:
    n = bound
    for r, c in zip(req, cap, strict=True):
        if r > 0:
            n = min(n, c // r)
            if n <= 0:
                return 0
    return n


def is_allowed(fits: frozenset[str] | None, name: str) -> bool:
    return fits is None or name in fits


def build_problem(
    groups: Sequence[PodGroup],
    options: Sequence[NodeOption],
    existing: Sequence[ExistingNode],
    limits: Mapping[str, int] | None,
    pool_limits: Mapping[str, Mapping[str, int]] | None,
) -> Problem:
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
        head, sep, tail = e.name.rpartition(SLOT_SEP)
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

    lim: list[Limit] = []
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
                lim.append(Limit(scope, resource, bound, usage))

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
            if g.count > 0 and is_allowed(o.fits, g.name) and fit_count(req[gi], cap[oi], 1) > 0
        )
        if launchable[oi] > 0
        else frozenset()
        for oi, o in enumerate(options)
    ]
    ex_allows = [
        frozenset(
            gi
            for gi, g in enumerate(groups)
            if g.count > 0 and is_allowed(e.fits, g.name) and fit_count(req[gi], free[ei], 1) > 0
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
    return Problem(
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

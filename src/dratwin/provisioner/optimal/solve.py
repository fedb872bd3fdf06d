"""The entry points: :func:`first_fit_decreasing` and :func:`solve_optimal`, which runs the pattern form, then
the per-node model when the first proved nothing, within the time limit."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence

from dratwin.provisioner.optimal.heuristic import Packing, best_heuristic, fractional_bound
from dratwin.provisioner.optimal.highs import Formulation
from dratwin.provisioner.optimal.model import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_REL_GAP,
    DEFAULT_TIME_LIMIT,
    ExistingNode,
    NodeOption,
    OptimalFleet,
    PodGroup,
    Status,
    build_problem,
)
from dratwin.provisioner.optimal.patterns import Patterns
from dratwin.provisioner.optimal.per_node import PerNode
from dratwin.provisioner.optimal.verify import to_fleet, verify_fleet

_CG_SHARE = 0.5  # of the time left, for column generation
_MASTER_SHARE = 0.5  # of the time then left, for the integer master


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
    prob = build_problem(groups, options, existing, limits, pool_limits)
    packing = best_heuristic(prob)
    bound = fractional_bound(prob) if packing.unplaced_pods() == 0 else 0.0
    return to_fleet(prob, packing, "feasible", bound, started, ["first-fit-decreasing"])


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
    prob = build_problem(groups, options, existing, limits, pool_limits)
    best = best_heuristic(prob)
    frac = fractional_bound(prob) if best.unplaced_pods() == 0 else 0.0
    if not prob.active:
        status: Status = "infeasible" if prob.trivially_unplaceable else "optimal"
        return to_fleet(prob, best, status, 0.0, started, [])
    try:
        import highspy  # noqa: F401  (imported lazily: 65 ms)
    except ImportError:
        note = "highspy is not installed: first-fit-decreasing fleet, not proved optimal"
        return to_fleet(prob, best, "feasible", frac, started, [note])

    form = Formulation(prob)
    notes: list[str] = []
    dual = -math.inf  # lower bound on the penalised objective
    proved = timed_out = False

    def meets_bound(packing: Packing) -> bool:
        # the gap is measured on the cost, also when the penalised objective carries unplaced pods
        return form.objective(packing) <= dual + 1e-6 + rel_gap * packing.cost(prob)

    # 1. the pattern form: column generation for the bound, then the integer master for a fleet
    remaining = deadline - time.perf_counter()
    if remaining > 0:
        patterns = Patterns(form, form.slot_bounds(best), best)
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
            exact = PerNode(form, bounds, best)
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
    fleet = to_fleet(prob, best, status, lower, started, notes)
    problems = verify_fleet(fleet, groups, options, existing, limits=limits, pool_limits=pool_limits)
    if problems:  # pragma: no cover - a bug, not an input problem
        raise AssertionError(f"the fleet solver built an invalid fleet: {problems}")
    return fleet

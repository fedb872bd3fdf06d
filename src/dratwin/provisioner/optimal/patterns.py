"""The pattern form (Dantzig–Wolfe of the per-node model): column generation for the LP bound, then the
integer program over the generated patterns."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dratwin.provisioner.optimal.heuristic import Packing
from dratwin.provisioner.optimal.highs import Formulation, Model, Run, eps, finish, gcd, new_highs, read_run
from dratwin.provisioner.optimal.model import Limit, fit_count

if TYPE_CHECKING:
    import highspy


class Patterns:
    """The pattern (Dantzig–Wolfe) form of the per-node model: a column per (option, pattern), where a
    pattern is how many pods of each group one node carries; λ[o,p] nodes are launched with it.

    Column generation solves its LP relaxation (pricing: for each option, the most valuable pattern under
    the demand rows' duals, a small knapsack MILP) and gives a lower bound that is much stronger than the
    aggregated one; the integer master over the generated patterns then gives a fleet, node by node."""

    def __init__(self, form: Formulation, bounds: dict[int, int], start: Packing) -> None:
        import highspy
        import numpy as np

        self.np = np
        self.form = form
        prob = form.prob
        self.bounds = bounds
        self.inf = highspy.kHighsInf
        h = new_highs()
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
        self.limit_rows: list[tuple[int, Limit, int]] = []
        for lim in prob.limits:
            terms = [a for o, a in lim.usage.items() if o in bounds]
            if terms:
                s = gcd(terms)
                self.limit_rows.append((add_row(-self.inf, float(lim.bound // s)), lim, s))
        self.columns: list[tuple[int, tuple[tuple[int, int], ...]] | None] = []  # pattern columns, else None
        self.seen: set[tuple[int, tuple[tuple[int, int], ...]]] = set()
        self.xe: dict[tuple[int, int], int] = {}
        for ei in range(len(prob.existing)):
            for gi in sorted(prob.ex_allows[ei]):
                bound = fit_count(prob.req[gi], prob.free[ei], prob.groups[gi].count)
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
        m = Model()
        for gi in groups:
            m.col(0.0, float(fit_count(prob.req[gi], prob.cap[o], prob.groups[gi].count)))
        for d in range(len(prob.dims)):
            entries = [(j, float(form.req_scaled(gi, d))) for j, gi in enumerate(groups) if prob.req[gi][d]]
            if entries and sum(v * m.ub[j] for j, v in entries) > form.cap_scaled(o, d):
                m.row(-math.inf, float(form.cap_scaled(o, d)), entries)
        h = new_highs()
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
                k = fit_count(prob.req[gi], free, prob.groups[gi].count)
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
                if const[o] - value < -eps(const[o]) and self.add_pattern(o, counts):
                    added += 1
            if added:
                continue
            lagrangian = 0.0
            for o in self.bounds:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return (lower, False, rounds)
                found, bound, counts = self._exact(o, duals, left)
                if const[o] - found < -eps(const[o]) and self.add_pattern(o, counts):
                    added += 1
                lagrangian += self.bounds[o] * min(0.0, const[o] - bound)
            lower = max(lower, z + lagrangian)
            if not added:
                return (max(lower, z), True, rounds)

    def _launch_cost(self, o: int, duals: Sequence[float]) -> float:
        """Price of a node of ``o`` less the duals of the max_count and limit rows it is counted in."""
        return self.form.prob.options[o].price_per_hour - sum(v * duals[r] for r, v in self._entries(o, {}))

    def integer_master(self, time_limit: float, rel_gap: float) -> tuple[Packing | None, Run]:
        """The integer program over the generated patterns (a restriction: its fleet is feasible, its bound is not
        a bound of the full problem)."""
        import highspy

        np = self.np
        # No MIP start (setSolution) here or in the per-node model: with presolve on, HiGHS 1.16 took a start as
        # optimal with a wrong objective (the presolve offset lost) on this very model. The caller keeps the
        # better of the heuristic's fleet and the solver's instead.
        h = new_highs()
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
        run = read_run(h, began)
        if run.values is None:
            return (None, run)
        return (self._read(run.values), run)

    def _read(self, values: Sequence[float]) -> Packing:
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
        return finish(prob, new_nodes, on_existing, unplaced)

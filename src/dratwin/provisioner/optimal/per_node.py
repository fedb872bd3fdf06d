"""The compact per-node model: binary node slots per option, integer pods per group and slot, symmetry
breaking, solved by HiGHS's branch and bound on small instances."""

from __future__ import annotations

import math

from dratwin.provisioner.optimal.heuristic import Packing
from dratwin.provisioner.optimal.highs import Formulation, Model
from dratwin.provisioner.optimal.model import fit_count


class PerNode:
    """The exact model: binary y[o,k] per node slot, integer x[g,o,k], capacity per slot and dimension,
    y[o,k] ≥ y[o,k+1]; existing nodes as free slots."""

    def __init__(self, form: Formulation, bounds: dict[int, int], start: Packing) -> None:
        self.form = form
        prob = form.prob
        nd = len(prob.dims)
        m = Model()
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
                    self.x[gi, o, k] = m.col(0.0, float(fit_count(prob.req[gi], prob.cap[o], prob.groups[gi].count)))
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
            fits = {gi: fit_count(prob.req[gi], prob.cap[o], prob.groups[gi].count) for gi in groups_o}
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

    def read(self, values: list[float]) -> Packing | None:
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
        return Packing(new_nodes, on_existing, unplaced)

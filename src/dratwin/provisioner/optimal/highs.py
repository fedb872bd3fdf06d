"""HiGHS, as the models use it: a quiet solver instance, a model with its variables and rows, what a run
returned, and the formulation both models start from (options not dominated, node slots bounded)."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dratwin.provisioner.optimal.heuristic import Packer, Packing, single_option_bins
from dratwin.provisioner.optimal.model import Problem, fit_count

if TYPE_CHECKING:
    import highspy

_BANNER_LOCK = threading.Lock()
_banner_done = False


def new_highs() -> highspy.Highs:
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
class Run:
    """What one HiGHS run returned."""

    optimal: bool
    timed_out: bool
    values: list[float] | None
    dual_bound: float
    status_text: str
    nodes: int
    seconds: float


def eps(value: float) -> float:
    return 1e-9 * max(1.0, abs(value))


def gcd(values: Iterable[int]) -> int:
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g or 1


class Model:
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

    def run(self, time_limit: float, rel_gap: float) -> Run:
        began = time.perf_counter()
        h = new_highs()
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.setOptionValue("mip_rel_gap", rel_gap)
        h.setOptionValue("random_seed", 0)
        self.load(h)
        h.run()
        return read_run(h, began)


def read_run(h: highspy.Highs, began: float) -> Run:
    import highspy

    model_status = h.getModelStatus()
    info = h.getInfo()
    values = list(h.getSolution().col_value) if info.primal_solution_status == 2 else None
    ms = highspy.HighsModelStatus
    return Run(
        model_status == ms.kOptimal,
        model_status == ms.kTimeLimit,
        values,
        float(info.mip_dual_bound),
        h.modelStatusToString(model_status),
        int(info.mip_node_count),
        time.perf_counter() - began,
    )


def finish(
    prob: Problem,
    new_nodes: list[tuple[int, dict[int, int]]],
    on_existing: list[dict[int, int]],
    unplaced: dict[int, int],
) -> Packing:
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
    packer = Packer(prob)
    for o, counts in new_nodes:
        packer.tracker.launch(o)
        free = [c - sum(prob.req[gi][d] * n for gi, n in counts.items()) for d, c in enumerate(prob.cap[o])]
        packer.nodes.append((o, free, counts))
    packer.on_existing = on_existing
    packer.unplaced = unplaced
    return packer.packing()


def dominated(prob: Problem, a: int) -> bool:
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


class Formulation:
    """What the aggregated and the per-node models share: kept options, bounds, scaling, the penalty."""

    def __init__(self, prob: Problem) -> None:
        self.prob = prob
        self.candidates = [o for o in range(len(prob.options)) if prob.opt_allows[o] and not dominated(prob, o)]
        self.bins = {o: single_option_bins(prob, o) for o in self.candidates}
        nd = len(prob.dims)
        # requests are integers, so Σ r·x ≤ c ⇔ Σ (r/s)·x ≤ ⌊c/s⌋ with s the gcd of the requests
        self.scale = [gcd(prob.req[gi][d] for gi in prob.active) for d in range(nd)]
        pods = sum(prob.groups[gi].count for gi in prob.active)
        # more than any fleet of the models costs (no model launches more nodes of an option than pods)
        self.penalty = 1.0 + math.fsum(
            prob.options[o].price_per_hour * min(prob.launchable[o], pods) for o in range(len(prob.options))
        )

    def objective(self, packing: Packing) -> float:
        return self.penalty * packing.unplaced_pods() + packing.cost(self.prob)

    def slot_bounds(self, best: Packing) -> dict[int, int]:
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

    def add_existing(self, m: Model, xe: dict[tuple[int, int], int]) -> None:
        prob = self.prob
        for ei in range(len(prob.existing)):
            for gi in sorted(prob.ex_allows[ei]):
                bound = fit_count(prob.req[gi], prob.free[ei], prob.groups[gi].count)
                if bound > 0:
                    xe[gi, ei] = m.col(0.0, float(bound))

    def add_existing_rows(self, m: Model, xe: dict[tuple[int, int], int]) -> None:
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
        m: Model,
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
            s = gcd(a for _, a in terms)
            m.row(-math.inf, float(lim.bound // s), [(c, float(a // s)) for o, a in terms for c in launches[o]])

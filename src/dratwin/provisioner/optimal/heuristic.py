"""Packings and first fit decreasing: the quick feasible fleet that bounds the models' node slots, the
incumbent the solvers must beat, and the fractional lower bound."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dratwin.provisioner.optimal.model import Problem, fit_count


@dataclass
class Packing:
    """A solution in index form: launched nodes (option, group → pods), pods on existing nodes, unplaced."""

    new_nodes: list[tuple[int, dict[int, int]]]
    on_existing: list[dict[int, int]]
    unplaced: dict[int, int]

    def cost(self, prob: Problem) -> float:
        return math.fsum(prob.options[o].price_per_hour for o, _ in self.new_nodes)

    def unplaced_pods(self) -> int:
        return sum(self.unplaced.values())

    def key(self, prob: Problem) -> tuple[int, float]:
        """Lexicographic objective: fewest unplaced pods, then cheapest."""
        return (self.unplaced_pods(), self.cost(prob))


class _LimitTracker:
    def __init__(self, prob: Problem) -> None:
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


class Packer:
    """Mutable first-fit state: free capacity of existing and launched nodes, limit usage, unplaced pods."""

    def __init__(self, prob: Problem) -> None:
        self.prob = prob
        self.ex_free = [list(f) for f in prob.free]
        self.on_existing: list[dict[int, int]] = [{} for _ in prob.existing]
        self.nodes: list[tuple[int, list[int], dict[int, int]]] = []
        self.unplaced: dict[int, int] = {}
        self.tracker = _LimitTracker(prob)

    def put(self, free_vec: list[int], counts: dict[int, int], gi: int, n: int) -> int:
        """Place up to ``n`` pods of ``gi`` in ``free_vec``; return how many were placed."""
        r = self.prob.req[gi]
        k = fit_count(r, free_vec, n)
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
                full = fit_count(prob.req[gi], prob.cap[o], prob.groups[gi].count)
                per = full if rule == "full" else min(n, full)
                score = (prob.options[o].price_per_hour / per, -per, o)
                if best is None or score < best:
                    best = score
            if best is None:
                self.unplaced[gi] = self.unplaced.get(gi, 0) + n
                return
            self.launch(best[2])
            n = self.fill_nodes(gi, n, [len(self.nodes) - 1])

    def packing(self) -> Packing:
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
        return Packing(kept, [dict(c) for c in self.on_existing], dict(self.unplaced))


def _group_order(prob: Problem, groups: Iterable[int], key: str, cap: Sequence[int] | None = None) -> list[int]:
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


def best_heuristic(prob: Problem) -> Packing:
    """The best of four first-fit-decreasing packings (two orders × two launch rules)."""
    best: Packing | None = None
    for key in ("max", "sum"):
        order = _group_order(prob, prob.active, key)
        for rule in ("pod", "full"):
            packer = Packer(prob)
            for gi in order:
                packer.place(gi, prob.groups[gi].count, rule)
            packing = packer.packing()
            if best is None or packing.key(prob) < best.key(prob):
                best = packing
    assert best is not None
    return best


def single_option_bins(prob: Problem, o: int) -> int:
    """First-fit-decreasing count of nodes of option ``o`` that hold every pod allowed on it."""
    cap = prob.cap[o]
    nd = len(prob.dims)
    bins: list[list[int]] = []
    for gi in _group_order(prob, prob.opt_allows[o], "max", cap):
        n = prob.groups[gi].count
        r = prob.req[gi]
        for b in bins:
            k = fit_count(r, b, n)
            if k:
                for d in range(nd):
                    b[d] -= k * r[d]
                n -= k
                if not n:
                    break
        per = fit_count(r, cap, n)
        while n > 0:
            k = min(per, n)
            bins.append([c - k * x for c, x in zip(cap, r, strict=True)])
            n -= k
    return len(bins)


def fractional_bound(prob: Problem) -> float:
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

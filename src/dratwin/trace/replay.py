"""The FGD paper's replay protocol: arrivals only, a workload tuned to 130% of the cluster's GPUs, by seed.

Weng et al., USENIX ATC '23, §5.1, as their simulator's artifact runs it:

1. the trace's pods, in name order, are shuffled with the seed;
2. the list is *tuned* to 1.3 x the cluster's GPU capacity: pods drawn at random (with replacement) from
   the trace are appended until the next one would pass the target (the simulator compares the running
   total plus the drawn pod's per-GPU share, a quirk kept here), or random pods are removed while the total
   is above it (the ``multigpu*`` lists ask for more than 1.3 x);
3. the pods arrive one by one and never leave; each is placed by the policy or fails (and stays failed);
4. after every arrival the allocation ratio (allocated milli-GPU / capacity) is recorded against the
   arrived GPU demand. The value *at arrival X%* is the mean of the ratios recorded where the arrived
   demand rounds to X% of capacity (within one point when no arrival rounds to X), as the artifact's
   ``analysis_allo_discrete`` computes it. Unallocated GPU % = 100 - that value.

Steps 1-3 draw from one random source seeded with the seed, in that order, as the artifact's global one.

The loop is pure: it owns its :class:`GpuCluster`, draws from its run's seeded random source, and keeps
per task shape the feasibility and scores of every node until the node changes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dratwin.gpushare.cluster import GpuCluster, Task
from dratwin.gpushare.fragmentation import BoolArray, IntArray, TargetWorkload, target_workload
from dratwin.gpushare.policies import Policy, make_policy
from dratwin.trace.alibaba import AlibabaNode

TUNE_RATIO = 1.3
PAPER_SEEDS = tuple(range(42, 52))


def tuned_arrivals(
    tasks: Sequence[Task], capacity_milli: int, seed: int | random.Random, ratio: float = TUNE_RATIO
) -> list[Task]:
    """The arrival order of one run: the shuffled trace, tuned to ``ratio`` x ``capacity_milli``. ``seed``
    may be the run's random source itself, which then goes on to the replay (see :func:`run_protocol`)."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    arrivals = sorted(tasks, key=lambda t: t.name)
    rng.shuffle(arrivals)
    target = ratio * capacity_milli
    total = sum(t.gpu_total_milli for t in arrivals)
    if total > target:
        while total > target and arrivals:
            total -= arrivals.pop(rng.randrange(len(arrivals))).gpu_total_milli
    elif total < target and tasks:
        while True:
            drawn = tasks[rng.randrange(len(tasks))]
            if total + drawn.gpu_milli > target:
                break
            arrivals.append(drawn)
            total += drawn.gpu_total_milli
    return arrivals


@dataclass
class ReplayResult:
    """What one run recorded after every arrival (milli-GPU), which arrivals failed and where each went
    (``placements``: the node's name per arrival, "" for one that failed)."""

    policy: str
    seed: int
    capacity_milli: int
    arrived_milli: IntArray
    allocated_milli: IntArray
    failed: list[str] = field(default_factory=list)
    placements: list[str] = field(default_factory=list)

    def allocation_pct_at(self, arrival_pct: int) -> float | None:
        """The allocation ratio (%) at ``arrival_pct`` % arrived demand, as ``analysis_allo_discrete``."""
        arrived = np.round(self.arrived_milli / self.capacity_milli * 100)  # half to even, like Python's round
        allocated = np.round(self.allocated_milli / self.capacity_milli * 100, 2)
        window = allocated[arrived == arrival_pct]
        if not len(window):
            window = allocated[(arrived >= arrival_pct - 1) & (arrived <= arrival_pct + 1)]
        if not len(window):
            return None
        return round(float(window.mean()), 2)

    def unallocated_pct_at(self, arrival_pct: int = 100) -> float | None:
        allocation = self.allocation_pct_at(arrival_pct)
        return None if allocation is None else round(100 - allocation, 2)


@dataclass
class _Shape:
    """Per task shape: every node's feasibility and score, valid for the node version it was computed at."""

    versions: IntArray
    feasible: BoolArray
    scores: IntArray
    accepts: BoolArray


def replay(
    nodes: Sequence[AlibabaNode], arrivals: Sequence[Task], policy: Policy, seed: int,
    rng: random.Random | None = None,
) -> ReplayResult:
    """Place ``arrivals`` in order on a fresh cluster of ``nodes`` with ``policy``.

    Ties among the best nodes go as in the paper's simulator, whose kube-scheduler picks the smallest
    node name among equal scores (not a random one, as upstream's selectHost does) after prefixing every
    node name with its place in a seeded random permutation: each seed fixes one random priority order
    of the nodes, and ties always fall to the first of them."""
    cluster = GpuCluster(nodes)
    rng = random.Random(seed) if rng is None else rng
    rank = np.array(rng.sample(range(len(cluster)), len(cluster)), dtype=np.int64)
    shapes: dict[tuple[int, int, object], _Shape] = {}
    arrived = np.zeros(len(arrivals), dtype=np.int64)
    allocated = np.zeros(len(arrivals), dtype=np.int64)
    failed: list[str] = []
    placements: list[str] = []
    arrived_total, allocated_total = 0, 0
    count = len(cluster)
    for index, task in enumerate(arrivals):
        arrived_total += task.gpu_total_milli
        key = (task.cpu_milli, task.memory_mib, task.task_class)
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = _Shape(
                np.full(count, -1, dtype=np.int64), np.zeros(count, dtype=np.bool_),
                np.zeros(count, dtype=np.int64), cluster.accepts(task),
            )
        stale = np.flatnonzero(shape.versions != cluster.version)
        if len(stale):
            ok = cluster.feasible(task, stale, shape.accepts)
            shape.feasible[stale] = ok
            rows = stale[ok]
            if len(rows):
                shape.scores[rows] = policy.scores(cluster, task, rows)
            shape.versions[stale] = cluster.version[stale]
        row = _choose(np.flatnonzero(shape.feasible), shape.scores, policy, rank, rng)
        if row is None:
            failed.append(task.name)
            placements.append("")
        else:
            cluster.place(row, task, policy.gpus(cluster, task, row, rng))
            allocated_total += task.gpu_total_milli
            placements.append(cluster.names[row])
        arrived[index] = arrived_total
        allocated[index] = allocated_total
    return ReplayResult(policy.name, seed, cluster.total_gpu_milli, arrived, allocated, failed, placements)


def _choose(
    candidates: IntArray, scores: IntArray, policy: Policy, rank: IntArray, rng: random.Random
) -> int | None:
    """The node the task goes to among the feasible ``candidates`` (None: it fails)."""
    if not len(candidates):
        return None
    if policy.picks_at_random:
        return int(candidates[rng.randrange(len(candidates))])
    candidate_scores = scores[candidates]
    best = candidates[candidate_scores == candidate_scores.max()]
    return int(best[0] if len(best) == 1 else best[np.argmin(rank[best])])


def run_protocol(
    nodes: Sequence[AlibabaNode], tasks: Sequence[Task], policy_name: str, seed: int,
    workload: TargetWorkload | None = None,
) -> ReplayResult:
    """One run of the paper's protocol: tune the trace for ``seed``, replay it with the named policy.
    FGD's target workload defaults to the trace's own task classes.

    One random source serves the whole run, in the artifact's order (its one global source seeded with the
    seed: shuffle, tuning, then the node order, then the policy's draws). Two sources seeded alike would
    not be independent: the node order would follow the shuffle's draws, and the policies whose ties
    decide much of the placement (GpuPacking, GpuClustering on CPU-only tasks) would read high."""
    if workload is None:
        workload = target_workload(t.task_class for t in tasks)
    capacity = sum(n.gpus for n in nodes) * 1000
    policy = make_policy(policy_name, workload)
    rng = random.Random(seed)
    return replay(nodes, tuned_arrivals(tasks, capacity, rng), policy, seed, rng)


__all__ = ["PAPER_SEEDS", "TUNE_RATIO", "ReplayResult", "replay", "run_protocol", "tuned_arrivals"]

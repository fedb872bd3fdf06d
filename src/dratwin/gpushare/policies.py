"""The six placement policies of the FGD paper, as node scores and GPU choices over a :class:`GpuCluster`.

Weng et al., USENIX ATC '23, §5.1 ("Baselines") and §4 (FGD), as their simulator
(``hkust-adsl/kubernetes-scheduler-simulator``) scores them: one score plugin per policy (0..100, higher
is better, integers as kube-scheduler's), the node with the highest score wins (ties at random), and the
policy's GPU selection then picks the GPUs on that node. Each policy scores only feasible nodes.

- **Random**: every feasible node alike; a share goes to a random GPU that has it.
- **DotProd**: the dot product of the node's free (CPU, GPU) and the task's demand, both divided by the
  largest node (128 CPUs, 8 GPUs), the GPUs merged into one dimension; a smaller product is better.
- **GpuClustering**: tasks of the same GPU demand (a share, 1, 2, 4 or 8 GPUs) together: a node running
  only that demand scores highest, then mixed nodes with it, idle nodes, nodes without it; fuller first.
- **GpuPacking**: partially used GPUs first, then partially used nodes' idle GPUs, then idle nodes.
- **BestFit**: the node with the least CPU and GPU left after placement (equal weights, by the largest node).
- **FGD**: the node (and GPU) where the fragmentation of the target workload
  (:mod:`dratwin.gpushare.fragmentation`) grows the least: score = sigmoid(-ΔF / 1000) × 100.

Whole GPUs always go to the node's first idle GPUs; DotProd, GpuClustering, GpuPacking and BestFit put a
share on the fullest GPU that still has it (best fit), FGD on the GPU it scored best.
"""

from __future__ import annotations

import random
from typing import Protocol

import numpy as np

from dratwin.gpushare.cluster import GpuCluster, Task, first_idle_gpus
from dratwin.gpushare.fragmentation import (
    MILLI,
    FloatArray,
    FragmentationTable,
    IntArray,
    TargetWorkload,
    TaskClass,
)
from dratwin.gpushare.names import PAPER_NAMES, POLICY_NAMES

MAX_SCORE = 100
LARGEST_NODE_CPU_MILLI = 128_000  # the paper's normalisation: the largest node of the trace
LARGEST_NODE_GPU_MILLI = 8 * MILLI


class Policy(Protocol):
    name: str
    picks_at_random: bool  # the node is drawn uniformly among the feasible ones (its PreScore), not scored

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        """Integer scores (0..100) of the feasible nodes ``rows`` for ``task``; higher is better."""
        ...

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        """The GPU columns the task gets on the chosen node ``row`` (empty for a task without GPUs)."""
        ...


def best_fit_gpu(gpu_left: IntArray, share: int) -> int:
    """The GPU with the least free share that still has ``share`` (the first such GPU on a tie)."""
    candidates = np.flatnonzero(gpu_left >= share)
    return int(candidates[np.argmin(gpu_left[candidates])])


def _best_fit_gpus(cluster: GpuCluster, task: Task, row: int) -> list[int]:
    if not task.uses_gpu:
        return []
    if task.gpu_milli < MILLI:
        return [best_fit_gpu(cluster.gpu_left[row], task.gpu_milli)]
    return first_idle_gpus(cluster.gpu_left[row], task.num_gpu)


class RandomPolicy:
    """Random placement among the feasible nodes (every node scores the same)."""

    name = "random"
    picks_at_random = True

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        return np.zeros(len(rows), dtype=np.int64)

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        if not task.uses_gpu:
            return []
        if task.gpu_milli < MILLI:
            candidates = np.flatnonzero(cluster.gpu_left[row] >= task.gpu_milli)
            return [int(candidates[rng.randrange(len(candidates))])]
        return first_idle_gpus(cluster.gpu_left[row], task.num_gpu)


class DotProductPolicy:
    """Smallest dot product of free resources and demand wins (Grandl et al., Tetris, SIGCOMM '14)."""

    name = "dotprod"
    picks_at_random = False

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        cpu_free = cluster.cpu_left[rows] / LARGEST_NODE_CPU_MILLI
        gpu_free = cluster.gpu_left[rows].sum(axis=1) / LARGEST_NODE_GPU_MILLI
        cpu_ask = task.task_class.cpu_milli / LARGEST_NODE_CPU_MILLI
        gpu_ask = task.gpu_total_milli / LARGEST_NODE_GPU_MILLI
        product = (cpu_free * cpu_ask + gpu_free * gpu_ask) / 2
        return _truncate((1 - product) * MAX_SCORE)

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        return _best_fit_gpus(cluster, task, row)


class GpuClusteringPolicy:
    """Tasks of one GPU demand packed together (the paper's GpuClustering baseline)."""

    name = "gpuclustering"
    picks_at_random = False

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        if not task.uses_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        quarter = MAX_SCORE // 4
        fullness = quarter * (LARGEST_NODE_GPU_MILLI - cluster.gpu_left[rows].sum(axis=1)) // LARGEST_NODE_GPU_MILLI
        tags = cluster.tag_counts[rows]
        kinds = (tags > 0).sum(axis=1)
        same = tags[:, cluster.tag_column(task)] > 0
        band = np.where(same, np.where(kinds == 1, 3 * quarter, 2 * quarter), np.where(kinds == 0, quarter, 0))
        result: IntArray = (fullness + band).astype(np.int64)
        return result

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        return _best_fit_gpus(cluster, task, row)


class GpuPackingPolicy:
    """Used GPUs first, then used nodes, then idle nodes (the paper's GpuPacking baseline)."""

    name = "gpupacking"
    picks_at_random = False

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        if not task.uses_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        left = cluster.gpu_left[rows]
        idle = (left == MILLI).sum(axis=1)
        idle_node = np.maximum(MAX_SCORE // 3 - idle, idle)
        if task.gpu_milli < MILLI:
            # one GPU: the fullest one that still has the share (what the best-fit selection takes)
            masked = np.where(left >= task.gpu_milli, left, MILLI + 1)
            chosen = masked.min(axis=1)
            takes_idle = chosen == MILLI
            used_gpu = np.maximum(MAX_SCORE - (chosen * 100 // MILLI) // 10, MAX_SCORE // 2)
            used_node = np.maximum(MAX_SCORE // 2 - takes_idle.astype(np.int64), MAX_SCORE // 3)
            partial = np.where(takes_idle, used_node, used_gpu)
        else:
            partial = np.full(len(rows), max(MAX_SCORE // 2 - task.num_gpu, MAX_SCORE // 3), dtype=np.int64)
        result: IntArray = np.where(idle == cluster.gpu_count[rows], idle_node, partial).astype(np.int64)
        return result

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        return _best_fit_gpus(cluster, task, row)


class BestFitPolicy:
    """Least CPU and GPU left after placement (the paper's BestFit baseline)."""

    name = "bestfit"
    picks_at_random = False

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        cpu_rest = (cluster.cpu_left[rows] - task.task_class.cpu_milli) / LARGEST_NODE_CPU_MILLI * 0.5
        gpu_rest = (cluster.gpu_left[rows].sum(axis=1) - task.gpu_total_milli) / LARGEST_NODE_GPU_MILLI * 0.5
        return _truncate((1.0 - (cpu_rest + gpu_rest)) * MAX_SCORE)

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        return _best_fit_gpus(cluster, task, row)


class FgdPolicy:
    """Fragmentation gradient descent: the smallest growth of the target workload's fragmentation.

    The measure is taken with a :class:`FragmentationTable` (a few look-ups per node, whatever the number
    of classes) in its exact units, so that a placement that leaves the measure as it was changes it by
    exactly 0 (score 50)."""

    name = "fgd"
    picks_at_random = False

    def __init__(self, workload: TargetWorkload) -> None:
        self.workload = workload
        self._table: FragmentationTable | None = None
        self._cluster: GpuCluster | None = None  # the cluster the caches below describe
        self._units: IntArray | FloatArray = np.zeros(0)
        self._versions: IntArray = np.zeros(0, dtype=np.int64)
        # per sharing class: the GPU each node's score was computed for, at that node's version, so that
        # placing on the chosen node does not score it again
        self._gpu_choice: dict[TaskClass, tuple[IntArray, IntArray]] = {}

    def fragmentation(self, cluster: GpuCluster) -> FloatArray:
        """Every node's current fragmentation in milli-GPU (recomputed only for the nodes that changed)."""
        units = self._current_units(cluster)
        assert self._table is not None
        result: FloatArray = units / self._table.scale
        return result

    def _current_units(self, cluster: GpuCluster) -> IntArray | FloatArray:
        table = self._table
        width = cluster.gpu_left.shape[1]
        if table is None or cluster is not self._cluster or table.models != cluster.models or table.width != width:
            table = self._table = FragmentationTable(self.workload, cluster.models, width)
            self._cluster = cluster
            self._gpu_choice.clear()
            self._units = table.units(cluster.gpu_left, cluster.cpu_left, cluster.model)
            self._versions = cluster.version.copy()
            return self._units
        stale = np.flatnonzero(self._versions != cluster.version)
        if len(stale):
            self._units[stale] = table.units(cluster.gpu_left[stale], cluster.cpu_left[stale], cluster.model[stale])
            self._versions[stale] = cluster.version[stale]
        return self._units

    def scores(self, cluster: GpuCluster, task: Task, rows: IntArray) -> IntArray:
        scores, gpus = self._score_and_gpu(cluster, task, rows)
        if task.task_class.is_gpu_sharing:
            choice = self._gpu_choice.get(task.task_class)
            if choice is None:
                choice = self._gpu_choice[task.task_class] = (
                    np.full(len(cluster), -1, dtype=np.int64), np.zeros(len(cluster), dtype=np.int64)
                )
            choice[0][rows] = cluster.version[rows]
            choice[1][rows] = gpus
        return scores

    def gpus(self, cluster: GpuCluster, task: Task, row: int, rng: random.Random) -> list[int]:
        if not task.uses_gpu:
            return []
        if task.task_class.is_gpu_sharing:
            choice = self._gpu_choice.get(task.task_class)
            if cluster is self._cluster and choice is not None and choice[0][row] == cluster.version[row]:
                return [int(choice[1][row])]
            return [int(self._score_and_gpu(cluster, task, np.array([row], dtype=np.int64))[1][0])]
        return first_idle_gpus(cluster.gpu_left[row], task.num_gpu)

    def _score_and_gpu(self, cluster: GpuCluster, task: Task, rows: IntArray) -> tuple[IntArray, IntArray]:
        before = self._current_units(cluster)[rows]
        table = self._table
        assert table is not None
        cpu_after = cluster.cpu_left[rows] - task.task_class.cpu_milli  # the scoring CPU, as the paper's simulator
        left = cluster.gpu_left[rows]
        if task.task_class.is_gpu_sharing:
            # one candidate per distinct free share of a node: GPUs with the same share left give the same
            # measure, and of those only the first could win (ties go to the lowest GPU index)
            width = left.shape[1]
            repeated = ((left[:, :, None] == left[:, None, :]) & np.tri(width, k=-1, dtype=np.bool_)).any(axis=2)
            row_index, gpu_index = np.nonzero((left >= task.gpu_milli) & ~repeated)
            after_left = left[row_index].copy()
            after_left[np.arange(len(row_index)), gpu_index] -= task.gpu_milli
            after = table.units(after_left, cpu_after[row_index], cluster.model[rows][row_index])
            candidate = _sigmoid_score((before[row_index] - after) / table.scale)
            # best GPU per node: the highest score, the lowest GPU index on a tie
            order = np.lexsort((gpu_index, -candidate, row_index))
            first = np.ones(len(order), dtype=np.bool_)
            first[1:] = row_index[order][1:] != row_index[order][:-1]
            picked = order[first]
            scores = np.zeros(len(rows), dtype=np.int64)
            gpus = np.zeros(len(rows), dtype=np.int64)
            scores[row_index[picked]] = candidate[picked]
            gpus[row_index[picked]] = gpu_index[picked]
            return scores, gpus
        after_left = left
        if task.uses_gpu:
            # whole GPUs go to each node's first idle ones (first_idle_gpus), for every row at once
            idle = left == MILLI
            taken = idle & (idle.cumsum(axis=1) <= task.num_gpu)
            after_left = left - taken * task.gpu_milli
        after = table.units(after_left, cpu_after, cluster.model[rows])
        return _sigmoid_score((before - after) / table.scale), np.zeros(len(rows), dtype=np.int64)


def _sigmoid_score(decrease: FloatArray) -> IntArray:
    return _truncate(1.0 / (1.0 + np.exp(-decrease / 1000)) * MAX_SCORE)


def _truncate(values: FloatArray) -> IntArray:
    """Go's int64(x) of a float: toward zero."""
    result: IntArray = np.trunc(values).astype(np.int64)
    return result




def make_policy(name: str, workload: TargetWorkload) -> Policy:
    """The policy called ``name`` (one of :data:`POLICY_NAMES`); FGD measures against ``workload``."""
    policies: dict[str, Policy] = {
        "random": RandomPolicy(),
        "dotprod": DotProductPolicy(),
        "gpuclustering": GpuClusteringPolicy(),
        "gpupacking": GpuPackingPolicy(),
        "bestfit": BestFitPolicy(),
    }
    if name == "fgd":
        return FgdPolicy(workload)
    try:
        return policies[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}") from None


__all__ = [
    "PAPER_NAMES",
    "POLICY_NAMES",
    "BestFitPolicy",
    "DotProductPolicy",
    "FgdPolicy",
    "GpuClusteringPolicy",
    "GpuPackingPolicy",
    "Policy",
    "RandomPolicy",
    "best_fit_gpu",
    "make_policy",
]

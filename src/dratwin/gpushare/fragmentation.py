"""GPU fragmentation as the FGD paper defines it, over the distribution of a target workload.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
Descent", USENIX ATC '23, §3. A *task class* is a resource shape (CPU, GPUs and the share of each, allowed
GPU models); the *target workload* is the popularity of each class (the most popular classes covering 95%
of the tasks, renormalised, as the paper's simulator takes them). For one node and one class:

- the node can host the class (its GPU model is allowed, enough CPU is free and enough GPUs each have the
  class's share left): the GPUs whose free share is smaller than the class's share are fragments
  (the paper's Q3 case, where only part of the idle GPU is lost);
- otherwise (not enough CPU or GPU, a model the class does not accept, or a class without GPUs): all of
  the node's free GPU share is a fragment for that class.

The node's fragmentation is the popularity-weighted sum over the classes, in milli-GPU; the cluster's is
the sum over its nodes. FGD places each task where this measure grows the least (see
:mod:`dratwin.gpushare.policies`).

The measure is vectorised over many nodes (rows of numpy arrays) so that scoring every node of a
1,213-node cluster stays cheap; :func:`node_fragmentation` is the one-node form of the same computation.
Pure: no I/O, no state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

MILLI = 1000  # the share of a whole GPU, in milli-GPU
POPULARITY_THRESHOLD_PCT = 95  # the paper's artifact: the top classes covering 95% of the tasks

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, order=True)
class TaskClass:
    """A task's resource shape: CPU in millicores, ``num_gpu`` GPUs each with ``gpu_milli`` of it
    (0 for a task without GPUs) and the GPU models it accepts (empty: any)."""

    cpu_milli: int
    gpu_milli: int
    num_gpu: int
    gpu_models: tuple[str, ...] = ()

    @property
    def gpu_total_milli(self) -> int:
        return self.gpu_milli * self.num_gpu

    @property
    def is_gpu_sharing(self) -> bool:
        return self.num_gpu == 1 and 0 < self.gpu_milli < MILLI

    def accepts(self, model: str) -> bool:
        """Whether a node with GPUs of ``model`` ("" for a node without GPUs) may host the task."""
        if not self.gpu_models:
            return True
        return bool(model) and model in self.gpu_models


@dataclass(frozen=True)
class TargetWorkload:
    """The task classes of a workload with their popularity (fractions summing to 1) and, when it was
    counted from tasks, the number of tasks of each class (the popularity's numerators): with them FGD
    compares fragmentation in exact integers, where two equal measures give a change of exactly 0."""

    classes: tuple[TaskClass, ...]
    popularity: tuple[float, ...]
    counts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.classes) != len(self.popularity):
            raise ValueError("target workload: one popularity per class")
        if self.counts and len(self.counts) != len(self.classes):
            raise ValueError("target workload: one count per class")


def target_workload(tasks: Iterable[TaskClass], threshold_pct: int = POPULARITY_THRESHOLD_PCT) -> TargetWorkload:
    """The most popular classes of ``tasks`` until they cover ``threshold_pct`` % of them, renormalised.

    Classes are ranked by count, ties by the larger shape first (CPU, share, GPUs, models), as the
    paper's simulator sorts them; the class that crosses the threshold is included."""
    counts = Counter(tasks)
    total = sum(counts.values())
    if total == 0:
        return TargetWorkload((), ())
    ranked = sorted(counts.items(), key=lambda item: (item[1], _shape_key(item[0])), reverse=True)
    wanted = threshold_pct * total / 100
    chosen: list[tuple[TaskClass, int]] = []
    covered = 0
    for task, count in ranked:
        if covered >= wanted:
            break
        chosen.append((task, count))
        covered += count
    return TargetWorkload(
        tuple(t for t, _ in chosen), tuple(c / covered for _, c in chosen), tuple(c for _, c in chosen)
    )


def _shape_key(task: TaskClass) -> tuple[int, int, int, str]:
    return (task.cpu_milli, task.gpu_milli, task.num_gpu, "|".join(task.gpu_models))


class FragmentationModel:
    """The target workload as arrays, for measuring many nodes at once.

    Nodes are given as rows: ``gpu_left`` (n x g, the free milli-GPU of each GPU, 0 for a GPU the node
    does not have), ``cpu_left`` (n, free millicores) and ``model`` (n, an index into ``models``)."""

    def __init__(self, workload: TargetWorkload, models: Sequence[str]) -> None:
        self.workload = workload
        self.models = tuple(models)
        classes = workload.classes
        self.cpu: IntArray = np.array([c.cpu_milli for c in classes], dtype=np.int64)
        self.share: IntArray = np.array([c.gpu_milli for c in classes], dtype=np.int64)
        self.count: IntArray = np.array([c.num_gpu for c in classes], dtype=np.int64)
        self.popularity: FloatArray = np.array(workload.popularity, dtype=np.float64)
        # accepts[m, t]: class t may run on GPUs of model m; a class without GPUs never "fits" (all idle
        # GPU share is a fragment for it).
        self.accepts: BoolArray = np.array(
            [[c.num_gpu > 0 and c.gpu_milli > 0 and c.accepts(m) for c in classes] for m in self.models],
            dtype=np.bool_,
        ).reshape(len(self.models), len(classes))

    def fragmentation(self, gpu_left: IntArray, cpu_left: IntArray, model: IntArray) -> FloatArray:
        """Each node's expected fragmentation in milli-GPU (the paper's F_n(M))."""
        if not len(self.popularity):
            return np.zeros(len(cpu_left), dtype=np.float64)
        left = gpu_left[:, None, :]  # n x 1 x g
        share = self.share[None, :, None]  # 1 x t x 1
        fits_gpu = (left >= share).sum(axis=2) >= self.count[None, :]  # n x t
        hosts = fits_gpu & (cpu_left[:, None] >= self.cpu[None, :]) & self.accepts[model]
        small = np.where(left < share, left, 0).sum(axis=2)  # n x t: the free share too small for t
        total = gpu_left.sum(axis=1)
        per_class = np.where(hosts, small, total[:, None]).astype(np.float64)
        result: FloatArray = per_class @ self.popularity
        return result


class FragmentationTable:
    """The measure of :class:`FragmentationModel` in a few table look-ups per node, whatever the number of
    classes (FGD scores every node and GPU for every task, so its cost must not grow with the classes).

    For one node, sort its free shares v1 >= v2 >= ... >= vg (vg+1 = 0). A class of share s with
    v(j+1) < s <= vj finds exactly j GPUs with its share, and the free share it can use is the j largest
    ones' sum Gj: the node's fragmentation is total x (weight of all classes) - the sum over j of Gj x
    (weight of the classes it hosts in that share interval). The weights are cumulated once per model,
    CPU step (how many of the classes' CPU requests fit), GPU count and share, so each interval costs two
    look-ups. With the workload's task counts as weights every sum is an exact integer (``units``, the
    fragmentation x ``scale``); otherwise the popularity is the weight and ``scale`` is 1.

    Nodes are given as for :class:`FragmentationModel`; ``width`` is the number of GPU columns."""

    def __init__(self, workload: TargetWorkload, models: Sequence[str], width: int) -> None:
        self.models = tuple(models)
        self.width = width
        classes = workload.classes
        exact = bool(workload.counts)
        weights = np.array(workload.counts if exact else workload.popularity, dtype=np.int64 if exact else np.float64)
        self.scale = float(weights.sum()) if exact else 1.0
        self.all_weight = weights.sum()
        # the classes a node can ever host: with GPUs, a share a GPU can have and no more GPUs than a node
        usable = [i for i, c in enumerate(classes) if 0 < c.gpu_milli <= MILLI and 1 <= c.num_gpu <= width]
        self.shares: IntArray = np.unique(np.array([classes[i].gpu_milli for i in usable], dtype=np.int64))
        self.cpus: IntArray = np.unique(np.array([classes[i].cpu_milli for i in usable], dtype=np.int64))
        # table[m, b, j, q]: the weight of the usable classes model m accepts, among the b smallest CPU
        # requests, asking for at most j GPUs, among the q smallest shares
        table = np.zeros((len(self.models), len(self.cpus) + 1, width + 1, len(self.shares) + 1), dtype=weights.dtype)
        for i in usable:
            task = classes[i]
            cpu_step = int(np.searchsorted(self.cpus, task.cpu_milli)) + 1
            share_step = int(np.searchsorted(self.shares, task.gpu_milli)) + 1
            for m, model in enumerate(self.models):
                if task.accepts(model):
                    table[m, cpu_step, task.num_gpu, share_step] += weights[i]
        self.table = table.cumsum(axis=1).cumsum(axis=2).cumsum(axis=3)
        # the table flat, and each axis's stride in it (one np.take per look-up instead of four indices)
        self._flat = self.table.reshape(-1)
        self._strides = [stride // self.table.itemsize for stride in self.table.strides]

    def units(self, gpu_left: IntArray, cpu_left: IntArray, model: IntArray) -> IntArray | FloatArray:
        """Each node's fragmentation x ``scale`` (exact integers when the workload has counts)."""
        free = np.sort(gpu_left, axis=1)[:, ::-1]  # n x g, largest first
        largest = free.cumsum(axis=1)  # [:, j-1]: the j largest free shares
        total = largest[:, -1]
        fitting = np.searchsorted(self.shares, free, side="right")  # shares <= each free value
        below = np.empty_like(fitting)
        below[:, :-1] = fitting[:, 1:]  # shares <= the next free value (none after the last GPU)
        below[:, -1] = 0
        model_stride, cpu_stride, gpu_stride, _ = self._strides
        cpu_step = np.searchsorted(self.cpus, cpu_left, side="right")
        base = (model * model_stride + cpu_step * cpu_stride)[:, None] + np.arange(1, free.shape[1] + 1) * gpu_stride
        picked = self._flat.take(base + fitting) - self._flat.take(base + below)  # hosted weight per interval
        hosted = (largest * picked).sum(axis=1)
        result: IntArray | FloatArray = total * self.all_weight - hosted
        return result

    def fragmentation(self, gpu_left: IntArray, cpu_left: IntArray, model: IntArray) -> FloatArray:
        """Each node's expected fragmentation in milli-GPU, as :meth:`FragmentationModel.fragmentation`."""
        result: FloatArray = self.units(gpu_left, cpu_left, model) / self.scale
        return result


def node_fragmentation(
    gpu_left: Sequence[int], cpu_left: int, model: str, workload: TargetWorkload
) -> float:
    """One node's expected fragmentation in milli-GPU: the free share of ``gpu_left`` that the tasks of
    ``workload`` cannot use, weighted by their popularity."""
    models = (model,) if model else ("",)
    frag = FragmentationModel(workload, models)
    left = np.array([list(gpu_left) or [0]], dtype=np.int64)
    return float(frag.fragmentation(left, np.array([cpu_left], dtype=np.int64), np.zeros(1, dtype=np.int64))[0])


def cluster_fragmentation(frag: FloatArray, gpu_left: IntArray) -> tuple[float, float]:
    """The cluster's fragmented milli-GPU and its share of the idle milli-GPU (0 when nothing is idle)."""
    amount = float(frag.sum())
    idle = float(gpu_left.sum())
    return amount, (amount / idle if idle else 0.0)


__all__ = [
    "MILLI",
    "POPULARITY_THRESHOLD_PCT",
    "FragmentationModel",
    "FragmentationTable",
    "TargetWorkload",
    "TaskClass",
    "cluster_fragmentation",
    "node_fragmentation",
    "target_workload",
]

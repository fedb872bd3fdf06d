"""The GPU-sharing cluster the paper's policies score: per node, free CPU, memory and milli-GPU per GPU.

One owner (a trace replay's loop) mutates it through :meth:`GpuCluster.place`; every node has a
``version`` that changes whenever something lands on it, so that scores computed for a node stay valid
until then. A score plugin builds a one-node cluster per node it scores and only reads it.
GPUs are columns of ``gpu_left`` (free milli-GPU, 1000 = idle); a node with fewer GPUs than the widest
node has 0 in the columns it lacks, which no task can use and no measure counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dratwin.gpushare.fragmentation import MILLI, BoolArray, IntArray, TaskClass

# kube-scheduler scores a container without a CPU request as if it asked for 100m (non-zero defaults).
DEFAULT_SCORING_CPU_MILLI = 100

# The kinds of GPU demand that GpuClustering groups tasks by (a share of one GPU, or N whole GPUs).
SHARE_TAG = 0


@dataclass(frozen=True)
class Task:
    """One task of a replay: what it asks for (fit), and its class (scores and fragmentation)."""

    name: str
    cpu_milli: int
    memory_mib: int
    task_class: TaskClass

    @property
    def gpu_milli(self) -> int:
        return self.task_class.gpu_milli

    @property
    def num_gpu(self) -> int:
        return self.task_class.num_gpu

    @property
    def gpu_total_milli(self) -> int:
        return self.task_class.gpu_total_milli

    @property
    def uses_gpu(self) -> bool:
        return self.task_class.gpu_milli > 0 and self.task_class.num_gpu > 0


class NodeShape(Protocol):
    """What the cluster reads of a node: CPU in millicores, memory in MiB, its GPUs and their model
    ("" for a node without GPUs)."""

    @property
    def name(self) -> str: ...
    @property
    def cpu_milli(self) -> int: ...
    @property
    def memory_mib(self) -> int: ...
    @property
    def gpus(self) -> int: ...
    @property
    def model(self) -> str: ...


@dataclass(frozen=True)
class GpuNode:
    """A node as the cluster reads it (see :class:`NodeShape`)."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


class GpuCluster:
    """Free resources of every node, as arrays (one row per node)."""

    def __init__(self, nodes: Sequence[NodeShape]) -> None:
        self.names = [n.name for n in nodes]
        self.models: tuple[str, ...] = tuple(sorted({n.model for n in nodes}))
        model_index = {m: i for i, m in enumerate(self.models)}
        width = max((n.gpus for n in nodes), default=0) or 1
        self.gpu_count: IntArray = np.array([n.gpus for n in nodes], dtype=np.int64)
        self.gpu_left: IntArray = np.zeros((len(nodes), width), dtype=np.int64)
        for row, node in enumerate(nodes):
            self.gpu_left[row, : node.gpus] = MILLI
        self.cpu_left: IntArray = np.array([n.cpu_milli for n in nodes], dtype=np.int64)
        self.cpu_capacity: IntArray = self.cpu_left.copy()
        self.memory_left: IntArray = np.array([n.memory_mib for n in nodes], dtype=np.int64)
        self.model: IntArray = np.array([model_index[n.model] for n in nodes], dtype=np.int64)
        # GpuClustering's "affinity": how many tasks of each GPU demand (share, 1, 2, 4, 8... GPUs) a node runs.
        self.demand_tags: dict[int, int] = {SHARE_TAG: 0}
        self.tag_counts: IntArray = np.zeros((len(nodes), 8), dtype=np.int64)
        self.version: IntArray = np.zeros(len(nodes), dtype=np.int64)
        self.total_gpu_milli = int(self.gpu_count.sum()) * MILLI

    def __len__(self) -> int:
        return len(self.names)

    @property
    def used_gpu_milli(self) -> int:
        return self.total_gpu_milli - int(self.gpu_left.sum())

    def tag_column(self, task: Task) -> int:
        """The column of ``tag_counts`` for the task's GPU demand (allocated on first use)."""
        key = SHARE_TAG if task.gpu_milli < MILLI else task.num_gpu
        column = self.demand_tags.get(key)
        if column is None:
            column = self.demand_tags[key] = len(self.demand_tags)
            if column >= self.tag_counts.shape[1]:
                self.tag_counts = np.concatenate([self.tag_counts, np.zeros_like(self.tag_counts)], axis=1)
        return column

    def accepts(self, task: Task) -> BoolArray:
        """Per model index: whether the task may use GPUs of that model."""
        return np.array([task.task_class.accepts(m) for m in self.models], dtype=np.bool_)

    def feasible(self, task: Task, rows: IntArray, accepts: BoolArray) -> BoolArray:
        """The Filter of the paper's simulator for ``rows``: CPU and memory fit, and for a GPU task a node of
        an accepted model with ``num_gpu`` GPUs each with the share left (whole GPUs: idle ones)."""
        ok = (self.cpu_left[rows] >= task.cpu_milli) & (self.memory_left[rows] >= task.memory_mib)
        if task.uses_gpu:
            enough = (self.gpu_left[rows] >= task.gpu_milli).sum(axis=1) >= task.num_gpu
            ok &= enough & accepts[self.model[rows]] & (self.gpu_count[rows] > 0)
        result: BoolArray = ok
        return result

    def place(self, row: int, task: Task, gpus: Sequence[int]) -> None:
        """Bind the task to node ``row`` on GPU columns ``gpus``."""
        self.cpu_left[row] -= task.cpu_milli
        self.memory_left[row] -= task.memory_mib
        if task.uses_gpu:
            for gpu in gpus:
                if self.gpu_left[row, gpu] < task.gpu_milli:
                    raise ValueError(f"GPU {gpu} of {self.names[row]} has less than {task.gpu_milli} milli left")
                self.gpu_left[row, gpu] -= task.gpu_milli
            self.tag_counts[row, self.tag_column(task)] += 1
        self.version[row] += 1


def first_idle_gpus(gpu_left: Sequence[int] | IntArray, count: int) -> list[int]:
    """The first ``count`` idle GPUs by index (how the paper's simulator hands out whole GPUs)."""
    idle = [index for index, left in enumerate(gpu_left) if left == MILLI]
    return idle[:count]


__all__ = ["DEFAULT_SCORING_CPU_MILLI", "GpuCluster", "GpuNode", "NodeShape", "Task", "first_idle_gpus"]

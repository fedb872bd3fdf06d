"""Builders for trace replay tests: GPU nodes with some share of each GPU in use, and tasks.

    cluster(gpu_node("a", "G2", used=[500, 0, 1000]), gpu_node("b", "T4", gpus=2))
    task("t", cpu=4000, share=500)            # a GPU-sharing task
    task("w", cpu=8000, share=1000, gpus=2)   # two whole GPUs

``used`` lists the milli-GPU in use on the first GPUs (the rest are idle); ``cpu_used`` the millicores
in use. Placing goes through :meth:`GpuCluster.place` so that versions and demand tags are as a replay
leaves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dratwin.gpushare.cluster import GpuCluster, Task
from dratwin.gpushare.fragmentation import TaskClass
from dratwin.trace.alibaba import AlibabaNode, AlibabaPod
from dratwin.trace.manifests import ImportOptions, manifests


@dataclass(frozen=True)
class BuiltNode:
    node: AlibabaNode
    used: tuple[int, ...] = ()
    cpu_used: int = 0
    tasks: tuple[Task, ...] = field(default=())


def gpu_node(
    name: str, model: str = "G2", gpus: int = 8, cpu: int = 96_000, memory: int = 786_432,
    used: Sequence[int] = (), cpu_used: int = 0, tasks: Sequence[Task] = (),
) -> BuiltNode:
    return BuiltNode(AlibabaNode(name, cpu, memory, gpus, model), tuple(used), cpu_used, tuple(tasks))


def task(
    name: str = "t", cpu: int = 4000, share: int = 0, gpus: int = 1, models: Sequence[str] = (), memory: int = 1024,
) -> Task:
    count = gpus if share > 0 else 0
    return Task(name, cpu, memory, TaskClass(cpu, share, count, tuple(models)))


def cluster(*nodes: BuiltNode) -> GpuCluster:
    """A cluster of the nodes, with their used shares and CPU and their placed tasks applied."""
    built = GpuCluster([n.node for n in nodes])
    for row, spec in enumerate(nodes):
        built.gpu_left[row, : len(spec.used)] -= np.array(spec.used, dtype=np.int64)
        built.cpu_left[row] -= spec.cpu_used
        for placed in spec.tasks:
            free = [i for i in range(spec.node.gpus) if built.gpu_left[row, i] >= placed.gpu_milli]
            built.place(row, placed, free[: placed.num_gpu] if placed.gpu_milli else [])
    return built


# ---- GPU-sharing clusters as manifests (what `dratwin trace import` writes) -------------------------------

SHARE_NODES = (AlibabaNode("n-a", 32_000, 131_072, 2, "T4"), AlibabaNode("n-b", 32_000, 131_072, 2, "T4"))


def share_pod(name: str, share: int, gpus: int = 1, cpu: int = 4000) -> AlibabaPod:
    """A trace pod asking for ``gpus`` GPUs with ``share`` milli-GPU of each (0: no GPU)."""
    return AlibabaPod(name, cpu, 8192, gpus if share else 0, share)


# Two halves then a whole GPU: LeastAllocated spreads the halves over the two nodes; FGD puts the second
# half on the first one's GPU, which leaves a whole idle GPU for the whole-GPU third of the workload.
HALVES_THEN_WHOLE = (share_pod("half-1", 500), share_pod("half-2", 500), share_pod("whole", 1000))


def share_manifests(pods: Sequence[AlibabaPod], nodes: Sequence[AlibabaNode] = SHARE_NODES) -> list[dict[str, Any]]:
    """The DRA manifests of a trace: DeviceClass, Nodes and their slices, claim templates, Pods."""
    return list(manifests(nodes, pods, ImportOptions()))

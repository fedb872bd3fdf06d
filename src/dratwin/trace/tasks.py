"""A trace's pods as the tasks the paper's policies place (:class:`dratwin.gpushare.cluster.Task`)."""

from __future__ import annotations

from dratwin.gpushare.cluster import DEFAULT_SCORING_CPU_MILLI, Task
from dratwin.gpushare.fragmentation import MILLI, TaskClass
from dratwin.trace.alibaba import AlibabaPod


def task_from_pod(pod: AlibabaPod) -> Task:
    """The task of a trace pod. As the paper's simulator reads the trace: a pod without GPUs asks for no
    share, a share above 1000 is a whole GPU, and a CPU request of 0 scores as 100m."""
    share = 0 if pod.num_gpu == 0 else min(max(pod.gpu_milli, 0), MILLI)
    count = pod.num_gpu if share > 0 else 0
    task_class = TaskClass(pod.cpu_milli or DEFAULT_SCORING_CPU_MILLI, share, count, pod.gpu_spec)
    return Task(pod.name, pod.cpu_milli, pod.memory_mib, task_class)


__all__ = ["task_from_pod"]

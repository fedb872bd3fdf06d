"""Where the runs of a scenario or sweep run: in this process, in processes of this machine, or on Ray.

Every executor has one method, ``run(request, runs, on_done)`` (:class:`~dratwin.sim.executors.base.Executor`),
and runs each :class:`~dratwin.scenario.model.RunSpec` with the same pure function
(:func:`~dratwin.sim.executors.task.run_one`), so the results do not depend on the executor.
"""

from __future__ import annotations

from typing import Literal

from dratwin.errors import InputError
from dratwin.sim.executors.base import Executor, RunProgress
from dratwin.sim.executors.local import InProcess, Processes, default_jobs
from dratwin.sim.executors.ray_cluster import RayCluster

ExecutorName = Literal["processes", "ray"]
EXECUTORS: tuple[ExecutorName, ...] = ("processes", "ray")


def make_executor(name: ExecutorName, runs: int, *, jobs: int | None = None, address: str | None = None,
                  on_progress: RunProgress | None = None) -> Executor:
    """The executor for ``runs`` runs: ``processes`` runs in this process when one at a time would do."""
    if name == "ray":
        return RayCluster(address, jobs)
    if address is not None:
        raise InputError("--address: the Ray cluster to run on; it goes with --executor ray")
    jobs = jobs if jobs is not None else default_jobs()
    if jobs <= 1 or runs <= 1:
        return InProcess(on_progress)
    return Processes(jobs)


__all__ = ["EXECUTORS", "Executor", "ExecutorName", "InProcess", "Processes", "RayCluster", "default_jobs",
           "make_executor"]

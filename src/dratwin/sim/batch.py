"""Every run of a scenario or sweep (variant x seed), with the executor chosen (:mod:`dratwin.sim.executors`).

A run depends only on its :class:`RunSpec`, so where it runs cannot change its result: the parallel paths
give the same results, in the same order, as the serial one.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.scenario.model import RunSpec
from dratwin.sim.executors import Executor, make_executor
from dratwin.sim.executors.base import BatchProgress, RunProgress
from dratwin.sim.executors.local import default_jobs
from dratwin.sim.executors.task import BatchRequest, RunOutput, run_one

__all__ = ["BatchProgress", "BatchRequest", "RunOutput", "RunProgress", "default_jobs", "run_all", "run_one"]


def run_all(request: BatchRequest, runs: Sequence[RunSpec], jobs: int | None = None,
            on_done: BatchProgress | None = None, on_progress: RunProgress | None = None,
            *, executor: Executor | None = None) -> list[RunOutput]:
    """The output of every run, in the order of ``runs`` (by default in up to ``jobs`` processes of this
    machine). ``on_progress`` is called during a run only when they run in this process."""
    if executor is None:
        executor = make_executor("processes", len(runs), jobs=jobs, on_progress=on_progress)
    return executor.run(request, runs, on_done)

"""Runs on this machine: one after the other in this process, or in parallel worker processes.

Run specifications hold objects that do not pickle cheaply (their source locations read the file lazily), so
a worker process loads the scenario itself, once, and runs the specifications it is handed by index.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache

from dratwin.errors import DratwinError, InputError
from dratwin.scenario.model import RunSpec
from dratwin.sim.executors.base import BatchProgress, RunProgress
from dratwin.sim.executors.task import BatchRequest, RunFailure, RunOutput, run_one, run_or_fail


def default_jobs() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class InProcess:
    """One run after the other in this process; ``on_progress`` follows each run's simulated time."""

    on_progress: RunProgress | None = None

    def run(self, request: BatchRequest, runs: Sequence[RunSpec], on_done: BatchProgress | None) -> list[RunOutput]:
        outputs = []
        for index, spec in enumerate(runs):
            progress = None if self.on_progress is None else _bind(self.on_progress, index)
            outputs.append(run_one(spec, request, progress))
            if on_done is not None:
                on_done(index + 1, len(runs), outputs[-1])
        return outputs


@dataclass(frozen=True)
class Processes:
    """Up to ``jobs`` runs at once, each in a worker process of this machine."""

    jobs: int

    def run(self, request: BatchRequest, runs: Sequence[RunSpec], on_done: BatchProgress | None) -> list[RunOutput]:
        count = len(runs)
        outputs: list[RunOutput | None] = [None] * count
        with ProcessPoolExecutor(max_workers=min(self.jobs, count)) as pool:
            futures = {pool.submit(worker, request, index): index for index in range(count)}
            for done, future in enumerate(as_completed(futures), start=1):
                output = future.result()
                if isinstance(output, RunFailure):
                    for waiting in futures:
                        waiting.cancel()
                    raise InputError(output.message)
                outputs[futures[future]] = output
                if on_done is not None:
                    on_done(done, count, output)
        return [output for output in outputs if output is not None]


def _bind(on_progress: RunProgress, index: int) -> Callable[[float, int], None]:
    return lambda now, events: on_progress(index, now, events)


@cache
def runs_of(request: BatchRequest) -> list[RunSpec]:
    """The runs of the request's file, loaded once per worker process."""
    if request.sweep:
        from dratwin.scenario import sweep

        return sweep.load(request.path, seeds=request.seeds, until_seconds=request.until_seconds)[1]
    from dratwin import scenario

    return scenario.load(request.path, seeds=request.seeds, until_seconds=request.until_seconds)[1]


def worker(request: BatchRequest, index: int) -> RunOutput | RunFailure:
    try:
        spec = runs_of(request)[index]
    except DratwinError as error:  # the file changed since the parent read it
        return RunFailure(str(error))
    return run_or_fail(spec, request)

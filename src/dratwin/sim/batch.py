"""Every run of a scenario (variant x seed), one after the other or in parallel processes.

A run depends only on its :class:`RunSpec`, so where it runs cannot change its result: the parallel path
gives the same results, in the same order, as the serial one. Run specifications hold objects that do not
pickle (their source locations read the file lazily), so a worker process loads the scenario itself, once,
and runs the specifications it is handed by index.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache

from dratwin.catalog import load_catalog
from dratwin.errors import DratwinError, InputError
from dratwin.scenario.model import RunSpec
from dratwin.sim.outcomes import RunResult
from dratwin.sim.run import SimOptions, simulate
from dratwin.sim.timeline import Timeline


@dataclass(frozen=True)
class RunOutput:
    result: RunResult
    timeline: Timeline | None


@dataclass(frozen=True)
class BatchRequest:
    """What a worker needs to rebuild the runs: the scenario file and the overrides it was loaded with."""

    path: str
    seeds: tuple[int, ...] | None
    until_seconds: float | None
    gates: str = ""
    sample_every: float | None = None


# (runs done, runs in all, the output of the one just done, its index)
BatchProgress = Callable[[int, int, RunOutput], None]
RunProgress = Callable[[int, float, int], None]  # (index of the run, simulated time, events so far)


def default_jobs() -> int:
    return os.cpu_count() or 1


def run_all(request: BatchRequest, runs: Sequence[RunSpec], jobs: int,
            on_done: BatchProgress | None = None, on_progress: RunProgress | None = None) -> list[RunOutput]:
    """The output of every run, in the order of ``runs``. ``on_progress`` is called during a run only
    when they run in this process."""
    if jobs <= 1 or len(runs) <= 1:
        outputs = []
        for index, spec in enumerate(runs):
            progress = None if on_progress is None else _bind(on_progress, index)
            outputs.append(run_one(spec, request, progress))
            if on_done is not None:
                on_done(index + 1, len(runs), outputs[-1])
        return outputs
    return _run_parallel(request, len(runs), min(jobs, len(runs)), on_done)


def run_one(spec: RunSpec, request: BatchRequest,
            progress: Callable[[float, int], None] | None = None) -> RunOutput:
    options = SimOptions(gates=request.gates, catalog=load_catalog(), sample_every=request.sample_every,
                         progress=progress)
    simulation = simulate(spec, options)
    return RunOutput(simulation.result, simulation.timeline)


def _bind(on_progress: RunProgress, index: int) -> Callable[[float, int], None]:
    return lambda now, events: on_progress(index, now, events)


def _run_parallel(request: BatchRequest, count: int, jobs: int, on_done: BatchProgress | None) -> list[RunOutput]:
    outputs: list[RunOutput | None] = [None] * count
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_worker, request, index): index for index in range(count)}
        for done, future in enumerate(as_completed(futures), start=1):
            output = future.result()
            outputs[futures[future]] = output
            if on_done is not None:
                on_done(done, count, output)
    return [output for output in outputs if output is not None]


@cache
def _runs_of(request: BatchRequest) -> list[RunSpec]:
    from dratwin import scenario

    return scenario.load(request.path, seeds=request.seeds, until_seconds=request.until_seconds)[1]


def _worker(request: BatchRequest, index: int) -> RunOutput:
    try:
        return run_one(_runs_of(request)[index], request)
    except DratwinError as error:
        # Its message, as a plain InputError: an error class with arguments of its own may not unpickle in
        # the parent, and the pool would then report only that a worker died.
        raise InputError(str(error)) from None

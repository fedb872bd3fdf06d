"""One run as a pure function of its :class:`RunSpec`, and what every executor hands back.

Whichever executor runs it (this process, a worker process, a Ray worker on another machine), a run gets
its specification and the run options and returns its :class:`RunOutput`: nothing else goes in, so the
results are the same. A worker turns the project's errors into a :class:`RunFailure` value holding the
message, which the caller raises as an :class:`~dratwin.errors.InputError`: an error class with arguments
of its own may not unpickle on the other side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dratwin.catalog import load_catalog
from dratwin.errors import DratwinError
from dratwin.scenario.model import RunSpec
from dratwin.sim.outcomes import RunResult
from dratwin.sim.run import SimOptions, simulate
from dratwin.sim.timeline import Timeline


@dataclass(frozen=True)
class RunOutput:
    result: RunResult
    timeline: Timeline | None


@dataclass(frozen=True)
class RunFailure:
    """A run that stopped on bad input, with the message of its error."""

    message: str


@dataclass(frozen=True)
class BatchRequest:
    """What a worker needs to rebuild the runs: the scenario (or sweep) file and the overrides it was loaded
    with, and the run options."""

    path: str
    seeds: tuple[int, ...] | None
    until_seconds: float | None
    gates: str = ""
    sample_every: float | None = None
    sweep: bool = False  # the file is a kind: Sweep


def run_one(spec: RunSpec, request: BatchRequest,
            progress: Callable[[float, int], None] | None = None) -> RunOutput:
    options = SimOptions(gates=request.gates, catalog=load_catalog(), sample_every=request.sample_every,
                         progress=progress)
    simulation = simulate(spec, options)
    return RunOutput(simulation.result, simulation.timeline)


def run_or_fail(spec: RunSpec, request: BatchRequest) -> RunOutput | RunFailure:
    try:
        return run_one(spec, request)
    except DratwinError as error:
        return RunFailure(str(error))

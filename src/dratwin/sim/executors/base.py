"""The one interface every executor has: run these specifications, say when each is done, return them all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from dratwin.scenario.model import RunSpec
from dratwin.sim.executors.task import BatchRequest, RunOutput

# (runs done, runs in all, the output of the one just done)
BatchProgress = Callable[[int, int, RunOutput], None]
RunProgress = Callable[[int, float, int], None]  # (index of the run, simulated time, events so far)


class Executor(Protocol):
    def run(self, request: BatchRequest, runs: Sequence[RunSpec], on_done: BatchProgress | None) -> list[RunOutput]:
        """The output of every run, in the order of ``runs``; ``on_done`` is called as each completes.
        Bad input in a run raises :class:`~dratwin.errors.InputError` with its message."""
        ...

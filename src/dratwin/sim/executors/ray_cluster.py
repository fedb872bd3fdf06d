"""Runs as Ray tasks: on a Ray started here, or on an existing Ray cluster (``pip install 'dratwin[ray]'``).

Ray's workers may be other machines that do not have the scenario's files, so each task is handed its whole
:class:`RunSpec` (its objects' source lines read first: they then pickle) and the run options, and returns
the run's output; a task's bad input comes back as a value with its message. The cluster's nodes need
dratwin itself, of the same version: a task answers with the version it ran, and another version is refused
(its results could differ).

``address`` is Ray's: ``None`` connects to the cluster ``RAY_ADDRESS`` names or the latest one started on this
machine, else starts a Ray here; ``auto`` connects to an existing one only; ``local`` always starts one here;
``ray://HOST:10001`` is a remote cluster's Ray Client server.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from dratwin import __version__
from dratwin.errors import InputError
from dratwin.scenario.model import RunSpec
from dratwin.sim.executors.base import BatchProgress
from dratwin.sim.executors.task import BatchRequest, RunFailure, RunOutput, run_or_fail

INSTALL_HINT = "pip install 'dratwin[ray]'"
STARTS_HERE = (None, "local")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise InputError(f"--executor ray: Ray is not installed; {INSTALL_HINT} (or run in processes on this "
                         "machine: --executor processes)") from None
    module: ModuleType = ray  # untyped where Ray is not installed
    return module


@dataclass(frozen=True)
class RayCluster:
    """Every run as one Ray task of one CPU; ``cpus`` sizes a Ray started here (None: every CPU)."""

    address: str | None = None
    cpus: int | None = None

    def run(self, request: BatchRequest, runs: Sequence[RunSpec], on_done: BatchProgress | None) -> list[RunOutput]:
        ray = import_ray()
        connected_here = not ray.is_initialized()
        if connected_here:
            self._connect(ray)
        try:
            return _gather(ray, request, runs, on_done)
        finally:
            if connected_here:
                ray.shutdown()

    def _connect(self, ray: ModuleType) -> None:
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address in STARTS_HERE:
            options.update(include_dashboard=False, num_cpus=self.cpus)
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, ValueError, RuntimeError, TimeoutError) as error:
            where = self.address or "the Ray of RAY_ADDRESS or of this machine"
            raise InputError(f"--address {where}: cannot connect to Ray: {_gist(error)}; give a Ray Client "
                             "address such as ray://HOST:10001, or auto for the cluster `ray start` runs on this "
                             "machine") from None


def portable(spec: RunSpec) -> RunSpec:
    """``spec`` with every object's source lines read (their lazy reader does not pickle)."""
    for obj in spec.objects:
        obj.line_of(())
    for arrival in spec.arrivals:
        for obj in arrival.objects:
            obj.line_of(())
    return spec


def ray_task(spec: RunSpec, request: BatchRequest) -> tuple[str, RunOutput | RunFailure]:
    """What a Ray worker runs: the run, and the dratwin version that ran it."""
    return __version__, run_or_fail(spec, request)


def _gather(ray: ModuleType, request: BatchRequest, runs: Sequence[RunSpec],
            on_done: BatchProgress | None) -> list[RunOutput]:
    remote = ray.remote(num_cpus=1)(ray_task)
    shared = ray.put(request)
    index = {remote.remote(portable(spec), shared): number for number, spec in enumerate(runs)}
    outputs: list[RunOutput | None] = [None] * len(runs)
    pending = list(index)
    done = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            try:
                version, output = ray.get(ref)
            except ray.exceptions.RayError as error:
                _cancel(ray, pending)
                raise InputError(f"run {_name(runs[index[ref]])} failed on the Ray cluster: {_gist(error)}; "
                                 f"its nodes need dratwin {__version__} and its dependencies installed") from None
            if version != __version__:
                _cancel(ray, pending)
                raise InputError(f"the Ray cluster runs dratwin {version}, this is dratwin {__version__}: install "
                                 f"dratwin {__version__} on its nodes (results of other versions may differ)")
            if isinstance(output, RunFailure):
                _cancel(ray, pending)
                raise InputError(output.message)
            outputs[index[ref]] = output
            done += 1
            if on_done is not None:
                on_done(done, len(runs), output)
    return [output for output in outputs if output is not None]


def _cancel(ray: ModuleType, pending: Sequence[Any]) -> None:
    for ref in pending:
        ray.cancel(ref)


def _name(spec: RunSpec) -> str:
    return f"{spec.variant}, seed {spec.seed}"


def _gist(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__

"""The Ray executor on a local Ray (two CPUs, started once for the module): the same results as the runs in this
process, and a run's bad input back as an InputError. Skipped only where Ray is not installed (`.ci/run`
installs the extra, so CI runs it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import pytest
from tests.builders.scenarios import write
from tests.builders.simulate_cli import small_scenario
from tests.builders.sweeps import tiny_sweep

from dratwin.errors import InputError
from dratwin.scenario import sweep
from dratwin.sim.batch import BatchRequest, RunOutput, run_all
from dratwin.sim.executors import InProcess, RayCluster

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow  # starting Ray takes seconds


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[BatchRequest, list[Any]]:
    path = write(tmp_path, tiny_sweep(small_scenario(tmp_path), seeds="[7, 8]"), "sweep.yaml")
    runs = sweep.load(path, until_seconds=3600.0)[1]
    return BatchRequest(path, None, 3600.0, sample_every=300.0, sweep=True), runs


def _encoded(outputs: list[RunOutput]) -> list[bytes]:
    return [msgspec.json.encode([o.result, o.timeline]) for o in outputs]


def test_ray_gives_the_results_of_one_process(local_ray: None, tiny: tuple[BatchRequest, list[Any]]) -> None:
    request, runs = tiny
    done: list[tuple[int, int]] = []
    on_ray = run_all(request, runs, executor=RayCluster(), on_done=lambda n, total, _: done.append((n, total)))
    here = run_all(request, runs, executor=InProcess())
    assert len(runs) == 8 and [o.result.variant for o in on_ray] == [r.variant for r in runs]
    assert _encoded(on_ray) == _encoded(here)
    assert done == [(n, 8) for n in range(1, 9)]  # progress as each run completes


def test_a_runs_bad_input_comes_back_as_an_input_error(local_ray: None, tiny: tuple[BatchRequest, list[Any]]) -> None:
    request, runs = tiny
    with pytest.raises(InputError) as raised:
        run_all(replace(request, gates="NoSuchGate=true"), runs[:2], executor=RayCluster())
    assert type(raised.value) is InputError
    assert "unknown feature gate 'NoSuchGate'" in str(raised.value)

"""Runs of a scenario in worker processes: what a worker's error becomes in the parent."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from dratwin.autoscaling.behavior import AutoscalerSettingsError
from dratwin.errors import InputError
from dratwin.scenario import ScenarioError
from dratwin.sim.executors import local, task


def test_an_error_in_a_run_comes_back_as_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    # AutoscalerSettingsError takes arguments of its own and does not unpickle: raised as it is, the
    # process pool would report only "a process in the process pool was terminated abruptly".
    def refuse(*args: object) -> object:
        raise AutoscalerSettingsError("autoscaler.settings.tolerance", "must be at least 0", "write 0.1")

    monkeypatch.setattr(local, "runs_of", lambda request: [None])
    monkeypatch.setattr(task, "run_one", refuse)
    failure = local.worker(None, 0)  # type: ignore[arg-type]
    assert isinstance(failure, task.RunFailure)
    assert "autoscaler.settings.tolerance" in failure.message
    assert pickle.loads(pickle.dumps(failure)) == failure


def test_a_file_that_no_longer_reads_in_a_worker_comes_back_as_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(request: object) -> object:
        raise ScenarioError([])

    monkeypatch.setattr(local, "runs_of", unreadable)
    failure = local.worker(None, 0)  # type: ignore[arg-type]
    assert isinstance(failure, task.RunFailure)
    assert "0 errors in the scenario" in failure.message


def test_the_parent_raises_a_failure_as_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "ProcessPoolExecutor", ThreadPoolExecutor)  # the same pool interface, without pickling
    monkeypatch.setattr(local, "worker", lambda request, index: task.RunFailure(f"run {index}: bad"))
    with pytest.raises(InputError) as raised:
        local.Processes(2).run(None, [None, None], None)  # type: ignore[arg-type, list-item]
    assert type(raised.value) is InputError
    assert str(raised.value) in ("run 0: bad", "run 1: bad")

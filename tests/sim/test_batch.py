"""Runs of a scenario in worker processes: what a worker's error becomes in the parent."""

from __future__ import annotations

import pickle

import pytest

from dratwin.autoscaling.behavior import AutoscalerSettingsError
from dratwin.errors import InputError
from dratwin.sim import batch


def test_an_error_in_a_worker_reaches_the_parent_as_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    # AutoscalerSettingsError takes arguments of its own and does not unpickle: raised as it is, the
    # process pool would report only "a process in the process pool was terminated abruptly".
    def refuse(*args: object) -> object:
        raise AutoscalerSettingsError("autoscaler.settings.tolerance", "must be at least 0", "write 0.1")

    monkeypatch.setattr(batch, "_runs_of", lambda request: [None])
    monkeypatch.setattr(batch, "run_one", refuse)
    with pytest.raises(InputError) as raised:
        batch._worker(None, 0)  # type: ignore[arg-type]
    assert type(raised.value) is InputError
    assert "autoscaler.settings.tolerance" in str(raised.value)
    assert str(pickle.loads(pickle.dumps(raised.value))) == str(raised.value)

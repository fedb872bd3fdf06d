"""The services' outcomes of small seeded runs are exactly those recorded in tests/golden/simulate/services/.

The files were written by the services controller and serving model as they were before their hot path was
reworked for speed (the faster path must not change a number); they were read when written. When an outcome
changes on purpose, regenerate them and review the diff::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/sim/test_service_outcomes_pinned.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.builders.service_runs import CASES, pinned

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "simulate" / "services"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("case", sorted(CASES))
def test_service_outcomes_are_the_recorded_ones(case: str) -> None:
    got = pinned(CASES[case]())
    path = GOLDEN / f"{case}.json"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert got == expected


def test_the_load_read_at_the_last_sync_is_what_that_sync_recorded() -> None:
    sim = CASES["bench-shape"]()
    assert sim.services is not None
    until = sim.result.until_seconds
    recorded = [s for s in sim.result.services[0].utilization if s.at_seconds == until]
    snapshot = sim.services.load_at(until)
    assert len(recorded) == len(snapshot.replicas) > 10
    for sample in recorded:
        load = snapshot.replica(sample.pod)
        assert (load.dcgm_gpu_util, load.dcgm_sm_active, load.dcgm_fb_used_mib) == (
            sample.gpu_util, sample.sm_active, sample.fb_used_mib)
    assert {d.device for d in snapshot.devices} == {s.device for s in recorded}

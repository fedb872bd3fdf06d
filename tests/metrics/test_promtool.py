"""The OpenMetrics file through Prometheus' own backfill: ``promtool tsdb create-blocks-from openmetrics``.

Runs where promtool is on PATH or ``DRATWIN_PROMTOOL`` names it (``make promtool`` builds it into
``build/promtool/``; ``.ci/run`` does and sets the variable).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.builders.metrics import START, busy_fleet
from tests.builders.sim import simulated_metrics

from dratwin.metrics import write_openmetrics

PROMTOOL = os.environ.get("DRATWIN_PROMTOOL") or shutil.which("promtool")

pytestmark = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not on PATH and DRATWIN_PROMTOOL is not set: the backfill check needs it"
)

_DUMPED = re.compile(r"^\{(?P<labels>.*)\} (?P<value>\S+) (?P<ms>\d+)$")


def run(*args: str) -> str:
    assert PROMTOOL is not None
    done = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def test_promtool_backfills_every_sample_of_two_variants(tmp_path: Path) -> None:
    source = tmp_path / "metrics.om"
    models = [busy_fleet(steps=30, variant="device-plugin"), busy_fleet(steps=30, variant="dra")]
    written = write_openmetrics(models, source)
    blocks = tmp_path / "blocks"
    run("tsdb", "create-blocks-from", "openmetrics", str(source), str(blocks))
    (blocks / "wal").mkdir()  # dump opens the folder as a database, which needs a (here empty) WAL
    dumped = run("tsdb", "dump", str(blocks)).splitlines()
    samples = [m for m in map(_DUMPED.match, dumped) if m]
    assert len(samples) == written
    times = {int(m["ms"]) for m in samples}
    assert min(times) == START * 1000
    assert max(times) == (START + 29 * 60) * 1000
    names = {re.search(r'__name__="([^"]+)"', m["labels"]).group(1) for m in samples}  # type: ignore[union-attr]
    assert "dratwin_cost_dollars_total" in names
    assert "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" in names


def test_promtool_backfills_a_simulated_runs_dcgm_fields(tmp_path: Path) -> None:
    source = tmp_path / "sim.om"
    written = write_openmetrics(simulated_metrics(), source)
    blocks = tmp_path / "blocks"
    run("tsdb", "create-blocks-from", "openmetrics", str(source), str(blocks))
    (blocks / "wal").mkdir()
    dumped = run("tsdb", "dump", str(blocks)).splitlines()
    samples = [m for m in map(_DUMPED.match, dumped) if m]
    assert len(samples) == written
    util = {m["value"] for m in samples if 'DCGM_FI_DEV_GPU_UTIL' in m["labels"] and 'pod="svc-' in m["labels"]}
    assert util == {"50"}  # the half-busy replica, at every sample it was Ready

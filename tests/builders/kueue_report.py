"""A report of a run with Kueue: examples/simulate/kueue-teams.yaml for its first hours, two variants (the
scenario's own and one with the second seed) so that the comparison has the queue bars of both."""

from __future__ import annotations

import dataclasses
from functools import cache

from tests.conftest import EXAMPLES

from dratwin.report import ReportData
from dratwin.scenario.document import load
from dratwin.sim.batch import RunOutput
from dratwin.sim.exports import report_data
from dratwin.sim.run import SimOptions, simulate

TEAMS = str(EXAMPLES / "simulate" / "kueue-teams.yaml")


@cache
def kueue_outputs(hours: float = 6.0) -> tuple[RunOutput, ...]:
    _, runs = load(TEAMS, until_seconds=hours * 3600)
    specs = [runs[0], dataclasses.replace(runs[0], variant="seed-2", seed=2)]
    outputs = []
    for spec in specs:
        sim = simulate(spec, SimOptions(sample_every=300.0))
        outputs.append(RunOutput(sim.result, sim.timeline))
    return tuple(outputs)


def kueue_report(hours: float = 6.0) -> ReportData:
    return report_data("kueue-teams", kueue_outputs(hours))

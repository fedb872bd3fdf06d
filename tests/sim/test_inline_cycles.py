"""Scheduling cycles run inline (one engine action for the cycles due one after another at one instant, a
certain failure taken from its shape's stamped verdict) give the run the reference gives, event for event:
the same result, the same log of changes and FailedScheduling messages, the same objects at the end, and the
after-each hooks run as often, in the same states."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from tests.builders.sim import simulate_text
from tests.sim.test_runs import random_scenario

from dratwin.benchmarks.simulate_bench import month_spec
from dratwin.catalog import load_catalog
from dratwin.scheduler.scheduler import Scheduler
from dratwin.sim.engine import Engine
from dratwin.sim.run import SimOptions, Simulation, simulate


def outputs(sim: Simulation) -> tuple[Any, ...]:
    state = sim.store.state
    log = [(c.time, c.seq, c.type, c.kind, c.key, c.message) for c in sim.events]
    objects = ({k: r.raw for k, r in state.pods.items()}, {k: r.raw for k, r in state.claims.items()})
    return dataclasses.asdict(sim.result), log, objects, sim.invariant_checks


class Counted:
    """How often the engine ran a cycle inline and how often a retry took a stamped verdict."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inline = self.known = 0
        continue_inline, known_failure = Engine.continue_inline, Scheduler.known_failure

        def counted_inline(engine: Engine, *args: Any) -> bool:
            ran = continue_inline(engine, *args)
            self.inline += ran
            return ran

        def counted_known(scheduler: Scheduler, *args: Any) -> Any:
            attempt = known_failure(scheduler, *args)
            self.known += attempt is not None
            return attempt

        monkeypatch.setattr(Engine, "continue_inline", counted_inline)
        monkeypatch.setattr(Scheduler, "known_failure", counted_known)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_random_scenario_with_gangs_and_shared_claims_runs_the_same_inline(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = random_scenario(seed, jobs=40)
    reference = simulate_text(text, until="3h", seed=seed, inline_cycles=False)
    counted = Counted(monkeypatch)
    inline = simulate_text(text, until="3h", seed=seed)
    assert counted.inline > 0 and counted.known > 0, "the scenario has cycles due together and certain failures"
    assert outputs(inline) == outputs(reference)


def test_the_backlog_of_the_month_shape_runs_the_same_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = month_spec(seed=3, nodes=10, pods=150, until=2 * 86400.0)
    catalog = load_catalog()
    reference = simulate(spec, SimOptions(catalog=catalog, keep_events=True, inline_cycles=False))
    counted = Counted(monkeypatch)
    inline = simulate(spec, SimOptions(catalog=catalog, keep_events=True))
    assert counted.known > reference.result.pods_started, "most attempts are retries of waiting pods"
    assert outputs(inline) == outputs(reference)

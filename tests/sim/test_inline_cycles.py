"""Scheduling cycles run inline (one engine action for the cycles due one after another at one instant, a
certain failure taken from its shape's stamped verdict, a certain failure that writes nothing new done with
only its counts and its pool entry) give the run the reference gives, event for event: the same result, the
same log of changes and FailedScheduling messages, the same objects at the end, the same queue (each pod's
attempts and times, the pool's order), and the after-each hooks run as often, in the same states."""

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
from dratwin.sim.scheduling import SchedulingController


def outputs(sim: Simulation) -> tuple[Any, ...]:
    state = sim.store.state
    log = [(c.time, c.seq, c.type, c.kind, c.key, c.message) for c in sim.events]
    objects = ({k: r.raw for k, r in state.pods.items()}, {k: r.raw for k, r in state.claims.items()})
    timeline = dataclasses.asdict(sim.timeline) if sim.timeline is not None else None
    return dataclasses.asdict(sim.result), log, objects, sim.invariant_checks, timeline, QUEUES.pop()


# The scheduling controller of each run, read at its end (the Simulation does not hold it).
QUEUES: list[tuple[Any, ...]] = []


def queue_of(controller: SchedulingController, told: list[tuple[float, str]]) -> tuple[Any, ...]:
    queue = controller.queue
    pods = {k: (q.attempts, q.last_attempt, q.unschedulable_since) for k, q in queue.pods.items()}
    return (controller.attempts, pods, list(queue.unschedulable), sorted(queue._in_active),
            sorted(queue._in_backoff), dict(controller.messages), told)


@pytest.fixture(autouse=True)
def _keep_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's queue as it ends, and every failure its unschedulable hooks (the provisioner's trigger)
    were told of, when: the engine's run is wrapped to read the controller it drove."""
    controllers: list[tuple[SchedulingController, list[tuple[float, str]]]] = []
    init, run = SchedulingController.__post_init__, Engine.run

    def remembered(controller: SchedulingController) -> None:
        init(controller)
        told: list[tuple[float, str]] = []
        controller.on_unschedulable.append(lambda key: told.append((controller.engine.now(), key)))
        controllers.append((controller, told))

    def run_then_read(engine: Engine, *args: Any, **kwargs: Any) -> None:
        run(engine, *args, **kwargs)
        QUEUES.append(queue_of(*controllers[-1]))

    monkeypatch.setattr(SchedulingController, "__post_init__", remembered)
    monkeypatch.setattr(Engine, "run", run_then_read)


class Counted:
    """How often the engine ran a cycle inline, how often a retry took a stamped verdict, how many certain
    failures were done quietly (their counts and pool entries only), and how many of those followed another
    in the same action (``Engine.ran_inline``), and how many of those were settled pods (one look-up each)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inline = self.known = self.quiet = self.followed = self.settled = 0
        continue_inline, ran_inline = Engine.continue_inline, Engine.ran_inline
        leading = Scheduler.leading_certain_failures  # certain_failure's too
        fail_quietly = SchedulingController._fail_quietly
        settled_count = SchedulingController._settled_count

        def counted_inline(engine: Engine, *args: Any) -> bool:
            ran = continue_inline(engine, *args)
            self.inline += ran
            return ran

        def counted_steps(engine: Engine, count: int) -> None:
            ran_inline(engine, count)
            self.followed += count

        def counted_leading(scheduler: Scheduler, pods: Any) -> Any:
            failures = leading(scheduler, pods)
            self.known += len(failures)
            return failures

        def counted_quiet(controller: SchedulingController, key: str) -> bool:
            before = controller.attempts
            done = fail_quietly(controller, key)
            self.quiet += controller.attempts - before
            return done

        def counted_settled(controller: SchedulingController, keys: list[str]) -> int:
            count = settled_count(controller, keys)
            self.settled += count
            return count

        monkeypatch.setattr(Engine, "continue_inline", counted_inline)
        monkeypatch.setattr(SchedulingController, "_settled_count", counted_settled)
        monkeypatch.setattr(Engine, "ran_inline", counted_steps)
        monkeypatch.setattr(Scheduler, "leading_certain_failures", counted_leading)
        monkeypatch.setattr(SchedulingController, "_fail_quietly", counted_quiet)


# Three hours of 40 Jobs, and six hours of 60: over the longer runs gangs take their members out of activeQ and
# put them back, and pods back off again while their old places are still in the heaps; each must come back
# at its new place in both runs.
@pytest.mark.parametrize(("seed", "jobs", "until"),
                         [(seed, 40, "3h") for seed in range(1, 6)] + [(seed, 60, "6h") for seed in range(6, 16)])
def test_a_random_scenario_with_gangs_and_shared_claims_runs_the_same_inline(
        seed: int, jobs: int, until: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = random_scenario(seed, jobs=jobs)
    reference = simulate_text(text, until=until, seed=seed, inline_cycles=False)
    counted = Counted(monkeypatch)
    inline = simulate_text(text, until=until, seed=seed)
    assert counted.inline > 0 and counted.known > 0, "the scenario has cycles due together and certain failures"
    assert counted.quiet > 0, "some certain failures write nothing new"
    assert counted.settled > 0, "some of them are of settled pods"
    assert outputs(inline) == outputs(reference)


def test_the_backlog_of_the_month_shape_runs_the_same_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = month_spec(seed=3, nodes=10, pods=150, until=2 * 86400.0)
    catalog = load_catalog()
    options = SimOptions(catalog=catalog, keep_events=True, check_invariants=True, sample_every=600.0)
    reference = simulate(spec, dataclasses.replace(options, inline_cycles=False))
    counted = Counted(monkeypatch)
    inline = simulate(spec, options)
    assert counted.known > reference.result.pods_started, "most attempts are retries of waiting pods"
    assert counted.quiet > counted.known / 2, "most of them write nothing new"
    assert counted.followed > counted.quiet / 2, "most of those follow another in one loop"
    assert counted.settled > counted.quiet / 2, "most of them are of settled pods"
    assert outputs(inline) == outputs(reference)


"""The engine's inline steps: an action that does the work of several in a row counts each as run, with the
after-each hooks between them, only while nothing in the heap sorts before the next."""

from __future__ import annotations

from dratwin.sim.engine import BOOKKEEPING, CONTROLLER, SCHEDULER, Engine


def engine_with_hook() -> tuple[Engine, list[float]]:
    engine = Engine()
    hooked: list[float] = []
    engine.after_each.append(lambda: hooked.append(engine.now()))
    return engine, hooked


def test_work_in_a_row_counts_each_step_as_an_action_with_its_hooks() -> None:
    engine, hooked = engine_with_hook()
    steps: list[bool] = []
    engine.at(5.0, SCHEDULER, lambda: steps.extend(engine.inline_next(SCHEDULER) for _ in range(3)))
    engine.at(9.0, BOOKKEEPING, lambda: None)
    engine.run(10.0)
    assert steps == [True, True, True]
    assert engine.processed == 2 + 3
    assert hooked == [5.0] * 4 + [9.0]  # each step's hooks, then the action's own, then the later action's


def test_a_step_does_not_run_inline_past_an_action_that_sorts_before_it() -> None:
    engine, hooked = engine_with_hook()
    steps: list[bool] = []

    def sweep() -> None:
        steps.append(engine.inline_next(SCHEDULER))
        engine.at(engine.now(), CONTROLLER, lambda: None)  # due now, before any scheduler step
        steps.append(engine.inline_next(SCHEDULER))
        steps.append(engine.inline_next(SCHEDULER))

    engine.at(5.0, SCHEDULER, sweep)
    engine.run(10.0)
    assert steps == [True, False, False]
    assert engine.processed == 2 + 1
    assert hooked == [5.0] * 3  # the first step's, the sweep's own, the controller's: none for a refused step


def test_a_step_runs_inline_before_later_work_of_its_own_instant() -> None:
    engine, _ = engine_with_hook()
    steps: list[bool] = []

    def sweep() -> None:
        engine.at(engine.now(), BOOKKEEPING, lambda: None)  # due now, but after the scheduler
        engine.at(engine.now() + 1.0, CONTROLLER, lambda: None)
        steps.append(engine.inline_next(SCHEDULER))

    engine.at(5.0, SCHEDULER, sweep)
    engine.run(10.0)
    assert steps == [True]
    assert engine.processed == 3 + 1

"""The engine's inline steps: an action that does the work of several in a row counts each as run, with its
after-each hooks, and asks first whether anything in the heap sorts before the next."""

from __future__ import annotations

from dratwin.sim.engine import BOOKKEEPING, CONTROLLER, SCHEDULER, WORLD, Engine


def engine_with_hook() -> tuple[Engine, list[float]]:
    engine = Engine()
    hooked: list[float] = []
    engine.after_each.append(lambda: hooked.append(engine.now()))
    return engine, hooked


def test_work_in_a_row_counts_each_step_as_an_action_with_its_hooks() -> None:
    engine, hooked = engine_with_hook()
    engine.at(5.0, SCHEDULER, lambda: engine.ran_inline(3))
    engine.at(9.0, BOOKKEEPING, lambda: None)
    engine.run(10.0)
    assert engine.processed == 2 + 3
    assert hooked == [5.0] * 4 + [9.0]  # each step's hooks, then the action's own, then the later action's


def test_an_action_due_now_before_the_next_step_is_seen() -> None:
    engine, _ = engine_with_hook()
    seen: list[bool] = []

    def sweep() -> None:
        seen.append(engine.due_before(SCHEDULER))
        engine.at(engine.now(), CONTROLLER, lambda: None)  # due now, before any scheduler step
        seen.append(engine.due_before(SCHEDULER))
        seen.append(engine.due_before(WORLD))  # it sorts after a step of the world's

    engine.at(5.0, SCHEDULER, sweep)
    engine.run(10.0)
    assert seen == [False, True, False]
    assert engine.processed == 2


def test_later_work_of_its_own_instant_and_later_instants_are_not_due_before() -> None:
    engine, _ = engine_with_hook()
    seen: list[bool] = []

    def sweep() -> None:
        engine.at(engine.now(), BOOKKEEPING, lambda: None)  # due now, but after the scheduler
        engine.at(engine.now() + 1.0, CONTROLLER, lambda: None)
        seen.append(engine.due_before(SCHEDULER))
        engine.ran_inline(1)

    engine.at(5.0, SCHEDULER, sweep)
    engine.run(10.0)
    assert seen == [False]
    assert engine.processed == 3 + 1

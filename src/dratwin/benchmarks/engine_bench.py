"""The simulation's event loop against simpy: time per event for the same timer workload.

Workload: 1,000 independent timers, each rescheduling itself after a pseudo-random delay (a fixed
sequence, so both loops see the same times) until 200,000 events have run. The dratwin engine runs
callbacks from its (time, priority, sequence) heap; simpy runs generator processes that yield
``env.timeout``, its own idiom for the same thing. simpy is optional: without it only the engine's
figure is reported (``pip install simpy`` to compare).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Generator
from types import ModuleType
from typing import Any

from dratwin.benchmarks import BenchResult
from dratwin.sim.engine import CONTROLLER, Engine

TIMERS = 1_000
EVENTS = 200_000
REPEATS = 5


def _delays(count: int) -> list[float]:
    value, delays = 12345, []
    for _ in range(count):
        value = (value * 1103515245 + 12345) % 2**31
        delays.append(1.0 + value % 1000 / 10.0)
    return delays


DELAYS = _delays(4096)


def run_engine(events: int = EVENTS) -> int:
    engine = Engine()
    count = [0]

    def fire() -> None:  # one timer's tick: count it, set the timer again
        count[0] += 1
        if count[0] < events:
            engine.after(DELAYS[count[0] % len(DELAYS)], CONTROLLER, fire)

    for index in range(TIMERS):
        engine.after(DELAYS[index % len(DELAYS)], CONTROLLER, fire)
    engine.run(float("inf"))
    return engine.processed


def run_simpy(events: int = EVENTS) -> int:
    import simpy

    env = simpy.Environment()
    count = [0]

    def timer(index: int) -> Generator[Any, Any, None]:
        yield env.timeout(DELAYS[index % len(DELAYS)])
        while True:
            count[0] += 1
            if count[0] >= events:
                return
            yield env.timeout(DELAYS[count[0] % len(DELAYS)])

    for index in range(TIMERS):
        env.process(timer(index))
    env.run()
    return count[0]


def _us_per_event(loop: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    events = loop()
    return (time.perf_counter() - started) / max(events, 1) * 1e6, events


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def run() -> list[BenchResult]:
    simpy: ModuleType | None
    try:
        simpy = importlib.import_module("simpy")
    except ImportError:
        simpy = None
    # The two loops run in turn, so that a busy machine slows both alike.
    engine_figures, simpy_figures, events = [], [], 0
    for _ in range(REPEATS):
        figure, events = _us_per_event(run_engine)
        engine_figures.append(figure)
        if simpy is not None:
            simpy_figures.append(_us_per_event(run_simpy)[0])
    engine_us = _median(engine_figures)
    results = [BenchResult("engine.heapq_us_per_event", engine_us, "µs",
                           detail=f"{events} events of {TIMERS} timers, median of {REPEATS} runs "
                                  f"(fastest {min(engine_figures):.2f})")]
    if simpy is None:
        return [*results, BenchResult("engine.simpy_us_per_event", float("nan"), "µs",
                                      detail="simpy is not installed (pip install simpy)")]
    simpy_us = _median(simpy_figures)
    results.append(BenchResult("engine.simpy_us_per_event", simpy_us, "µs",
                               detail=f"simpy {simpy.__version__}, the same events, median of {REPEATS} runs "
                                      f"(fastest {min(simpy_figures):.2f})"))
    results.append(BenchResult("engine.simpy_over_heapq", simpy_us / engine_us, "x",
                               detail="how many times slower simpy is per event (medians)"))
    return results

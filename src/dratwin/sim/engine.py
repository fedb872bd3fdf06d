"""The event loop: a heap of actions ordered by (time, priority, sequence), as simpy orders its events.

Equal times run by priority (lower first), then in the order they were scheduled, so a run is a pure
function of its inputs and seed. After every action the engine runs its ``after_each`` hooks (the store
dispatches the changes the action made; tests add the invariant checks). The heap was chosen over simpy
by measurement (``dratwin bench engine``, bench/RESULTS.md).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from dratwin.sim.clock import Clock, VirtualClock

Action = Callable[[], None]

# Priorities of the work due at one moment: the world changes first (arrivals, pods finishing, nodes
# becoming ready), then controllers react, then the scheduler runs one cycle per pod, bookkeeping last.
WORLD = 0
CONTROLLER = 1
SCHEDULER = 2
BOOKKEEPING = 3


@dataclass
class Engine:
    clock: Clock = field(default_factory=VirtualClock)
    after_each: list[Action] = field(default_factory=list)
    processed: int = 0
    _heap: list[tuple[float, int, int, Action]] = field(default_factory=list)
    _sequence: itertools.count[int] = field(default_factory=itertools.count)

    def now(self) -> float:
        return self.clock.now()

    def at(self, when: float, priority: int, action: Action) -> None:
        """Run ``action`` at ``when`` (not before now)."""
        now = self.clock.now()
        heapq.heappush(self._heap, (when if when > now else now, priority, next(self._sequence), action))

    def after(self, delay: float, priority: int, action: Action) -> None:
        now = self.clock.now()
        heapq.heappush(self._heap, (now + delay if delay > 0 else now, priority, next(self._sequence), action))

    def pending(self) -> int:
        return len(self._heap)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run(self, until: float, progress: Callable[[float, int], None] | None = None,
            progress_every: int = 4096) -> None:
        """Process every action due up to and including ``until``; the clock ends at ``until``."""
        heap, hooks = self._heap, self.after_each
        pop, advance = heapq.heappop, self.clock.advance_to
        processed = self.processed
        while heap and heap[0][0] <= until:
            when, _, _, action = pop(heap)
            advance(when)
            action()
            for hook in hooks:
                hook()
            processed += 1
            if progress is not None and processed % progress_every == 0:
                self.processed = processed
                progress(when, processed)
        self.processed = processed
        if self.clock.now() < until:
            advance(until)

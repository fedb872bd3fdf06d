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
Slot = tuple[float, int, int]  # where an action sorts: (time, priority, sequence)

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
    _inline: int = 0  # actions run inline by the action in flight (``continue_inline``)
    _hooks_ran: bool = False  # the action in flight ran its after-each hooks already

    def now(self) -> float:
        return self.clock.now()

    def at(self, when: float, priority: int, action: Action) -> None:
        """Run ``action`` at ``when`` (not before now)."""
        now = self.clock.now()
        heapq.heappush(self._heap, (when if when > now else now, priority, next(self._sequence), action))

    def after(self, delay: float, priority: int, action: Action) -> None:
        now = self.clock.now()
        heapq.heappush(self._heap, (now + delay if delay > 0 else now, priority, next(self._sequence), action))

    def reserve(self, when: float, priority: int) -> Slot:
        """The place in the order an action scheduled now with ``at`` would take, without the action yet:
        ``fill`` it, or run it inline with ``continue_inline``. Either way the sequence moves on as ``at``
        moves it, so the order of every other action is the same."""
        now = self.clock.now()
        return (when if when > now else now, priority, next(self._sequence))

    def fill(self, slot: Slot, action: Action) -> None:
        heapq.heappush(self._heap, (*slot, action))

    def continue_inline(self, slot: Slot, action: Action) -> bool:
        """Called by the action in flight when its work is done and its follow-up ``action`` is reserved at
        ``slot``: the after-each hooks run now (as they would after it); if the follow-up is then the next
        action due, it counts as run and the caller does its work at once (True), without a trip through
        the heap; otherwise it is put in its slot (False). The run is the same action for action."""
        for hook in self.after_each:
            hook()
        heap = self._heap
        if slot[0] <= self.clock.now() and (not heap or heap[0][:3] > slot):
            self._inline += 1
            self._hooks_ran = False
            return True
        heapq.heappush(heap, (*slot, action))
        self._hooks_ran = True
        return False

    def due_before(self, priority: int) -> bool:
        """Whether an action in the heap sorts before one reserved now at ``priority``: what would run first."""
        heap = self._heap
        return bool(heap) and heap[0][:2] <= (self.clock.now(), priority)

    def ran_inline(self, count: int) -> None:
        """For an action in flight that did the work of ``count`` more actions in a row at one instant, each
        of which would have run inline (``continue_inline``: the caller checked ``due_before`` first): their
        after-each hooks run, once per action, and they count as run. The caller vouches that the work
        schedules nothing due before it and writes nothing the hooks would hand on, so that the hooks see what
        they would have seen between the actions and the check before the work holds for each of them."""
        hooks = self.after_each
        for _ in range(count):
            for hook in hooks:
                hook()
        self._inline += count

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
        report_at = (processed // progress_every + 1) * progress_every
        while heap and heap[0][0] <= until:
            when, _, _, action = pop(heap)
            advance(when)
            action()
            if self._hooks_ran:
                self._hooks_ran = False
            else:
                for hook in hooks:
                    hook()
            processed += 1
            if self._inline:
                processed += self._inline
                self._inline = 0
            if progress is not None and processed >= report_at:
                report_at = (processed // progress_every + 1) * progress_every
                self.processed = processed
                progress(when, processed)
        self.processed = processed
        if self.clock.now() < until:
            advance(until)

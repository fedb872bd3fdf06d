"""What time it is for the control plane: virtual for ``simulate``, the same interface in real time later.

Only this module decides how time passes; every component reads ``clock.now()``. The engine asks the
clock to reach the time of the next event: a virtual clock jumps there, a real-time clock would sleep.
"""

from __future__ import annotations

from typing import Protocol


class TimeWentBackError(RuntimeError):
    """An event was due before the current time: a bug in whoever scheduled it."""


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the start of the run."""
        ...

    def advance_to(self, when: float) -> None:
        """Let time pass until ``when`` (never backwards)."""
        ...


class VirtualClock:
    """Simulated time: ``advance_to`` jumps, so a week passes as fast as its events can be processed."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, when: float) -> None:
        if when < self._now:
            raise TimeWentBackError(f"time would go back from {self._now} s to {when} s")
        self._now = when

"""kube-scheduler's scheduling queue: activeQ, backoffQ and the unschedulable pool, over a clock.

- A new pod goes to activeQ, ordered by priority (higher first), then by when it was queued.
- A pod that fails a cycle goes to the unschedulable pool with its attempt count. Its backoff is
  ``initial × 2^(attempts-1)``, at most ``max`` (1 s and 10 s by default), counted from that attempt.
- A cluster event that may make pods schedulable moves the pool (or, when its QueueingHints say so, only
  the pods it may help): pods still backing off go to backoffQ, the others to activeQ. backoffQ is
  flushed to activeQ when backoffs end (upstream flushes each second).
- Pods left in the pool longer than ``max_in_unschedulable`` (5 min) are moved too (upstream checks
  every 30 s).
- SchedulerPopFromBackoffQ (beta, on by default since 1.34): when activeQ is empty, the scheduler pops
  the next pod of backoffQ without waiting for its backoff to end.

Pure data: callers pass the time, which never goes back (the pool keeps the order pods entered it in, and
relies on it); the scheduling controller turns the times into engine events.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from dratwin.scheduler.framework import PodInfo

INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0
MAX_IN_UNSCHEDULABLE_SECONDS = 300.0
LEFTOVER_FLUSH_SECONDS = 30.0
BACKOFF_FLUSH_SECONDS = 1.0


@dataclass
class QueuedPod:
    info: PodInfo
    attempts: int = 0
    last_attempt: float = 0.0
    unschedulable_since: float = 0.0


def backoff_seconds(attempts: int, initial: float, maximum: float) -> float:
    """How long a pod backs off after ``attempts`` failed attempts (none before its first)."""
    return min(initial * 2.0 ** min(attempts - 1, 64), maximum) if attempts else 0.0


@dataclass
class SchedulingQueue:
    initial_backoff: float = INITIAL_BACKOFF_SECONDS
    max_backoff: float = MAX_BACKOFF_SECONDS
    max_in_unschedulable: float = MAX_IN_UNSCHEDULABLE_SECONDS
    pop_from_backoff: bool = True
    pods: dict[str, QueuedPod] = field(default_factory=dict)  # every pod in any of the three places
    unschedulable: dict[str, QueuedPod] = field(default_factory=dict)
    _active: list[tuple[int, int, str]] = field(default_factory=list)
    _backoff: list[tuple[float, int, str]] = field(default_factory=list)
    _in_active: set[str] = field(default_factory=set)
    _in_backoff: set[str] = field(default_factory=set)
    _sequence: itertools.count[int] = field(default_factory=itertools.count)
    _backoffs: list[float] = field(default_factory=list)  # the backoff after each count of attempts

    def __post_init__(self) -> None:
        # Past 65 attempts the doubling is capped (``backoff_seconds``): the last entry stands for all.
        self._backoffs = [backoff_seconds(a, self.initial_backoff, self.max_backoff) for a in range(66)]

    def __len__(self) -> int:
        return len(self.pods)

    def add(self, info: PodInfo) -> None:
        """A new pending pod: straight to activeQ."""
        queued = self.pods.setdefault(info.key, QueuedPod(info))
        self._to_active(queued)

    def delete(self, key: str) -> None:
        """The pod is gone (bound, or deleted): forget it wherever it is."""
        self.pods.pop(key, None)
        self.unschedulable.pop(key, None)
        self._in_active.discard(key)
        self._in_backoff.discard(key)

    def take(self, key: str) -> QueuedPod | None:
        """Out of activeQ, backoffQ and the pool, still known (a gang member scheduled with the others)."""
        queued = self.pods.get(key)
        if queued is not None:
            self.unschedulable.pop(key, None)
            self._in_active.discard(key)
            self._in_backoff.discard(key)
        return queued

    def active_count(self) -> int:
        return len(self._in_active)

    def pop(self, now: float) -> PodInfo | None:
        """The next pod to schedule, or None; with PopFromBackoffQ, from backoffQ when activeQ is empty."""
        while self._active:
            _, _, key = heapq.heappop(self._active)
            if key in self._in_active:
                self._in_active.discard(key)
                return self.pods[key].info
        if self.pop_from_backoff:
            while self._backoff:
                _, _, key = heapq.heappop(self._backoff)
                if key in self._in_backoff:
                    self._in_backoff.discard(key)
                    return self.pods[key].info
        return None

    def next_active(self) -> str | None:
        """The pod ``pop`` would take from activeQ next, left there; None when activeQ is empty."""
        active, in_active = self._active, self._in_active
        while active:
            key = active[0][2]
            if key in in_active:
                return key
            heapq.heappop(active)
        return None

    def failed(self, key: str, now: float) -> None:
        """A cycle found the pod unschedulable: to the pool, its backoff counted from now."""
        queued = self.pods[key]
        queued.attempts += 1
        queued.last_attempt = now
        queued.unschedulable_since = now
        self.unschedulable.pop(key, None)  # to the end: the pool stays in the order pods entered it
        self.unschedulable[key] = queued

    def move_all(self, now: float) -> None:
        """A cluster event that may help (a pod gone, a node or devices added): the pool moves on."""
        # The pool is in the order pods entered it (``failed``), which is the order of their times: no sort.
        pool, self.unschedulable = self.unschedulable, {}
        self._move_each(pool.values(), now)

    def move(self, keys: set[str], now: float) -> None:
        """An event that may help only these pods (a QueueingHint said Queue for them): they move on."""
        moving = sorted(keys & self.unschedulable.keys(), key=lambda k: self.pods[k].unschedulable_since)
        self._move_each([self.unschedulable.pop(key) for key in moving], now)

    def flush_backoff(self, now: float) -> None:
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key = heapq.heappop(self._backoff)
            if key in self._in_backoff:
                self._in_backoff.discard(key)
                self._to_active(self.pods[key])

    def flush_leftover(self, now: float) -> None:
        """Each pod that has been in the pool for ``max_in_unschedulable`` moves on (its own time, not the
        pool's). The pool is in the order pods entered it, so the walk stops at the first pod still young."""
        stale = []
        for key, queued in self.unschedulable.items():
            if now - queued.unschedulable_since < self.max_in_unschedulable:
                break
            stale.append(key)
        self._move_each([self.unschedulable.pop(key) for key in stale], now)

    def next_backoff_end(self) -> float | None:
        while self._backoff and self._backoff[0][2] not in self._in_backoff:
            heapq.heappop(self._backoff)
        return self._backoff[0][0] if self._backoff else None

    def _move_each(self, moving: Iterable[QueuedPod], now: float) -> None:
        """Each pod on, in order: to backoffQ while it backs off, to activeQ after (one loop for a pool of
        thousands, its backoff read from a table by its attempts: ``backoff_seconds``' values)."""
        backoffs, last = self._backoffs, len(self._backoffs) - 1
        push, sequence = heapq.heappush, self._sequence
        active, in_active, backoff, in_backoff = self._active, self._in_active, self._backoff, self._in_backoff
        for queued in moving:
            attempts, key = queued.attempts, queued.info.key
            until = queued.last_attempt + backoffs[attempts if attempts < last else last]
            if until > now:
                in_backoff.add(key)
                push(backoff, (until, next(sequence), key))
            else:
                in_active.add(key)  # as ``_to_active``, without a call per pod
                push(active, (-queued.info.priority, next(sequence), key))

    def _to_active(self, queued: QueuedPod) -> None:
        key = queued.info.key
        self._in_active.add(key)
        heapq.heappush(self._active, (-queued.info.priority, next(self._sequence), key))

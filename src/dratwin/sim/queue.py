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

A pool of thousands moved to activeQ at once, all of one priority and past their backoffs (as most moves of
a long run are), enters it as one run: one heap entry for all of them, taken from in order, instead of a
push and a pop per pod. The order of the pods is the one their pushes would give. Pods moved to backoffQ
one after another whose backoffs end at the same time (they failed together, at their maximum backoff)
enter it as one run in the same way.

Each pod in activeQ or backoffQ has one live heap entry: the place knows its entry's sequence number, and
an entry whose number is not its pod's (the pod was taken, popped or moved since) is stale, skipped and
dropped when met. A pod that leaves and enters again takes its new place, never its old one.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from dratwin.scheduler.framework import PodInfo

INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0
MAX_IN_UNSCHEDULABLE_SECONDS = 300.0
LEFTOVER_FLUSH_SECONDS = 30.0
BACKOFF_FLUSH_SECONDS = 1.0


@dataclass(slots=True)
class QueuedPod:
    info: PodInfo
    attempts: int = 0
    last_attempt: float = 0.0
    unschedulable_since: float = 0.0


class _Run:
    """Pods that entered activeQ together, of one priority, in their order: one heap entry for all. It keeps
    its place while it is taken from, because their sequence numbers are one block no other entry shares:
    the block's first number sorts against every other entry as each of the others would."""

    __slots__ = ("keys", "next")

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.next = 0  # the position of the first pod not yet taken


# activeQ's entries are (-priority, sequence, ...), backoffQ's (until, sequence, ...): a pod's key or a run.
_Heap = list[tuple[float, int, "str | _Run"]]


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
    # activeQ: (-priority, sequence, a pod's key or a run of them); an entry is live while ``_in_active`` holds
    # its sequence number for its pod (a run's pods have its number plus their positions), else stale.
    _active: _Heap = field(default_factory=list)
    # backoffQ: (until, sequence, a pod's key or a run of them ending their backoffs then), live as activeQ's.
    _backoff: _Heap = field(default_factory=list)
    _in_active: dict[str, int] = field(default_factory=dict)  # each pod in activeQ: its live entry's number
    _in_backoff: dict[str, int] = field(default_factory=dict)
    _sequence: int = 0  # the next entry's sequence number (a run takes one per pod)
    _backoffs: list[float] = field(default_factory=list)  # the backoff after each count of attempts
    _priorities: set[int] = field(default_factory=set)  # of every pod ever added: runs need one only

    def __post_init__(self) -> None:
        # Past 65 attempts the doubling is capped (``backoff_seconds``): the last entry stands for all.
        self._backoffs = [backoff_seconds(a, self.initial_backoff, self.max_backoff) for a in range(66)]

    def __len__(self) -> int:
        return len(self.pods)

    def add(self, info: PodInfo) -> None:
        """A new pending pod: straight to activeQ."""
        queued = self.pods.setdefault(info.key, QueuedPod(info))
        self._priorities.add(info.priority)
        self._to_active(queued)

    def delete(self, key: str) -> None:
        """The pod is gone (bound, or deleted): forget it wherever it is."""
        self.pods.pop(key, None)
        self.unschedulable.pop(key, None)
        self._in_active.pop(key, None)
        self._in_backoff.pop(key, None)

    def take(self, key: str) -> QueuedPod | None:
        """Out of activeQ, backoffQ and the pool, still known (a gang member scheduled with the others)."""
        queued = self.pods.get(key)
        if queued is not None:
            self.unschedulable.pop(key, None)
            self._in_active.pop(key, None)
            self._in_backoff.pop(key, None)
        return queued

    def active_count(self) -> int:
        return len(self._in_active)

    def pop(self, now: float) -> PodInfo | None:
        """The next pod to schedule, or None; with PopFromBackoffQ, from backoffQ when activeQ is empty."""
        place = self._popped_place()
        if place is None:
            return None
        heap, members = place
        key = _live_head(heap, members)
        assert key is not None  # ``_popped_place`` found it
        del members[key]
        head = heap[0][2]
        _take_head(heap, head.next + 1 if isinstance(head, _Run) else 0)
        return self.pods[key].info

    def next_active(self) -> str | None:
        """The pod ``pop`` would take from activeQ next, left there; None when activeQ is empty."""
        return _live_head(self._active, self._in_active)

    def _popped_place(self) -> tuple[_Heap, dict[str, int]] | None:
        """The heap and the members of the place ``pop`` takes its next pod from: activeQ; with PopFromBackoffQ,
        backoffQ when activeQ is empty; None when it takes none."""
        if _live_head(self._active, self._in_active) is not None:
            return self._active, self._in_active
        if self.pop_from_backoff and _live_head(self._backoff, self._in_backoff) is not None:
            return self._backoff, self._in_backoff
        return None

    def head_keys(self, limit: int) -> list[str]:
        """The next pods ``pop`` would take, in order, as far as the head entry of the place it takes them from
        goes (a run's pods, or one pod), at most ``limit``; nothing is taken."""
        place = self._popped_place()
        if place is None:
            return []
        heap, members = place
        _, sequence, head = heap[0]
        if isinstance(head, str):
            return [head]
        get, start = members.get, head.next
        return [key for number, key in enumerate(head.keys[start : start + limit], sequence + start)
                if get(key) == number]

    def fail_head(self, keys: list[str], now: float) -> None:
        """The first of ``head_keys``' pods, ``keys``, failed their cycles one after another at ``now``: out
        of their place and into the pool in that order, as ``pop`` and ``failed`` would do for each."""
        if not keys:
            return
        place = self._popped_place()
        assert place is not None  # ``head_keys`` found the pods there
        heap, members = place
        head, position = heap[0][2], 0
        if isinstance(head, _Run):
            queued_keys, position = head.keys, head.next
            for key in keys:
                while queued_keys[position] != key:  # a stale key before it: pop skips it too
                    position += 1
                position += 1
        _take_head(heap, position)
        if members is self._in_backoff:
            for key in keys:
                del members[key]
        self._into_pool(keys, now)

    def _into_pool(self, keys: list[str], now: float) -> None:
        """Each failed: one more attempt, its times now, to the end of the pool (which stays in the order pods
        entered it)."""
        in_active, pool, pods = self._in_active, self.unschedulable, self.pods
        for key in keys:
            in_active.pop(key, None)
            queued = pods[key]
            queued.attempts += 1
            queued.last_attempt = queued.unschedulable_since = now
            pool.pop(key, None)
            pool[key] = queued

    def failed(self, key: str, now: float) -> None:
        """A cycle found the pod unschedulable: to the pool, its backoff counted from now."""
        self._into_pool([key], now)

    def move_all(self, now: float) -> None:
        """A cluster event that may help (a pod gone, a node or devices added): the pool moves on."""
        # The pool is in the order pods entered it (``failed``), which is the order of their times: no sort.
        pool, self.unschedulable = self.unschedulable, {}
        self._move_each(list(pool), now)

    def move(self, keys: set[str], now: float) -> None:
        """An event that may help only these pods (a QueueingHint said Queue for them): they move on."""
        moving = sorted(keys & self.unschedulable.keys(), key=lambda k: self.pods[k].unschedulable_since)
        for key in moving:
            del self.unschedulable[key]
        self._move_each(moving, now)

    def flush_backoff(self, now: float) -> None:
        backoff, in_backoff = self._backoff, self._in_backoff
        while True:
            key = _live_head(backoff, in_backoff)
            if key is None or backoff[0][0] > now:
                return
            del in_backoff[key]
            head = backoff[0][2]
            _take_head(backoff, head.next + 1 if isinstance(head, _Run) else 0)
            self._to_active(self.pods[key])

    def flush_leftover(self, now: float) -> None:
        """Each pod that has been in the pool for ``max_in_unschedulable`` moves on (its own time, not the
        pool's). The pool is in the order pods entered it, so the walk stops at the first pod still young."""
        stale = []
        for key, queued in self.unschedulable.items():
            if now - queued.unschedulable_since < self.max_in_unschedulable:
                break
            stale.append(key)
        for key in stale:
            del self.unschedulable[key]
        self._move_each(stale, now)

    def next_backoff_end(self) -> float | None:
        return self._backoff[0][0] if _live_head(self._backoff, self._in_backoff) is not None else None

    def _move_each(self, moving: list[str], now: float) -> None:
        """These pods of the pool on, in its order (the order of their last attempts): to backoffQ while they
        back off, to activeQ after. Those whose last attempt is a whole ``max_backoff`` ago have backed off
        whatever their attempts: a prefix, which enters activeQ as one run when every pod has one priority."""
        pods, latest = self.pods, now - self.max_backoff
        backed_off = len(moving)
        while backed_off and pods[moving[backed_off - 1]].last_attempt > latest:
            backed_off -= 1
        if backed_off > 1 and len(self._priorities) == 1:
            run = moving[:backed_off] if backed_off < len(moving) else moving
            self._in_active.update(zip(run, range(self._sequence, self._sequence + backed_off), strict=True))
            heapq.heappush(self._active, (-next(iter(self._priorities)), self._sequence, _Run(run)))
            self._sequence += backed_off
            moving = moving[backed_off:]
        self._move_one_by_one(moving, now)

    def _move_one_by_one(self, moving: list[str], now: float) -> None:
        """Each on by its own backoff, read from a table by its attempts (``backoff_seconds``' values); the
        pods one after another still backing off until the same time enter backoffQ as one run."""
        backoffs, last = self._backoffs, len(self._backoffs) - 1
        push, sequence, pods = heapq.heappush, self._sequence, self.pods
        active, in_active, backoff, in_backoff = self._active, self._in_active, self._backoff, self._in_backoff
        ends = []
        for key in moving:
            queued = pods[key]
            attempts = queued.attempts
            ends.append(queued.last_attempt + backoffs[attempts if attempts < last else last])
        count, index = len(moving), 0
        while index < count:
            key, until = moving[index], ends[index]
            if until <= now:
                in_active[key] = sequence  # as ``_to_active``, without a call per pod
                push(active, (-pods[key].info.priority, sequence, key))
                sequence, index = sequence + 1, index + 1
                continue
            end = index + 1
            while end < count and ends[end] == until:
                end += 1
            if end - index == 1:
                in_backoff[key] = sequence
                push(backoff, (until, sequence, key))
            else:
                run = moving[index:end]
                in_backoff.update(zip(run, range(sequence, sequence + len(run)), strict=True))
                push(backoff, (until, sequence, _Run(run)))
            sequence, index = sequence + end - index, end
        self._sequence = sequence

    def _to_active(self, queued: QueuedPod) -> None:
        key = queued.info.key
        self._in_active[key] = self._sequence
        heapq.heappush(self._active, (-queued.info.priority, self._sequence, key))
        self._sequence += 1


def _live_head(heap: _Heap, members: dict[str, int]) -> str | None:
    """The pod of the heap's first live entry (stale entries and a run's stale or taken pods are dropped on
    the way), left there; None when the heap has none. An entry is (order, sequence, a key or a run)."""
    while heap:
        _, sequence, head = heap[0]
        if isinstance(head, str):
            if members.get(head) == sequence:
                return head
        else:
            keys = head.keys
            while head.next < len(keys):
                key = keys[head.next]
                if members.get(key) == sequence + head.next:
                    return key
                head.next += 1
        heapq.heappop(heap)
    return None


def _take_head(heap: _Heap, position: int) -> None:
    """The heap's head entry is taken up to ``position``: a run's pods before it, or the one pod's entry; the
    entry leaves the heap once nothing is left in it."""
    head = heap[0][2]
    if isinstance(head, _Run):
        head.next = position
        if position < len(head.keys):
            return
    heapq.heappop(heap)

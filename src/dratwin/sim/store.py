"""The one owner of the cluster during a run: the twin's :class:`ClusterState`, with change events.

Every change still goes through a ``ClusterState`` method (which appends to ``state.events``); after each
engine action the store dispatches the new events, stamped with the time, to the controllers subscribed
to their kind, until no handler makes more, and empties the list (nothing else reads it during a run).
Controllers read objects from ``state`` and keep no copies.
A pod's record is handed along with its ``Deleted`` event, since the state no longer holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dratwin.cluster.load import LoadedCluster
from dratwin.cluster.state import ClusterState, PodRecord
from dratwin.sim.clock import Clock


@dataclass(frozen=True)
class Change:
    time: float
    seq: int
    type: str  # Added, Modified, Deleted
    kind: str
    key: str
    pod: PodRecord | None = None  # the deleted pod, for its Deleted event
    message: str = ""  # for the components' own events (FailedScheduling)


Handler = Callable[[Change], None]


@dataclass
class Store:
    loaded: LoadedCluster
    clock: Clock
    log: list[Change] = field(default_factory=list)
    keep_log: bool = False
    # A one-shot run (``dratwin schedule``) reports the state's events afterwards, so they stay there;
    # a run over time hands each on and drops it.
    keep_state_events: bool = False
    _handlers: dict[str, list[Handler]] = field(default_factory=dict)
    _any: list[Handler] = field(default_factory=list)
    _seen: int = 0
    _deleted_pods: dict[str, PodRecord] = field(default_factory=dict)

    @property
    def state(self) -> ClusterState:
        return self.loaded.state

    def subscribe(self, kind: str, handler: Handler) -> None:
        """``kind`` "*" receives every change."""
        if kind == "*":
            self._any.append(handler)
        else:
            self._handlers.setdefault(kind, []).append(handler)

    def delete_pod(self, key: str) -> PodRecord:
        """The pod leaves the cluster; its record travels with the Deleted event."""
        record = self.state.remove_pod(key)
        self._deleted_pods[key] = record
        return record

    def note(self, type_: str, kind: str, key: str, message: str) -> None:
        """A component's own event (``FailedScheduling``), for the run's event log only."""
        if self.keep_log:
            self.log.append(Change(self.clock.now(), 0, type_, kind, key, None, message))

    def skip_delivered(self) -> None:
        """Count the changes so far as delivered without handing them on: for a one-shot run, whose
        controllers have nothing to do about the load itself (no one waits for a node or a claim yet)."""
        self._seen = len(self.state.events)

    def dispatch(self) -> None:
        events = self.loaded.state.events
        if not events:
            return  # after most actions of a month (a retry that changed nothing): nothing to hand on
        while self._seen < len(events):
            event = events[self._seen]
            self._seen += 1
            pod = self._deleted_pods.pop(event.key, None) if event.kind == "Pod" and event.type == "Deleted" else None
            change = Change(self.clock.now(), event.seq, event.type, event.kind, event.key, pod)
            if self.keep_log:
                self.log.append(change)
            for handler in self._handlers.get(event.kind, ()):
                handler(change)
            for handler in self._any:
                handler(change)
        if self.keep_state_events:
            return
        # Every event is handed on: the list is emptied, or a month's run would keep millions of them.
        self.state.events_dropped += len(events)
        events.clear()
        self._seen = 0

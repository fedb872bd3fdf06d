"""A kubelet-like pod lifecycle: bound → starting (cold start) → Running for its run time → Succeeded.

The cold start is a seam: a :data:`ColdStart` gives the seconds until a bound pod's containers run on
its node (until the image is pulled); ``ready_after`` the seconds from then until the pod is Ready (model
weights, loading, warm-up); the default is none: Ready as soon as Running. A cold start revised later (a
parallel pull on the node slowed it) moves through :meth:`Kubelet.revise`. A pod that succeeds leaves
the cluster (the scheduler's view of a terminated pod), and the resourceclaim controller releases its
claims on its Deleted event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dratwin.cluster.state import PodRecord
from dratwin.sim.engine import WORLD, Engine
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase, timestamp, with_phase

ColdStart = Callable[[PodRecord, str], float]
RunSeconds = Callable[[str], float | None]
ReadyAfter = Callable[[str], float]
READY = "Ready"


def no_cold_start(pod: PodRecord, node: str) -> float:
    return 0.0


@dataclass
class Kubelet:
    engine: Engine
    store: Store
    run_seconds: RunSeconds
    cold_start: ColdStart = no_cold_start
    ready_after: ReadyAfter | None = None
    started: dict[str, str] = field(default_factory=dict)  # pod key -> uid of the pod that was started
    due: dict[str, float] = field(default_factory=dict)  # pod key -> when its containers start

    def __post_init__(self) -> None:
        self.store.subscribe("Pod", self._on_pod)

    def _on_pod(self, change: Change) -> None:
        if change.type == "Deleted":
            self.started.pop(change.key, None)
            return
        record = self.store.state.pods.get(change.key)
        if record is None or not record.pod.spec.node_name or change.key in self.started:
            return
        if pod_phase(record.raw) != "Pending":
            return  # bound in the input, already running: it keeps running
        uid = record.pod.metadata.uid
        self.started[change.key] = uid
        delay = self.cold_start(record, record.pod.spec.node_name)
        self.due[change.key] = self.engine.now() + delay
        self.engine.after(delay, WORLD, lambda: self._running(change.key, uid))

    def revise(self, key: str, containers_at: float) -> None:
        """The pod's containers start later than first answered; the earlier timer is then ignored."""
        uid = self.started.get(key)
        if uid is None or key not in self.due:
            return
        self.due[key] = containers_at
        self.engine.at(containers_at, WORLD, lambda: self._running(key, uid))

    def _current(self, key: str, uid: str) -> PodRecord | None:
        record = self.store.state.pods.get(key)
        return record if record is not None and record.pod.metadata.uid == uid else None

    def _running(self, key: str, uid: str) -> None:
        record = self._current(key, uid)
        if record is None or self.due.get(key, 0.0) > self.engine.now():
            return
        self.due.pop(key, None)
        warm = self.ready_after(key) if self.ready_after is not None else 0.0
        record.raw = with_phase(record.raw, "Running")
        if warm <= 0:
            record.raw = with_ready(record.raw, self.engine.now())
        else:
            record.raw = with_ready(record.raw, self.engine.now(), "False")
            self.engine.after(warm, WORLD, lambda: self._ready(key, uid))
        self.store.state.record("Modified", "Pod", key)
        self.store.note("Started", "Pod", key, f"containers running on {record.pod.spec.node_name}")
        run = self.run_seconds(key)
        if run is not None:
            self.engine.after(run, WORLD, lambda: self._succeeded(key, uid))

    def _ready(self, key: str, uid: str) -> None:
        record = self._current(key, uid)
        if record is None or pod_phase(record.raw) != "Running":
            return
        record.raw = with_ready(record.raw, self.engine.now())
        self.store.state.record("Modified", "Pod", key)

    def _succeeded(self, key: str, uid: str) -> None:
        record = self._current(key, uid)
        if record is None:
            return
        record.raw = with_phase(record.raw, "Succeeded")
        self.store.note("Completed", "Pod", key, "Succeeded")
        self.store.delete_pod(key)


def with_ready(raw: dict[str, object], now: float, value: str = "True") -> dict[str, object]:
    """The pod with its Ready condition ``value`` since ``now``."""
    status = dict(raw.get("status") or {})  # type: ignore[call-overload]
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != READY]
    conditions.append({"type": READY, "status": value, "lastTransitionTime": timestamp(now)})
    return {**raw, "status": {**status, "conditions": conditions}}


def is_ready(raw: dict[str, object]) -> bool:
    """Running and Ready; a pod Running in the input without a Ready condition counts as Ready."""
    status = raw.get("status") or {}
    if not isinstance(status, dict) or status.get("phase") != "Running":
        return False
    for condition in status.get("conditions") or []:
        if condition.get("type") == READY:
            return bool(condition.get("status") == "True")
    return True


@dataclass
class ClaimController:
    """The resourceclaim controller after a pod is gone: reservedFor cleared, claims without consumers
    deallocated, claims generated for the pod deleted (:meth:`ClusterState.release_claims_of`)."""

    store: Store

    def __post_init__(self) -> None:
        self.store.subscribe("Pod", self._on_pod)

    def _on_pod(self, change: Change) -> None:
        if change.type == "Deleted" and change.pod is not None:
            self.store.state.release_claims_of(change.pod)

"""Kueue's queues through a run: what each ClusterQueue held and waited for over time, recorded from the
controller's events (:class:`~dratwin.sim.kueue_records.KueueEvent`), and the run's summary of them.

The recorder owns only its own counts; it reads the controller's quota tree (never writes it) for the quota
each ClusterQueue borrows after a change of its usage, with the view's rule (:func:`.kueue_view.borrowed_in`).

- **pending**: Workloads waiting for quota (queued, inadmissible, in requeue backoff), as :class:`.KueueView`
  counts them; **admitted**: Workloads holding quota (QuotaReserved, until Finished or evicted);
- **waiting time**: per admission, from the Workload's creation or its last requeue to ``Admitted=True``, as
  Kueue's ``kueue_admission_wait_time_seconds`` measures it (pkg/metrics/metrics.go, ``AdmittedWorkload``
  with ``workload.QueuedWaitTime``); a Workload still waiting at the end adds no sample;
- **preemptions**: evictions with reason ``Preempted``; the work they throw away is the running time of the
  deleted pods times the devices of each pod: the extended resources (``nvidia.com/gpu``, a
  ``deviceClassMappings`` name) of the quota it held, shared evenly among its pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dratwin.kueue.quota import QuotaTree
from dratwin.scheduler.resources import is_extended_resource_name
from dratwin.sim.kueue_records import (
    ADMITTED,
    CREATED,
    EVICTED,
    FINISHED,
    QUEUED,
    RESERVED,
    FlavorResource,
    KueueEvent,
)
from dratwin.sim.kueue_status import PREEMPTED, find_condition
from dratwin.sim.kueue_view import KueueView, WorkloadView, borrowed_in
from dratwin.sim.outcomes import (
    BorrowedQuota,
    ClusterQueueOutcome,
    Distribution,
    Eviction,
    KueueSummary,
    WorkloadOutcome,
    rounded,
)

if TYPE_CHECKING:
    from dratwin.sim.kueue import KueueController

Raw = dict[str, Any]
HOUR = 3600.0
# Admissions and preemptions are counted per bin: the smallest of these giving at most BINS bins over the run.
BIN_CHOICES = (60.0, 300.0, 600.0, 900.0, 1800.0, HOUR, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR)
BINS = 96
PENDING, HOLDING, DONE, INACTIVE = "pending", "holding", "done", "inactive"


@dataclass
class _Life:
    """One Workload as the recorder follows it."""

    cluster_queue: str
    queued_since: float
    state: str = PENDING
    devices_per_pod: float = 0.0
    preemptions: int = 0
    evicted: list[Eviction] = field(default_factory=list)


@dataclass
class _Queue:
    """One ClusterQueue's counts now and their history."""

    pending: int = 0
    holding: int = 0
    workloads: int = 0
    finished: int = 0
    evictions: int = 0
    lost_gpu_seconds: float = 0.0
    times: list[float] = field(default_factory=lambda: [0.0])
    pendings: list[int] = field(default_factory=lambda: [0])
    holdings: list[int] = field(default_factory=lambda: [0])
    admissions: list[float] = field(default_factory=list)
    preemptions: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    borrowed: dict[FlavorResource, list[tuple[float, int]]] = field(default_factory=dict)

    def mark(self, now: float) -> None:
        """The counts at ``now``: a point where they changed, one per moment (its last change wins)."""
        if (self.pendings[-1], self.holdings[-1]) == (self.pending, self.holding):
            return
        if self.times[-1] == now:
            self.pendings[-1], self.holdings[-1] = self.pending, self.holding
            return
        self.times.append(now)
        self.pendings.append(self.pending)
        self.holdings.append(self.holding)

    def borrow(self, now: float, amounts: Mapping[FlavorResource, int]) -> None:
        for fr in sorted({*self.borrowed, *amounts}):
            points = self.borrowed.setdefault(fr, [(0.0, 0)])
            amount = amounts.get(fr, 0)
            if points[-1][1] == amount:
                continue
            if points[-1][0] == now:
                points[-1] = (now, amount)
            else:
                points.append((now, amount))


@dataclass
class KueueHistory:
    """The recorder: :meth:`on_event` is the controller's listener."""

    tree: QuotaTree
    cohorts: dict[str, str]  # ClusterQueue -> its cohort ("" without one)
    queues: dict[str, _Queue] = field(default_factory=dict)
    lives: dict[str, _Life] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in sorted(self.cohorts):
            self.queues[name] = _Queue()

    @classmethod
    def following(cls, controller: KueueController) -> KueueHistory:
        """A recorder told every step of the controller's Workloads from now on, and of those it has already."""
        history = cls(controller.tree, {name: cq.spec.cohort_name
                                        for name, cq in controller.objects.cluster_queues.items()})
        for record in controller.records.values():
            history.on_event(KueueEvent(record.created, CREATED, record.key, record.cluster_queue))
        controller.listeners.append(history.on_event)
        return history

    def on_event(self, event: KueueEvent) -> None:
        queue = self.queues.get(event.cluster_queue)
        if event.type == CREATED:
            self.lives[event.workload] = _Life(event.cluster_queue, event.time)
            if queue is not None:
                queue.workloads += 1
                queue.pending += 1
                queue.mark(event.time)
            return
        life = self.lives.get(event.workload)
        if life is None or queue is None:
            return  # a Workload of no ClusterQueue: in no queue's counts
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event, life, queue)
            queue.mark(event.time)

    def _reserved(self, event: KueueEvent, life: _Life, queue: _Queue) -> None:
        self._move(life, queue, HOLDING)
        devices = sum(a for (_, resource), a in event.usage.items() if is_extended_resource_name(resource))
        life.devices_per_pod = devices / event.pods if event.pods else 0.0
        queue.borrow(event.time, borrowed_in(self.tree, event.cluster_queue))

    def _admitted(self, event: KueueEvent, life: _Life, queue: _Queue) -> None:
        queue.admissions.append(event.time)
        queue.waits.append(event.time - life.queued_since)

    def _evicted(self, event: KueueEvent, life: _Life, queue: _Queue) -> None:
        self._move(life, queue, PENDING if event.requeued else INACTIVE)
        queue.evictions += 1
        life.evicted.append(Eviction(event.time, event.reason))
        queue.lost_gpu_seconds += event.lost_pod_seconds * life.devices_per_pod
        if event.reason == PREEMPTED:
            queue.preemptions.append(event.time)
            life.preemptions += 1
        queue.borrow(event.time, borrowed_in(self.tree, event.cluster_queue))

    def _queued(self, event: KueueEvent, life: _Life, queue: _Queue) -> None:
        life.queued_since = event.time

    def _finished(self, event: KueueEvent, life: _Life, queue: _Queue) -> None:
        held = life.state == HOLDING
        self._move(life, queue, DONE)
        queue.finished += 1
        if held:
            queue.borrow(event.time, borrowed_in(self.tree, event.cluster_queue))

    @staticmethod
    def _move(life: _Life, queue: _Queue, state: str) -> None:
        for before, delta in ((life.state, -1), (state, 1)):
            if before == PENDING:
                queue.pending += delta
            elif before == HOLDING:
                queue.holding += delta
        life.state = state

    # ---- the summary ---------------------------------------------------------------------------------

    def summary(self, until: float, view: KueueView, workloads: Mapping[str, Raw]) -> KueueSummary:
        """The run's queues at ``until``: per ClusterQueue its counts and series, per Workload its columns."""
        width = bin_seconds(until)
        queues = tuple(self._queue_outcome(name, q, until, width) for name, q in self.queues.items())
        rows = tuple(self._workload_outcome(w, workloads.get(w.key) or {}, until) for w in view.workloads)
        return KueueSummary(admissions=sum(q.admissions for q in queues),
                            preemptions=sum(q.preemptions for q in queues),
                            lost_gpu_hours=rounded(sum(q.lost_gpu_hours for q in queues)),
                            cluster_queues=queues, workloads=rows)

    def _queue_outcome(self, name: str, queue: _Queue, until: float, width: float) -> ClusterQueueOutcome:
        borrowed = tuple(BorrowedQuota(flavor=f, resource=r, peak=max(a for _, a in points),
                                       at_seconds=tuple(t for t, _ in points), amounts=tuple(a for _, a in points))
                         for (f, r), points in sorted(queue.borrowed.items()) if any(a for _, a in points))
        return ClusterQueueOutcome(
            name=name, cohort=self.cohorts.get(name, ""), workloads=queue.workloads,
            admissions=len(queue.admissions), preemptions=len(queue.preemptions), evictions=queue.evictions,
            finished=queue.finished, pending_at_end=queue.pending, admitted_at_end=queue.holding,
            waiting_seconds=Distribution.of(queue.waits), lost_gpu_hours=rounded(queue.lost_gpu_seconds / HOUR),
            borrowed=borrowed, at_seconds=tuple(queue.times), pending=tuple(queue.pendings),
            admitted=tuple(queue.holdings), bin_seconds=width,
            admissions_per_bin=per_bin(queue.admissions, until, width),
            preemptions_per_bin=per_bin(queue.preemptions, until, width))

    def _workload_outcome(self, view: WorkloadView, raw: Raw, until: float) -> WorkloadOutcome:
        namespace, _, name = view.key.partition("/")
        life = self.lives.get(view.key)
        admitted, finished = find_condition(raw, "Admitted"), find_condition(raw, "Finished")
        return WorkloadOutcome(
            namespace=namespace, name=name, queue=view.queue,
            reserved_in=str(((raw.get("status") or {}).get("admission") or {}).get("clusterQueue") or ""),
            admitted=str(admitted.get("status") or "") if admitted else "",
            finished=str(finished.get("status") or "") if finished else "",
            age_seconds=rounded(until - view.created), cluster_queue=view.cluster_queue,
            created_seconds=view.created, reserved_seconds=view.reserved_at, admitted_seconds=view.admitted_at,
            finished_seconds=view.finished_at, evictions=view.evictions, preemptions=life.preemptions if life else 0,
            reason=view.reason if view.waiting else "", evicted=tuple(life.evicted) if life else ())


_HANDLERS = {RESERVED: KueueHistory._reserved, ADMITTED: KueueHistory._admitted, EVICTED: KueueHistory._evicted,
             QUEUED: KueueHistory._queued, FINISHED: KueueHistory._finished}


def bin_seconds(until: float) -> float:
    """The width of the bins admissions and preemptions are counted in: at most ``BINS`` over the run."""
    return next((w for w in BIN_CHOICES if w * BINS >= until), BIN_CHOICES[-1])


def per_bin(times: list[float], until: float, width: float) -> tuple[int, ...]:
    """How many of ``times`` fall in each bin [k·width, (k+1)·width) of the run (the end in the last bin)."""
    count = max(1, -int(-until // width))
    bins = [0] * count
    for at in times:
        bins[min(int(at // width), count - 1)] += 1
    return tuple(bins)

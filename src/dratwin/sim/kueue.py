"""Kueue's controllers on the simulated control plane: Workloads for queued Jobs, admission cycles, unsuspend.

The twin of Kueue's job reconciler (``pkg/controller/jobframework/reconciler.go``), its workload controller
(``pkg/controller/core/workload_controller.go``) and its scheduler loop (``pkg/scheduler/scheduler.go``) at
``ff69552``, over the pure core of :mod:`dratwin.kueue`:

- a Job labelled ``kueue.x-k8s.io/queue-name`` arrives suspended (Kueue's webhook sets ``spec.suspend``);
  its Workload is created in the store, named and owned as :func:`dratwin.kueue.jobs.workload_for_job`
  makes it, with ``metadata.creationTimestamp`` the simulated time;
- the Workload goes to its LocalQueue's ClusterQueue (:class:`dratwin.kueue.cycle.Queues`); the scheduler
  runs a cycle whenever its queues change, **at the same simulated moment** (upstream's loop runs the next
  cycle as soon as the last one ends, milliseconds after the change: 0 s here, documented), then again while
  cycles admit or change the heads;
- an admitted Workload gets ``status.admission`` and its ``QuotaReserved``/``Admitted`` conditions stamped
  with the simulated time; the job reconciler then unsuspends the Job with its flavors' node labels and
  tolerations injected (:func:`dratwin.kueue.jobs.admitted_job`) and hands it to the Job controller, which
  creates its pods for the scheduler to place;
- a Workload that cannot be admitted keeps Kueue's ``QuotaReserved=False`` reason and message;
- when the Job ends (Complete or Failed), the Workload gets ``Finished`` (reason Succeeded or Failed, the
  Job condition's message), its quota is freed and the inadmissible Workloads are queued again.

The controller is the one owner of Kueue's mutable state (queues, the quota tree with the admitted usage,
each Workload's record); Workload objects live in the cluster state (``ClusterState.workloads``) and
change only through :meth:`ClusterState.put_workload`. :meth:`KueueController.view` is a read-only
summary for outcomes and reports.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import queued_by_kueue
from dratwin.cluster.state import ClusterState
from dratwin.cluster.workloads import object_uid
from dratwin.kueue.cycle import (
    INADMISSIBLE,
    Admitted,
    CycleOptions,
    Entry,
    Pending,
    Queues,
    Snapshot,
    resolve_local_queue,
    scheduling_cycle,
)
from dratwin.kueue.dra import DraInputs
from dratwin.kueue.jobs import InjectionConflict, NotQueued, admitted_job, suspended, workload_for_job
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.usage import Inadmissible, WorkloadUsage, decode_workload, workload_usage
from dratwin.sim.engine import CONTROLLER, Engine
from dratwin.sim.kueue_objects import KueueObjects
from dratwin.sim.kueue_view import ClusterQueueView, KueueView, WorkloadView
from dratwin.sim.store import Store
from dratwin.sim.workloads import timestamp

Raw = dict[str, Any]
StartJob = Callable[[Raw, float | None], None]  # the unsuspended Job and its pods' run time, to the Job controller

# batch/v1 Job conditions that end a Job (the Job controller's reasons and messages).
JOB_COMPLETE_MESSAGE = "Reached expected number of succeeded pods"
JOB_FAILED_MESSAGE = "Job has reached the specified backoff limit"


@dataclass
class WorkloadRecord:
    """What Kueue knows of one Workload besides its object: its Job, queue entry and admission."""

    key: str  # namespace/name of the Workload
    job: Raw  # the Job as stored while suspended
    run_seconds: float | None
    created: float
    cluster_queue: str = ""  # "" while its LocalQueue does not exist
    entry: Entry | None = None
    admitted: Admitted | None = None
    reserved_at: float | None = None
    admitted_at: float | None = None
    finished_at: float | None = None
    last_pending: tuple[str, str] = ("", "")  # the QuotaReserved=False reason and message written last

    @property
    def job_key(self) -> str:
        meta = self.job.get("metadata") or {}
        return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


@dataclass
class KueueController:
    engine: Engine
    store: Store
    objects: KueueObjects
    start_job: StartJob
    compiler: SelectorCompiler | None = None
    notes: list[str] = field(default_factory=list)
    records: dict[str, WorkloadRecord] = field(default_factory=dict)  # by Workload key, in creation order
    by_job: dict[str, str] = field(default_factory=dict)  # Job key -> Workload key
    queues: Queues = field(init=False)
    tree: QuotaTree = field(init=False)
    cycles: int = 0
    _cycle_due: bool = False

    def __post_init__(self) -> None:
        self.queues = Queues.of(self.objects.cluster_queues.values())
        self.tree = QuotaTree.build(self.objects.cluster_queues.values(), self.objects.cohorts)
        self.notes += self.objects.notes

    @property
    def state(self) -> ClusterState:
        return self.store.state

    # ---- the job reconciler ----------------------------------------------------------------------

    def add_job(self, raw: Raw, run_seconds: float | None) -> None:
        """A Job labelled with a queue name was created: suspend it and create its Workload."""
        job = suspended(_with_uid(raw))
        made = workload_for_job(job, self.objects.priorities)
        meta = job.get("metadata") or {}
        job_key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        if isinstance(made, NotQueued):
            self.notes.append(f"Job {job_key}: stays suspended: {made.reason}")
            return
        now = self.engine.now()
        made["metadata"]["creationTimestamp"] = timestamp(now)
        key = f"{made['metadata']['namespace']}/{made['metadata']['name']}"
        record = WorkloadRecord(key, job, run_seconds, now)
        self.records[key] = record
        self.by_job[job_key] = key
        self.state.put_workload(key, made)
        self._queue(record)

    def take_job(self, raw: Raw, run_seconds: float | None) -> bool:
        """The Job controller's arrival hook: True when Kueue manages the Job (it is queued, not started)."""
        if not queued_by_kueue([raw]):
            return False
        self.add_job(raw, run_seconds)
        return True

    def job_finished(self, job_key: str, succeeded: bool) -> None:
        """The Job controller ended a Job (Complete or Failed): the Workload is Finished and its quota freed."""
        key = self.by_job.get(job_key)
        record = self.records.get(key) if key else None
        if record is None or record.finished_at is not None:
            return
        now = self.engine.now()
        record.finished_at = now
        reason, message = ("Succeeded", JOB_COMPLETE_MESSAGE) if succeeded else ("Failed", JOB_FAILED_MESSAGE)
        self._set_conditions(record, [_condition("Finished", "True", reason, message, timestamp(now))])
        if record.admitted is not None:
            self.tree.remove_usage(cq_key(record.cluster_queue), record.admitted.assignment.usage)
            self.queues.requeue_inadmissible()
            self._kick()

    # ---- queueing and the scheduler ----------------------------------------------------------------

    def _queue(self, record: WorkloadRecord) -> None:
        workload = decode_workload(self.state.workloads[record.key])
        target = resolve_local_queue(workload, self.objects.local_queues)
        if isinstance(target, Pending):
            self._write_pending(record, target)
            return
        record.cluster_queue = target
        if target not in self.objects.cluster_queues:
            entry = Entry(workload, target, WorkloadUsage(), record.created)
            self._write_pending(record, Pending(entry, INADMISSIBLE, f"ClusterQueue {target} doesn't exist"))
            return
        usage = workload_usage(workload, self.objects.config, self._dra_inputs())
        record.entry = Entry(workload, target, usage, record.created)
        if isinstance(usage, Inadmissible):
            self._write_pending(record, Pending(record.entry, usage.reason, usage.message))
            return
        self.queues.push(record.entry)
        self._kick()

    def _dra_inputs(self) -> DraInputs | None:
        if not self.objects.config.device_class_mappings:
            return None
        state = self.state
        templates = {(k.split("/", 1)[0], k.split("/", 1)[1]): t for k, t in state.templates.items()}
        return DraInputs(templates, state.classes, state.slices, self.compiler or SelectorCompiler())

    def _kick(self) -> None:
        if not self._cycle_due:
            self._cycle_due = True
            self.engine.at(self.engine.now(), CONTROLLER, self._cycle)

    def _cycle(self) -> None:
        """One scheduling cycle over the heads; another follows at once while cycles make progress."""
        self._cycle_due = False
        heads = self.queues.heads()
        if not heads:
            return
        self.cycles += 1
        snapshot = Snapshot(self.objects.cluster_queues, self.objects.flavors, self.tree)
        result = scheduling_cycle(snapshot, heads, self._options())
        self.queues.settle(result)
        for admitted in result.admitted:
            self._admit(admitted)
        for pending in result.pending:
            record = self.records.get(pending.entry.key)
            if record is not None:
                self._write_pending(record, pending)
        after = [h.key for h in self.queues.heads()]
        if result.admitted or after != [h.key for h in heads]:
            self._kick()

    def _options(self) -> CycleOptions:
        return CycleOptions(fair_sharing=self.objects.config.fair_sharing is not None)

    def _admit(self, admitted: Admitted) -> None:
        record = self.records[admitted.entry.key]
        now = self.engine.now()
        record.admitted, record.reserved_at, record.admitted_at = admitted, now, now
        record.last_pending = ("", "")
        raw = self.state.workloads[record.key]
        status = {**(raw.get("status") or {}), "admission": admitted.admission_status()}
        self.state.put_workload(record.key, {**raw, "status": status})
        self._set_conditions(record, admitted.conditions(timestamp(now)))
        self._start(record, admitted)

    def _start(self, record: WorkloadRecord, admitted: Admitted) -> None:
        """The job reconciler's StartJob: the Job unsuspended with its flavors injected."""
        names = sorted({f for p in admitted.assignment.pod_sets for f in p.flavors.values()})
        flavors = [self.objects.flavors[n] for n in names if n in self.objects.flavors]
        started = admitted_job(record.job, flavors)
        if isinstance(started, InjectionConflict):
            self.notes.append(f"Job {record.job_key}: not started: {started.message}")
            return
        self.start_job(started, record.run_seconds)

    def _write_pending(self, record: WorkloadRecord, pending: Pending) -> None:
        if record.last_pending == (pending.reason, pending.message):
            return  # nothing changed: Kueue does not write the same condition again
        record.last_pending = (pending.reason, pending.message)
        self._set_conditions(record, pending.conditions(timestamp(self.engine.now())))

    def _set_conditions(self, record: WorkloadRecord, conditions: list[dict[str, str]]) -> None:
        raw = self.state.workloads[record.key]
        status = dict(raw.get("status") or {})
        current = list(status.get("conditions") or [])
        for condition in conditions:
            current = set_condition(current, condition)
        status["conditions"] = current
        self.state.put_workload(record.key, {**raw, "status": status})

    # ---- the read-only view ------------------------------------------------------------------------

    def view(self) -> KueueView:
        queues = []
        for name in sorted(self.objects.cluster_queues):
            node = self.tree.nodes.get(cq_key(name))
            usage = dict(sorted((node.usage if node else {}).items()))
            borrowed = {fr: amount - self.tree.quota(cq_key(name), fr).nominal for fr, amount in usage.items()
                        if amount > self.tree.quota(cq_key(name), fr).nominal}
            records = [r for r in self.records.values() if r.cluster_queue == name]
            admitted = sum(1 for r in records if r.admitted is not None and r.finished_at is None)
            pending = sum(1 for r in records if r.admitted is None and r.finished_at is None)
            queues.append(ClusterQueueView(name, usage, borrowed, pending, admitted))
        workloads = [WorkloadView(r.key, decode_workload(self.state.workloads[r.key]).spec.queue_name,
                                  r.cluster_queue, r.created, r.reserved_at, r.admitted_at, r.finished_at,
                                  r.last_pending[0], r.last_pending[1]) for r in self.records.values()]
        return KueueView(queues, workloads, list(self.notes))


def set_condition(conditions: list[dict[str, str]], new: dict[str, str]) -> list[dict[str, str]]:
    """``apimeta.SetStatusCondition``: a condition of the same type is updated where it is, its
    lastTransitionTime kept when its status does not change; a new type is appended."""
    out = list(conditions)
    for index, old in enumerate(out):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"]:
                new = {**new, "lastTransitionTime": old.get("lastTransitionTime", new["lastTransitionTime"])}
            out[index] = new
            return out
    return [*out, new]


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}


def _with_uid(raw: Raw) -> Raw:
    """The Job with the uid the API server gives it (the twin's deterministic one when the input has none)."""
    meta = raw.get("metadata") or {}
    if meta.get("uid"):
        return raw
    out = copy.deepcopy(raw)
    out["metadata"]["uid"] = object_uid("batch/v1", "Job", meta.get("namespace") or "default", meta.get("name") or "")
    return out

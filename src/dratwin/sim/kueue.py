"""Kueue's controllers on the simulated control plane: Workloads for queued Jobs, admission cycles, unsuspend.

The twin of Kueue's job reconciler (``pkg/controller/jobframework/reconciler.go``), its workload controller
(``pkg/controller/core/workload_controller.go``) and its scheduler loop (``pkg/scheduler/scheduler.go``) at
``ff69552``, over the pure core of :mod:`dratwin.kueue`:

- a Job labelled ``kueue.x-k8s.io/queue-name`` arrives suspended (Kueue's webhook sets ``spec.suspend``);
  its Workload is created in the store, named and owned as :func:`dratwin.kueue.jobs.workload_for_job`
  makes it, with ``metadata.creationTimestamp`` the simulated time;
- the Workload goes to its LocalQueue's ClusterQueue (:class:`dratwin.kueue.equivalence.EquivalentQueues`:
  Kueue's queues with scheduling equivalence hashing: Workloads of one shape are set aside together); the scheduler
  runs a cycle whenever its queues change, **at the same simulated moment** (upstream's loop runs the next
  cycle as soon as the last one ends, milliseconds after the change: 0 s here, documented), then again while
  cycles admit or change the heads;
- an admitted Workload gets ``status.admission`` and its ``QuotaReserved``/``Admitted`` conditions stamped
  with the simulated time; the job reconciler then unsuspends the Job with its flavors' node labels and
  tolerations injected (:func:`dratwin.kueue.jobs.admitted_job`) and hands it to the Job controller, which
  creates its pods for the scheduler to place;
- a Workload that cannot be admitted keeps Kueue's ``QuotaReserved=False`` reason and message;
- when the Job ends (Complete or Failed), the Workload gets ``Finished`` (reason Succeeded or Failed, the
  Job condition's message), its quota is freed and the inadmissible Workloads of its cohort tree are queued
  again in Kueue's batch, 1 s later (:mod:`.kueue_requeue`; ``requeue_batch_seconds`` 0 for a one-shot
  pass, which shows the queues once settled);
- a cycle's preemptions (the Workloads holding quota are its candidates, :mod:`dratwin.kueue.preemption`) are
  evicted at once, and the preemptor is tried again in the next cycle;
- an eviction (:meth:`KueueController.evict`: preemption targets, the PodsReady timeout) sets ``Evicted``
  (and ``Preempted``), suspends the Job (the Job controller deletes its pods: their running time is the work
  lost, counted as for Karpenter's evictions, :func:`dratwin.sim.disruption.lost_progress`), then clears the
  admission (``Requeued``, ``QuotaReserved=False`` PendingEvaluation, ``Admitted=False`` NoReservation), frees
  the quota and queues the Workload again: at once after a preemption, after the requeue backoff after a
  PodsReady timeout, never once ``backoffLimitCount`` is exceeded (the Workload is deactivated);
- with ``waitForPodsReady`` (:mod:`.kueue_pods_ready`) the PodsReady condition follows the Job's ready and
  succeeded pods, and an admitted Workload whose pods are not ready within the timeout is evicted.

The controller is the one owner of Kueue's mutable state (queues, the quota tree with the admitted usage,
each Workload's record); Workload objects live in the cluster state (``ClusterState.workloads``) and
change only through :meth:`ClusterState.put_workload`. :meth:`KueueController.view` is a read-only
summary for outcomes and reports.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.api.kueue import ResourceFlavor, Workload
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import queued_by_kueue
from dratwin.cluster.state import ClusterState, PodRecord
from dratwin.kueue.cycle import (
    INADMISSIBLE,
    Admitted,
    CycleOptions,
    Entry,
    Pending,
    Snapshot,
    resolve_local_queue,
    scheduling_cycle,
)
from dratwin.kueue.dra import DraInputs
from dratwin.kueue.equivalence import REQUEUE_BATCH_SECONDS, EquivalentQueues
from dratwin.kueue.flavors import Assignment
from dratwin.kueue.jobs import InjectionConflict, NotQueued, admitted_job, suspended, workload_for_job
from dratwin.kueue.pods import JOB_FRAMEWORK
from dratwin.kueue.preemption import AdmittedWorkload
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.tas.admission import TasContext
from dratwin.kueue.usage import Inadmissible, WorkloadUsage, decode_workload, workload_usage
from dratwin.sim.admission_checks import AdmissionChecks, checks_for
from dratwin.sim.disruption import lost_progress
from dratwin.sim.engine import CONTROLLER, Engine
from dratwin.sim.kubelet import is_ready
from dratwin.sim.kueue_objects import KueueObjects
from dratwin.sim.kueue_pods_ready import PodsReadySettings, PodsReadyWatch, pods_ready_settings
from dratwin.sim.kueue_records import (
    ADMITTED,
    CREATED,
    EVICTED,
    FINISHED,
    QUEUED,
    RESERVED,
    KueueEvent,
    KueueListener,
    Preempted,
    PreemptionTarget,
    WorkloadRecord,
)
from dratwin.sim.kueue_requeue import CohortRequeue
from dratwin.sim.kueue_status import (
    ADMISSION_CHECK,
    BACKOFF_FINISHED,
    DEACTIVATED,
    DEACTIVATED_BY_LIMIT,
    DEACTIVATED_MESSAGE,
    JOB_COMPLETE_MESSAGE,
    JOB_FAILED_MESSAGE,
    NO_RESERVATION,
    PENDING_EVALUATION,
    PODS_READY_TIMEOUT,
    PREEMPTED,
    UNSATISFIED_CHECKS,
    checks_message,
    find_condition,
    new_condition,
    reset_check,
    set_condition,
    with_uid,
)
from dratwin.sim.kueue_tas import TasController
from dratwin.sim.kueue_view import KueueView, build_view
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase, timestamp, workload_of

Raw = dict[str, Any]
StartJob = Callable[[Raw, float | None], None]  # the unsuspended Job and its pods' run time, to the Job controller
StopJob = Callable[[str], list[PodRecord]]  # suspend the Job (by key): the pods the Job controller deleted

@dataclass
class KueueController:
    engine: Engine
    store: Store
    objects: KueueObjects
    start_job: StartJob
    compiler: SelectorCompiler | None = None
    stop_job: StopJob | None = None  # None: no Job controller to stop (a one-shot run evicts nothing)
    succeeded_of: Callable[[str], int] = lambda _job: 0  # the Job's succeeded pods (status.succeeded)
    notes: list[str] = field(default_factory=list)
    records: dict[str, WorkloadRecord] = field(default_factory=dict)  # by Workload key, in creation order
    by_job: dict[str, str] = field(default_factory=dict)  # Job key -> Workload key
    by_pod: dict[str, str] = field(default_factory=dict)  # a pod Workload's pod key -> its key (:mod:`.kueue_pods`)
    starters: dict[str, Callable[[Admitted], None]] = field(default_factory=dict)  # jobless Workload -> its start
    stoppers: dict[str, Callable[[], list[PodRecord]]] = field(default_factory=dict)  # ... and its stop
    requeue_batch_seconds: float = REQUEUE_BATCH_SECONDS  # requeueBatchPeriod
    queues: EquivalentQueues = field(init=False)
    tree: QuotaTree = field(init=False)
    pods_ready: PodsReadySettings | None = field(init=False)
    ready: PodsReadyWatch | None = field(init=False)  # None without waitForPodsReady
    checks: AdmissionChecks = field(init=False)
    tas: TasController = field(init=False)  # topology-aware scheduling: its cache and ungater
    cycles: int = 0
    evicted: Counter[str] = field(default_factory=Counter)  # evictions by reason
    work_lost_seconds: float = 0.0  # pod-seconds of running time thrown away by evictions
    listeners: list[KueueListener] = field(default_factory=list)  # told each step of a Workload's life
    _cycle_due: bool = False
    _holding: dict[str, AdmittedWorkload] = field(default_factory=dict)  # by Workload key: the tree's usage
    _batched: CohortRequeue = field(init=False)  # the cohort-batched requeue of the inadmissible ones

    def __post_init__(self) -> None:
        cqs = self.objects.cluster_queues
        self.queues = EquivalentQueues({name: cq.queueing_strategy for name, cq in cqs.items()})
        self.tree = QuotaTree.build(cqs.values(), self.objects.cohorts)
        self._batched = CohortRequeue(self.engine, self.queues, self.tree, cqs, self._kick, self.requeue_batch_seconds)
        self.notes += self.objects.notes
        self.pods_ready, notes = pods_ready_settings(self.objects.config)
        self.notes += notes
        self.ready = None if self.pods_ready is None else PodsReadyWatch(
            self.engine, self.pods_ready, lambda key: self.state.workloads[key], self.succeeded_of,
            self._set_conditions, self._evict_not_ready, self._deactivate)
        self.checks = AdmissionChecks(self.engine, self.objects.checks, self.check_state)
        self.checks.notes = self.notes  # one list of what Kueue's controllers could not do
        self.tas = TasController(self.objects.flavors, self.objects.topologies, self.objects.config)
        self.tas.watch(self.store)
        self.store.subscribe("Pod", self._on_pod)
        for workload in self.objects.workloads:
            self.add_workload(workload)

    @property
    def state(self) -> ClusterState:
        return self.store.state

    # ---- the job reconciler ----------------------------------------------------------------------

    def add_job(self, raw: Raw, run_seconds: float | None) -> None:
        """A Job labelled with a queue name was created: suspend it and create its Workload."""
        job = suspended(with_uid(raw))
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
        self._tell(CREATED, record)

    def add_workload(self, raw: Raw) -> str:
        """A Workload created directly, without a Job (as Kueue's performance tests create them, or one read
        from the input): queued as written, its status not read (it starts anew). Admitted, it starts nothing:
        whoever made it ends it with :meth:`finish_workload`. Returns its key."""
        meta = raw.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        now = self.engine.now()
        made = msgspec.json.decode(msgspec.json.encode({k: v for k, v in raw.items() if k != "status"}))
        made["metadata"] = {**made.get("metadata", {}), "namespace": meta.get("namespace") or "default",
                            "creationTimestamp": timestamp(now)}
        record = WorkloadRecord(key, {}, None, now)
        self.records[key] = record
        self.state.put_workload(key, made)
        self._queue(record)
        self._tell(CREATED, record)
        return key

    def finish_workload(self, key: str, succeeded: bool = True, message: str = "") -> None:
        """A Workload without a Job ends (its runner says so): Finished, its quota freed."""
        record = self.records.get(key)
        if record is not None and not record.job:
            self._finish(record, succeeded, message)

    def ungate(self, job_key: str, pods: list[Raw]) -> list[Raw]:
        """The Job controller's hook on new pods: the topology ungater's nodeSelectors (:mod:`.kueue_tas`)."""
        return self.tas.ungate(job_key, pods, lambda key: key in self.state.pods)

    def take_job(self, raw: Raw, run_seconds: float | None) -> bool:
        """The Job controller's arrival hook: True when Kueue manages the Job (it is queued, not started)."""
        if JOB_FRAMEWORK not in self.objects.frameworks or not queued_by_kueue([raw]):
            return False
        self.add_job(raw, run_seconds)
        return True

    def job_finished(self, job_key: str, succeeded: bool) -> None:
        """The Job controller ended a Job (Complete or Failed): the Workload is Finished and its quota freed."""
        key = self.by_job.get(job_key)
        record = self.records.get(key) if key else None
        if record is not None:
            self._finish(record, succeeded, JOB_COMPLETE_MESSAGE if succeeded else JOB_FAILED_MESSAGE)

    def _finish(self, record: WorkloadRecord, succeeded: bool, message: str) -> None:
        if record.finished_at is not None:
            return
        now = self.engine.now()
        record.finished_at = now
        if record.admitted is None:  # a Workload whose pods are gone while it waits leaves its queue
            self.queues.discard(record.cluster_queue, record.key)
        reason = "Succeeded" if succeeded else "Failed"
        self._set_conditions(record, [new_condition("Finished", "True", reason, message, timestamp(now))])
        if record.entry is not None:
            self.queues.forget(record.entry)
        if record.admitted is not None:
            self.tree.remove_usage(cq_key(record.cluster_queue), record.admitted.assignment.usage)
            self.tas.unbook(record.admitted.entry.workload, record.admitted.assignment)
            self.tas.released(record.job_key if record.job else record.key)
            self._holding.pop(record.key, None)
            self._batched.quota_freed(record.cluster_queue)
        self._tell(FINISHED, record)

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
        snapshot = Snapshot(self.objects.cluster_queues, self.objects.flavors, self.tree, self._holding_quota(),
                            topology=self.tas_snapshot())
        result = scheduling_cycle(snapshot, heads, self._options())
        self.queues.settle(result)
        for admitted in result.admitted:
            self._admit(admitted)
        for preemption in result.preemptions:  # issuePreemptions: the victims are evicted now, the head retried
            self.preempt([Preempted(t.victim.key, t.reason, t.message) for t in preemption.targets])
        for pending in result.pending:
            record = self.records.get(pending.entry.key)
            if record is not None:
                self._write_pending(record, pending)
        after = [h.key for h in self.queues.heads()]
        if result.admitted or result.preemptions or after != [h.key for h in heads]:
            self._kick()

    def tas_snapshot(self) -> TasContext | None:
        """The TAS cache now, the admitted Workloads' topology usage booked (None: no flavor has a topology)."""
        def holding() -> list[tuple[Workload, Assignment]]:
            return [(r.admitted.entry.workload, r.admitted.assignment) for r in self.records.values()
                    if r.admitted is not None and r.finished_at is None]
        return self.tas.snapshot(self.state, holding)

    def _holding_quota(self) -> list[AdmittedWorkload]:
        """The Workloads whose usage the tree holds: what preemption may take back."""
        return list(self._holding.values())

    def _options(self) -> CycleOptions:
        return CycleOptions.from_configuration(self.objects.config)

    def _admit(self, admitted: Admitted) -> None:
        """Quota reserved (SetQuotaReservation); admitted at once without admission checks, else when all are
        Ready (:meth:`check_state`)."""
        record = self.records[admitted.entry.key]
        now = self.engine.now()
        record.admitted, record.reserved_at, record.admitted_at = admitted, now, None
        self._holding[record.key] = AdmittedWorkload(admitted.entry.workload, record.cluster_queue,
                                                     admitted.assignment.usage, now, admitted.entry.timestamp)
        record.last_pending = ("", "")
        record.admissions += 1
        self._tell(RESERVED, record, usage=admitted.assignment.usage,
                   pods=sum(p.count for p in admitted.assignment.pod_sets))
        at = timestamp(now)
        flavors = sorted({f for p in admitted.assignment.pod_sets for f in p.flavors.values()})
        names = checks_for(self.objects.cluster_queues[record.cluster_queue], flavors)
        raw = self.state.workloads[record.key]
        status: dict[str, Any] = {**(raw.get("status") or {}), "admission": admitted.admission_status()}
        if names:
            before = {c.get("name"): c for c in status.get("admissionChecks") or []}
            status["admissionChecks"] = [before.get(n) or {"name": n, "state": "Pending", "message": "",
                                                          "lastTransitionTime": at} for n in names]
        self.state.put_workload(record.key, {**raw, "status": status})
        reserved, admitted_condition = admitted.conditions(at)
        reset = self._reset_after_eviction(record, at)
        if not names:
            self._set_conditions(record, [reserved, admitted_condition, *reset])
            self._admitted_now(record)
            return
        self._set_conditions(record, [reserved, new_condition("Admitted", "False", *UNSATISFIED_CHECKS, at), *reset])
        self.checks.reserved(record.key, record.job, names, record.admissions)

    def _admitted_now(self, record: WorkloadRecord) -> None:
        """Admitted=True: the PodsReady clock starts and the Job is unsuspended."""
        assert record.admitted is not None
        now = self.engine.now()
        record.admitted_at = now
        self._tell(ADMITTED, record)
        if self.ready is not None:
            self.ready.admitted(record)
        self._start(record, record.admitted)

    def check_state(self, key: str, name: str, state: str, message: str, serial: int) -> None:
        """An admission check controller set the state of check ``name`` for the ``serial``-th reservation."""
        record = self.records.get(key)
        if record is None or record.admissions != serial or record.admitted is None or record.admitted_at is not None:
            return  # a reservation since lost (evicted) or already admitted
        at = timestamp(self.engine.now())
        raw = self.state.workloads[key]
        checks = [{**c, "state": state, "message": message, "lastTransitionTime": at} if c.get("name") == name
                  else c for c in (raw.get("status") or {}).get("admissionChecks") or []]
        self._set_status(record, {"admissionChecks": checks})
        if state == "Retry":
            text = f"Evicted due to {checks_message([c for c in checks if c['state'] == 'Retry'], 'Retry')}"
            self.evict(key, ADMISSION_CHECK, text, requeue_after=0.0)
        elif state == "Rejected":
            text = checks_message([c for c in checks if c["state"] == "Rejected"], "Rejected")
            self._deactivate(record, f"{DEACTIVATED}DueTo{ADMISSION_CHECK}",
                             f"The workload is deactivated due to {text}")
        elif all(c.get("state") == "Ready" for c in checks):
            admitted = new_condition("Admitted", "True", "Admitted", "The workload is admitted", at)
            self._set_conditions(record, [admitted])
            self._admitted_now(record)

    def _reset_after_eviction(self, record: WorkloadRecord, at: str) -> list[dict[str, str]]:
        """SetQuotaReservation's resetActiveCondition: a True Evicted or Preempted turns False, "Previously: ..."."""
        out = []
        for kind in ("Evicted", "Preempted"):
            found = find_condition(self.state.workloads[record.key], kind)
            if found is not None and found.get("status") == "True":
                out.append(new_condition(kind, "False", "QuotaReserved", f"Previously: {found.get('message', '')}", at))
        return out

    def _start(self, record: WorkloadRecord, admitted: Admitted) -> None:
        """The job reconciler's StartJob: the Job unsuspended with its flavors injected (a Workload without a
        Job starts nothing)."""
        if not record.job:
            if record.key in self.starters:  # the Workload of plain pods (:mod:`.kueue_pods`)
                self.starters[record.key](admitted)
            return
        started = admitted_job(record.job, self.flavors_of(admitted),
                               topology=self.tas.admitted(record.job_key, admitted.assignment))
        if isinstance(started, InjectionConflict):
            self.notes.append(f"Job {record.job_key}: not started: {started.message}")
            return
        self.start_job(started, record.run_seconds)

    def flavors_of(self, admitted: Admitted) -> list[ResourceFlavor]:
        """The ResourceFlavors the admission assigned, by name."""
        names = sorted({f for p in admitted.assignment.pod_sets for f in p.flavors.values()})
        return [self.objects.flavors[n] for n in names if n in self.objects.flavors]

    def _write_pending(self, record: WorkloadRecord, pending: Pending) -> None:
        if record.last_pending == (pending.reason, pending.message):
            return  # nothing changed: Kueue does not write the same condition again
        record.last_pending = (pending.reason, pending.message)
        now = timestamp(self.engine.now())
        # UnsetQuotaReservationWithCondition, then SyncAdmittedCondition (UnadmittedWorkloadsObservability, beta
        # and on in ff69552: the Admitted condition is written too, False while there is no reservation)
        no_reservation = new_condition("Admitted", "False", *NO_RESERVATION, now)
        self._set_conditions(record, [*pending.conditions(now), no_reservation])

    # ---- the Job's pods: PodsReady and the running time an eviction throws away ----------------------

    def _on_pod(self, change: Change) -> None:
        raw = change.pod.raw if change.pod is not None else None
        if raw is None:
            found = self.state.pods.get(change.key)
            raw = found.raw if found is not None else None
        if raw is None:
            return
        workload = self.by_pod.get(change.key) or self.by_job.get(workload_of(raw))
        record = self.records.get(workload) if workload else None
        if record is None:
            return
        if change.type == "Deleted":
            self.tas.pod_deleted(change.key)
            record.ready_pods.discard(change.key)
            record.running_since.pop(change.key, None)
        else:
            if pod_phase(raw) == "Running" and change.key not in record.running_since:
                record.running_since[change.key] = change.time
            if is_ready(raw):
                record.ready_pods.add(change.key)
            else:
                record.ready_pods.discard(change.key)
        if self.ready is not None and record.admitted is not None and record.finished_at is None:
            self.ready.sync(record)

    # ---- eviction ------------------------------------------------------------------------------------

    def preempt(self, targets: Sequence[PreemptionTarget]) -> None:
        """Evict the preemption targets a cycle chose (scheduler.go issuePreemptions): Evicted=True Preempted and
        Preempted=True with the target's reason, then requeued at once (Requeued=True)."""
        for target in targets:
            self.evict(target.key, PREEMPTED, target.message, preempted_reason=target.reason)

    def evict(self, key: str, reason: str, message: str, *, preempted_reason: str = "",
              requeue_after: float | None = None, deactivated: bool = False) -> None:
        """evict.Evict, then the job reconciler's stopJob and the clearing of the admission, all at once (the
        twin's controllers react in the same simulated moment). ``requeue_after``: seconds of requeue backoff
        (PodsReady timeout); None: requeued at once (preemption); ``deactivated``: never requeued."""
        record = self.records.get(key)
        if record is None or record.admitted is None or record.finished_at is not None:
            return
        now = self.engine.now()
        at = timestamp(now)
        evicted = [new_condition("Evicted", "True", reason, message, at)]
        if preempted_reason:
            evicted.append(new_condition("Preempted", "True", preempted_reason, message, at))
        self._set_conditions(record, evicted)
        self.evicted[reason] += 1
        record.evictions += 1
        record.evicted_at, record.evicted_reason = now, reason
        stop_job, stop = self.stop_job, self.stoppers.get(key)  # no stop_job: a one-shot run, which deletes nothing
        deleted = (stop_job(record.job_key) if record.job else stop() if stop else []) if stop_job else []
        lost = sum(lost_progress(pod.raw, record.running_since.get(pod.info.key), now) for pod in deleted)
        self.work_lost_seconds += lost
        self._clear_admission(record, reason, message, requeued=requeue_after is None and not deactivated)
        self._tell(EVICTED, record, reason=reason, requeued=not deactivated, lost_pod_seconds=lost)
        if deactivated:
            return
        if requeue_after is None:
            self._requeue(record)
        else:
            record.requeue_at = now + requeue_after
            if reason == PODS_READY_TIMEOUT:  # UpdateRequeueState; an admission check's Retry sets none
                self._set_status(record, {"requeueState": {"count": record.requeue_count,
                                                           "requeueAt": timestamp(record.requeue_at)}})
            self.engine.at(record.requeue_at, CONTROLLER, lambda: self._backoff_finished(record))

    def _evict_not_ready(self, record: WorkloadRecord, reason: str, message: str, backoff: float) -> None:
        self.evict(record.key, reason, message, requeue_after=backoff)

    def _deactivate(self, record: WorkloadRecord, reason: str = DEACTIVATED_BY_LIMIT,
                    message: str = DEACTIVATED_MESSAGE) -> None:
        """triggerDeactivation (past backoffLimitCount) or a Rejected check: the Workload is deactivated
        (spec.active: false) and evicted for good; its requeueState goes."""
        record.deactivated = True
        raw = self.state.workloads[record.key]
        status = {k: v for k, v in (raw.get("status") or {}).items() if k != "requeueState"}
        self.state.put_workload(record.key, {**raw, "spec": {**raw["spec"], "active": False}, "status": status})
        self.evict(record.key, reason, message, deactivated=True)

    def _clear_admission(self, record: WorkloadRecord, reason: str, message: str, *, requeued: bool) -> None:
        assert record.admitted is not None
        now = self.engine.now()
        self.tree.remove_usage(cq_key(record.cluster_queue), record.admitted.assignment.usage)
        self.tas.unbook(record.admitted.entry.workload, record.admitted.assignment)
        self.tas.released(record.job_key if record.job else record.key)
        self._holding.pop(record.key, None)
        raw = self.state.workloads[record.key]
        status = {k: v for k, v in (raw.get("status") or {}).items() if k != "admission"}
        # SyncAdmittedCondition accumulates the time the Workload was admitted
        past = int(now - (now if record.admitted_at is None else record.admitted_at))
        status["accumulatedPastExecutionTimeSeconds"] = int(status.get("accumulatedPastExecutionTimeSeconds", 0)) + past
        if status.get("admissionChecks"):
            status["admissionChecks"] = [reset_check(c, timestamp(now)) for c in status["admissionChecks"]]
        self.state.put_workload(record.key, {**raw, "status": status})
        record.admitted, record.reserved_at, record.admitted_at = None, None, None
        record.ready_pods.clear()
        record.running_since.clear()
        record.recovering_since = None
        at = timestamp(now)
        conditions = [new_condition("Requeued", "True" if requeued else "False", reason, message, at),
                      new_condition("QuotaReserved", "False", PENDING_EVALUATION, message, at),
                      new_condition("Admitted", "False", *NO_RESERVATION, at)]
        if self.pods_ready is not None:
            conditions.append(new_condition("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded",
                                         at))
        self._set_conditions(record, conditions)
        record.last_pending = (PENDING_EVALUATION, message)
        self._batched.quota_freed(record.cluster_queue)

    def _backoff_finished(self, record: WorkloadRecord) -> None:
        """The requeue backoff is over: Requeued=True BackoffFinished, requeueAt cleared, back in the queue."""
        if record.requeue_at is None or record.deactivated or record.admitted is not None:
            return
        record.requeue_at = None
        if record.requeue_count:
            self._set_status(record, {"requeueState": {"count": record.requeue_count}})
        at = timestamp(self.engine.now())
        self._set_conditions(record, [new_condition("Requeued", "True", *BACKOFF_FINISHED, at)])
        self._requeue(record)

    def _requeue(self, record: WorkloadRecord) -> None:
        """Back in its ClusterQueue, ordered by creation time, or by eviction time after a PodsReady timeout with
        requeuingStrategy.timestamp Eviction (GetQueueOrderTimestamp)."""
        if record.entry is None:
            return
        settings = self.pods_ready
        by_eviction = record.evicted_reason == ADMISSION_CHECK or (
            record.evicted_reason == PODS_READY_TIMEOUT and settings is not None and settings.requeue_at_eviction)
        when = record.evicted_at if by_eviction and record.evicted_at is not None else record.created
        self.queues.forget(record.entry)
        record.entry = dataclasses.replace(record.entry, timestamp=when)
        self.queues.push(record.entry)
        self._tell(QUEUED, record)
        self._kick()

    def _tell(self, type_: str, record: WorkloadRecord, **details: Any) -> None:
        if self.listeners:
            event = KueueEvent(self.engine.now(), type_, record.key, record.cluster_queue, **details)
            for listener in self.listeners:
                listener(event)

    def write_condition(self, key: str, type_: str, status: str, reason: str, message: str) -> None:
        """A condition another controller of the Workload's owner writes (the pod reconciler's
        WaitingForReplacementPods), stamped with the simulated time."""
        record = self.records.get(key)
        if record is not None:
            self._set_conditions(record, [new_condition(type_, status, reason, message, timestamp(self.engine.now()))])

    def _set_status(self, record: WorkloadRecord, fields: dict[str, Any]) -> None:
        raw = self.state.workloads[record.key]
        self.state.put_workload(record.key, {**raw, "status": {**(raw.get("status") or {}), **fields}})

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
        """The read-only summary of the queues and Workloads now."""
        return build_view(self.objects.cluster_queues, self.tree, self.records.values(), self.state.workloads,
                          self.notes)

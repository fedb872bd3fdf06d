"""The workload controllers over time: arrivals create objects, Jobs create pods as earlier ones succeed.

Pods come from the twin's own controllers (:func:`dratwin.cluster.workloads.expand_workloads`) and their
claims from the resourceclaim controller (:func:`dratwin.cluster.load.add_created_pods`). A Job's pods for
all its completions are named when it arrives (so names do not depend on what happens later); the Job
controller keeps ``parallelism`` of them active and creates the next one when one succeeds, as
``job.manageJob`` does. A pod that leaves without succeeding (preempted) is a failure: the Job controller
replaces it (a new name, the same completion index) after its pod-failure backoff (10 s, doubling, at most
6 min), until more than ``backoffLimit`` (6) pods have failed; then the Job is failed
(``BackoffLimitExceeded``) and creates no more pods. A Job annotated ``dratwin.io/gang: "true"`` is a gang:
the scheduler places its active pods together or not at all.

With Kueue (:mod:`dratwin.sim.kueue`), a Job it manages is handed to it on arrival (``queue_job``) and comes
back through :meth:`WorkloadController.start_job` once admitted; ``on_job_finished`` hears when a Job ends
(Complete: every completion succeeded; Failed: BackoffLimitExceeded and no pod left active).
With Kueue's pod integrations on, an arriving Deployment or StatefulSet goes through Kueue's webhook
(:func:`dratwin.kueue.pods.owner_webhook`) before its pods are made, and the pods through the pod webhook
as they are created (:mod:`dratwin.sim.kueue_pods`).
"""

from __future__ import annotations

import datetime
import functools
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.codec import copy_raw, decode_as
from dratwin.api.resource import ResourceClaimTemplate
from dratwin.api.workloads import Job
from dratwin.cluster.load import add_created_pods
from dratwin.cluster.naming import generated_name, object_uid
from dratwin.cluster.state import PodRecord
from dratwin.cluster.workloads import SIMULATION_EPOCH, expand_workloads
from dratwin.kueue.pods import owner_webhook
from dratwin.scenario.model import Arrival
from dratwin.scheduler.framework import PodInfo
from dratwin.sim.engine import WORLD, Engine
from dratwin.sim.store import Change, Store

Raw = dict[str, Any]
GANG_ANNOTATION = "dratwin.io/gang"
DEFAULT_BACKOFF_LIMIT = 6  # Job spec.backoffLimit default
FAILURE_BACKOFF_SECONDS = 10.0  # the Job controller's pod failure backoff: doubles with each failure
MAX_FAILURE_BACKOFF_SECONDS = 360.0
_EPOCH = datetime.datetime.fromisoformat(SIMULATION_EPOCH.replace("Z", "+00:00"))


@functools.lru_cache(maxsize=4096)  # controllers stamp many objects at one moment
def timestamp(seconds: float) -> str:
    """RFC 3339 time of a simulated moment (the run starts at the epoch the workload controllers use)."""
    moment = _EPOCH + datetime.timedelta(seconds=int(seconds))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class JobRun:
    key: str  # namespace/name
    parallelism: int
    waiting: deque[Raw]  # pods not created yet, in index order
    run_seconds: float | None
    gang: bool
    backoff_limit: int = DEFAULT_BACKOFF_LIMIT
    active: set[str] = field(default_factory=set)
    succeeded: int = 0
    failed: int = 0
    backoff_limit_exceeded: bool = False
    finished: bool = False
    suspended: bool = False  # stopped (spec.suspend: true) until started again
    created_as: dict[str, Raw] = field(default_factory=dict)  # active pod key -> the pod as it was created

    def failure_backoff(self) -> float:
        return float(min(FAILURE_BACKOFF_SECONDS * 2 ** max(self.failed - 1, 0), MAX_FAILURE_BACKOFF_SECONDS))


@dataclass
class WorkloadController:
    engine: Engine
    store: Store
    rng: random.Random
    enqueue: Callable[[Sequence[PodInfo], str | None], None]  # new pending pods, with their gang
    priority_classes: list[Raw] = field(default_factory=list)
    run_seconds: dict[str, float | None] = field(default_factory=dict)  # by pod key
    jobs: dict[str, JobRun] = field(default_factory=dict)
    job_of: dict[str, str] = field(default_factory=dict)  # pod key -> Job key
    notes: list[str] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)
    on_deployment: list[Callable[[Raw], None]] = field(default_factory=list)  # a Deployment arrived
    # Asked before pods are created: when the workload's pods may be (the LADF model cache); None: now.
    creatable_at: Callable[[str, float], float] | None = None
    # Kueue takes the Jobs it manages on arrival (True: taken, it starts them when admitted); None: no Kueue.
    queue_job: Callable[[Raw, float | None], bool] | None = None
    on_job_finished: list[Callable[[str, bool], None]] = field(default_factory=list)  # (Job key, succeeded)
    # A Job's pods about to be created, as Kueue's topology ungater leaves them (Job key, pods); None: as they are.
    ungate: Callable[[str, list[Raw]], list[Raw]] | None = None

    def __post_init__(self) -> None:
        self.store.subscribe("Pod", self._on_pod)

    def schedule_arrivals(self, arrivals: Sequence[Arrival]) -> None:
        for arrival in arrivals:
            self.engine.at(arrival.at_seconds, WORLD, lambda a=arrival: self.arrive(a))  # type: ignore[misc]

    def arrive(self, arrival: Arrival) -> None:
        state = self.store.state
        workloads: list[Raw] = []
        for obj in arrival.objects:
            if obj.kind == "ResourceClaimTemplate":
                template = decode_as(obj.raw, ResourceClaimTemplate, obj.ref)
                namespace = template.metadata.namespace or "default"
                state.templates[f"{namespace}/{template.metadata.name}"] = template
                state.record("Added", "ResourceClaimTemplate", f"{namespace}/{template.metadata.name}")
            elif obj.kind == "ResourceClaim":
                state.add_claim(obj.raw)
            elif obj.kind == "PriorityClass":
                self.priority_classes.append(obj.raw)
            else:
                workloads.append(obj.raw)
        for raw in workloads:
            if raw.get("kind") == "Job":
                if self.queue_job is None or not self.queue_job(raw, arrival.run_seconds):
                    self.start_job(raw, arrival.run_seconds)
            else:
                if raw.get("kind") == "Deployment":
                    for hook in self.on_deployment:
                        hook(raw)
                self.create(self.expand([raw]), arrival.run_seconds, None)

    def expand(self, raws: list[Raw], *, notes: bool = True) -> list[Raw]:
        frameworks = self.store.loaded.kueue_frameworks  # Kueue's Deployment and StatefulSet webhooks, when on
        raws = [dict(owner_webhook(r, frameworks)) for r in raws] if frameworks is not None else raws
        expansion = expand_workloads([*self.priority_classes, *raws], self.rng,
                                     creation_timestamp=timestamp(self.engine.now()))
        if notes:
            self.notes += [str(n) for n in expansion.notes]
        self.rejections += [str(r) for r in expansion.rejections]
        return list(expansion.pods)

    def start_job(self, raw: Raw, run_seconds: float | None) -> None:
        """A Job created, or unsuspended (Kueue admitted it again after an eviction): its pods for what is left."""
        meta = raw.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        before = self.jobs.get(key)
        if before is not None and before.suspended:
            raw = _remaining(raw, before.succeeded)
        spec = decode_as(raw, Job, f"Job {key}").spec  # wrong types: the decode error names the field
        parallelism = 1 if spec.parallelism is None else spec.parallelism
        completions = spec.completions
        every = copy_raw(raw)
        widened = completions is not None and completions > parallelism
        if widened:
            every["spec"]["parallelism"] = completions
        pods = self.expand([every], notes=not widened)
        if not pods:
            return
        if widened:
            self.notes.append(f"Job {key}: {completions} completions, {parallelism} pod(s) at a time: the next pod "
                              "is created when one succeeds")
        gang = str((meta.get("annotations") or {}).get(GANG_ANNOTATION, "")).lower() == "true"
        limit = DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit
        job = JobRun(key, max(parallelism, 0), deque(pods), run_seconds, gang, limit)
        if before is not None and before.suspended:  # status.succeeded and status.failed carry over
            job.succeeded, job.failed = before.succeeded, before.failed
        self.jobs[key] = job
        self._create_next(job)

    def succeeded(self, key: str) -> int:
        """The Job's ``status.succeeded``: its pods that succeeded (0 for a Job not started)."""
        job = self.jobs.get(key)
        return job.succeeded if job is not None else 0

    def stop_job(self, key: str) -> list[PodRecord]:
        """``spec.suspend`` set to true (Kueue evicted the Job): its active pods are deleted, without counting as
        failures, and no more are created until it is started again; returns the pods deleted, as they were."""
        job = self.jobs.get(key)
        if job is None or job.finished:
            return []
        job.suspended = True
        job.waiting.clear()
        deleted = []
        for pod_key in sorted(job.active):
            job.created_as.pop(pod_key, None)
            self.job_of.pop(pod_key, None)
            record = self.store.state.pods.get(pod_key)
            if record is not None:
                deleted.append(PodRecord(dict(record.raw), record.pod, record.info))
                record.raw = suspended_pod(record.raw)
                self.store.note("Killing", "Pod", pod_key, f"Job {key} suspended: its pods are deleted")
                self.store.delete_pod(pod_key)
        job.active.clear()
        return deleted

    def _create_next(self, job: JobRun) -> None:
        batch: list[Raw] = []
        while not job.backoff_limit_exceeded and job.waiting and len(job.active) + len(batch) < job.parallelism:
            pod = job.waiting.popleft()
            batch.append(pod)
        if batch and self.ungate is not None:
            batch = self.ungate(job.key, batch)
        for pod in batch:
            meta = pod["metadata"]
            pod_key = f"{meta['namespace']}/{meta['name']}"
            job.active.add(pod_key)
            job.created_as[pod_key] = copy_raw(pod)
            self.job_of[pod_key] = job.key
        if batch:
            self.create(batch, job.run_seconds, job.key if job.gang else None)

    def create(self, pods: list[Raw], run_seconds: float | None, gang: str | None) -> None:
        """Create controller pods now, or when their workload's model is in the cluster cache (LADF)."""
        if self.creatable_at is not None and pods:
            now = self.engine.now()
            when = max(self.creatable_at(workload_of(pod), now) for pod in pods)
            if when > now:
                self.engine.at(when, WORLD, lambda: self._create_now(pods, run_seconds, gang))
                return
        self._create_now(pods, run_seconds, gang)

    def _create_now(self, pods: list[Raw], run_seconds: float | None, gang: str | None) -> None:
        now = timestamp(self.engine.now())
        for pod in pods:
            pod["metadata"]["creationTimestamp"] = now
        for pod in pods:
            meta = pod["metadata"]
            owned_by_replica_set = any(o.get("kind") == "ReplicaSet" for o in meta.get("ownerReferences") or [])
            # A Deployment's pods restart when they exit: they run until deleted.
            self.run_seconds[f"{meta['namespace']}/{meta['name']}"] = None if owned_by_replica_set else run_seconds
        created = add_created_pods(self.store.loaded, pods, self.rng)
        if created:
            self.enqueue(created, gang)

    def _on_pod(self, change: Change) -> None:
        if change.type != "Deleted" or change.pod is None:
            return
        job_key = self.job_of.pop(change.key, None)
        self.run_seconds.pop(change.key, None)
        job = self.jobs.get(job_key) if job_key else None
        if job is None:
            return
        job.active.discard(change.key)
        created_as = job.created_as.pop(change.key, None)
        if pod_phase(change.pod.raw) == "Succeeded":
            job.succeeded += 1
            self._create_next(job)
            if not job.waiting and not job.active:
                self._finished(job, succeeded=True)
            return
        job.failed += 1
        if job.failed > job.backoff_limit:
            if not job.backoff_limit_exceeded:
                job.backoff_limit_exceeded = True
                job.waiting.clear()
                self.notes.append(f"Job {job.key}: failed (BackoffLimitExceeded): {job.failed} pods failed, "
                                  f"backoffLimit {job.backoff_limit}")
            if not job.active:
                self._finished(job, succeeded=False)
            return
        if created_as is not None:
            job.waiting.appendleft(self._replacement(created_as))
        self.engine.after(job.failure_backoff(), WORLD, lambda: self._create_next(job))

    def _finished(self, job: JobRun, *, succeeded: bool) -> None:
        if job.finished:
            return
        job.finished = True
        for hook in self.on_job_finished:
            hook(job.key, succeeded)

    def _replacement(self, pod: Raw) -> Raw:
        """A new pod for a failed one: the same template and completion index under a fresh name."""
        fresh = copy_raw(pod)
        meta = fresh["metadata"]
        namespace, base = meta["namespace"], meta.get("generateName") or f"{meta['name']}-"
        name = generated_name(base, self.rng)
        while f"{namespace}/{name}" in self.store.state.pods:
            name = generated_name(base, self.rng)
        meta["name"], meta["uid"] = name, object_uid("v1", "Pod", namespace, name)
        fresh["status"] = {"phase": "Pending"}
        return fresh


def _remaining(raw: Raw, succeeded: int) -> Raw:
    """The Job as it goes on after a suspension: the completions that have not succeeded yet. (A work-queue Job,
    without completions, goes on with its pods less those that succeeded; Indexed Jobs restart their indexes
    from 0 here, where the Job controller would keep the succeeded ones: a simplification.)"""
    out = copy_raw(raw)
    spec = out.setdefault("spec", {})
    if spec.get("completions") is not None:
        spec["completions"] = max(int(spec["completions"]) - succeeded, 0)
    else:
        spec["parallelism"] = max(int(spec.get("parallelism", 1)) - succeeded, 0)
    return out


def suspended_pod(raw: Raw) -> Raw:
    """A pod the Job controller deletes because its Job was suspended: its containers are killed, it ends Failed."""
    return with_phase(raw, "Failed")


def workload_of(raw: Raw) -> str:
    """``namespace/name`` of the workload a pod belongs to: its Job, the Deployment of its ReplicaSet (the
    ReplicaSet's name less its pod-template-hash), its StatefulSet, or the pod itself."""
    meta = raw.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    for owner in meta.get("ownerReferences") or []:
        if owner.get("controller", True):
            name = str(owner.get("name") or "")
            if owner.get("kind") == "ReplicaSet" and "-" in name:
                name = name.rsplit("-", 1)[0]
            return f"{namespace}/{name}"
    return f"{namespace}/{meta.get('name') or ''}"


def pod_phase(raw: Raw) -> str:
    return str((raw.get("status") or {}).get("phase") or "Pending")


def with_phase(raw: Raw, phase: str) -> Raw:
    return {**raw, "status": {**(raw.get("status") or {}), "phase": phase}}


"""Kueue's state for ``explain``: the one-shot run of the control plane with Kueue's controller, read back.

The run is what ``dratwin schedule`` runs (:mod:`dratwin.sim.one_shot`): the queued Jobs suspended, their
Workloads created and admitted at time 0 until the queues settle (:mod:`dratwin.sim.kueue`), the admitted
Jobs started with their flavors' nodeLabels and tolerations and their pods placed. :class:`KueueRun` reads
what the controller decided (each Workload's entry, admission or last ``QuotaReserved=False`` word, and the
quota tree with the admitted usage) and can start one more Job as Kueue would if it admitted it, to place
its pods beside the others: the placement view of a Workload that waits.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator import Features
from dratwin.api.loader import LoadedObject
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.kueue.cycle import Admitted, Entry, Pending, Snapshot
from dratwin.kueue.explain import QuotaView, quota_view
from dratwin.kueue.jobs import admitted_job
from dratwin.kueue.usage import WorkloadUsage, decode_workload
from dratwin.scheduler.profile import Options
from dratwin.scheduler.scheduler import Attempt
from dratwin.sim.kueue import KueueController
from dratwin.sim.kueue_records import WorkloadRecord
from dratwin.sim.one_shot import OneShot
from dratwin.twin.schedule import ScheduleReport

Raw = dict[str, Any]


@dataclass(frozen=True)
class QueuedWorkload:
    """One Workload, the Job it was made from, and the controller's last word on it."""

    entry: Entry
    job: Raw  # the Job as Kueue stores it while suspended
    verdict: Admitted | Pending | None  # None: no cycle tried it (behind a blocking StrictFIFO head)
    pods: tuple[str, ...] = ()  # the Workload of gated pods (Kueue's pod integration): the pods' keys

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def admitted(self) -> bool:
        return isinstance(self.verdict, Admitted)

    @property
    def job_namespace(self) -> str:
        return str((self.job.get("metadata") or {}).get("namespace") or "default")

    @property
    def job_name(self) -> str:
        return str((self.job.get("metadata") or {}).get("name") or "")

    @property
    def owner_ref(self) -> str:
        if self.pods:
            return f"pod {self.pods[0]}" if len(self.pods) == 1 else f"pods {', '.join(self.pods)}"
        return f"Job {self.job_namespace}/{self.job_name}"


@dataclass
class KueueRun:
    loaded: LoadedCluster
    one_shot: OneShot
    controller: KueueController
    attempts: list[Attempt]
    workloads: dict[str, QueuedWorkload] = field(default_factory=dict)  # namespace/name → workload

    @property
    def snapshot(self) -> Snapshot:
        objects = self.controller.objects
        return Snapshot(objects.cluster_queues, objects.flavors, self.controller.tree)

    @property
    def notes(self) -> list[str]:
        return list(self.controller.notes)

    def view(self, key: str) -> QuotaView:
        queued = self.workloads[key]
        return quota_view(self.snapshot, queued.entry, queued.verdict)

    def by_job(self, namespace: str, name: str) -> QueuedWorkload | None:
        return next((w for w in self.workloads.values() if (w.job_namespace, w.job_name) == (namespace, name)), None)

    def by_pod(self, key: str) -> QueuedWorkload | None:
        """The queued Job whose pods' names ``key`` has (``<job>-<suffix>``, ``<job>-<index>-<suffix>``; the
        longest Job name that is a prefix of it)."""
        namespace, _, name = key.partition("/")
        owners = [w for w in self.workloads.values()
                  if w.job_namespace == namespace and name.startswith(w.job_name + "-")]
        return max(owners, key=lambda w: len(w.job_name), default=None)

    def start(self, queued: QueuedWorkload, flavor_names: Sequence[str]) -> str:
        """Start ``queued``'s Job as Kueue would on admission with ``flavor_names`` and place its pods after the
        others; "" when started, else why Kueue could not start it."""
        flavors = self.controller.objects.flavors
        pods = self.one_shot.kueue_pods
        if queued.pods and pods is not None:  # its gated pods released as on admission
            refused = pods.release(queued.key, [flavors[f] for f in flavor_names if f in flavors])
            self.one_shot.store.dispatch()
            self.attempts += self.one_shot.run([]).attempts
            return refused
        if not queued.job:
            return "the Workload was written as such: no Job of the input creates its pods"
        started = admitted_job(queued.job, [flavors[f] for f in flavor_names if f in flavors])
        if not isinstance(started, dict):
            return started.message
        self.controller.start_job(started, None)
        self.attempts += self.one_shot.run([]).attempts
        return ""

    def report(self) -> ScheduleReport:
        return ScheduleReport(self.loaded, self.attempts, self.one_shot.scheduling.scheduler.profile.dra,
                              self.controller.view())

    def job_pods(self, queued: QueuedWorkload) -> list[str]:
        """The pods of ``queued``'s Job in the cluster (created once it was started), or its own pods."""
        if queued.pods:
            return list(queued.pods)
        return [key for key, record in self.loaded.state.pods.items()
                if record.pod.metadata.namespace == queued.job_namespace
                and (record.pod.metadata.labels or {}).get(JOB_NAME_LABEL) == queued.job_name]


JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


def run_with_kueue(objects: Sequence[LoadedObject], features: Features, options: Options,
                   compiler: SelectorCompiler | None, until: str | None = None) -> KueueRun | None:
    """The one-shot run over ``objects`` (already through intake) with Kueue's controller, up to ``until``;
    ``None`` when the input holds no ClusterQueue and no LocalQueue."""
    loaded = load_cluster(objects, features, random.Random(options.seed), admitted_already=True, kueue=True)
    one_shot = OneShot(loaded, options, compiler, until)
    run = one_shot.run(loaded.pending)
    if one_shot.kueue is None:
        return None
    found = KueueRun(loaded, one_shot, one_shot.kueue, list(run.attempts))
    members = one_shot.kueue_pods.members if one_shot.kueue_pods is not None else {}
    found.workloads = {key: _queued(found.controller, record, tuple(members.get(key, ())))
                       for key, record in one_shot.kueue.records.items()}
    return found


def _queued(controller: KueueController, record: WorkloadRecord, pods: tuple[str, ...]) -> QueuedWorkload:
    entry = record.entry
    if entry is None:  # its LocalQueue or ClusterQueue does not exist: never queued
        workload = decode_workload(controller.state.workloads[record.key])
        entry = Entry(workload, record.cluster_queue, WorkloadUsage(), record.created)
    verdict: Admitted | Pending | None = record.admitted
    if verdict is None and record.last_pending[0]:
        verdict = Pending(entry, *record.last_pending)
    return QueuedWorkload(entry, record.job, verdict, pods)

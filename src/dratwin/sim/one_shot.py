"""The control plane run once, at virtual time 0: what ``dratwin schedule`` and ``explain`` are.

The same parts as a simulation (:mod:`dratwin.sim.run`): the store that owns the loaded cluster, the
scheduling controller with kube-scheduler's queue (activeQ by priority, then queue time) and the twin's
binder, and the resourceclaim controller that releases a preemption victim's claims when it is gone. The
run ends when every pending pod has had its attempt: a pod that does not fit is not retried (no backoff, no
requeue on cluster events), since nothing in a one-shot run changes the cluster after its own decisions.

The one exception is kube-scheduler's own: a preemptor whose victims are being removed is tried again as
the very next cycle, once their deletions are through. Upstream keeps the freed room for it by its
nominated node (pods tried meanwhile count it there); trying it next gives the same placement.

With Kueue (a ClusterQueue or LocalQueue in the input, :mod:`dratwin.sim.kueue`): the queued Jobs' Workloads
are created and admitted at time 0 until the queues settle, and the admitted Jobs' pods join the others in
the scheduler's queue (with the pod integration on, :mod:`dratwin.sim.kueue_pods`, the gated pods' Workloads
too: an admitted one's pods are ungated and then tried); the Workloads left waiting keep Kueue's reason. No
Job or pod ends in a one-shot run, so no quota is freed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, add_created_pods
from dratwin.cluster.workloads import expand_workloads
from dratwin.scheduler.binder import mark_unschedulable
from dratwin.scheduler.framework import PodInfo
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources
from dratwin.scheduler.profile import Options
from dratwin.scheduler.scheduler import Attempt
from dratwin.sim.clock import VirtualClock
from dratwin.sim.engine import SCHEDULER, Engine
from dratwin.sim.kubelet import ClaimController
from dratwin.sim.kueue import KueueController, Raw
from dratwin.sim.kueue_objects import read_kueue_objects
from dratwin.sim.kueue_pods import KueuePods
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.store import Store


@dataclass
class OneShotScheduling(SchedulingController):
    """The scheduling controller of a one-shot run: each pod's final attempt is kept, none is retried."""

    until: str | None = None  # stop right after this pod's final attempt
    final: dict[str, Attempt] = field(default_factory=dict)
    stopped: bool = False
    _retried: set[str] = field(default_factory=set)

    def _kick(self) -> None:
        if not self.stopped:
            super()._kick()

    def _cycle(self) -> None:
        self._cycle_due = False
        if self.stopped:
            return
        info = self.queue.pop(self.engine.now())
        if info is not None:
            self._try(info)
        self._kick()

    def _try(self, info: PodInfo) -> None:
        attempt = self._attempt(info)
        self.final[info.key] = attempt
        if attempt.scheduled:
            self._scheduled(info.key)
        elif attempt.victims and info.key not in self._retried:
            # Before the next pod's cycle, after the victims' deletions are dispatched.
            self._retried.add(info.key)
            self.engine.at(self.engine.now(), SCHEDULER, lambda: self._try(info))
            return
        else:
            self.queue.delete(info.key)
            self.messages[info.key] = attempt.message
            self.store.note("FailedScheduling", "Pod", info.key, attempt.message)
            mark_unschedulable(self.store.state, attempt)
        if info.key == self.until:
            self.stopped = True


@dataclass
class OneShotRun:
    attempts: list[Attempt]
    dra: DynamicResources | None
    reached_until: bool  # the run stopped at ``until``


@dataclass
class OneShot:
    """A loaded cluster wired to the control plane's parts, for one or more one-shot passes."""

    loaded: LoadedCluster
    options: Options
    compiler: SelectorCompiler | None = None
    until: str | None = None
    engine: Engine = field(init=False)
    store: Store = field(init=False)
    scheduling: OneShotScheduling = field(init=False)
    kueue: KueueController | None = field(init=False, default=None)
    kueue_pods: KueuePods | None = field(init=False, default=None)  # Kueue's pod integration, when on
    _kueue_pods: list[PodInfo] = field(init=False, default_factory=list)  # pods of the Jobs Kueue admitted
    _kueue_reported: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        clock = VirtualClock()
        self.engine = Engine(clock)
        self.store = Store(self.loaded, clock, keep_state_events=True)  # the report lists them
        self.scheduling = OneShotScheduling(self.engine, self.store, self.options, self.compiler, until=self.until)
        ClaimController(self.store)
        self.store.skip_delivered()  # the load's own events are the state at time 0
        self.engine.after_each.append(self.store.dispatch)
        objects = read_kueue_objects(self.loaded.kueue_objects, self.loaded.priority_classes)
        if objects.present:
            # the pass runs at time 0 only: a cohort's batched requeue is not waited for, the queues settle
            self.kueue = KueueController(self.engine, self.store, objects, self._start_job, self.compiler,
                                         requeue_batch_seconds=0.0)
            for job in self.loaded.queued_jobs:
                self.kueue.add_job(job, None)
            if self.loaded.kueue_frameworks is not None:
                self.kueue_pods = KueuePods(self.kueue, self.store)

    def _start_job(self, job: Raw, run_seconds: float | None) -> None:
        """The Job controller on an admitted Job: its pods, through priority admission and their claims."""
        meta = job.get("metadata") or {}
        rng = random.Random(f"kueue/{self.options.seed}/{meta.get('namespace') or 'default'}/{meta.get('name')}")
        expansion = expand_workloads([*self.loaded.priority_classes, job], rng)
        self.loaded.notes += [str(n) for n in expansion.notes]
        self.loaded.rejections += [str(r) for r in expansion.rejections]
        pods = list(expansion.pods)
        if self.kueue is not None:
            pods = self.kueue.ungate(f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}", pods)
        created = add_created_pods(self.loaded, pods, rng)
        self._kueue_pods += created
        self.scheduling.enqueue(created)

    def run(self, pods: Sequence[PodInfo]) -> OneShotRun:
        """Queue ``pods`` (in creation order) and run until each has had its final attempt; the attempts are
        returned in the order of ``pods``."""
        if not self.scheduling.stopped:
            self.scheduling.enqueue(pods)
            self.engine.run(0.0)
        final = self.scheduling.final
        dra = self.scheduling.scheduler.profile.dra
        admitted = self._kueue_pods[self._kueue_reported:]
        self._kueue_reported = len(self._kueue_pods)
        return OneShotRun([final[p.key] for p in [*pods, *admitted] if p.key in final], dra, self.scheduling.stopped)

"""``dratwin schedule``'s run: the control plane's parts run once over a loaded cluster, and its report.

The run (:mod:`dratwin.sim.one_shot`) is the simulation's store, scheduling controller with its queue, the
twin's binder (:mod:`dratwin.scheduler.binder`) and resourceclaim controller, at virtual time 0, until every
pending pod has had its attempt; then the pods that controllers create once the first ones are placed (the
IMEX daemons of ComputeDomains) get theirs. With Kueue, its controller runs in the same pass: the queued
Jobs' Workloads are admitted (or left waiting) first and the admitted Jobs' pods scheduled with the others.
The report is read from the cluster state the run left.
"""

from __future__ import annotations

import contextlib
import gc
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from dratwin.api.resource import AllocationResult
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, imex_daemons
from dratwin.cluster.state import ClusterState, pod_claim_keys
from dratwin.scheduler.binder import StateBinder
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources
from dratwin.scheduler.profile import Options, default_profile
from dratwin.scheduler.scheduler import Attempt
from dratwin.sim.kueue_view import KueueView
from dratwin.sim.one_shot import OneShot

# Where these lived before the control plane's parts were split out; callers may import them from here.
__all__ = ["Options", "ScheduleReport", "StateBinder", "default_profile", "device_lines", "gc_paused", "schedule"]


@dataclass
class ScheduleReport:
    loaded: LoadedCluster
    attempts: list[Attempt] = field(default_factory=list)
    dra: DynamicResources | None = None
    kueue: KueueView | None = None  # None: no Kueue in the cluster

    @property
    def state(self) -> ClusterState:
        return self.loaded.state

    def attempt_of(self, pod: str) -> Attempt | None:
        return next((a for a in self.attempts if a.pod == pod), None)

    def devices_of(self, attempt: Attempt) -> list[str]:
        """``claim/request: driver/pool/device`` for every claim the pod uses.

        A claim shared by several pods is allocated once, when the first of them is scheduled; the others
        reuse that allocation, so their attempts allocate nothing: the devices are read from the claims
        the bound pod references. A pod that was evicted later in the run keeps what it got when it was
        scheduled."""
        record = self.state.pods.get(attempt.pod)
        if record is None or record.pod.spec.node_name != attempt.node:
            return device_lines(attempt.allocations)
        allocations = {}
        for key in pod_claim_keys(record.pod):
            claim = self.state.claims.get(key)
            allocation = claim.claim.status.allocation if claim is not None else None
            if allocation is None:
                allocation = attempt.allocations.get(key)
            if allocation is not None:
                allocations[key] = allocation
        return device_lines(allocations)


def device_lines(allocations: dict[str, AllocationResult]) -> list[str]:
    return [
        f"{claim}/{result.request}: {result.driver}/{result.pool}/{result.device}"
        for claim, allocation in allocations.items()
        for result in allocation.devices.results
    ]


def schedule(
    loaded: LoadedCluster, options: Options, compiler: SelectorCompiler | None = None, until: str | None = None
) -> ScheduleReport:
    """Run the scheduler over the pending pods (all of them, or up to and including ``until``)."""
    one_shot = OneShot(loaded, options, compiler, until)
    with gc_paused():
        run = one_shot.run(loaded.pending)
        attempts = run.attempts
        if not run.reached_until:
            # pods that controllers create once the first ones are placed (the IMEX daemons of ComputeDomains)
            attempts += one_shot.run(imex_daemons(loaded, random.Random(f"imex-daemons/{options.seed}"))).attempts
    kueue = one_shot.kueue.view() if one_shot.kueue is not None else None
    return ScheduleReport(loaded, attempts, run.dra, kueue)


@contextlib.contextmanager
def gc_paused(*, keep: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while scheduling: the cluster holds millions of objects, a full
    collection walks all of them, and a scheduling cycle makes almost no cyclic garbage.

    With ``keep``, what was built meanwhile is moved out of the collector's sight (``gc.freeze``) before it
    resumes, for objects that live until the command ends: the first collection after the pause would
    otherwise walk every one of them (0.3 s after scheduling 5,000 pods)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if was_enabled:
            gc.enable()

"""What Kueue's controller keeps about each Workload besides its object, and the preemption targets it evicts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dratwin.kueue.cycle import Admitted, Entry

Raw = dict[str, Any]
FlavorResource = tuple[str, str]

# What happens to a Workload, in the order a Workload lives it (KueueEvent.type).
CREATED, QUEUED, RESERVED, ADMITTED, EVICTED, FINISHED = (
    "Created", "Requeued", "QuotaReserved", "Admitted", "Evicted", "Finished")


@dataclass(frozen=True)
class KueueEvent:
    """One step of a Workload's life, told by Kueue's controller to whoever records the queues through time
    (:mod:`dratwin.sim.kueue_history`); the controller keeps no listener state beyond the list of them."""

    time: float
    type: str  # CREATED, QUEUED (back in its queue after an eviction), RESERVED, ADMITTED, EVICTED, FINISHED
    workload: str  # namespace/name
    cluster_queue: str  # "" while its LocalQueue does not exist
    reason: str = ""  # EVICTED: Kueue's reason (Preempted, PodsReadyTimeout, AdmissionCheck, Deactivated...)
    requeued: bool = True  # EVICTED: it waits for admission again (False: deactivated for good)
    usage: Mapping[FlavorResource, int] = field(default_factory=dict)  # RESERVED: the quota it holds
    pods: int = 0  # RESERVED: the pods of its PodSets
    lost_pod_seconds: float = 0.0  # EVICTED: the running time its deleted pods throw away


KueueListener = Callable[[KueueEvent], None]


class PreemptionTarget(Protocol):
    """A Workload the scheduler preempts: its key and the Preempted condition's reason (InClusterQueue,
    InCohortReclamation, ...) and message, as Kueue writes them."""

    @property
    def key(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def message(self) -> str: ...


@dataclass(frozen=True)
class Preempted:
    key: str
    reason: str
    message: str


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
    evictions: int = 0
    requeue_count: int = 0  # status.requeueState.count (PodsReady timeouts)
    requeue_at: float | None = None  # in backoff until then
    deactivated: bool = False
    evicted_at: float | None = None
    evicted_reason: str = ""
    recovering_since: float | None = None  # PodsReady=False WaitForRecovery since
    admissions: int = 0  # a timer set for one admission is void after the next
    ready_pods: set[str] = field(default_factory=set)
    running_since: dict[str, float] = field(default_factory=dict)  # pod -> when its containers started

    @property
    def job_key(self) -> str:
        meta = self.job.get("metadata") or {}
        return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"

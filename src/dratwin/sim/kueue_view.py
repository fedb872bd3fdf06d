"""A read-only summary of Kueue's state during or after a run, for outcomes, reports and the CLI.

Values only (copied out of the controller): per ClusterQueue the usage and the part of it borrowed from the
cohort, per (flavor, resource), in Kueue's integer units (cpu in millicores), with the count of Workloads
pending and admitted; per Workload its queues and the simulated times of its conditions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class ClusterQueueView:
    name: str
    usage: dict[FlavorResource, int]
    borrowed: dict[FlavorResource, int]  # usage beyond the nominal quota
    pending: int  # waiting for admission (queued, inadmissible, or in requeue backoff)
    admitted: int  # holding quota (admitted, not finished)


@dataclass(frozen=True)
class WorkloadView:
    key: str  # namespace/name
    queue: str  # the LocalQueue
    cluster_queue: str  # "" while its LocalQueue does not exist
    created: float
    reserved_at: float | None  # QuotaReserved=True
    admitted_at: float | None  # Admitted=True
    finished_at: float | None  # Finished=True
    reason: str = ""  # the last QuotaReserved=False reason, while it waits
    message: str = ""
    evictions: int = 0  # preemptions, PodsReady timeouts, ...
    active: bool = True  # False: deactivated (spec.active: false), never admitted again
    checks: tuple[tuple[str, str], ...] = ()  # status.admissionChecks: (name, state)

    @property
    def waiting(self) -> bool:
        return self.admitted_at is None and self.finished_at is None and self.active


@dataclass(frozen=True)
class KueueView:
    cluster_queues: list[ClusterQueueView]
    workloads: list[WorkloadView]
    notes: list[str] = field(default_factory=list)  # what Kueue's controllers could not do (a Job left suspended)

    def workload(self, key: str) -> WorkloadView | None:
        return next((w for w in self.workloads if w.key == key), None)

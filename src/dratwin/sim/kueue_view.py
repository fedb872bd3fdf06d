"""A read-only summary of Kueue's state during or after a run, for outcomes, reports and the CLI.

Values only (copied out of the controller): per ClusterQueue the usage and the part of it borrowed from the
cohort, per (flavor, resource), in Kueue's integer units (cpu in millicores), with the count of Workloads
pending and admitted; per Workload its queues and the simulated times of its conditions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.sim.kueue_records import WorkloadRecord

FlavorResource = tuple[str, str]
Raw = dict[str, Any]


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


def build_view(cluster_queues: Iterable[str], tree: QuotaTree, records: Iterable[WorkloadRecord],
               workloads: Mapping[str, Raw], notes: Sequence[str]) -> KueueView:
    """The view of the controller's state: counts per ClusterQueue in one pass over the records."""
    records = list(records)
    admitted: Counter[str] = Counter()
    pending: Counter[str] = Counter()
    for r in records:
        if r.finished_at is None and r.admitted is not None:
            admitted[r.cluster_queue] += 1
        elif r.finished_at is None and not r.deactivated:
            pending[r.cluster_queue] += 1
    queues = []
    for name in sorted(cluster_queues):
        node = tree.nodes.get(cq_key(name))
        usage = dict(sorted((node.usage if node else {}).items()))
        queues.append(ClusterQueueView(name, usage, borrowed_in(tree, name), pending[name], admitted[name]))
    views = []
    for r in records:
        raw = workloads[r.key]
        checks = (raw.get("status") or {}).get("admissionChecks") or []
        views.append(WorkloadView(r.key, str((raw.get("spec") or {}).get("queueName") or ""), r.cluster_queue,
                                  r.created, r.reserved_at, r.admitted_at, r.finished_at, r.last_pending[0],
                                  r.last_pending[1], r.evictions, not r.deactivated,
                                  tuple((str(c.get("name")), str(c.get("state"))) for c in checks)))
    return KueueView(queues, views, list(notes))


def borrowed_in(tree: QuotaTree, cluster_queue: str) -> dict[FlavorResource, int]:
    """What the ClusterQueue uses beyond its nominal quota, per (flavor, resource): borrowed from its cohort."""
    key = cq_key(cluster_queue)
    node = tree.nodes.get(key)
    borrowed = {}
    for fr, amount in sorted((node.usage if node else {}).items()):
        nominal = tree.quota(key, fr).nominal
        if amount > nominal:
            borrowed[fr] = amount - nominal
    return borrowed

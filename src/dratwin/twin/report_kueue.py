"""Kueue's Workloads in a report: ``kubectl get workloads -A`` columns, and the rows of the JSON output.

The columns are the Workload CRD's printer columns (``apis/kueue/v1beta2/workload_types.go``): QUEUE
``.spec.queueName``, RESERVED IN ``.status.admission.clusterQueue``, ADMITTED and FINISHED the status of
the ``Admitted`` and ``Finished`` conditions (empty while there is none), AGE as kubectl prints it. The
values are read from the Workload objects as stored, as kubectl reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dratwin.sim.kueue_view import KueueView

Raw = dict[str, Any]
HEADER = ("NAMESPACE", "NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE")


def print_columns(workload: Mapping[str, Any], age_seconds: float) -> tuple[str, ...]:
    meta = workload.get("metadata") or {}
    status = workload.get("status") or {}
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or ""),
            str((workload.get("spec") or {}).get("queueName") or ""),
            str((status.get("admission") or {}).get("clusterQueue") or ""),
            condition_status(workload, "Admitted"), condition_status(workload, "Finished"),
            human_duration(age_seconds))


def condition_status(workload: Mapping[str, Any], kind: str) -> str:
    for condition in (workload.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return str(condition.get("status") or "")
    return ""


def human_duration(seconds: float) -> str:
    """kubectl's age (``apimachinery/pkg/util/duration.HumanDuration``)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


def workload_rows(view: KueueView, workloads: Mapping[str, Raw], now: float) -> list[tuple[str, ...]]:
    """The table's rows, in creation order."""
    return [print_columns(workloads[w.key], now - w.created) for w in view.workloads if w.key in workloads]


def waiting_lines(view: KueueView) -> list[str]:
    """Why each Workload waits: Kueue's QuotaReserved=False reason and message."""
    lines = []
    for w in view.workloads:
        if not w.waiting:
            continue
        if w.reserved_at is not None:
            states = ", ".join(f"{name} {state}" for name, state in w.checks)
            lines.append(f"{w.key}: quota reserved in ClusterQueue {w.cluster_queue}, Admitted=False "
                         f"UnsatisfiedAdmissionChecks: {states}")
        elif w.reason:
            lines.append(f"{w.key}: QuotaReserved=False {w.reason}: {w.message}")
    return lines


def workload_json(view: KueueView, workloads: Mapping[str, Raw], now: float) -> list[dict[str, Any]]:
    rows = []
    for w in view.workloads:
        raw = workloads.get(w.key)
        if raw is None:
            continue
        columns = dict(zip(("namespace", "name", "queue", "reservedIn", "admitted", "finished", "age"),
                           print_columns(raw, now - w.created), strict=True))
        rows.append({**columns, "clusterQueue": w.cluster_queue or None, "reason": w.reason or None,
                     "message": w.message or None})
    return rows


def cluster_queue_json(view: KueueView) -> list[dict[str, Any]]:
    return [{"name": q.name, "pending": q.pending, "admitted": q.admitted,
             "usage": _by_flavor(q.usage), "borrowed": _by_flavor(q.borrowed)} for q in view.cluster_queues]


def _by_flavor(amounts: Mapping[tuple[str, str], int]) -> list[dict[str, Any]]:
    return [{"flavor": f, "resource": r, "amount": a} for (f, r), a in sorted(amounts.items())]


def workload_objects(view: KueueView | None, workloads: Mapping[str, Raw]) -> Sequence[Raw]:
    if view is None:
        return []
    return [workloads[w.key] for w in view.workloads if w.key in workloads]

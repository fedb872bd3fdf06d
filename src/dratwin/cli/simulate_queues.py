"""Kueue's queues in ``dratwin simulate``'s table: per ClusterQueue what it admitted, preempted and left
pending, how long its Workloads waited and what it borrowed; with ``--workloads`` every Workload in
``kubectl get workloads -A`` columns as the run left it (AGE counted to the end of the run)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dratwin.kueue.flavors import shown_amount
from dratwin.sim.compare import QueueSummary
from dratwin.sim.outcomes import KueueSummary
from dratwin.twin.report_kueue import HEADER, human_duration

QUEUE_COLUMNS = ("CLUSTERQUEUE", "ADMITTED", "PREEMPTED", "PENDING", "WAIT p50", "WAIT p95", "LOST GPU-h",
                 "BORROWED PEAK")
QUEUES_NOTE = ("queues (Kueue): ADMITTED admissions over the run; PREEMPTED Workloads evicted by preemption; "
               "PENDING waiting for quota at the end; WAIT from creation or requeue to admission; LOST GPU-h the "
               "running time of evicted Workloads' pods times their devices; BORROWED PEAK beyond nominal quota")


def queue_lines(rows: Sequence[tuple[str, QueueSummary]], duration: Callable[[float], str],
                *, variants: bool) -> list[str]:
    """The Queues block: one row per (variant, ClusterQueue); the variant column only when ``variants``."""
    if not rows:
        return []
    header = (("VARIANT",) if variants else ()) + QUEUE_COLUMNS
    table = [list(header)]
    for variant, q in rows:
        cells = [_number(q.admissions), _number(q.preemptions), _number(q.pending_at_end),
                 *((duration(q.waiting_p50_seconds), duration(q.waiting_p95_seconds)) if q.admissions else ("-", "-")),
                 f"{q.lost_gpu_hours:,.2f}",
                 borrowed_text(q.borrowed_peak)]
        table.append(([variant] if variants else []) + [q.cluster_queue, *cells])
    return ["", *_aligned(table, left=2 if variants else 1, last_left=True), "", QUEUES_NOTE]


def borrowed_text(peaks: dict[str, float]) -> str:
    """``p5/cpu 96, p5/nvidia.com/gpu 8``: each peak as Kueue prints amounts (cpu in cores, the rest as is)."""
    shown = [f"{key} {shown_amount(key.split('/', 1)[1], round(value))}" for key, value in peaks.items() if value]
    return ", ".join(shown) or "-"


def workload_lines(summary: KueueSummary) -> list[str]:
    """Every Workload with Kueue's print columns, in creation order."""
    table = [list(HEADER)]
    for w in summary.workloads:
        table.append([w.namespace, w.name, w.queue, w.reserved_in, w.admitted, w.finished,
                      human_duration(w.age_seconds)])
    return _aligned(table, left=len(HEADER), last_left=True)


def _number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def _aligned(table: list[list[str]], *, left: int, last_left: bool = False) -> list[str]:
    """Columns padded to their widest cell: the first ``left`` (and the last) to the left, the rest right."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [cell.ljust(w) if i < left or (last_left and i == len(row) - 1) else cell.rjust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("   ".join(cells).rstrip())
    return lines

"""Builders for report tests: small variants with hand-picked numbers.

    variant("dra", waiting=[1, 2, 3], reasons=[("Unschedulable", 4, "why")])
    report(variant("a"), variant("b"))
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.report import NodeMatrix, ReportData, Summary, TimeSeries, Variant, WaitReason

TIMES = (0.0, 3600.0, 7200.0)


def series(*values: float, times: Sequence[float] = TIMES) -> TimeSeries:
    return TimeSeries(times=tuple(times[: len(values)]), values=tuple(values))


def summary(**numbers: float) -> Summary:
    base: dict[str, float] = {
        "gpu_hours_allocated": 10.0,
        "gpu_hours_used": 6.0,
        "gpu_hours_idle": 4.0,
        "cost_dollars": 110.08,
        "pods_completed": 3,
        "pods_never_placed": 0,
    }
    base.update(numbers)
    return Summary(
        gpu_hours_allocated=base["gpu_hours_allocated"],
        gpu_hours_used=base["gpu_hours_used"],
        gpu_hours_idle=base["gpu_hours_idle"],
        cost_dollars=base["cost_dollars"],
        pods_completed=int(base["pods_completed"]),
        pods_never_placed=int(base["pods_never_placed"]),
    )


def variant(
    name: str,
    waiting: Sequence[float] = (1.0, 2.0, 30.0),
    startup: Sequence[float] = (60.0, 90.0),
    reasons: Sequence[tuple[str, int, str]] = (),
    nodes: Sequence[str] = ("node-a", "node-b"),
    description: str = "",
) -> Variant:
    matrix = NodeMatrix(
        metric="GPU utilization",
        nodes=tuple(nodes),
        times=TIMES,
        values=tuple((0.5, None, 1.0) for _ in nodes),
    )
    return Variant(
        name=name,
        description=description,
        summary=summary(),
        allocated_gpus=series(4, 8, 8),
        used_gpus=series(2, 6, 4),
        capacity_gpus=series(8, 8, 16),
        pending_pods=series(0, 3, 1),
        nodes=series(1, 1, 2),
        cost_dollars=series(0, 55.04, 110.08),
        waiting_s=tuple(waiting),
        startup_s=tuple(startup),
        node_utilization=matrix if nodes else None,
        wait_reasons=tuple(WaitReason(reason=r, pods=n, explanation=e, example_pod="ml/p-0") for r, n, e in reasons),
    )


def report(*variants: Variant, title: str = "test report") -> ReportData:
    return ReportData(title=title, scenario="scenario.yaml", seed=7, duration_s=7200.0, variants=tuple(variants))

"""A report built from synthetic numbers: two days of a small GPU fleet, device plugin against DRA with
sharing. It shows what every part of the page looks like without running a simulation, and the tests
use it. Deterministic for a seed.
"""

from __future__ import annotations

import math
import random

from dratwin.report.model import NodeMatrix, ReportData, Summary, TimeSeries, Variant, WaitReason

STEP_S = 300.0
DAY_S = 86400.0

_REASONS = (
    (
        "Insufficient nvidia.com/gpu",
        "No node had enough whole GPUs free: the device plugin hands out GPUs only whole, so a pod that "
        "needs one waits while other GPUs sit partly used.",
    ),
    (
        "cannot allocate all claims",
        "The DRA allocator found no device on any node that satisfies the claim's selectors and counts; "
        "the pod waits until a device is released or a node is launched.",
    ),
    (
        "waiting for node launch",
        "Karpenter launched a node for the pod; the pod waits until the node is Ready and its driver "
        "has published its ResourceSlices.",
    ),
    (
        "gang not complete",
        "The Job's pods are placed together or not at all, and not all of them fit yet.",
    ),
)


def _diurnal(t: float, low: float, high: float) -> float:
    """A daily curve: low at night, high in the afternoon."""
    return low + (high - low) * 0.5 * (1 - math.cos(2 * math.pi * ((t % DAY_S) / DAY_S - 0.1)))


def _variant(name: str, description: str, sharing: bool, nodes_count: int, rng: random.Random) -> Variant:
    gpus_per_node = 8
    times = [i * STEP_S for i in range(int(2 * DAY_S / STEP_S) + 1)]
    nodes_series = [float(max(4, round(_diurnal(t, 0.4, 1.0) * nodes_count))) for t in times]
    capacity = [n * gpus_per_node for n in nodes_series]
    demand = [_diurnal(t, 0.25, 1.1) * nodes_count * gpus_per_node * rng.uniform(0.95, 1.05) for t in times]
    allocated = [min(c, d) for c, d in zip(capacity, demand, strict=True)]
    efficiency = 0.82 if sharing else 0.55
    used = [a * efficiency * rng.uniform(0.9, 1.0) for a in allocated]
    pending = [float(max(0, round((d - c) / 2))) for c, d in zip(capacity, demand, strict=True)]
    price_per_node_hour = 55.04
    cost, total = [], 0.0
    for n in nodes_series:
        cost.append(round(total, 2))
        total += n * price_per_node_hour * STEP_S / 3600
    node_names = tuple(f"{'p5' if i % 3 else 'p4d'}-node-{i:02d}" for i in range(nodes_count))
    matrix = tuple(
        tuple(
            None if i >= n else min(1.0, max(0.0, efficiency * _diurnal(t, 0.2, 1.0) + rng.gauss(0, 0.08)))
            for t, n in zip(times, nodes_series, strict=True)
        )
        for i in range(nodes_count)
    )
    waiting = tuple(rng.lognormvariate(3.0 if sharing else 4.2, 1.1) for _ in range(800))
    startup = tuple(rng.lognormvariate(4.6 if sharing else 4.8, 0.5) for _ in range(800))
    gpu_hours_allocated = sum(allocated) * STEP_S / 3600
    gpu_hours_used = sum(used) * STEP_S / 3600
    reasons = tuple(
        WaitReason(
            reason=reason, pods=rng.randint(5, 200), explanation=text, example_pod=f"ml/train-{rng.randint(0, 999)}"
        )
        for reason, text in _REASONS
        if sharing != reason.startswith("Insufficient")
    )
    return Variant(
        name=name,
        description=description,
        summary=Summary(
            gpu_hours_allocated=round(gpu_hours_allocated, 1),
            gpu_hours_used=round(gpu_hours_used, 1),
            gpu_hours_idle=round(sum(capacity) * STEP_S / 3600 - gpu_hours_used, 1),
            cost_dollars=round(total, 2),
            pods_completed=rng.randint(900, 1100),
            pods_never_placed=rng.randint(0, 3) if sharing else rng.randint(10, 30),
            slo_misses=rng.randint(0, 50),
            fragmentation=round(rng.uniform(0.05, 0.3), 3),
        ),
        allocated_gpus=TimeSeries(times=tuple(times), values=tuple(round(a, 2) for a in allocated)),
        used_gpus=TimeSeries(times=tuple(times), values=tuple(round(u, 2) for u in used)),
        capacity_gpus=TimeSeries(times=tuple(times), values=tuple(capacity)),
        pending_pods=TimeSeries(times=tuple(times), values=tuple(pending)),
        nodes=TimeSeries(times=tuple(times), values=tuple(nodes_series)),
        cost_dollars=TimeSeries(times=tuple(times), values=tuple(cost)),
        waiting_s=waiting,
        startup_s=startup,
        node_utilization=NodeMatrix(metric="GPU utilization", nodes=node_names, times=tuple(times), values=matrix),
        wait_reasons=reasons,
    )


def demo_report(seed: int = 1, nodes: int = 24) -> ReportData:
    """Two days of ``nodes`` 8-GPU nodes, device plugin against DRA with sharing."""
    rng = random.Random(seed)
    return ReportData(
        title="dratwin simulation report (synthetic demo)",
        scenario="demo: training Jobs and inference on an EKS-like fleet",
        seed=seed,
        duration_s=2 * DAY_S,
        variants=(
            _variant("device-plugin", "Whole GPUs through the NVIDIA device plugin.", False, nodes, rng),
            _variant("dra-shared", "DRA with MIG and shared capacity.", True, nodes, rng),
        ),
    )

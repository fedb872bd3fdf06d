"""Builders for metrics tests: small devices, pods and series.

    h100(0, node="p5-1")                       a DeviceIdentity
    gpu_util(h100(0), [(0, 10), (60, 20)], pod=("ml", "train-0"))
    metrics_set(gpu_util(...), cost([(0, 0), (3600, 98.3)]), variant="dra")
"""

from __future__ import annotations

from collections.abc import Iterable

from dratwin.metrics import ClusterSeries, DcgmField, DeviceIdentity, DeviceSeries, MetricsSet, PodRef, Sample

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def h100(index: int, node: str = "p5-node-1", mig_profile: str = "") -> DeviceIdentity:
    return DeviceIdentity(
        hostname=node,
        gpu=index,
        uuid=f"GPU-{node}-{index:04d}",
        model_name="NVIDIA H100 80GB HBM3",
        pci_bus_id=f"00000000:{0x53 + index:02X}:00.0",
        mig_profile=mig_profile,
        gpu_instance_id="1" if mig_profile else "",
    )


def samples(points: Iterable[tuple[float, float]]) -> tuple[Sample, ...]:
    return tuple(Sample(time, value) for time, value in points)


def device_series(
    field: DcgmField,
    device: DeviceIdentity,
    points: Iterable[tuple[float, float]],
    pod: tuple[str, str] | tuple[str, str, str] | None = None,
) -> DeviceSeries:
    ref = None if pod is None else PodRef(namespace=pod[0], pod=pod[1], container=pod[2] if len(pod) > 2 else "")
    return DeviceSeries(field=field, device=device, samples=samples(points), pod=ref)


def gpu_util(
    device: DeviceIdentity,
    points: Iterable[tuple[float, float]],
    pod: tuple[str, str] | tuple[str, str, str] | None = None,
) -> DeviceSeries:
    return device_series("DCGM_FI_DEV_GPU_UTIL", device, points, pod)


def cluster(field: str, points: Iterable[tuple[float, float]], **labels: str) -> ClusterSeries:
    return ClusterSeries(field=field, samples=samples(points), labels=tuple(sorted(labels.items())))


def metrics_set(*series: DeviceSeries | ClusterSeries, start: float = START, **labels: str) -> MetricsSet:
    return MetricsSet(
        start_unix=start,
        device_series=tuple(s for s in series if isinstance(s, DeviceSeries)),
        cluster_series=tuple(s for s in series if isinstance(s, ClusterSeries)),
        labels=tuple(sorted(labels.items())),
    )


def busy_fleet(nodes: int = 2, gpus: int = 2, steps: int = 5, **labels: str) -> MetricsSet:
    """Every DCGM field on every GPU, half of them attributed to a pod, and every dratwin series."""
    series: list[DeviceSeries | ClusterSeries] = []
    fields: tuple[DcgmField, ...] = (
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    )
    scale = {"DCGM_FI_DEV_GPU_UTIL": 100.0, "DCGM_FI_DEV_FB_USED": 81559.0}
    for n in range(nodes):
        for g in range(gpus):
            device = h100(g, node=f"p5-node-{n}")
            pod = ("ml", f"train-{n}-{g}", "trainer") if g % 2 == 0 else None
            for field in fields:
                points = [(60.0 * t, round(scale.get(field, 1.0) * ((t + g) % 4) / 4, 3)) for t in range(steps)]
                series.append(device_series(field, device, points, pod))
    for field in ("dratwin_allocated_gpus", "dratwin_pending_pods", "dratwin_nodes", "dratwin_cost_dollars"):
        series.append(cluster(field, [(60.0 * t, float(t)) for t in range(steps)]))
    return metrics_set(*series, **labels)

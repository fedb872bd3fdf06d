"""The metrics model: labelled series of timed samples, per GPU (optionally attributed to a pod) and per cluster.

Times are seconds since the start of the run; ``MetricsSet.start_unix`` anchors them to wall-clock time
for the files. Labels follow NVIDIA's dcgm-exporter, so that dashboards built for a real cluster work on
the twin's output unchanged: ``gpu`` (index on the node), ``UUID``, ``pci_bus_id``, ``device``
(``nvidia0``), ``modelName``, ``GPU_I_PROFILE`` and ``GPU_I_ID`` for a MIG instance, ``Hostname`` (the
node), and ``pod``, ``namespace``, ``container`` when the device is allocated to a pod (the exporter's
default names; a device shared by several pods has one series per pod, as the exporter writes it).
"""

from __future__ import annotations

from typing import Literal

import msgspec

MetricType = Literal["gauge", "counter"]


class MetricField(msgspec.Struct, frozen=True, kw_only=True):
    """One metric family: its name, type, help text and the unit its values are in."""

    name: str
    type: MetricType
    help: str
    unit: str


DcgmField = Literal[
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
]

# The DCGM fields the twin models, with the units DCGM reports them in (the exporter writes them as gauges).
DCGM_FIELDS: dict[str, MetricField] = {
    field.name: field
    for field in (
        MetricField(
            name="DCGM_FI_DEV_GPU_UTIL",
            type="gauge",
            help="GPU utilization: percent of time a kernel was running (0-100).",
            unit="percent",
        ),
        MetricField(name="DCGM_FI_DEV_FB_USED", type="gauge", help="Frame buffer memory in use, in MiB.", unit="MiB"),
        MetricField(
            name="DCGM_FI_PROF_SM_ACTIVE",
            type="gauge",
            help="Fraction of cycles at least one warp was resident on an SM, averaged over all SMs (0-1).",
            unit="ratio",
        ),
        MetricField(
            name="DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            type="gauge",
            help="Fraction of cycles the tensor (HMMA) pipe was active (0-1).",
            unit="ratio",
        ),
    )
}

# dratwin's own cluster-level series. The cost is a counter: what the nodes have cost so far.
DRATWIN_FIELDS: dict[str, MetricField] = {
    field.name: field
    for field in (
        MetricField(
            name="dratwin_allocated_gpus",
            type="gauge",
            help="GPUs allocated to pods (shares of a device count as fractions).",
            unit="gpus",
        ),
        MetricField(name="dratwin_gpus", type="gauge", help="GPUs on nodes that are Ready.", unit="gpus"),
        MetricField(
            name="dratwin_used_gpus",
            type="gauge",
            help="GPUs' worth kept busy by the pods that hold them (utilization times GPU share, summed).",
            unit="gpus",
        ),
        MetricField(
            name="dratwin_fragmented_gpu_share",
            type="gauge",
            help="Share of the free GPU capacity that the workload's pod shapes cannot use (FGD's fragmentation).",
            unit="ratio",
        ),
        MetricField(
            name="dratwin_device_allocated",
            type="gauge",
            help="1 while the device is allocated to a claim, else 0 (labelled as dcgm-exporter labels the GPU).",
            unit="devices",
        ),
        MetricField(name="dratwin_pending_pods", type="gauge", help="Pods waiting to be placed.", unit="pods"),
        MetricField(name="dratwin_running_pods", type="gauge", help="Pods running on a node.", unit="pods"),
        MetricField(
            name="dratwin_nodes", type="gauge", help="Nodes in the cluster, launching ones included.", unit="nodes"
        ),
        MetricField(
            name="dratwin_cost_dollars",
            type="counter",
            help="What the nodes have cost since the start, from the catalog's hourly prices.",
            unit="dollars",
        ),
    )
}


class Sample(msgspec.Struct, frozen=True, array_like=True):
    """One value at one time (seconds since the start of the run)."""

    time: float
    value: float


class DeviceIdentity(msgspec.Struct, frozen=True, kw_only=True):
    """Which GPU (or MIG instance) a series is about, in dcgm-exporter's terms."""

    hostname: str
    gpu: int
    uuid: str
    model_name: str
    device: str = ""
    pci_bus_id: str = ""
    mig_profile: str = ""
    gpu_instance_id: str = ""

    def labels(self) -> list[tuple[str, str]]:
        """The exporter's labels, in the order it writes them."""
        pairs = [("gpu", str(self.gpu)), ("UUID", self.uuid)]
        if self.pci_bus_id:
            pairs.append(("pci_bus_id", self.pci_bus_id))
        pairs += [("device", self.device or f"nvidia{self.gpu}"), ("modelName", self.model_name)]
        if self.mig_profile:
            pairs += [("GPU_I_PROFILE", self.mig_profile), ("GPU_I_ID", self.gpu_instance_id)]
        pairs.append(("Hostname", self.hostname))
        return pairs


class PodRef(msgspec.Struct, frozen=True, kw_only=True):
    """The pod (and container) a device's series is attributed to, through the pod's allocation."""

    namespace: str
    pod: str
    container: str = ""

    def labels(self) -> list[tuple[str, str]]:
        # An empty label is no label to Prometheus: a pod without a container name gets none.
        pairs = [("pod", self.pod), ("namespace", self.namespace)]
        return [*pairs, ("container", self.container)] if self.container else pairs


class DeviceSeries(msgspec.Struct, frozen=True, kw_only=True):
    """One DCGM field of one device over time; attributed to a pod when ``pod`` is set."""

    field: DcgmField
    device: DeviceIdentity
    samples: tuple[Sample, ...]
    pod: PodRef | None = None

    def labels(self) -> list[tuple[str, str]]:
        return self.device.labels() + (self.pod.labels() if self.pod else [])


class ClusterSeries(msgspec.Struct, frozen=True, kw_only=True):
    """One of dratwin's own series (a ``DRATWIN_FIELDS`` name) with its labels (nodepool, instance type...)."""

    field: str
    samples: tuple[Sample, ...]
    labels: tuple[tuple[str, str], ...] = ()


class MetricsSet(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one run measured. ``labels`` are added to every series (for example the variant's name)."""

    start_unix: float
    device_series: tuple[DeviceSeries, ...] = ()
    cluster_series: tuple[ClusterSeries, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

"""The cluster sampled at a fixed simulated interval, for the report and the metrics files.

The sampler is an ``after_each`` hook of the engine, not an action of its own, so that sampling changes
neither the run nor its event count. After an action it looks at the next action's time: every sample
time before it sees the state the run has now (all actions up to and including that time have run). So
the sample at ``t`` is the cluster after everything that happened at ``t``.

It reads the :class:`Accountant` (allocated and present devices, running pods, node lifetimes and prices),
the store, the services' load at the sample time (:meth:`ServiceController.utilization_at`) and the other
pods' GPU use (:class:`GpuUse`), and writes only its own :class:`Timeline`: plain lists, so that a run in
another process can hand it back. GPU values are read at the sample time, as a scrape would read them:
the series hold one value per sample, not the autoscalers' every sync.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator.state import DeviceID
from dratwin.sim.accounting import Accountant
from dratwin.sim.engine import Engine
from dratwin.sim.fragmentation import FragmentationMeter, physical_gpus
from dratwin.sim.gpu_use import MIB, DcgmValues, DeviceFacts, GpuUse, device_values
from dratwin.sim.replicas import DeviceIndex
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.services import ServiceController
from dratwin.sim.store import Store

DEFAULT_SAMPLE_SECONDS = 300.0
GPU_MEMORY_LABEL = "karpenter.k8s.aws/instance-gpu-memory"  # MiB per GPU, on a device-plugin node
GPU_PRODUCT_LABELS = ("nvidia.com/gpu.product", "karpenter.k8s.aws/instance-gpu-name")
IDLE = DcgmValues(0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class DeviceInfo:
    """A GPU as dcgm-exporter names it: its node, its index there, its UUID and model."""

    hostname: str
    index: int
    uuid: str
    model_name: str
    driver: str
    pci_bus_id: str = ""
    share: float = 1.0  # of a GPU (a MIG partition: its profile's compute share)
    memory_mib: float = 0.0
    mig_profile: str = ""
    gpu_instance_id: str = ""  # the partition's position on its GPU


@dataclass
class Timeline:
    """Samples at ``times``; every list has one value per time. A node's or device's list has ``None``
    where it did not exist."""

    every_seconds: float
    times: list[float] = field(default_factory=list)
    allocated_gpus: list[float] = field(default_factory=list)
    capacity_gpus: list[float] = field(default_factory=list)
    pending_pods: list[float] = field(default_factory=list)
    running_pods: list[float] = field(default_factory=list)
    nodes: list[float] = field(default_factory=list)
    cost_usd: list[float] = field(default_factory=list)
    node_allocated_share: dict[str, list[float | None]] = field(default_factory=dict)  # GPU nodes only
    devices: dict[str, DeviceInfo] = field(default_factory=dict)  # GPU devices by "driver/pool/device"
    device_allocated: dict[str, list[float | None]] = field(default_factory=dict)
    # "namespace/pod" holding it ("," between the pods sharing it), or "".
    device_pod: dict[str, list[str | None]] = field(default_factory=dict)
    # DCGM's fields per device (None where the device did not exist; GPU_UTIL also None on a MIG partition).
    device_gpu_util: dict[str, list[float | None]] = field(default_factory=dict)  # percent
    device_fb_used_mib: dict[str, list[float | None]] = field(default_factory=dict)
    device_sm_active: dict[str, list[float | None]] = field(default_factory=dict)  # ratio
    device_tensor_active: dict[str, list[float | None]] = field(default_factory=dict)  # ratio
    pod_containers: dict[str, str] = field(default_factory=dict)  # holding pod -> its first container's name
    used_gpus: list[float] = field(default_factory=list)  # GPUs' worth kept busy (see sim/gpu_use.py)
    fragmented_gpus: list[float] = field(default_factory=list)  # FGD's fragmented GPUs (sim/fragmentation.py)
    fragmented_share: list[float] = field(default_factory=list)  # of the free GPUs
    wait_reasons: dict[str, list[str]] = field(default_factory=dict)  # message -> pods seen waiting with it
    waiting_seconds: list[float] = field(default_factory=list)
    startup_seconds: list[float] = field(default_factory=list)


def device_key(device: DeviceID) -> str:
    return f"{device.driver}/{device.pool}/{device.device}"


@dataclass
class Sampler:
    engine: Engine
    store: Store
    accountant: Accountant
    scheduling: SchedulingController
    until: float
    timeline: Timeline
    gpu_use: GpuUse
    services: ServiceController | None = None
    fragmentation: FragmentationMeter | None = None
    _taken: int = 0
    _facts: dict[DeviceID, DeviceFacts] = field(default_factory=dict)
    _gpu_of: dict[DeviceID, tuple[str, str]] = field(default_factory=dict)  # device -> (node, its GPU's UUID)
    _known_devices: int = 0
    _device_ids: dict[DeviceID, str] = field(default_factory=dict)
    _reason_pods: dict[str, set[str]] = field(default_factory=dict)

    def __call__(self) -> None:
        upcoming = self.engine.next_time()
        while True:
            at = self._taken * self.timeline.every_seconds
            if at > self.until or (upcoming is not None and at >= upcoming):
                return
            self._sample(at)

    def finish(self) -> Timeline:
        """Samples up to the end, and what only the end knows (latency samples, reasons in order)."""
        while self._taken * self.timeline.every_seconds <= self.until:
            self._sample(self._taken * self.timeline.every_seconds)
        timeline = self.timeline
        timeline.waiting_seconds = list(self.accountant.waiting)
        timeline.startup_seconds = list(self.accountant.startup)
        ranked = sorted(self._reason_pods.items(), key=lambda item: (-len(item[1]), item[0]))
        timeline.wait_reasons = {reason: sorted(pods) for reason, pods in ranked}
        return timeline

    def _sample(self, at: float) -> None:
        self._taken += 1
        accountant, state, timeline = self.accountant, self.store.state, self.timeline
        if len(accountant.device_since) != self._known_devices:
            self._learn_devices()
        present = [d for d in accountant.device_since if d not in accountant.device_until and d in self._device_ids]
        held = {d for d in present if accountant.holders.get(d, 0) > 0}
        timeline.times.append(at)
        shares = accountant.device_gpu
        timeline.allocated_gpus.append(round(sum(shares[d] for d in held), 6))
        timeline.capacity_gpus.append(round(sum(shares[d] for d in present), 6))
        timeline.pending_pods.append(float(sum(1 for r in state.pods.values() if not r.pod.spec.node_name)))
        timeline.running_pods.append(float(len(accountant.running)))
        timeline.nodes.append(float(len(state.nodes)))
        timeline.cost_usd.append(round(self._cost_so_far(at), 6))
        holders = self._holding_pods() if held else {}
        load = self.services.utilization_at(at) if self.services is not None and held else None
        values = device_values(holders, self._facts, self.gpu_use, load) if held else {}
        timeline.used_gpus.append(round(sum(v.busy for v in values.values()), 6))
        fragmented, share = (0.0, 0.0) if self.fragmentation is None else self.fragmentation.measure(
            physical_gpus({d: self._gpu_of[d] for d in present}), held)
        timeline.fragmented_gpus.append(round(fragmented, 6))
        timeline.fragmented_share.append(round(share, 6))
        self._sample_nodes_and_devices(present, held, holders, values)
        for pod, message in self.scheduling.messages.items():
            self._reason_pods.setdefault(message, set()).add(pod)

    def _sample_nodes_and_devices(self, present: list[DeviceID], held: set[DeviceID], holders: dict[DeviceID, str],
                                  values: dict[DeviceID, DcgmValues]) -> None:
        timeline, taken = self.timeline, self._taken
        per_node: Counter[str] = Counter()
        allocated_per_node: Counter[str] = Counter()
        for device in present:
            key = self._device_ids[device]
            info = timeline.devices[key]
            per_node[info.hostname] += 1
            allocated_per_node[info.hostname] += device in held
            _put(timeline.device_allocated, key, taken, 1.0 if device in held else 0.0)
            pod = holders.get(device, "")
            _put(timeline.device_pod, key, taken, pod)
            for one in pod.split(",") if pod else ():
                if one not in timeline.pod_containers:
                    timeline.pod_containers[one] = self._container_of(one)
            value = values.get(device, IDLE)
            _put(timeline.device_gpu_util, key, taken,
                 None if info.mig_profile else _round(value.gpu_util or 0.0))
            _put(timeline.device_fb_used_mib, key, taken, _round(value.fb_used_mib))
            _put(timeline.device_sm_active, key, taken, _round(value.sm_active))
            _put(timeline.device_tensor_active, key, taken, _round(value.tensor_active))
        for hostname, count in per_node.items():
            _put(timeline.node_allocated_share, hostname, taken, round(allocated_per_node[hostname] / count, 6))
        for series in (timeline.device_allocated, timeline.device_pod, timeline.node_allocated_share,
                       timeline.device_gpu_util, timeline.device_fb_used_mib, timeline.device_sm_active,
                       timeline.device_tensor_active):
            _pad(series, taken)

    def _container_of(self, pod: str) -> str:
        record = self.store.state.pods.get(pod)
        containers = record.pod.spec.containers if record is not None else []
        return containers[0].name if containers else ""

    def _holding_pods(self) -> dict[DeviceID, str]:
        """The pods each allocated device serves, through its claim's reservedFor or the device plugin, by
        name, joined with "," when a shared claim serves several."""
        claims = self.store.state.claims
        holders: dict[DeviceID, set[str]] = {}
        for claim_key, devices in self.accountant.claim_devices.items():
            record = claims.get(claim_key)
            if record is None:
                continue
            namespace = record.claim.metadata.namespace
            pods = {f"{namespace}/{c.name}" for c in record.claim.status.reserved_for if c.resource == "pods"}
            if pods:
                for device in devices:
                    holders.setdefault(device, set()).update(pods)
        for pod, devices in self.accountant.pod_plugin_devices.items():
            for device in devices:
                holders.setdefault(device, set()).add(pod)
        return {device: ",".join(sorted(pods)) for device, pods in holders.items()}

    def _learn_devices(self) -> None:
        """The GPUs published so far (slices, device-plugin nodes), with dcgm-exporter's names for them."""
        self._known_devices = len(self.accountant.device_since)
        index = DeviceIndex(self.store.state)
        for resource_slice in self.store.state.slices:
            spec = resource_slice.spec
            if not spec.node_name:
                continue
            parents: dict[str, int] = {}
            partitions: Counter[str] = Counter()
            for position, device in enumerate(spec.devices):
                device_id = DeviceID(spec.driver, spec.pool.name, device.name)
                if device_id in self._device_ids or not self.accountant.device_gpu.get(device_id):
                    continue
                attributes = device.attributes

                def text(name: str) -> str:
                    value = attributes.get(name)  # noqa: B023 (used at once, in this iteration)
                    return (value.string or "") if value is not None else ""

                ordinal = attributes.get("index")
                parent = text("parentUUID")
                if parent:  # a MIG partition: dcgm-exporter names it by its GPU and its instance
                    gpu = parents.setdefault(parent, len(parents))
                    uuid, profile, instance = parent, text("profile") or "mig", str(partitions[parent])
                    partitions[parent] += 1
                else:
                    gpu = position
                    uuid, profile, instance = text("uuid") or f"GPU-{spec.node_name}-{device.name}", "", ""
                if ordinal is not None and ordinal.int_value is not None:
                    gpu = ordinal.int_value
                self._remember(device_id, DeviceInfo(
                    spec.node_name, gpu, uuid, text("productName"), spec.driver,
                    text("resource.kubernetes.io/pciBusID"), self.accountant.device_gpu[device_id],
                    index.memory_bytes(device_id) / MIB, profile, instance))
        self._learn_plugin_devices()

    def _learn_plugin_devices(self) -> None:
        for node, by_resource in self.accountant.node_plugin_devices.items():
            info = self.store.state.nodes.get(node)
            labels = info.node.metadata.labels if info is not None else {}
            model = next((labels[label] for label in GPU_PRODUCT_LABELS if label in labels), "")
            memory = float(labels.get(GPU_MEMORY_LABEL, "0") or 0)
            for resource, devices in sorted(by_resource.items()):
                for position, device_id in enumerate(devices):
                    if device_id in self._device_ids:
                        continue
                    share = self.accountant.device_gpu[device_id]
                    profile = "" if share == 1.0 else resource.rsplit("mig-", 1)[-1]
                    self._remember(device_id, DeviceInfo(
                        node, position, f"GPU-{node}-{device_id.device}", model, device_id.driver, "", share,
                        memory * share if share < 1.0 else memory, profile, str(position) if profile else ""))

    def _remember(self, device_id: DeviceID, info: DeviceInfo) -> None:
        key = device_key(device_id)
        self._device_ids[device_id] = key
        self.timeline.devices[key] = info
        self._facts[device_id] = DeviceFacts(info.share, info.memory_mib, bool(info.mig_profile))
        self._gpu_of[device_id] = (info.hostname, info.uuid)

    def _cost_so_far(self, at: float) -> float:
        accountant = self.accountant
        total = 0.0
        for name, hours in accountant.node_lifetimes(at).items():
            total += hours * (accountant.price(accountant.node_type.get(name, "")) or 0.0)
        return total


def _round(value: float) -> float:
    return round(value, 6)


def _put(series: dict[str, list[Any]], key: str, taken: int, value: object) -> None:
    values = series.get(key)
    if values is None:
        values = series[key] = []
    if len(values) < taken - 1:
        values.extend([None] * (taken - 1 - len(values)))
    values.append(value)


def _pad(series: dict[str, list[Any]], taken: int) -> None:
    """Whatever was not seen in this sample (a node gone, a device not yet published) is ``None`` there."""
    for values in series.values():
        if len(values) < taken:
            values.extend([None] * (taken - len(values)))

"""The cluster sampled at a fixed simulated interval, for the report and the metrics files.

The sampler is an ``after_each`` hook of the engine, not an action of its own, so that sampling changes
neither the run nor its event count. After an action it looks at the next action's time: every sample
time before it sees the state the run has now (all actions up to and including that time have run). So
the sample at ``t`` is the cluster after everything that happened at ``t``.

It reads the :class:`Accountant` (allocated and present devices, running pods, node lifetimes and prices)
and the store, and writes only its own :class:`Timeline`: plain lists, so that a run in another process
can hand it back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator.state import DeviceID
from dratwin.sim.accounting import Accountant
from dratwin.sim.engine import Engine
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.store import Store

DEFAULT_SAMPLE_SECONDS = 300.0


@dataclass(frozen=True)
class DeviceInfo:
    """A GPU as dcgm-exporter names it: its node, its index there, its UUID and model."""

    hostname: str
    index: int
    uuid: str
    model_name: str
    driver: str
    pci_bus_id: str = ""


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
    device_pod: dict[str, list[str | None]] = field(default_factory=dict)  # "namespace/pod" holding it, or ""
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
    _taken: int = 0
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
        timeline.allocated_gpus.append(float(len(held)))
        timeline.capacity_gpus.append(float(len(present)))
        timeline.pending_pods.append(float(sum(1 for r in state.pods.values() if not r.pod.spec.node_name)))
        timeline.running_pods.append(float(len(accountant.running)))
        timeline.nodes.append(float(len(state.nodes)))
        timeline.cost_usd.append(round(self._cost_so_far(at), 6))
        self._sample_nodes_and_devices(present, held)
        for pod, message in self.scheduling.messages.items():
            self._reason_pods.setdefault(message, set()).add(pod)

    def _sample_nodes_and_devices(self, present: list[DeviceID], held: set[DeviceID]) -> None:
        timeline, taken = self.timeline, self._taken
        per_node: Counter[str] = Counter()
        allocated_per_node: Counter[str] = Counter()
        holders = self._holding_pods() if held else {}
        for device in present:
            key = self._device_ids[device]
            hostname = timeline.devices[key].hostname
            per_node[hostname] += 1
            allocated_per_node[hostname] += device in held
            _put(timeline.device_allocated, key, taken, 1.0 if device in held else 0.0)
            _put(timeline.device_pod, key, taken, holders.get(device, ""))
        for hostname, count in per_node.items():
            _put(timeline.node_allocated_share, hostname, taken, round(allocated_per_node[hostname] / count, 6))
        _pad(timeline.device_allocated, taken)
        _pad(timeline.device_pod, taken)
        _pad(timeline.node_allocated_share, taken)

    def _holding_pods(self) -> dict[DeviceID, str]:
        """The pod each allocated device serves, through its claim's reservedFor (the first one, by name,
        when a shared claim serves several)."""
        claims = self.store.state.claims
        holders: dict[DeviceID, str] = {}
        for claim_key, devices in self.accountant.claim_devices.items():
            record = claims.get(claim_key)
            if record is None:
                continue
            pods = sorted(c.name for c in record.claim.status.reserved_for if c.resource == "pods")
            if pods:
                namespace = record.claim.metadata.namespace
                for device in devices:
                    holders.setdefault(device, f"{namespace}/{pods[0]}")
        return holders

    def _learn_devices(self) -> None:
        """The GPUs of the slices published so far, with dcgm-exporter's names for them."""
        self._known_devices = len(self.accountant.device_since)
        for resource_slice in self.store.state.slices:
            spec = resource_slice.spec
            if not spec.node_name:
                continue
            for index, device in enumerate(spec.devices):
                device_id = DeviceID(spec.driver, spec.pool.name, device.name)
                if device_id in self._device_ids or not self.accountant.device_gpu.get(device_id):
                    continue
                key = device_key(device_id)
                self._device_ids[device_id] = key

                attributes = device.attributes

                def text(name: str) -> str:
                    value = attributes.get(name)  # noqa: B023 (used at once, in this iteration)
                    return (value.string or "") if value is not None else ""

                self.timeline.devices[key] = DeviceInfo(
                    spec.node_name, index, text("uuid") or f"GPU-{spec.node_name}-{device.name}",
                    text("productName"), spec.driver, text("resource.kubernetes.io/pciBusID"))

    def _cost_so_far(self, at: float) -> float:
        accountant = self.accountant
        total = 0.0
        for name, hours in accountant.node_lifetimes(at).items():
            total += hours * (accountant.price(accountant.node_type.get(name, "")) or 0.0)
        return total


def _put(series: dict[str, list[Any]], key: str, taken: int, value: object) -> None:
    values = series.setdefault(key, [])
    values.extend([None] * (taken - 1 - len(values)))
    values.append(value)


def _pad(series: dict[str, list[Any]], taken: int) -> None:
    """Whatever was not seen in this sample (a node gone, a device not yet published) is ``None`` there."""
    for values in series.values():
        values.extend([None] * (taken - len(values)))

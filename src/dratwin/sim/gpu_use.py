"""How busy the allocated GPUs are: GPU-hours used, and what DCGM shows per device at a sample.

GPU-hours (each device weighted by its GPU share: 1 for a GPU, a MIG partition its profile's compute share,
see :mod:`dratwin.sim.accounting`):

- *present*: the device exists on a node (published in a ResourceSlice, or advertised by the device plugin);
- *allocated*: a claim holds it, or a pod bound to the node requests it through the device plugin;
- *used*: the integral, over the allocated time, of the share of the device's time a pod keeps busy
  (``DCGM_FI_DEV_GPU_UTIL`` / 100 on a whole GPU), so used <= allocated;
- *idle*: present minus allocated (no pod holds it). The allocated time a holder leaves unused is
  allocated minus used.

Who keeps a GPU busy:

- an inference service's replica: the serving model's busy fraction (:mod:`dratwin.serving`); over a run
  its GPU-seconds used are its requests served over its ``requests_per_second_per_gpu`` (one replica on
  one whole uncontended GPU serves that many per second while 100% busy), exact between any two changes;
- any other pod holding GPUs (a training Job, a bare pod): while its containers run, a constant
  utilization, :data:`TRAINING_GPU_UTIL_PERCENT` unless the pod (its Job's template) has the annotation
  ``dratwin.io/gpu-utilization`` (percent, 0-100). The default is an assumption: a data-parallel training
  loop that keeps a kernel on the GPU most of the time, with input and communication stalls for the rest.
  Pods holding GPUs that have not started yet (pulling images, loading) use none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dratwin.allocator.state import DeviceID
from dratwin.errors import InputError
from dratwin.scenario.model import ServiceSpec
from dratwin.serving import LoadSnapshot, Replica
from dratwin.serving.profile import SM_ACTIVE_PER_BUSY
from dratwin.sim.accounting import TERMINAL_PHASES, Accountant
from dratwin.sim.outcomes import ServiceOutcome
from dratwin.sim.replicas import devices_of
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase, workload_of

GPU_UTILIZATION_ANNOTATION = "dratwin.io/gpu-utilization"
TRAINING_GPU_UTIL_PERCENT = 80.0  # assumption, see the module docstring
TRAINING_TENSOR_ACTIVE_PER_BUSY = 0.5  # assumption: mixed-precision matrix work for half the busy time
TRAINING_MEMORY_FRACTION = 0.9  # assumption: the framework's caching allocator holds most of the memory
MIB = 1024 * 1024


def training_utilization(raw: Mapping[str, object], where: str = "") -> float:
    """The GPU utilization (percent) a non-service pod keeps on its GPUs: its annotation, or the default."""
    meta = raw.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    text = annotations.get(GPU_UTILIZATION_ANNOTATION) if isinstance(annotations, dict) else None
    if text is None:
        return TRAINING_GPU_UTIL_PERCENT
    try:
        value = float(str(text).strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 100.0:
        raise InputError(f"{where or 'pod'}: annotation {GPU_UTILIZATION_ANNOTATION}={text!r} is not a "
                         "percentage; give the GPU utilization the workload keeps, 0 to 100 (e.g. \"60\")")
    return value


def service_gpu_seconds(outcomes: Iterable[ServiceOutcome], specs: Iterable[ServiceSpec]) -> float:
    """The GPU-seconds the services' replicas kept busy: requests served over what one GPU serves per second."""
    per_gpu = {spec.deployment: spec.requests_per_second_per_gpu for spec in specs}
    return sum(o.served / per_gpu[o.deployment] for o in outcomes if per_gpu.get(o.deployment, 0) > 0)


@dataclass(frozen=True)
class DcgmValues:
    """One device at one sample: ``busy`` is the GPUs' worth of it in use (its share times the fraction of
    its time kept busy); the others are the DCGM fields as the exporter shows them (``gpu_util`` None on a
    MIG partition, which has no GPU_UTIL of its own)."""

    busy: float
    gpu_util: float | None
    sm_active: float
    tensor_active: float
    fb_used_mib: float


@dataclass
class GpuUse:
    """Integrates the GPU time the non-service pods use (while their containers run), from the store's
    changes; reads the accountant for what each pod holds."""

    store: Store
    accountant: Accountant
    services: frozenset[str]  # the Deployments (namespace/name) whose pods the serving model drives
    running_since: dict[str, tuple[float, float]] = field(default_factory=dict)  # pod -> (since, busy GPUs)
    used_seconds: float = 0.0
    utilization: dict[str, float] = field(default_factory=dict)  # running non-service pod -> percent

    def __post_init__(self) -> None:
        # After the accountant (a "*" handler too, subscribed before): what a pod holds is known by then.
        self.store.subscribe("*", self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.kind == "Pod":
            self._on_pod(change)

    def _on_pod(self, change: Change) -> None:
        key = change.key
        record = self.store.state.pods.get(key)
        phase = pod_phase(record.raw) if record is not None and change.type != "Deleted" else "Deleted"
        if phase == "Running" and key not in self.running_since:
            assert record is not None
            if workload_of(record.raw) in self.services:
                return
            percent = training_utilization(record.raw, f"pod {key}")
            self.utilization[key] = percent
            self.running_since[key] = (change.time, percent / 100.0 * self.accountant.gpu_shares(key))
        elif (phase in TERMINAL_PHASES or phase == "Deleted") and key in self.running_since:
            self._close(key, change.time)

    def _close(self, pod: str, now: float) -> None:
        since, busy = self.running_since.pop(pod)
        self.utilization.pop(pod, None)
        self.used_seconds += busy * (now - since)

    def finish(self, until: float) -> float:
        """The GPU-seconds the non-service pods used, those still running counted up to ``until``."""
        for pod in list(self.running_since):
            self._close(pod, until)
        return self.used_seconds


@dataclass(frozen=True)
class DeviceFacts:
    """What the sample needs to know of a device: its GPU share, memory and whether it is a MIG partition."""

    share: float
    memory_mib: float
    mig: bool


def device_values(
    holders: Mapping[DeviceID, str],
    facts: Mapping[DeviceID, DeviceFacts],
    use: GpuUse,
    load: tuple[tuple[Replica, ...], LoadSnapshot] | None,
) -> dict[DeviceID, DcgmValues]:
    """The DCGM values of every held device at one moment (devices nobody uses are absent: all zero);
    ``holders`` names each device's pods, joined with "," where several share it."""
    values: dict[DeviceID, DcgmValues] = {}
    pod_devices: dict[str, list[DeviceID]] = {}
    for device, pods in holders.items():
        for pod in pods.split(","):
            pod_devices.setdefault(pod, []).append(device)
    if load is not None:
        values.update(_service_values(pod_devices, facts, use, load))
    for pod, percent in use.utilization.items():
        for device in pod_devices.get(pod, ()):
            fact = facts.get(device)
            if fact is None or device in values:
                continue
            busy = percent / 100.0
            values[device] = DcgmValues(busy * fact.share, None if fact.mig else percent, SM_ACTIVE_PER_BUSY * busy,
                                        TRAINING_TENSOR_ACTIVE_PER_BUSY * busy,
                                        TRAINING_MEMORY_FRACTION * fact.memory_mib)
    return values


def _service_values(pod_devices: Mapping[str, list[DeviceID]], facts: Mapping[DeviceID, DeviceFacts], use: GpuUse,
                    load: tuple[tuple[Replica, ...], LoadSnapshot]) -> dict[DeviceID, DcgmValues]:
    replicas, snapshot = load
    by_name = {r.name: r for r in replicas}
    shared = {d.device: d for d in snapshot.devices}
    values: dict[DeviceID, DcgmValues] = {}
    state = use.store.state
    for replica_load in snapshot.replicas:
        replica = by_name.get(replica_load.replica)
        record = state.pods.get(replica_load.replica)
        if replica is None or record is None:
            continue
        devices = [d for d in devices_of(state, record) if d in facts] or pod_devices.get(replica.name, [])
        for device in devices:
            fact = facts.get(device)
            if fact is None:
                continue
            if replica.sharing == "time-sliced":
                busy = shared[replica.device].busy if replica.device in shared else 0.0
            else:
                busy = replica_load.busy * fact.share
            values[device] = DcgmValues(busy, replica_load.dcgm_gpu_util, replica_load.dcgm_sm_active,
                                        replica_load.dcgm_tensor_active, replica_load.dcgm_fb_used_mib)
    return values

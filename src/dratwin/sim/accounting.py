"""Bookkeeping of a run from the store's change events: pod timings, device-hours, nodes and their cost.

It only reads: every figure follows from the changes the controllers made, so it cannot disagree with
the cluster. GPU-hours count every GPU, however it is handed out, so that variants compare on one footing:

- a DRA device is a GPU when its driver's first name label is ``gpu`` (gpu.nvidia.com, and the test
  drivers); a MIG partition (attribute ``type: mig``) counts as the share of its GPU's compute that its
  profile holds (``3g.20gb``: 3 of 7 compute slices, :func:`~dratwin.serving.mig_compute_fraction`, the
  serving model's capacity rule), so a partitioned GPU counts the compute its partitions can use (two
  3g.20gb: 6/7) and a GPU is never counted twice (partitions are published instead of their GPU);
- a device-plugin GPU (a node's allocatable ``nvidia.com/gpu``, or ``nvidia.com/mig-<profile>`` at its
  profile's share) is a device of its own here, ``nvidia.com/gpu/<node>/gpu-<i>``: it is present while
  its node exists and held from a pod's binding to its end by a pod that requests it, on the lowest free
  indices (the device plugin's choice of GPU is not modelled; time-slicing replicas of the plugin are
  counted as GPUs, as the node advertises them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dratwin.allocator.state import DeviceID
from dratwin.api.quantity import Quantity
from dratwin.api.resource import Device, ResourceSlice
from dratwin.catalog import Catalog
from dratwin.cluster.state import PodRecord, pod_claim_keys
from dratwin.serving import mig_compute_fraction
from dratwin.sim.outcomes import DeviceHours, Distribution, NodeCost, NodeCount, rounded
from dratwin.sim.store import Change, Store

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
ON_DEMAND = "on-demand"
HOUR = 3600.0
PLUGIN_GPU = "nvidia.com/gpu"
PLUGIN_MIG_PREFIX = "nvidia.com/mig-"
TERMINAL_PHASES = ("Succeeded", "Failed")


def gpu_share(resource_slice: ResourceSlice, device: Device) -> float:
    """How much of a GPU a published device is: 1 for a GPU, its profile's compute share for a MIG
    partition, 0 for anything else (a NIC, a CPU)."""
    if resource_slice.spec.driver.split(".")[0] != "gpu":
        return 0.0
    kind = device.attributes.get("type")
    if kind is None or kind.string != "mig":
        return 1.0
    profile = device.attributes.get("profile")
    return _profile_share(profile.string or "" if profile is not None else "")


def _profile_share(profile: str) -> float:
    try:
        return mig_compute_fraction(profile)
    except ValueError:
        return 1.0  # an unknown profile: its size is unknown, counted as the GPU (as the serving model does)


def plugin_gpu_share(resource: str) -> float:
    """The GPU share of one unit of a device-plugin resource; 0 for resources that are not GPUs."""
    if resource == PLUGIN_GPU:
        return 1.0
    if resource.startswith(PLUGIN_MIG_PREFIX):
        return _profile_share(resource.removeprefix(PLUGIN_MIG_PREFIX))
    return 0.0


def plugin_device(node: str, resource: str, index: int) -> DeviceID:
    kind = "gpu" if resource == PLUGIN_GPU else resource.removeprefix(PLUGIN_MIG_PREFIX)
    return DeviceID(PLUGIN_GPU, node, f"{kind}-{index}")


def plugin_requests(record: PodRecord) -> dict[str, int]:
    """The device-plugin GPUs a pod asks for (its containers' requests, or limits where no request is given)."""
    wanted: dict[str, int] = {}
    for container in record.pod.spec.containers:
        resources = container.resources
        if resources is None:
            continue
        for name in {*resources.requests, *resources.limits}:
            if not plugin_gpu_share(name):
                continue
            value = resources.requests.get(name) or resources.limits.get(name)
            if value is not None:
                wanted[name] = wanted.get(name, 0) + int(Quantity.parse(value).value)
    return wanted


@dataclass
class Accountant:
    store: Store
    catalog: Catalog | None = None
    created: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    waiting: list[float] = field(default_factory=list)
    startup: list[float] = field(default_factory=list)
    running: set[str] = field(default_factory=set)
    pods_created: int = 0
    pods_started: int = 0
    pods_succeeded: int = 0
    nodes_over_time: list[NodeCount] = field(default_factory=list)
    node_since: dict[str, float] = field(default_factory=dict)
    node_hours: dict[str, float] = field(default_factory=dict)  # closed lifetimes by node name
    node_type: dict[str, str] = field(default_factory=dict)
    node_offering: dict[str, tuple[str, str]] = field(default_factory=dict)  # node -> (zone, capacity type)
    device_since: dict[DeviceID, float] = field(default_factory=dict)  # present since
    device_gpu: dict[DeviceID, float] = field(default_factory=dict)  # its GPU share (0: not a GPU)
    holders: Counter[DeviceID] = field(default_factory=Counter)
    held_since: dict[DeviceID, float] = field(default_factory=dict)
    allocated_seconds: dict[DeviceID, float] = field(default_factory=dict)
    claim_devices: dict[str, tuple[DeviceID, ...]] = field(default_factory=dict)
    slice_devices: dict[str, list[DeviceID]] = field(default_factory=dict)
    device_until: dict[DeviceID, float] = field(default_factory=dict)  # devices whose slice was deleted
    node_plugin_devices: dict[str, dict[str, list[DeviceID]]] = field(default_factory=dict)  # node -> resource
    pod_plugin_devices: dict[str, tuple[DeviceID, ...]] = field(default_factory=dict)  # pod -> the GPUs it holds
    _by_name: dict[str, ResourceSlice] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Subscribes only: the load's own events (dispatched at time 0) bring the initial cluster."""
        self.store.subscribe("*", self._on_change)
        self._record_nodes(0.0)

    def _on_change(self, change: Change) -> None:
        now = change.time
        if change.kind == "Pod":
            self._pod_changed(change, now)
        elif change.kind == "ResourceClaim":
            self._claim_changed(change.key, now)
        elif change.kind == "ResourceSlice" and change.type == "Added":
            self._slice_added(change.key, now)
        elif change.kind == "ResourceSlice" and change.type == "Deleted":
            self._slice_deleted(change.key, now)
        elif change.kind == "Node" and change.type == "Added":
            info = self.store.state.nodes[change.key]
            labels = info.node.metadata.labels
            self._node_added(change.key, labels.get(INSTANCE_TYPE_LABEL, ""), now)
            self.node_offering[change.key] = (labels.get(ZONE_LABEL, ""), labels.get(CAPACITY_TYPE_LABEL, ON_DEMAND))
            self._plugin_gpus_added(change.key, info.node.status.allocatable, now)
            self._record_nodes(now)
        elif change.kind == "Node" and change.type == "Deleted":
            since = self.node_since.pop(change.key, now)
            self.node_hours[change.key] = self.node_hours.get(change.key, 0.0) + (now - since) / HOUR
            for devices in self.node_plugin_devices.pop(change.key, {}).values():
                self._devices_gone(devices, now)
            self._record_nodes(now)

    def _pod_changed(self, change: Change, now: float) -> None:
        key = change.key
        if change.type == "Added":
            self.created[key] = now
            self.pods_created += 1
            added = self.store.state.pods.get(key)
            if added is not None and added.pod.spec.node_name:  # bound in the input: already running
                self.bound[key] = now
                self.running.add(key)
                self._hold_plugin_gpus(key, added, now)
            return
        if change.type == "Deleted":
            self._release_plugin_gpus(key, now)
            self.created.pop(key, None)
            self.bound.pop(key, None)
            if key in self.running:
                self.running.discard(key)
                if change.pod is not None and (change.pod.raw.get("status") or {}).get("phase") == "Succeeded":
                    self.pods_succeeded += 1
            return
        record = self.store.state.pods.get(key)
        if record is None:
            return
        if record.pod.spec.node_name and key not in self.bound:
            self.bound[key] = now
            self.waiting.append(now - self.created.get(key, now))
            self._hold_plugin_gpus(key, record, now)
        phase = (record.raw.get("status") or {}).get("phase")
        if phase in TERMINAL_PHASES:
            self._release_plugin_gpus(key, now)
        if phase == "Running" and key not in self.running:
            self.running.add(key)
            self.pods_started += 1
            self.startup.append(now - self.bound.get(key, now))

    def _claim_changed(self, key: str, now: float) -> None:
        record = self.store.state.claims.get(key)
        allocation = record.claim.status.allocation if record is not None else None
        after = () if allocation is None else tuple(
            DeviceID(r.driver, r.pool, r.device) for r in allocation.devices.results if not r.admin_access)
        before = self.claim_devices.get(key, ())
        if after == before:
            return
        self._release(before, now)
        self._hold(after, now)
        if after:
            self.claim_devices[key] = after
        else:
            self.claim_devices.pop(key, None)

    def _slice_added(self, name: str, now: float) -> None:
        if not self._by_name or name not in self._by_name:
            self._by_name = {s.metadata.name: s for s in self.store.state.slices}
        resource_slice = self._by_name.pop(name, None)
        if resource_slice is None:
            return
        ids = []
        for device in resource_slice.spec.devices:
            device_id = DeviceID(resource_slice.spec.driver, resource_slice.spec.pool.name, device.name)
            if device_id not in self.device_since:
                self.device_since[device_id] = now
                self.device_gpu[device_id] = gpu_share(resource_slice, device)
                ids.append(device_id)
        self.slice_devices[name] = ids

    def _hold(self, devices: tuple[DeviceID, ...], now: float) -> None:
        for device in devices:
            if self.holders[device] == 0:
                self.held_since[device] = now
            self.holders[device] += 1

    def _release(self, devices: tuple[DeviceID, ...], now: float) -> None:
        for device in devices:
            self.holders[device] -= 1
            if self.holders[device] <= 0:
                del self.holders[device]
                held = now - self.held_since.pop(device, now)
                self.allocated_seconds[device] = self.allocated_seconds.get(device, 0.0) + held

    def _plugin_gpus_added(self, node: str, allocatable: dict[str, str | int | float], now: float) -> None:
        """A device-plugin node's GPUs, as many as its allocatable advertises."""
        for resource, value in sorted(allocatable.items()):
            share = plugin_gpu_share(resource)
            if not share:
                continue
            devices = [plugin_device(node, resource, i) for i in range(int(Quantity.parse(value).value))]
            for device in devices:
                self.device_since.setdefault(device, now)
                self.device_gpu[device] = share
                self.device_until.pop(device, None)
            self.node_plugin_devices.setdefault(node, {})[resource] = devices

    def _hold_plugin_gpus(self, pod: str, record: PodRecord, now: float) -> None:
        node = self.node_plugin_devices.get(record.pod.spec.node_name or "")
        if not node or pod in self.pod_plugin_devices:
            return
        taken: list[DeviceID] = []
        for resource, count in sorted(plugin_requests(record).items()):
            free = [d for d in node.get(resource, []) if self.holders.get(d, 0) == 0]
            taken += free[:count]
        if taken:
            self.pod_plugin_devices[pod] = tuple(taken)
            self._hold(tuple(taken), now)

    def _release_plugin_gpus(self, pod: str, now: float) -> None:
        devices = self.pod_plugin_devices.pop(pod, ())
        self._release(tuple(d for d in devices if d in self.holders), now)

    def _slice_deleted(self, name: str, now: float) -> None:
        """The slice's devices are gone: their time so far is kept, closed at ``now``."""
        self._devices_gone(self.slice_devices.pop(name, []), now)

    def _devices_gone(self, devices: list[DeviceID], now: float) -> None:
        for device_id in devices:
            self.device_until[device_id] = now
            if device_id in self.held_since:
                held = now - self.held_since.pop(device_id)
                self.allocated_seconds[device_id] = self.allocated_seconds.get(device_id, 0.0) + held
                self.holders.pop(device_id, None)

    def _node_added(self, name: str, instance_type: str, now: float) -> None:
        self.node_since[name] = now
        self.node_type[name] = instance_type

    def _record_nodes(self, now: float) -> None:
        count = len(self.store.state.nodes)
        if self.nodes_over_time and self.nodes_over_time[-1].at_seconds == now:
            self.nodes_over_time[-1] = NodeCount(now, count)
        elif not self.nodes_over_time or self.nodes_over_time[-1].nodes != count:
            self.nodes_over_time.append(NodeCount(now, count))

    # ---- at the end ----

    def waiting_distribution(self) -> Distribution:
        return Distribution.of(self.waiting)

    def startup_distribution(self) -> Distribution:
        return Distribution.of(self.startup)

    def device_hours(self, until: float) -> list[DeviceHours]:
        present: dict[str, float] = {}
        allocated: dict[str, float] = {}
        devices: Counter[str] = Counter()
        for device, since in self.device_since.items():
            devices[device.driver] += 1
            present[device.driver] = present.get(device.driver, 0.0) + self.device_until.get(device, until) - since
            allocated[device.driver] = allocated.get(device.driver, 0.0) + self._held_seconds(device, until)
        return [DeviceHours(driver, devices[driver], rounded(present[driver] / HOUR),
                            rounded(allocated[driver] / HOUR),
                            rounded((present[driver] - allocated[driver]) / HOUR))
                for driver in sorted(devices)]

    def _held_seconds(self, device: DeviceID, until: float) -> float:
        ongoing = until - self.held_since[device] if device in self.held_since else 0.0
        return self.allocated_seconds.get(device, 0.0) + ongoing

    def gpu_seconds(self, until: float) -> tuple[float, float]:
        """(present, allocated) GPU-seconds, each device weighted by its GPU share."""
        present = allocated = 0.0
        for device, since in self.device_since.items():
            share = self.device_gpu.get(device, 0.0)
            if not share:
                continue
            present += share * (self.device_until.get(device, until) - since)
            allocated += share * self._held_seconds(device, until)
        return present, allocated

    def gpu_shares(self, pod: str) -> float:
        """The GPUs a running pod holds now (through its claims or the device plugin), in GPU shares."""
        record = self.store.state.pods.get(pod)
        devices: set[DeviceID] = set(self.pod_plugin_devices.get(pod, ()))
        if record is not None:
            for key in pod_claim_keys(record.pod):
                devices.update(self.claim_devices.get(key, ()))
        return sum(self.device_gpu.get(d, 0.0) for d in devices)

    def node_lifetimes(self, until: float) -> dict[str, float]:
        """Hours each node has lived (ended ones and the ones still up at ``until``)."""
        hours: dict[str, float] = dict(self.node_hours)
        for name, since in self.node_since.items():
            hours[name] = hours.get(name, 0.0) + (until - since) / HOUR
        return hours

    def costs(self, until: float) -> list[NodeCost]:
        """By instance type and capacity type; a node is costed at its price (see :meth:`node_price`)."""
        by_type: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
        for name, hours in sorted(self.node_lifetimes(until).items()):
            capacity_type = self.node_offering.get(name, ("", ON_DEMAND))[1]
            by_type.setdefault((self.node_type.get(name, ""), capacity_type), []).append((hours, self.node_price(name)))
        result = []
        for (instance_type, capacity_type), lifetimes in sorted(by_type.items()):
            prices = {price for _, price in lifetimes}
            hours = sum(h for h, _ in lifetimes)
            usd = sum(h * (p or 0.0) for h, p in lifetimes)
            price = next(iter(prices)) if len(prices) == 1 else (rounded(usd / hours) if hours else None)
            result.append(NodeCost(instance_type or "<no instance-type label>", len(lifetimes), rounded(hours),
                                   price, rounded(usd), capacity_type))
        return result

    def node_price(self, name: str) -> float | None:
        """A spot node at its zone's spot price where the catalog has one (the packaged catalog has none: user
        catalogs add them), every other node at its type's on-demand price."""
        price = self.price(self.node_type.get(name, ""))
        zone, capacity_type = self.node_offering.get(name, ("", ON_DEMAND))
        if price is not None and capacity_type == "spot" and self.catalog is not None:
            spot = self.catalog.get(self.node_type[name]).spot_price(zone)
            return spot if spot is not None else price
        return price

    def price(self, instance_type: str) -> float | None:
        if self.catalog is None or not instance_type or instance_type not in self.catalog:
            return None
        return self.catalog.get(instance_type).price_usd_per_hour

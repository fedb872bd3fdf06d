"""The inference load model: requests over a service's ready replicas, each replica's throughput from its
share of a device, and what is served, missed and measured.

1. A service's request rate at ``t`` (its :class:`RateCurve`) is split over its ready replicas. The
   default is an equal split: a Kubernetes Service balances connections without knowing capacities
   (kube-proxy picks a backend at random, with equal probabilities in iptables and nftables mode).
   ``balancing="capacity"`` (opt-in, what an inference-aware gateway aims at) splits in proportion to each
   replica's capacity alone.
2. A replica's capacity is the service's ``requests_per_second_per_gpu`` times its share of compute:
   - ``exclusive``: whole GPUs (``gpus`` of them), isolated;
   - ``mig``: a MIG slice, isolated, ``compute_fraction`` of a GPU (see :func:`mig_compute_fraction`);
   - ``time-sliced``: replicas that name the same ``device`` share its time. Each gets what it asks for
     while the sum fits; beyond that the device's time is shared max-min fairly (round-robin time slices:
     no replica gets more than an equal share unless others leave some unused), so contention divides
     throughput and their busy fractions add up to at most the device's ``compute_fraction`` (1 for a
     whole GPU). Context-switch overhead is not modelled (assumption: it is small next to the slices).
3. Requests beyond what a replica serves are SLO misses: no queue carries them over (a request that waits
   past its latency objective is as lost to the SLO as a dropped one).

Metrics (DCGM, CPU) follow :mod:`dratwin.serving.profile`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dratwin.scenario.model import ServiceSpec
from dratwin.serving.curve import RateCurve, ServingSpecError
from dratwin.serving.layout import (
    IsolatedKey,
    Layout,
    Member,
    Values,
    isolated_values,
    served_by_service,
    shared_values,
)
from dratwin.serving.profile import MIB, ServingProfile

Sharing = Literal["exclusive", "mig", "time-sliced"]
Balancing = Literal["equal", "capacity"]

# The interval integral evaluates each piece between curve breakpoints at this many midpoints: exact for the
# offered requests (linear), and for the misses while no replica crosses its capacity inside a sub-piece.
SUBSTEPS = 4


@dataclass(frozen=True)
class Replica:
    """A replica of a service and where it runs. ``device`` names the physical GPU (for a MIG slice: the
    slice, as it is isolated; for time-slicing: the shared GPU or slice, the same name for every pod on it).
    ``memory_bytes`` is the memory the replica sees (a whole GPU's, or the slice's); 0 when unknown."""

    name: str
    service: str
    device: str
    sharing: Sharing = "exclusive"
    compute_fraction: float = 1.0
    gpus: int = 1
    memory_bytes: int = 0
    ready: bool = True


@dataclass(frozen=True)
class Service:
    name: str
    rate: RateCurve
    requests_per_second_per_gpu: float
    profile: ServingProfile = field(default_factory=ServingProfile)

    @classmethod
    def from_spec(cls, spec: ServiceSpec, profile: ServingProfile | None = None) -> Service:
        if spec.requests_per_second_per_gpu <= 0:
            raise ServingSpecError(
                f"service {spec.deployment}: requests_per_second_per_gpu must be positive, got "
                f"{spec.requests_per_second_per_gpu:g} (what one replica serves on one whole, uncontended GPU)"
            )
        curve = RateCurve.from_points(spec.rate, f"service {spec.deployment}: rate")
        return cls(spec.deployment, curve, spec.requests_per_second_per_gpu, profile or ServingProfile())


@dataclass(frozen=True)
class ReplicaLoad:
    """One ready replica at one moment. ``busy`` is the fraction of its own capacity in use (its slice's, for
    MIG; the share of the GPU's time it could get, for time-slicing). The DCGM values are what the exporter
    shows for the pod: ``dcgm_gpu_util`` is None on MIG, and the shared device's value on a time-sliced
    GPU."""

    replica: str
    service: str
    offered_rps: float
    served_rps: float
    capacity_rps: float
    busy: float
    dcgm_gpu_util: float | None
    dcgm_sm_active: float
    dcgm_tensor_active: float
    dcgm_fb_used_mib: float
    cpu_percent: float

    @property
    def missed_rps(self) -> float:
        return self.offered_rps - self.served_rps


@dataclass(frozen=True)
class DeviceLoad:
    """A device (whole GPU, MIG slice or shared GPU): the fraction of its time in use (for a time-sliced GPU the
    sum over its pods) and the memory its replicas hold;
    ``overcommitted`` when they reserve more than it has (on a real node the last one would fail to start)."""

    device: str
    busy: float
    fb_used_bytes: int
    memory_bytes: int

    @property
    def overcommitted(self) -> bool:
        return 0 < self.memory_bytes < self.fb_used_bytes


@dataclass(frozen=True)
class ServiceLoad:
    service: str
    offered_rps: float
    served_rps: float
    ready_replicas: int

    @property
    def missed_rps(self) -> float:
        return self.offered_rps - self.served_rps


@dataclass(frozen=True)
class LoadSnapshot:
    at: float
    replicas: tuple[ReplicaLoad, ...]
    devices: tuple[DeviceLoad, ...]
    services: tuple[ServiceLoad, ...]

    def service(self, name: str) -> ServiceLoad:
        return next(s for s in self.services if s.service == name)

    def replica(self, name: str) -> ReplicaLoad:
        return next(r for r in self.replicas if r.replica == name)


@dataclass(frozen=True)
class Groups:
    """The ready replicas of one tuple of replicas, grouped by what decides their load: the isolated replicas of
    one layout class with the same sharing and memory see the same values; a time-sliced replica is a group of
    its own. Fixed while the replicas are (the model keeps it for the tuple it was asked about last)."""

    layout: Layout
    ready: tuple[Replica, ...]  # in the order of the replicas
    group_of: tuple[int, ...]  # each ready replica's group
    heads: tuple[Replica, ...]  # each group's first replica
    classes: tuple[IsolatedKey | None, ...]  # each group's isolated class; None: time-sliced
    on_device: dict[str, tuple[int, ...]]  # the ready replicas (indices into ready) on each device, in order


@dataclass(frozen=True)
class GroupedLoad:
    """The load at one moment, one :class:`ReplicaLoad` per group of ready replicas that see the same values
    (:class:`Groups`): what a sync reads without a value per replica. ``loads[g].replica`` names the group's
    first replica; :meth:`ServingModel.expand` gives the :class:`LoadSnapshot` with every replica."""

    at: float
    groups: Groups
    loads: tuple[ReplicaLoad, ...]
    busy: tuple[float, ...]  # each group's share of its device's (or slice's) time

    def load_of(self, index: int) -> ReplicaLoad:
        """The values of the ``index``-th ready replica (its group's: the name is the group's first replica's)."""
        return self.loads[self.groups.group_of[index]]


@dataclass(frozen=True)
class ServiceTotals:
    """Requests of one service over an interval: offered, served, and the SLO misses."""

    service: str
    offered: float
    served: float

    @property
    def missed(self) -> float:
        return self.offered - self.served


class ServingModel:
    """The services of a run; every answer depends only on the arguments (a tuple of replicas passed again is
    recognized and its grouping reused, which changes no answer)."""

    def __init__(self, services: Iterable[Service], balancing: Balancing = "equal") -> None:
        self.services = {s.name: s for s in services}
        self.balancing = balancing
        # The grouping of the last tuple of replicas asked about: the same placement is evaluated many times.
        self._last: tuple[tuple[Replica, ...], Groups] | None = None

    @classmethod
    def from_specs(
        cls,
        specs: Iterable[ServiceSpec],
        profiles: Mapping[str, ServingProfile] | None = None,
        balancing: Balancing = "equal",
    ) -> ServingModel:
        known = profiles or {}
        return cls((Service.from_spec(s, known.get(s.deployment)) for s in specs), balancing)

    def rate_at(self, service: str, t: float) -> float:
        return self.services[service].rate.rate_at(t)

    def snapshot(self, at: float, replicas: Sequence[Replica]) -> LoadSnapshot:
        """The load at ``at`` on the given replicas (those not ready get no traffic)."""
        return self.expand(self.grouped(at, replicas))

    def grouped(self, at: float, replicas: Sequence[Replica]) -> GroupedLoad:
        """The load at ``at``, evaluated once per group of replicas that see the same values."""
        groups = self._groups(replicas)
        rates = self._rates(at)
        isolated = isolated_values(groups.layout, rates)
        shared = shared_values(groups.layout, rates) if groups.layout.shared else {}
        loads: list[ReplicaLoad] = []
        busy: list[float] = []
        devices: dict[str, DeviceLoad] = {}
        for head, key in zip(groups.heads, groups.classes, strict=True):
            values = isolated[key] if key is not None else shared[head.name]
            device = None
            if head.sharing == "time-sliced":
                device = devices.get(head.device)
                if device is None:
                    device = devices[head.device] = self._device_load(head.device, groups, isolated, shared)
            loads.append(self._replica_load(head, values, device))
            busy.append(values.busy)
        return GroupedLoad(at, groups, tuple(loads), tuple(busy))

    def expand(self, grouped: GroupedLoad) -> LoadSnapshot:
        """Every ready replica's load, every device's and every service's."""
        groups = grouped.groups
        loads = tuple(
            load if load.replica == replica.name else dataclasses.replace(load, replica=replica.name)
            for replica, load in zip(groups.ready, (grouped.loads[g] for g in groups.group_of), strict=True)
        )
        devices = tuple(self._device_total(d, groups, grouped.busy) for d in sorted(groups.on_device))
        return LoadSnapshot(grouped.at, loads, devices, self._services(grouped.at, loads))

    def interval(self, start: float, end: float, replicas: Sequence[Replica]) -> tuple[ServiceTotals, ...]:
        """Requests offered, served and missed per service over [start, end], the replicas fixed meanwhile."""
        edges = sorted({start, end, *(t for s in self.services.values() for t in s.rate.breakpoints(start, end))})
        layout = self._groups(replicas).layout
        served: dict[str, float] = dict.fromkeys(self.services, 0.0)
        curves = [(name, service.rate.rate_at) for name, service in self.services.items()]
        for a, b in itertools.pairwise(edges):
            step = (b - a) / SUBSTEPS
            for k in range(SUBSTEPS):
                at = a + (k + 0.5) * step
                for name, rps in served_by_service(layout, {name: rate_at(at) for name, rate_at in curves}).items():
                    served[name] += rps * step
        return tuple(
            ServiceTotals(name, service.rate.requests(start, end), served[name])
            for name, service in sorted(self.services.items())
        )

    # ---- the steps -------------------------------------------------------------------------------

    def _rates(self, at: float) -> dict[str, float]:
        return {name: service.rate.rate_at(at) for name, service in self.services.items()}

    def _alone_capacity(self, replica: Replica) -> float:
        rps = self.services[replica.service].requests_per_second_per_gpu
        if replica.sharing == "exclusive":
            return rps * replica.gpus
        return rps * replica.compute_fraction

    def _groups(self, replicas: Sequence[Replica]) -> Groups:
        if self._last is not None and self._last[0] is replicas:
            return self._last[1]
        groups = self._build_groups(replicas)
        if isinstance(replicas, tuple):  # immutable (and Replica is frozen): safe to reuse while it is passed
            self._last = (replicas, groups)
        return groups

    def _build_groups(self, replicas: Sequence[Replica]) -> Groups:
        layout = Layout()
        shared: dict[str, list[tuple[str, Member]]] = {}
        budgets: dict[str, float] = {}
        ready = tuple(r for r in replicas if r.ready)
        for replica in ready:
            capacity = self._alone_capacity(replica)
            weight = capacity if self.balancing == "capacity" else 1.0
            if replica.sharing == "time-sliced":
                rps = self.services[replica.service].requests_per_second_per_gpu
                shared.setdefault(replica.device, []).append((replica.name, (replica.service, weight, rps)))
                budgets[replica.device] = replica.compute_fraction
            else:
                layout.add_isolated(replica.name, replica.service, weight, capacity)
        for device, members in shared.items():
            layout.add_shared(budgets[device], members)
        index: dict[tuple[IsolatedKey, Sharing, int], int] = {}
        group_of: list[int] = []
        heads: list[Replica] = []
        classes: list[IsolatedKey | None] = []
        on_device: dict[str, list[int]] = {}
        for i, replica in enumerate(ready):
            on_device.setdefault(replica.device, []).append(i)
            key = layout.class_of.get(replica.name)
            same = (key, replica.sharing, replica.memory_bytes) if key is not None else None
            group = index.get(same) if same is not None else None
            if group is None:
                group = len(heads)
                heads.append(replica)
                classes.append(key)
                if same is not None:
                    index[same] = group
            group_of.append(group)
        return Groups(layout, ready, tuple(group_of), tuple(heads), tuple(classes),
                      {d: tuple(members) for d, members in on_device.items()})

    def _device_load(self, device: str, groups: Groups, isolated: Mapping[IsolatedKey, Values],
                     shared: Mapping[str, Values]) -> DeviceLoad:
        busy = []
        for i in groups.on_device[device]:
            key = groups.classes[groups.group_of[i]]
            busy.append(isolated[key].busy if key is not None else shared[groups.ready[i].name].busy)
        return self._sum_device(device, [groups.ready[i] for i in groups.on_device[device]], busy)

    def _device_total(self, device: str, groups: Groups, busy: Sequence[float]) -> DeviceLoad:
        members = groups.on_device[device]
        return self._sum_device(device, [groups.ready[i] for i in members], [busy[groups.group_of[i]] for i in members])

    def _sum_device(self, device: str, replicas: Sequence[Replica], busy: Sequence[float]) -> DeviceLoad:
        """A device's busy fraction (the sum over the replicas on it, in their order) and memory."""
        total, fb, memory = 0.0, 0, 0
        for replica, used in zip(replicas, busy, strict=True):
            total += used
            memory = max(memory, replica.memory_bytes)
            profile = self.services[replica.service].profile
            fb += profile.framebuffer_bytes(replica.memory_bytes, self._own_busy(replica, used))
        return DeviceLoad(device, total, fb, memory)

    def _own_busy(self, replica: Replica, busy: float) -> float:
        if replica.sharing == "time-sliced":
            return busy / replica.compute_fraction if replica.compute_fraction else 0.0
        return busy

    def _replica_load(self, replica: Replica, values: Values, device: DeviceLoad | None) -> ReplicaLoad:
        """``device``: the time-sliced device's load (None for an isolated replica: its own values are shown)."""
        profile = self.services[replica.service].profile
        served, capacity, busy = values.served, values.capacity, values.busy
        own = served / capacity if capacity else 0.0
        # What the exporter shows for the pod: its device's values (a time-sliced GPU's are the sum of all
        # pods on it); a MIG slice has no GPU_UTIL but profiling metrics of its own.
        seen = device.busy if device is not None else busy
        util = None if replica.sharing == "mig" else 100.0 * min(seen, 1.0)
        fb = profile.framebuffer_bytes(replica.memory_bytes, busy) if device is None else device.fb_used_bytes
        return ReplicaLoad(
            replica.name,
            replica.service,
            values.offered,
            served,
            capacity,
            own,
            util,
            profile.sm_active_per_busy * seen,
            profile.tensor_active_per_busy * seen,
            fb / MIB,
            profile.cpu_percent(own),
        )

    def _services(self, at: float, loads: Sequence[ReplicaLoad]) -> tuple[ServiceLoad, ...]:
        result = []
        for name in sorted(self.services):
            mine = [load for load in loads if load.service == name]
            offered = self.rate_at(name, at)
            result.append(ServiceLoad(name, offered, sum(m.served_rps for m in mine), len(mine)))
        return tuple(result)

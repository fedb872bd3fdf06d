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

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dratwin.scenario.model import ServiceSpec
from dratwin.serving.curve import RateCurve, ServingSpecError
from dratwin.serving.layout import Layout, Member, PerReplica, per_replica, served_by_service
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
        # The layout of the last tuple of replicas asked about: the same placement is evaluated many times.
        self._last: tuple[tuple[Replica, ...], Layout] | None = None

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
        values = per_replica(self._layout(replicas), self._rates(at))
        devices = self._devices(replicas, values.busy)
        by_device = {d.device: d for d in devices}
        loads = tuple(self._replica_load(r, values, by_device[r.device]) for r in replicas if r.ready)
        return LoadSnapshot(at, loads, devices, self._services(at, loads))

    def interval(self, start: float, end: float, replicas: Sequence[Replica]) -> tuple[ServiceTotals, ...]:
        """Requests offered, served and missed per service over [start, end], the replicas fixed meanwhile."""
        edges = sorted({start, end, *(t for s in self.services.values() for t in s.rate.breakpoints(start, end))})
        layout = self._layout(replicas)
        served: dict[str, float] = dict.fromkeys(self.services, 0.0)
        for a, b in itertools.pairwise(edges):
            step = (b - a) / SUBSTEPS
            for k in range(SUBSTEPS):
                for name, rps in served_by_service(layout, self._rates(a + (k + 0.5) * step)).items():
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

    def _layout(self, replicas: Sequence[Replica]) -> Layout:
        if self._last is not None and self._last[0] is replicas:
            return self._last[1]
        layout = self._build_layout(replicas)
        if isinstance(replicas, tuple):  # immutable (and Replica is frozen): safe to reuse while it is passed
            self._last = (replicas, layout)
        return layout

    def _build_layout(self, replicas: Sequence[Replica]) -> Layout:
        layout = Layout()
        shared: dict[str, list[tuple[str, Member]]] = {}
        budgets: dict[str, float] = {}
        for replica in replicas:
            if not replica.ready:
                continue
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
        return layout

    def _devices(self, replicas: Sequence[Replica], busy: Mapping[str, float]) -> tuple[DeviceLoad, ...]:
        total: dict[str, float] = defaultdict(float)
        memory: dict[str, int] = {}
        fb: dict[str, int] = defaultdict(int)
        for replica in replicas:
            if not replica.ready:
                continue
            used = busy[replica.name]
            total[replica.device] += used
            memory[replica.device] = max(memory.get(replica.device, 0), replica.memory_bytes)
            profile = self.services[replica.service].profile
            fb[replica.device] += profile.framebuffer_bytes(replica.memory_bytes, self._own_busy(replica, busy))
        return tuple(DeviceLoad(d, total[d], fb[d], memory[d]) for d in sorted(total))

    def _own_busy(self, replica: Replica, busy: Mapping[str, float]) -> float:
        if replica.sharing == "time-sliced":
            return busy[replica.name] / replica.compute_fraction if replica.compute_fraction else 0.0
        return busy[replica.name]

    def _replica_load(self, replica: Replica, values: PerReplica, device: DeviceLoad) -> ReplicaLoad:
        profile = self.services[replica.service].profile
        name = replica.name
        served, capacity, busy = values.served[name], values.capacity[name], values.busy[name]
        own = served / capacity if capacity else 0.0
        # What the exporter shows for the pod: its device's values (a time-sliced GPU's are the sum of all
        # pods on it); a MIG slice has no GPU_UTIL but profiling metrics of its own.
        seen = device.busy if replica.sharing == "time-sliced" else busy
        util = None if replica.sharing == "mig" else 100.0 * min(seen, 1.0)
        shown_fb = device.fb_used_bytes if replica.sharing == "time-sliced" else None
        fb = profile.framebuffer_bytes(replica.memory_bytes, busy) if shown_fb is None else shown_fb
        return ReplicaLoad(
            name,
            replica.service,
            values.offered[name],
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

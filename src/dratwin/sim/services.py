"""Inference services over time: load on the ready replicas, DCGM and CPU metrics, and their autoscaler.

For each :class:`~dratwin.scenario.model.ServiceSpec` (a Deployment by namespace/name) the controller
- accounts the requests offered, served and missed (beyond capacity: SLO misses) between any two moments
  at which the set of ready replicas changes (:meth:`ServingModel.interval`, the replicas fixed between);
- at the autoscaler's sync period (HPA 15 s; KEDA's HPA on its own, KEDA's activation every polling
  interval, 30 s) takes a :meth:`ServingModel.snapshot` of the load and hands each pod's metric to the
  HPA or KEDA core, then sets the Deployment's replicas to what the core decides.

What each pod shows the autoscaler: DCGM_FI_DEV_GPU_UTIL (a Pods metric; KEDA's External value is the sum
over the ready replicas) is the snapshot's value for a Ready pod, 0 for a pod whose containers run but
which is still loading or warming up (its GPU is idle), and no sample for a pod whose containers do not
run yet; CPU usage is the profile's percentage of the pod's CPU request. KEDA with a DCGM trigger decides
activity on that same value, so at zero replicas it stays inactive (kedacore/keda#7538);
``activation_on_request_rate`` (an option, not upstream) decides it on the service's request rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from dratwin.api.quantity import Quantity
from dratwin.autoscaling import HorizontalPodAutoscaler, HpaConfig, KedaAutoscaler, KedaConfig, PodSample
from dratwin.autoscaling.hpa import ScaleDecision
from dratwin.cluster.state import PodRecord
from dratwin.scenario.model import ServiceSpec
from dratwin.serving import LoadSnapshot, Replica, ServingModel
from dratwin.sim.deployments import DeploymentController
from dratwin.sim.engine import CONTROLLER, Action, Engine
from dratwin.sim.kubelet import is_ready
from dratwin.sim.outcomes import ReplicaCount, ScaleEvent, ServiceOutcome, UtilizationSample, rounded
from dratwin.sim.replicas import DeviceIndex, Placement, devices_of, replicas
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase, workload_of


@dataclass
class _Service:
    spec: ServiceSpec
    outcome: ServiceOutcome
    hpa: HorizontalPodAutoscaler | None = None
    keda: KedaAutoscaler | None = None
    # Sums and counts over the syncs' ready replicas: DCGM_FI_DEV_GPU_UTIL (those that show it), CPU %.
    util_sum: float = 0.0
    util_count: int = 0
    cpu_sum: float = 0.0
    cpu_count: int = 0

    @property
    def key(self) -> str:
        return self.spec.deployment


@dataclass
class ServiceController:
    engine: Engine
    store: Store
    deployments: DeploymentController
    specs: Sequence[ServiceSpec]
    activation_on_request_rate: bool = False
    keep_utilization: bool = True
    model: ServingModel = field(init=False)
    services: dict[str, _Service] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _running_at: dict[str, float] = field(default_factory=dict)
    _replicas: tuple[Replica, ...] = ()
    _nodes: dict[str, str] = field(default_factory=dict)  # pod -> node
    _devices: dict[str, str] = field(default_factory=dict)  # pod -> its (first) device's name
    _dirty: bool = True
    _since: float = 0.0
    _index: DeviceIndex | None = None
    _snapshot: LoadSnapshot | None = None

    def __post_init__(self) -> None:
        self.model = ServingModel.from_specs(self.specs)
        for spec in self.specs:
            scaler = spec.autoscaler
            kind = scaler.kind if scaler is not None else "none"
            metric = scaler.metric if scaler is not None else ""
            service = _Service(spec, ServiceOutcome(spec.deployment, kind, metric))
            if scaler is not None and scaler.kind == "hpa":
                service.hpa = HorizontalPodAutoscaler(HpaConfig.from_spec(scaler))
                self._every(service.hpa.config.sync_period_seconds, partial(self._sync, service))
            elif scaler is not None:
                service.keda = KedaAutoscaler(KedaConfig.from_spec(scaler))
                self._every(service.keda.config.polling_interval_seconds, partial(self._poll, service))
                self._every(service.keda.config.hpa.sync_period_seconds, partial(self._sync, service))
            else:
                self._every(15.0, partial(self._observe, service))
            self.services[spec.deployment] = service
        self.store.subscribe("Pod", self._on_pod)
        self.store.subscribe("ResourceSlice", self._on_slice)

    def _every(self, period: float, action: Action) -> None:
        def tick() -> None:
            action()
            self.engine.after(period, CONTROLLER, tick)

        self.engine.at(period, CONTROLLER, tick)

    # ---- the cluster changes ----

    def _on_pod(self, change: Change) -> None:
        raw = change.pod.raw if change.pod is not None else None
        record = self.store.state.pods.get(change.key)
        if raw is None and record is not None:
            raw = record.raw
        if raw is None or workload_of(raw) not in self.services:
            return
        self._account(change.time)
        self._dirty = True
        if change.type == "Deleted":
            self._running_at.pop(change.key, None)
        elif change.key not in self._running_at and pod_phase(raw) == "Running":
            self._running_at[change.key] = change.time

    def _on_slice(self, change: Change) -> None:
        self._account(change.time)
        self._index = None
        self._dirty = True

    # ---- requests, between changes ----

    def _account(self, now: float) -> None:
        if now > self._since:  # with the replicas as they are since the last change
            for totals in self.model.interval(self._since, now, self.current()):
                outcome = self.services[totals.service].outcome
                outcome.requests += totals.offered
                outcome.served += totals.served
        self._since = max(self._since, now)

    def current(self) -> tuple[Replica, ...]:
        if self._dirty:
            state = self.store.state
            if self._index is None:
                self._index = DeviceIndex(state)
            placements = []
            for key in self.services:
                if key not in self.deployments.deployments:
                    continue
                for pod in self.deployments.pods(key):
                    record = state.pods.get(pod)
                    if record is None or not record.pod.spec.node_name:
                        continue
                    ready = pod_phase(record.raw) == "Running" and is_ready(record.raw)
                    self._nodes[pod] = record.pod.spec.node_name
                    placements.append(Placement(pod, key, record.pod.spec.node_name, devices_of(state, record), ready))
            self._replicas = replicas(placements, self._index)
            self._devices = {r.name: r.device for r in self._replicas}
            self._dirty = False
            self._snapshot = None
        return self._replicas

    def utilization_at(self, now: float) -> tuple[tuple[Replica, ...], LoadSnapshot]:
        """The replicas as they are and their load at ``now``, for a sampler. A read: the requests are not
        accounted up to ``now`` here, so that sampling changes no total."""
        current = self.current()
        if self._snapshot is not None and self._snapshot.at == now:
            return current, self._snapshot
        return current, self.model.snapshot(now, current)

    def _load(self, now: float) -> LoadSnapshot:
        self._account(now)
        current = self.current()
        if self._snapshot is None or self._snapshot.at != now:
            self._snapshot = self.model.snapshot(now, current)
        return self._snapshot

    # ---- the autoscalers ----

    def _sync(self, service: _Service) -> None:
        if service.key not in self.deployments.deployments:
            return
        now = self.engine.now()
        snapshot = self._load(now)
        replicas_now = self.deployments.replicas(service.key)
        samples = self._samples(service, snapshot)
        if service.hpa is not None:
            decision = service.hpa.reconcile(now, replicas_now, pods=samples)
        else:
            assert service.keda is not None
            if replicas_now == 0:
                self._observe(service)
                return
            decision = service.keda.sync(now, replicas_now, value=self._total_util(service, snapshot), pods=samples)
        self._apply(service, decision)
        self._observe(service)

    def _poll(self, service: _Service) -> None:
        if service.key not in self.deployments.deployments or service.keda is None:
            return
        now = self.engine.now()
        snapshot = self._load(now)
        value = self._total_util(service, snapshot)
        activation = self.model.rate_at(service.key, now) if self.activation_on_request_rate else None
        self._apply(service, service.keda.poll(now, self.deployments.replicas(service.key), value, activation))

    def _apply(self, service: _Service, decision: ScaleDecision) -> None:
        if decision.rescale:
            service.outcome.scale_events.append(ScaleEvent(decision.at, decision.current_replicas,
                                                           decision.desired_replicas, decision.reason))
            self.deployments.scale(service.key, decision.desired_replicas)

    def _total_util(self, service: _Service, snapshot: LoadSnapshot) -> float:
        return sum(r.dcgm_gpu_util or 0.0 for r in snapshot.replicas if r.service == service.key)

    def _samples(self, service: _Service, snapshot: LoadSnapshot) -> list[PodSample]:
        state = self.store.state
        loads = {r.replica: r for r in snapshot.replicas}
        cpu = service.spec.autoscaler is not None and service.spec.autoscaler.metric == "cpu"
        samples = []
        for pod in self.deployments.pods(service.key):
            record = state.pods.get(pod)
            if record is None:
                continue
            phase = pod_phase(record.raw)
            running_at = self._running_at.get(pod)
            ready_at = self.deployments.deployments[service.key].ready_at.get(pod)
            ready = ready_at is not None
            load = loads.get(pod)
            request = cpu_request(record) if cpu else 0.0
            value: float | None = None
            if phase == "Running":
                if cpu:
                    percent = load.cpu_percent if load is not None else service_idle_cpu(self.model, service.key)
                    value = percent / 100.0 * request
                else:
                    value = (load.dcgm_gpu_util if load is not None else 0.0)
            samples.append(PodSample(pod, value, request, "Running" if phase == "Running" else "Pending", ready,
                                     started_at=running_at, ready_changed_at=ready_at if ready else running_at))
        return samples

    def _observe(self, service: _Service) -> None:
        """The service's replicas, utilization samples and means at this sync."""
        if service.key not in self.deployments.deployments:
            return
        now = self.engine.now()
        snapshot = self._load(now)
        outcome = service.outcome
        mine = [r for r in snapshot.replicas if r.service == service.key]
        count = ReplicaCount(now, self.deployments.replicas(service.key), len(mine))
        if not outcome.replicas_over_time or (outcome.replicas_over_time[-1].replicas,
                                              outcome.replicas_over_time[-1].ready) != (count.replicas, count.ready):
            outcome.replicas_over_time.append(count)
        devices, nodes, samples = self._devices, self._nodes, outcome.utilization
        for load in mine:
            util = load.dcgm_gpu_util
            if util is not None:
                service.util_sum += util
                service.util_count += 1
            service.cpu_sum += load.cpu_percent
            service.cpu_count += 1
            if self.keep_utilization:
                pod = load.replica
                samples.append(UtilizationSample(now, nodes.get(pod, ""), devices.get(pod, ""), pod, util,
                                                 load.dcgm_sm_active, load.dcgm_tensor_active, load.dcgm_fb_used_mib))

    def finish(self, until: float) -> list[ServiceOutcome]:
        self._account(until)
        result = []
        for service in self.services.values():
            if service.key not in self.deployments.deployments:
                self.notes.append(f"service {service.key}: no Deployment of that name arrived; all its requests "
                                  "are counted as missed (check the service's deployment name)")
            outcome = service.outcome
            outcome.requests, outcome.served = rounded(outcome.requests), rounded(outcome.served)
            outcome.slo_misses = rounded(outcome.requests - outcome.served)
            outcome.mean_gpu_util = rounded(service.util_sum / service.util_count) if service.util_count else None
            outcome.mean_cpu_percent = rounded(service.cpu_sum / service.cpu_count) if service.cpu_count else None
            result.append(outcome)
        return result


def cpu_request(record: PodRecord) -> float:
    """The pod's CPU request in cores (the sum over its containers)."""
    total = 0.0
    for container in record.pod.spec.containers:
        value = container.resources.requests.get("cpu") if container.resources is not None else None
        if value is not None:
            total += float(Quantity.parse(value).value)
    return total


def service_idle_cpu(model: ServingModel, service: str) -> float:
    return model.services[service].profile.cpu_percent(0.0)

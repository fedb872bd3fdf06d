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

A sync is the hot path (one per service every 15 s, for hundreds of replicas): the load is evaluated once
per group of replicas that see the same values (:meth:`ServingModel.grouped`), and what does not change
between syncs while the pods do not (each pod's phase, readiness, request, and its group) is gathered once
per replica set into a :class:`_Plan`; a sync then hands the HPA one counted sample per set of pods alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from dratwin.api.quantity import Quantity
from dratwin.autoscaling import HorizontalPodAutoscaler, HpaConfig, KedaAutoscaler, KedaConfig, PodSample
from dratwin.autoscaling.hpa import ScaleDecision
from dratwin.cluster.state import PodRecord
from dratwin.scenario.model import ServiceSpec
from dratwin.serving import GroupedLoad, Groups, LoadSnapshot, Replica, ReplicaLoad, ServingModel
from dratwin.sim.deployments import DeploymentController
from dratwin.sim.engine import CONTROLLER, Action, Engine
from dratwin.sim.kubelet import is_ready
from dratwin.sim.outcomes import ReplicaCount, ScaleEvent, ServiceOutcome, UtilizationSample, rounded
from dratwin.sim.replicas import DeviceIndex, Placement, devices_of, replicas
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase, workload_of


@dataclass(frozen=True)
class _Alike:
    """Pods of a service the HPA sees alike at every sync while the replica set stands (``count`` of them,
    named after the first): the same phase, readiness and request, and the same group of the load (None: no
    load, not a ready replica). For the CPU resource the start and Ready times are alike too (the calculator
    reads them only there)."""

    name: str
    count: int
    running: bool
    ready: bool
    request: float
    group: int | None
    started_at: float | None
    ready_changed_at: float | None


@dataclass(frozen=True)
class _Plan:
    """One service's pods as the replica set stands: its ready replicas (indices into the grouped load's
    ``ready``, in order) and its pods as the HPA sees them."""

    groups: Groups
    ready: tuple[int, ...]
    alike: tuple[_Alike, ...]


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
    _loads: GroupedLoad | None = None
    _plans: dict[str, _Plan] = field(default_factory=dict)  # by service, for the replica set as it stands

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
            self._replicas = self._build_replicas()
            self._devices = {r.name: r.device for r in self._replicas}
            self._dirty = False
            self._loads = None
            self._plans = {}
        return self._replicas

    def _build_replicas(self) -> tuple[Replica, ...]:
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
        return replicas(placements, self._index)

    def load_at(self, now: float) -> LoadSnapshot:
        """Every ready replica's load at ``now`` (its DCGM values, its device's busy fraction and memory) on the
        replicas as they stand: what a sync at ``now`` reads. Reading it changes nothing in the run (the
        requests are accounted at the changes and syncs only)."""
        return self.utilization_at(now)[1]

    def utilization_at(self, now: float) -> tuple[tuple[Replica, ...], LoadSnapshot]:
        """The replicas as they stand and their load at ``now``, for a sampler. Reading it changes nothing in
        the run."""
        if self._dirty:  # not kept: the controller rebuilds them where its accounting expects it
            built = self._build_replicas()
            return built, self.model.snapshot(now, built)
        return self._replicas, self.model.expand(self._grouped(now))

    def _grouped(self, now: float) -> GroupedLoad:
        current = self.current()
        if self._loads is None or self._loads.at != now:
            self._loads = self.model.grouped(now, current)
        return self._loads

    def _load(self, now: float) -> GroupedLoad:
        self._account(now)
        return self._grouped(now)

    def _plan(self, service: _Service, loads: GroupedLoad) -> _Plan:
        plan = self._plans.get(service.key)
        if plan is None or plan.groups is not loads.groups:
            plan = self._plans[service.key] = self._build_plan(service, loads.groups)
        return plan

    def _build_plan(self, service: _Service, groups: Groups) -> _Plan:
        state = self.store.state
        index = {r.name: i for i, r in enumerate(groups.ready)}
        ready = tuple(i for i, r in enumerate(groups.ready) if r.service == service.key)
        cpu = service.spec.autoscaler is not None and service.spec.autoscaler.metric == "cpu"
        ready_at = self.deployments.deployments[service.key].ready_at
        alike: dict[tuple[Any, ...], list[Any]] = {}
        for pod in self.deployments.pods(service.key):
            record = state.pods.get(pod)
            if record is None:
                continue
            running = pod_phase(record.raw) == "Running"
            running_at = self._running_at.get(pod)
            became_ready = ready_at.get(pod)
            is_ready_now = became_ready is not None
            request = cpu_request(record) if cpu else 0.0
            replica = index.get(pod) if running else None
            group = groups.group_of[replica] if replica is not None else None
            changed = became_ready if is_ready_now else running_at
            key: tuple[Any, ...] = (running, is_ready_now, request, group)
            if cpu:
                key += (running_at, changed)
            if key in alike:
                alike[key][1] += 1
            else:
                alike[key] = [pod, 1, running, is_ready_now, request, group, running_at, changed]
        return _Plan(groups, ready, tuple(_Alike(*fields) for fields in alike.values()))

    # ---- the autoscalers ----

    def _sync(self, service: _Service) -> None:
        if service.key not in self.deployments.deployments:
            return
        now = self.engine.now()
        loads = self._load(now)
        plan = self._plan(service, loads)
        replicas_now = self.deployments.replicas(service.key)
        samples = self._samples(service, loads, plan)
        if service.hpa is not None:
            decision = service.hpa.reconcile(now, replicas_now, pods=samples)
        else:
            assert service.keda is not None
            if replicas_now == 0:
                self._observe(service)
                return
            decision = service.keda.sync(now, replicas_now, value=self._total_util(loads, plan), pods=samples)
        self._apply(service, decision)
        self._observe(service)

    def _poll(self, service: _Service) -> None:
        if service.key not in self.deployments.deployments or service.keda is None:
            return
        now = self.engine.now()
        loads = self._load(now)
        value = self._total_util(loads, self._plan(service, loads))
        activation = self.model.rate_at(service.key, now) if self.activation_on_request_rate else None
        self._apply(service, service.keda.poll(now, self.deployments.replicas(service.key), value, activation))

    def _apply(self, service: _Service, decision: ScaleDecision) -> None:
        if decision.rescale:
            service.outcome.scale_events.append(ScaleEvent(decision.at, decision.current_replicas,
                                                           decision.desired_replicas, decision.reason))
            self.deployments.scale(service.key, decision.desired_replicas)

    def _total_util(self, loads: GroupedLoad, plan: _Plan) -> float:
        return sum(loads.load_of(i).dcgm_gpu_util or 0.0 for i in plan.ready)

    def _samples(self, service: _Service, loads: GroupedLoad, plan: _Plan) -> list[PodSample]:
        cpu = service.spec.autoscaler is not None and service.spec.autoscaler.metric == "cpu"
        samples = []
        for pods in plan.alike:
            value: float | None = None
            if pods.running:
                load = loads.loads[pods.group] if pods.group is not None else None
                if cpu:
                    percent = load.cpu_percent if load is not None else service_idle_cpu(self.model, service.key)
                    value = percent / 100.0 * pods.request
                else:
                    value = (load.dcgm_gpu_util if load is not None else 0.0)
            samples.append(PodSample(pods.name, value, pods.request, "Running" if pods.running else "Pending",
                                     pods.ready, started_at=pods.started_at, ready_changed_at=pods.ready_changed_at,
                                     count=pods.count))
        return samples

    def _observe(self, service: _Service) -> None:
        """The service's replicas, utilization samples and means at this sync."""
        if service.key not in self.deployments.deployments:
            return
        now = self.engine.now()
        loads = self._load(now)
        plan = self._plan(service, loads)
        outcome = service.outcome
        count = ReplicaCount(now, self.deployments.replicas(service.key), len(plan.ready))
        if not outcome.replicas_over_time or (outcome.replicas_over_time[-1].replicas,
                                              outcome.replicas_over_time[-1].ready) != (count.replicas, count.ready):
            outcome.replicas_over_time.append(count)
        group_of, per_group = loads.groups.group_of, loads.loads
        # One addition per replica, in their order (the means are those of every replica's value at every
        # sync, summed as they come): kept in locals, as this loop runs for every replica at every sync.
        util_sum, util_count, cpu_sum = service.util_sum, service.util_count, service.cpu_sum
        for i in plan.ready:
            load = per_group[group_of[i]]
            util = load.dcgm_gpu_util
            if util is not None:
                util_sum += util
                util_count += 1
            cpu_sum += load.cpu_percent
        service.util_sum, service.util_count, service.cpu_sum = util_sum, util_count, cpu_sum
        service.cpu_count += len(plan.ready)
        if self.keep_utilization:
            self._keep_samples(now, outcome, [(loads.groups.ready[i].name, per_group[group_of[i]]) for i in plan.ready])

    def _keep_samples(self, now: float, outcome: ServiceOutcome, loads: list[tuple[str, ReplicaLoad]]) -> None:
        devices, nodes, samples = self._devices, self._nodes, outcome.utilization
        for pod, load in loads:
            samples.append(UtilizationSample(now, nodes.get(pod, ""), devices.get(pod, ""), pod, load.dcgm_gpu_util,
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

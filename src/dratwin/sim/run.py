"""One simulated run of a :class:`RunSpec`: the cluster loaded, the controllers wired, time run, outcomes.

Wiring order is fixed (it decides the order in which controllers see one change): scheduler, workload
controllers, Kueue (when the cluster has a ClusterQueue or LocalQueue), kubelet, resourceclaim controller,
bookkeeping. Randomness: the cluster's names come from
``Random(seed)`` as in ``dratwin schedule``; the workload controllers' names from their own stream, so
that adding an arrival does not rename the cluster's pods.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from dratwin.allocator import Features
from dratwin.catalog import Catalog, load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.errors import InputError
from dratwin.scenario.model import ColdStartSpec, RunSpec
from dratwin.scheduler.profile import Options
from dratwin.scheduler.scoring import opt_in_note, scoring_named
from dratwin.sim.accounting import HOUR, Accountant
from dratwin.sim.clock import VirtualClock
from dratwin.sim.coldstart import ColdStarts
from dratwin.sim.collector import young_collections_only
from dratwin.sim.deployments import DeploymentController
from dratwin.sim.engine import Engine
from dratwin.sim.fragmentation import FragmentationMeter
from dratwin.sim.gpu_use import GpuUse, service_gpu_seconds
from dratwin.sim.invariants import InvariantChecker
from dratwin.sim.kubelet import ClaimController, ColdStart, Kubelet, no_cold_start
from dratwin.sim.kueue import KueueController, Raw
from dratwin.sim.kueue_history import KueueHistory
from dratwin.sim.kueue_objects import read_kueue_objects
from dratwin.sim.kueue_pods import KueuePods
from dratwin.sim.outcomes import FragmentationSummary, NeverPlaced, RunResult, rounded
from dratwin.sim.provisioner import ProvisionerController
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.services import ServiceController
from dratwin.sim.store import Change, Store
from dratwin.sim.timeline import Sampler, Timeline
from dratwin.sim.workloads import WorkloadController

NOT_TRIED = "not tried by the scheduler yet when the run ended"


@dataclass(frozen=True)
class SimOptions:
    gates: str = ""
    catalog: Catalog | None = None
    cold_start: ColdStart | None = None  # None: the scenario's cold start model (none when it has no sizes)
    keda_activation_on_request_rate: bool = False  # an option beside upstream (see sim/services.py)
    check_invariants: bool = False  # after every event (slow: for tests)
    keep_events: bool = False
    progress: Callable[[float, int], None] | None = None
    sample_every: float | None = None  # seconds between the samples of Simulation.timeline; None: none taken
    # Every replica's GPU utilization at every autoscaler sync (about 1.5 million samples in a simulated week):
    # kept for what exports them, not for every run's JSON.
    keep_utilization: bool = False
    # Scheduling cycles due at one instant in one engine action, certain failures from the shape's stamped
    # verdict (``SchedulingController.inline_cycles``): the same outputs, faster. Off: the reference run.
    inline_cycles: bool = True


@dataclass
class Simulation:
    result: RunResult
    store: Store  # the cluster as the run left it
    events: list[Change] = field(default_factory=list)
    invariant_checks: int = 0
    timeline: Timeline | None = None
    services: ServiceController | None = None  # the inference services as the run left them (load_at reads them)
    kueue: KueueController | None = None  # Kueue as the run left it (``view()`` for its queues and Workloads)


def simulate(spec: RunSpec, options: SimOptions | None = None) -> Simulation:
    options = options or SimOptions()
    _refuse_unsupported(spec)
    features = Features.from_gates(options.gates)
    compiler = SelectorCompiler(list_type_attributes=features.list_type_attributes)
    loaded = load_cluster(spec.objects, features, random.Random(spec.seed), admitted_already=spec.admitted,
                          kueue=True)
    clock = VirtualClock()
    engine = Engine(clock)
    store = Store(loaded, clock, keep_log=options.keep_events)
    scoring = scoring_named(spec.scoring)
    scheduling = SchedulingController(engine, store, Options(spec.seed, scoring.strategy, policy=scoring.policy),
                                      compiler, inline_cycles=options.inline_cycles)
    classes = [o.raw for o in spec.objects if o.kind == "PriorityClass"]
    workloads = WorkloadController(engine, store, random.Random(f"workloads/{spec.seed}"), scheduling.enqueue,
                                   classes)
    kueue = kueue_controller(engine, store, loaded, workloads, classes, compiler)
    history = KueueHistory.following(kueue) if kueue is not None else None
    deployments = DeploymentController(engine, store, workloads)
    for obj in spec.objects:
        if obj.kind == "Deployment":
            deployments.adopt(obj.raw)
    starts = ColdStarts.from_spec(spec.cold_start, store) if options.cold_start is None and \
        spec.cold_start != ColdStartSpec() else None
    kubelet = Kubelet(engine, store, lambda key: workloads.run_seconds.get(key),
                      options.cold_start or starts or no_cold_start, starts.ready_after if starts else None)
    if starts is not None:
        starts.revised = kubelet.revise
        workloads.creatable_at = starts.creatable_at
        if kueue is not None:  # the data-readiness check waits for the same cluster cache
            kueue.checks.data_ready_at = starts.creatable_at
    ClaimController(store)
    services = ServiceController(engine, store, deployments, spec.services, options.keda_activation_on_request_rate,
                                 options.keep_utilization) if spec.services else None
    provisioner = None
    catalog = options.catalog
    if spec.provisioner != "none":
        catalog = catalog or load_catalog()
        provisioner = ProvisionerController(engine, store, scheduling, spec, catalog, features, compiler)
    accountant = Accountant(store, catalog)
    gpu_use = GpuUse(store, accountant, frozenset(s.deployment for s in spec.services))
    store.dispatch()  # the load's own events are the state at time 0, already counted
    engine.after_each.append(store.dispatch)
    checker = InvariantChecker(store, accountant, kueue)
    if options.check_invariants:
        engine.after_each.append(checker)
    sampler = None
    if options.sample_every is not None:
        sampler = Sampler(engine, store, accountant, scheduling, spec.until_seconds, Timeline(options.sample_every),
                          gpu_use, services, FragmentationMeter(store, accountant))
        engine.after_each.append(sampler)
    initial = list(loaded.pending)
    loaded.pending.clear()
    scheduling.enqueue(initial)
    workloads.schedule_arrivals(spec.arrivals)
    if kueue is not None:
        for job in loaded.queued_jobs:
            kueue.add_job(job, None)
    if sampler is not None:
        sampler()  # the samples before the first action (the hook runs only after one)
    with young_collections_only():
        engine.run(spec.until_seconds, options.progress)
    if options.check_invariants:
        checker.finish(spec.until_seconds)
    result = _result(spec, engine, store, scheduling, workloads, accountant)
    note = opt_in_note(scoring)
    if note is not None:
        result.notes.append(note)
    if provisioner is not None:
        result.notes += provisioner.notes
        result.disruptions = provisioner.disruptions()
    if services is not None:
        result.services = services.finish(spec.until_seconds)
        result.notes += services.notes
    if starts is not None:
        result.cold_start = starts.summary()
    if kueue is not None and history is not None:
        result.notes += kueue.notes
        result.kueue = history.summary(spec.until_seconds, kueue.view(), store.state.workloads)
    used = gpu_use.finish(spec.until_seconds) + service_gpu_seconds(result.services, spec.services)
    result.gpu_hours_used = rounded(used / HOUR)
    timeline = sampler.finish() if sampler is not None else None
    if timeline is not None:
        result.fragmentation = fragmentation_summary(timeline)
    return Simulation(result, store, store.log, checker.checks, timeline, services, kueue)


def kueue_controller(engine: Engine, store: Store, loaded: LoadedCluster, workloads: WorkloadController,
                     classes: list[Raw], compiler: SelectorCompiler) -> KueueController | None:
    """Kueue's controllers, when the cluster has a queue: the Jobs it manages go through it."""
    objects = read_kueue_objects(loaded.kueue_objects, classes)
    if not objects.present:
        return None
    kueue = KueueController(engine, store, objects, workloads.start_job, compiler, workloads.stop_job,
                            workloads.succeeded)
    workloads.queue_job = kueue.take_job
    workloads.ungate = kueue.ungate
    workloads.on_job_finished.append(kueue.job_finished)
    if loaded.kueue_frameworks is not None:
        KueuePods(kueue, store)
    return kueue


def _refuse_unsupported(spec: RunSpec) -> None:
    try:
        scoring_named(spec.scoring)
    except ValueError as error:
        raise InputError(f"scoring: {error}") from None


def _result(spec: RunSpec, engine: Engine, store: Store, scheduling: SchedulingController,
            workloads: WorkloadController, accountant: Accountant) -> RunResult:
    until = spec.until_seconds
    state = store.state
    present, allocated = accountant.gpu_seconds(until)
    costs = accountant.costs(until)
    notes = [*store.loaded.notes, *workloads.notes, *store.loaded.rejections, *workloads.rejections]
    pending = [k for k, r in state.pods.items() if not r.pod.spec.node_name]
    return RunResult(
        scenario=spec.scenario, variant=spec.variant, seed=spec.seed, until_seconds=until,
        events=engine.processed, scheduling_attempts=scheduling.attempts,
        pods_created=accountant.pods_created, pods_started=accountant.pods_started,
        pods_succeeded=accountant.pods_succeeded, pods_running_at_end=len(accountant.running),
        pods_pending_at_end=len(pending),
        waiting_seconds=accountant.waiting_distribution(), startup_seconds=accountant.startup_distribution(),
        gpu_hours_allocated=rounded(allocated / HOUR), gpu_hours_idle=rounded((present - allocated) / HOUR),
        device_hours=accountant.device_hours(until),
        never_placed=_never_placed(pending, scheduling, store),
        nodes_over_time=list(accountant.nodes_over_time),
        cost_usd=rounded(sum(c.usd for c in costs)), cost_by_instance_type=costs,
        notes=notes,
    )


def fragmentation_summary(timeline: Timeline) -> FragmentationSummary:
    shares, gpus = timeline.fragmented_share, timeline.fragmented_gpus
    count = len(shares)
    return FragmentationSummary(count, rounded(sum(gpus) / count) if count else 0.0,
                                rounded(sum(shares) / count) if count else 0.0, max(shares, default=0.0))


def _never_placed(pending: list[str], scheduling: SchedulingController, store: Store) -> list[NeverPlaced]:
    blocked = {b.pod: b.reason for b in store.loaded.blocked}
    by_reason: dict[str, list[str]] = defaultdict(list)
    for key in pending:
        by_reason[blocked.get(key) or scheduling.messages.get(key) or NOT_TRIED].append(key)
    ranked = sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0]))
    return [NeverPlaced(reason, len(pods), tuple(pods[:3])) for reason, pods in ranked]

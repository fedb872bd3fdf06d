"""``dratwin bench kueue``: Kueue's own performance shapes in simulated time, with its checker's figures.

The shapes (:mod:`.kueue_shapes`): baseline (15,000 Workloads over 30 ClusterQueues in 5 cohorts), large-
scale (50,000 over 1,000 in 10) and tas (the baseline's Workloads as 2/4/8-pod gangs over 640 nodes). They
run on the product path: the simulation's Kueue controller (:class:`dratwin.sim.kueue.KueueController`) on
the engine and its clock, with the shape's preemption policies. As Kueue's runner does
(``test/performance/scheduler/runner``), each Workload is created at its set's interval and, once admitted,
"runs" for its class's ``runtimeMs`` and is then finished, freeing its quota; a Workload preempted before
its end is admitted again later and runs its whole time again. The runner here watches the Workloads in
the store, as Kueue's watches them through the API server.

The figure is the wall time of the run (building the objects not counted; Python's cyclic collector paused
for the run, which makes almost no cyclic garbage), with its CPU time (the machine is shared) and, beside
Kueue's published means, what its checker reads (:mod:`.kueue_checker`): per class the mean time to
admission and the ClusterQueue class's usage, in simulated seconds. Targets: baseline
< 10 s, large-scale < 60 s, tas < 30 s of wall time.

Kueue's published run is an envtest API server with Kueue's scheduler and controllers at real speed: its
wall time and its admission waits include every API round trip (creating, admitting, finishing each
Workload), which simulated time does not have. The twin's waits are those of the quota alone, so they are
expected below Kueue's where the API server paces Kueue (the large-scale shape).
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from dratwin.allocator import Features
from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.kueue_checker import Figures, UsageIntegral, WorkloadRecord, check, figures
from dratwin.benchmarks.kueue_shapes import BASELINE, CLASS_LABEL, LARGE_SCALE, TAS, Objects, Shape, generate
from dratwin.cluster.load import load_cluster
from dratwin.cluster.state import KUEUE_WORKLOAD
from dratwin.kueue.quota import cq_key
from dratwin.sim.clock import VirtualClock
from dratwin.sim.engine import WORLD, Action, Engine
from dratwin.sim.kueue import KueueController, Raw
from dratwin.sim.kueue_objects import read_kueue_objects
from dratwin.sim.kueue_status import find_condition
from dratwin.sim.store import Change, Store
from dratwin.twin.schedule import gc_paused

TARGETS_S = {BASELINE.name: 10.0, LARGE_SCALE.name: 60.0, TAS.name: 30.0}


@dataclass
class Run:
    """What a run of a shape leaves: every Workload's history, every ClusterQueue's usage, the counts."""

    workloads: dict[str, WorkloadRecord] = field(default_factory=dict)
    usage: dict[str, UsageIntegral] = field(default_factory=dict)
    cycles: int = 0
    preemptions: int = 0
    end_seconds: float = 0.0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    def figures(self) -> Figures:
        return figures(self.workloads.values(), self.usage.values())


@dataclass
class _Runner:
    """Kueue's performance runner over the store: creates each Workload at its time, finishes it
    ``runtimeMs`` after its (last) admission, and records what the checker reads."""

    engine: Engine
    store: Store
    kueue: KueueController
    resource: tuple[str, str]  # the shape's (flavor, cpu): the usage the recorder integrates
    out: Run
    runtimes: dict[str, float] = field(default_factory=dict)  # Workload key -> seconds it runs once admitted
    admissions: dict[str, int] = field(default_factory=dict)  # Workload key -> admissions seen (0: not admitted)
    admitted_now: set[str] = field(default_factory=set)

    def create(self, raw: Raw, class_name: str, runtime: float) -> None:
        key = self.kueue.add_workload(raw)
        self.runtimes[key] = runtime
        self.out.workloads[key] = WorkloadRecord(class_name, self.engine.now())

    def on_workload(self, change: Change) -> None:
        """A Workload changed: admitted (its finish is due after its runtime), evicted, or finished."""
        raw = self.store.state.workloads.get(change.key)
        if raw is None:
            return
        admitted = find_condition(raw, "Admitted")
        finished = find_condition(raw, "Finished")
        now = change.time
        record = self.out.workloads[change.key]
        is_admitted = admitted is not None and admitted.get("status") == "True" and finished is None
        if is_admitted and change.key not in self.admitted_now:
            self.admitted_now.add(change.key)
            serial = self.admissions[change.key] = self.admissions.get(change.key, 0) + 1
            record.admitted = now
            self.engine.at(now + self.runtimes[change.key], WORLD, lambda: self._finish(change.key, serial))
        elif not is_admitted and change.key in self.admitted_now:
            self.admitted_now.discard(change.key)
            if finished is None:
                record.evictions += 1
                self.out.preemptions += 1
            else:
                record.finished = now
        self._record_usage(raw, now)

    def _finish(self, key: str, serial: int) -> None:
        if key in self.admitted_now and self.admissions[key] == serial:  # not evicted since
            self.kueue.finish_workload(key)

    def _record_usage(self, raw: Raw, now: float) -> None:
        cq = self.kueue.records[f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"].cluster_queue
        if cq in self.out.usage:
            self.out.usage[cq].record(now, self.kueue.tree.nodes[cq_key(cq)].usage.get(self.resource, 0))
        self.out.end_seconds = now


def run_controller(objects: Objects, flavor: str) -> Run:
    """The shape through the simulation's Kueue controller, on the engine, until every Workload is done."""
    source = [LoadedObject(raw, SourceLocation("kueue-shape", index)) for index, raw in enumerate(objects.cluster)]
    loaded = load_cluster(source, Features(), random.Random(0), kueue=True)
    engine = Engine(VirtualClock())
    store = Store(loaded, engine.clock)
    kueue = KueueController(engine, store, read_kueue_objects(loaded.kueue_objects), _no_jobs)
    out = Run()
    for name, queue in kueue.objects.cluster_queues.items():
        nominal = kueue.tree.quota(cq_key(name), (flavor, "cpu")).nominal
        out.usage[name] = UsageIntegral(queue.metadata.labels.get(CLASS_LABEL, ""), nominal, 0.0)
    runner = _Runner(engine, store, kueue, (flavor, "cpu"), out)
    store.subscribe(KUEUE_WORKLOAD, runner.on_workload)
    store.dispatch()
    engine.after_each.append(store.dispatch)
    for arrival in objects.arrivals:
        engine.at(arrival.at_seconds, WORLD, _creation(runner, arrival.workload, arrival.class_name,
                                                        arrival.runtime_seconds))
    horizon = max((a.at_seconds for a in objects.arrivals), default=0.0) + 10 * 24 * 3600.0
    gc.collect()
    gc.freeze()  # the objects built so far live for the whole run: the collector need not walk them again
    started = time.perf_counter(), time.process_time()
    try:
        # A run makes almost no cyclic garbage (a few closures), but every Workload object and condition it
        # creates stays alive: each full collection would walk all of them again (a third of the CPU time of
        # large-scale), so the collector waits until the run ends, as for the scheduler's benchmarks (and
        # what the run built is frozen with the rest, so that resuming does not walk it within the timing).
        with gc_paused(keep=True):
            engine.run(horizon)
    finally:
        gc.unfreeze()
    out.wall_seconds = time.perf_counter() - started[0]
    out.cpu_seconds = time.process_time() - started[1]
    out.cycles = kueue.cycles
    return out


def _creation(runner: _Runner, raw: Raw, class_name: str, runtime: float) -> Action:
    return lambda: runner.create(raw, class_name, runtime)


def _no_jobs(job: Raw, run_seconds: float | None) -> None:
    """The shapes' Workloads have no Job behind them: admitting one starts nothing (the runner finishes it)."""


def run_shape(shape: Shape) -> Run:
    return run_controller(generate(shape), shape.flavor)


def results(shape: Shape, run: Run) -> list[BenchResult]:
    found = run.figures()
    verdict = check(found, shape.published.time_to_admission_ms, shape.published.cq_usage_pct)
    detail = (f"{shape.workload_count:,} Workloads, {shape.cluster_queue_count:,} ClusterQueues; CPU "
              f"{run.cpu_seconds:.2f} s; {run.cycles:,} cycles; {run.preemptions:,} preemptions; simulated "
              f"{run.end_seconds:.1f} s "
              f"(Kueue's envtest wall {shape.published.wall_s:.0f} s)")
    out = [BenchResult(f"kueue.{shape.name}.wall_s", run.wall_seconds, "s", TARGETS_S.get(shape.name), detail)]
    for line, twin, kueue, within in verdict.lines:
        key = line.split(" (")[0].replace("time to admission ", "admission.").replace(" usage", ".usage")
        unit = "%" if line.endswith("(%)") else "s"
        note = f"Kueue's mean {kueue:,.1f} {unit}; {'within' if within else 'outside'} its checker's bound"
        out.append(BenchResult(f"kueue.{shape.name}.{key.replace(' ', '_')}", twin, unit, None, note))
    missing = sum(c.not_admitted for c in found.admission.values())
    if missing:
        out.append(BenchResult(f"kueue.{shape.name}.not_admitted", missing, "workloads", None,
                               "never admitted (counted with 0 in their class's mean, as Kueue's recorder does)"))
    return out


def run(shapes: Mapping[str, Shape] | None = None) -> list[BenchResult]:
    out: list[BenchResult] = []
    for shape in (shapes or {s.name: s for s in (BASELINE, LARGE_SCALE)}).values():
        out += results(shape, run_shape(shape))
    return out

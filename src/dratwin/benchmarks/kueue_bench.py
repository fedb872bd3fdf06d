"""``dratwin bench kueue``: Kueue's own performance shapes in simulated time, with its checker's figures.

The shapes (:mod:`.kueue_shapes`): baseline (15,000 Workloads over 30 ClusterQueues in 5 cohorts), large-
scale (50,000 over 1,000 in 10) and tas (the baseline's Workloads as 2/4/8-pod gangs over 640 nodes). As
Kueue's runner does, each Workload is created at its set's interval, "runs" for its class's ``runtimeMs``
once admitted and then finishes, freeing its quota. Time is simulated: the figure is the wall time of the
run (building the objects not counted), with its CPU time (the machine is shared) and, beside Kueue's
published means, what its checker reads (:mod:`.kueue_checker`): per class the mean time to admission and
the ClusterQueue class's usage, in simulated seconds. Targets: baseline < 10 s, large-scale < 60 s, tas
< 30 s of wall time.

Kueue's published run is an envtest API server with Kueue's scheduler and controllers at real speed: its
wall time and its admission waits include every API round trip (creating, admitting, finishing each
Workload), which simulated time does not have. The twin's waits are those of the quota alone, so they are
expected below Kueue's, and its usage above.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from dratwin.api.kueue import ClusterQueue, ResourceFlavor, Workload
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.kueue_checker import Figures, UsageIntegral, WorkloadRecord, check, figures
from dratwin.benchmarks.kueue_shapes import BASELINE, CLASS_LABEL, LARGE_SCALE, TAS, Objects, Shape, generate
from dratwin.kueue.cycle import Admitted, Entry, Queues, Snapshot, scheduling_cycle
from dratwin.kueue.equivalence import REQUEUE_BATCH_SECONDS, EquivalentQueues
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.usage import workload_usage

TARGETS_S = {BASELINE.name: 10.0, LARGE_SCALE.name: 60.0, TAS.name: 30.0}


@dataclass
class Run:
    """What a run of a shape leaves: every Workload's history, every ClusterQueue's usage, the counts."""

    workloads: dict[str, WorkloadRecord] = field(default_factory=dict)
    usage: dict[str, UsageIntegral] = field(default_factory=dict)
    cycles: int = 0
    end_seconds: float = 0.0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    def figures(self) -> Figures:
        return figures(self.workloads.values(), self.usage.values())


_FINISH, _REQUEUE, _ARRIVE = 0, 1, 2  # at one instant: finishes, then due requeues, then new Workloads


@dataclass
class _Loop:
    """The minimal loop's state: the core's queues and tree, and what is due when."""

    snapshot: Snapshot
    queues: EquivalentQueues
    roots: dict[str, list[str]]  # root of a cohort tree → its ClusterQueues
    events: list[tuple[float, int, int]] = field(default_factory=list)
    admitted: dict[int, Admitted] = field(default_factory=dict)
    requeue_due: dict[str, int] = field(default_factory=dict)  # root → the event of its batched requeue
    seq: int = 0

    def at(self, when: float, kind: int) -> int:
        self.seq += 1
        heapq.heappush(self.events, (when, kind, self.seq))
        return self.seq


def run_core(objects: Objects, flavor: str) -> Run:
    """The shape through the pure core with a loop of its own: arrivals, cycles until no head is left,
    finishes after each Workload's runtime, the cohort's inadmissible Workloads requeued in Kueue's batches."""
    cqs = {raw["metadata"]["name"]: msgspec.convert(raw, ClusterQueue) for raw in objects.cluster
           if raw["kind"] == "ClusterQueue"}
    flavors = {raw["metadata"]["name"]: msgspec.convert(raw, ResourceFlavor) for raw in objects.cluster
               if raw["kind"] == "ResourceFlavor"}
    tree = QuotaTree.build(cqs.values())
    roots: dict[str, list[str]] = {}
    for name in cqs:
        roots.setdefault(tree.root(cq_key(name)), []).append(name)
    loop = _Loop(Snapshot(cqs, flavors, tree), EquivalentQueues(Queues.of(cqs.values()).strategies), roots)
    out = Run()
    resource = (flavor, "cpu")
    for name, queue in cqs.items():
        nominal = tree.quota(cq_key(name), resource).nominal
        out.usage[name] = UsageIntegral(queue.metadata.labels.get(CLASS_LABEL, ""), nominal, 0.0)
    arrivals = {loop.at(a.at_seconds, _ARRIVE): a for a in objects.arrivals}
    requeues: dict[int, str] = {}
    runtimes: dict[str, float] = {}
    started = time.perf_counter(), time.process_time()
    while loop.events:
        now = loop.events[0][0]
        while loop.events and loop.events[0][0] == now:
            _, kind, seq = heapq.heappop(loop.events)
            if kind == _FINISH:
                done = loop.admitted.pop(seq)
                cq = done.entry.cluster_queue
                tree.remove_usage(cq_key(cq), done.assignment.usage)
                out.workloads[done.entry.key].finished = now
                loop.queues.forget(done.entry)
                root = tree.root(cq_key(cq))
                if root not in loop.requeue_due:  # notifyCohort: AddAfter(batchPeriod), joined while waiting
                    loop.requeue_due[root] = due = loop.at(now + REQUEUE_BATCH_SECONDS, _REQUEUE)
                    requeues[due] = root
                _record_usage(out, tree, cq, resource, now)
            elif kind == _REQUEUE:
                root = requeues.pop(seq)
                del loop.requeue_due[root]
                loop.queues.requeue_cluster_queues(loop.roots[root])
            else:
                arrival = arrivals.pop(seq)
                workload = msgspec.convert(arrival.workload, Workload)
                entry = Entry(workload, arrival.cluster_queue, workload_usage(workload), now)
                runtimes[entry.key] = arrival.runtime_seconds
                out.workloads[entry.key] = WorkloadRecord(arrival.class_name, now)
                loop.queues.push(entry)
        heads = loop.queues.heads()
        while heads:
            result = scheduling_cycle(loop.snapshot, heads)
            out.cycles += 1
            for admitted in result.admitted:
                key = admitted.entry.key
                out.workloads[key].admitted = now
                loop.admitted[loop.at(now + runtimes[key], _FINISH)] = admitted
                _record_usage(out, tree, admitted.entry.cluster_queue, resource, now)
            loop.queues.settle(result)
            heads = loop.queues.heads()
        out.end_seconds = now
    out.wall_seconds = time.perf_counter() - started[0]
    out.cpu_seconds = time.process_time() - started[1]
    return out


def _record_usage(out: Run, tree: QuotaTree, cq: str, resource: tuple[str, str], now: float) -> None:
    out.usage[cq].record(now, tree.nodes[cq_key(cq)].usage.get(resource, 0))


def run_shape(shape: Shape) -> Run:
    return run_core(generate(shape), shape.flavor)


def results(shape: Shape, run: Run) -> list[BenchResult]:
    found = run.figures()
    verdict = check(found, shape.published.time_to_admission_ms, shape.published.cq_usage_pct)
    detail = (f"{shape.workload_count:,} Workloads, {shape.cluster_queue_count:,} ClusterQueues; CPU "
              f"{run.cpu_seconds:.2f} s; {run.cycles:,} cycles; simulated {run.end_seconds:.1f} s "
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

"""Kueue on the control plane: clusters with queues, queued Jobs, and runs of them (one-shot and over time)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tests.builders.kueue import cluster_queue, flavor_quotas, group, local_queue, quota, resource_flavor
from tests.builders.manifests import manifest, node, run
from tests.builders.sim import job, simulate_text

from dratwin.allocator import Features
from dratwin.api.kueue import QUEUE_NAME_LABEL
from dratwin.api.loader import load_text
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import load_cluster
from dratwin.scheduler.profile import Options
from dratwin.sim.accounting import Accountant
from dratwin.sim.clock import VirtualClock
from dratwin.sim.engine import WORLD, Engine
from dratwin.sim.invariants import InvariantChecker
from dratwin.sim.kubelet import ClaimController, Kubelet
from dratwin.sim.kueue import KueueController
from dratwin.sim.quick_scenario import parse_duration, run_spec
from dratwin.sim.run import Simulation, kueue_controller
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.store import Store
from dratwin.sim.workloads import WorkloadController
from dratwin.twin.schedule import ScheduleReport

Raw = dict[str, Any]


def queued_job(name: str, cpu: str = "1", *, queue: str = "lq", at: str = "0s", run_for: str | None = "10m",
               parallelism: int | None = None, completions: int | None = None, **job_args: Any) -> Raw:
    """A Job of namespace ``default`` labelled for a LocalQueue (arriving at ``at``, running ``run_for``)."""
    raw = job(name, cpu=cpu, at=at, run_for=run_for, parallelism=parallelism, completions=completions, **job_args)
    raw["metadata"]["labels"] = {QUEUE_NAME_LABEL: queue}
    return raw


def cpu_queue(name: str = "cq", cpu: Any = 4, *, flavor: str = "default", cohort: str = "",
              borrowing: Any = None, lending: Any = None, **spec: Any) -> Raw:
    """A ClusterQueue of one flavor covering cpu with ``cpu`` nominal quota."""
    return cluster_queue(name, group(["cpu"], flavor_quotas(flavor, quota("cpu", cpu, borrowing, lending))),
                         cohort=cohort, **spec)


def kueue_basics(cpu: Any = 4, *, node_cpu: str = "8", flavor_labels: dict[str, str] | None = None) -> list[Raw]:
    """One node, one flavor, ClusterQueue ``cq`` with ``cpu`` nominal, LocalQueue default/lq."""
    return [node("n1", cpu=node_cpu, labels=flavor_labels), resource_flavor("default", flavor_labels),
            cpu_queue("cq", cpu), local_queue("lq", "cq", namespace="default")]


def schedule_objects(objects: Sequence[Raw]) -> ScheduleReport:
    """``dratwin schedule`` over the objects (Kueue's controller included)."""
    return run(manifest(*objects))


def simulate_objects(objects: Sequence[Raw], until: str = "1h") -> Simulation:
    """A run over time with every invariant checked after each event."""
    return simulate_text(manifest(*objects), until=until)


@dataclass
class KueueRig:
    """The parts of a run over time that Kueue's evictions touch (scheduler, Job controller, Kueue, kubelet,
    resourceclaim controller, invariants), wired as :func:`dratwin.sim.run.simulate` wires them, with the engine
    at hand so that a test can act at a given moment (evict hand-made preemption targets)."""

    engine: Engine
    store: Store
    kueue: KueueController
    checker: InvariantChecker

    def at(self, when: str, action: Callable[[], None]) -> None:
        self.engine.at(parse_duration(when), WORLD, action)

    def run(self, until: str) -> None:
        self.engine.run(parse_duration(until))

    def workload(self, job: str) -> Raw:
        return self.store.state.workloads[self.kueue.by_job[f"default/{job}"]]

    def key(self, job: str) -> str:
        return self.kueue.by_job[f"default/{job}"]


def kueue_rig(objects: Sequence[Raw]) -> KueueRig:
    spec = run_spec(load_text(manifest(*objects), "scenario.yaml"), name="scenario.yaml")
    loaded = load_cluster(spec.objects, Features(), random.Random(0), kueue=True)
    engine = Engine(VirtualClock())
    store = Store(loaded, engine.clock)
    compiler = SelectorCompiler()
    scheduling = SchedulingController(engine, store, Options(0), compiler)
    workloads = WorkloadController(engine, store, random.Random("workloads/0"), scheduling.enqueue)
    kueue = kueue_controller(engine, store, loaded, workloads, [], compiler)
    assert kueue is not None, "the objects have no ClusterQueue or LocalQueue"
    Kubelet(engine, store, lambda key: workloads.run_seconds.get(key))
    ClaimController(store)
    accountant = Accountant(store)
    store.dispatch()
    engine.after_each.append(store.dispatch)
    checker = InvariantChecker(store, accountant, kueue)
    engine.after_each.append(checker)
    workloads.schedule_arrivals(spec.arrivals)
    return KueueRig(engine, store, kueue, checker)

"""Kueue on the control plane: clusters with queues, queued Jobs, and runs of them (one-shot and over time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.builders.kueue import cluster_queue, flavor_quotas, group, local_queue, quota, resource_flavor
from tests.builders.manifests import manifest, node, run
from tests.builders.sim import job, simulate_text

from dratwin.api.kueue import QUEUE_NAME_LABEL
from dratwin.sim.run import Simulation
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

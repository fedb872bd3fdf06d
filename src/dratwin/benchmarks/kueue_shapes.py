"""Kueue's own performance shapes, as objects: the baseline, large-scale and tas configurations.

Kueue's scheduler performance test (``test/performance/scheduler/`` at ``ff69552``) generates, from a
generator config, cohorts of ClusterQueues with one flavor of ``cpu`` quota, one namespace and LocalQueue
per ClusterQueue, and per ClusterQueue sets of Workload objects (created directly, no Job behind them):

- a ClusterQueue is named ``{class}-{queueSet}-{index}-{cohort}`` with cohort ``{class}-{index}``, nominal
  quota and borrowingLimit as configured, ``preemption`` withinClusterQueue / reclaimWithinCohort as
  configured; its namespace and LocalQueue carry the ClusterQueue's name;
- each Workload set of a ClusterQueue is created by its own loop that waits ``creationIntervalMs`` before
  each Workload: the k-th Workload of a set (k from 0) is created at ``(k + 1) × interval``; the sets and the
  ClusterQueues run side by side, so every ClusterQueue gets the same timeline;
- a Workload is named ``{class}-{set}-{k}-{template}``, labelled with its class and its running time, has
  the template's priority and one PodSet ``main`` of ``podCount`` pods (1 outside tas) requesting the
  template's ``cpu``; in tas its PodSet also asks for a topology level (required, preferred, or a required
  slice of ``sliceSize`` pods for "balanced");
- tas adds a Topology of block / rack / hostname levels and its nodes (``node-b0-r2-n15``, 96 CPU, 256 Gi,
  110 pods, labelled ``tas-node-group: tas``), and a flavor ``tas-flavor`` selecting them.

The published means (each ``rangespec.yaml``'s comments, ../shared/docs/benchmarks.md 3.1) are kept beside
each shape; the checker compares a run's figures with its thresholds: wall at most mean × 1.2, per class
time to admission at most its threshold, ClusterQueue usage at least mean − 7 points.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

API = "kueue.x-k8s.io/v1beta2"
RUNNING_MS_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
TAS_NODE_GROUP_LABEL = "tas-node-group"
HOSTNAME = "kubernetes.io/hostname"

Raw = dict[str, Any]


@dataclass(frozen=True)
class WorkloadClass:
    """One workload template: ``className``, ``runtimeMs``, ``priority``, ``request`` (cpu) and the tas fields."""

    name: str
    runtime_ms: int
    priority: int
    request: str
    pod_count: int = 1
    tas_constraint: str = ""  # required, preferred or balanced
    tas_level: str = ""
    slice_size: int = 0


@dataclass(frozen=True)
class WorkloadSet:
    count: int
    creation_interval_ms: int
    workloads: tuple[WorkloadClass, ...]


@dataclass(frozen=True)
class QueueSet:
    class_name: str
    count: int
    nominal_quota: str
    borrowing_limit: str
    reclaim_within_cohort: str
    within_cluster_queue: str
    workload_sets: tuple[WorkloadSet, ...]


@dataclass(frozen=True)
class CohortSet:
    class_name: str
    count: int
    queue_sets: tuple[QueueSet, ...]


@dataclass(frozen=True)
class TopologyLevel:
    name: str
    count: int
    node_label: str


@dataclass(frozen=True)
class Published:
    """The means behind a shape's rangespec thresholds, from Kueue's CI runs."""

    wall_s: float
    cq_usage_pct: float  # of the cq class
    time_to_admission_ms: Mapping[str, float]  # per workload class


@dataclass(frozen=True)
class Shape:
    name: str
    cohorts: tuple[CohortSet, ...]
    published: Published
    flavor: str = "rf"
    topology: str = ""  # the Topology's name; "" outside tas
    levels: tuple[TopologyLevel, ...] = ()
    node_cpu: str = "96"
    node_memory: str = "256Gi"

    @property
    def workload_count(self) -> int:
        return sum(c.count * q.count * s.count * len(s.workloads)
                   for c in self.cohorts for q in c.queue_sets for s in q.workload_sets)

    @property
    def cluster_queue_count(self) -> int:
        return sum(c.count * q.count for c in self.cohorts for q in c.queue_sets)

    @property
    def node_count(self) -> int:
        count = 1 if self.levels else 0
        for level in self.levels:
            count *= level.count
        return count


def _plain_sets(small: tuple[int, int, int], medium: tuple[int, int, int],
                large: tuple[int, int, int]) -> tuple[WorkloadSet, ...]:
    """The three classes of the non-tas shapes, each (count, creationIntervalMs, runtimeMs)."""
    def one(name: str, spec: tuple[int, int, int], priority: int, request: str) -> WorkloadSet:
        count, interval, runtime = spec
        return WorkloadSet(count, interval, (WorkloadClass(name, runtime, priority, request),))
    return (one("small", small, 50, "1"), one("medium", medium, 100, "5"), one("large", large, 200, "20"))


def _cq_set(sets: tuple[WorkloadSet, ...], count: int) -> QueueSet:
    return QueueSet("cq", count, "20", "100", "Any", "LowerPriority", sets)


BASELINE = Shape(
    "baseline",
    (CohortSet("cohort", 5, (_cq_set(_plain_sets((350, 100, 200), (100, 500, 500), (50, 1200, 1000)), 6),)),),
    Published(351.1164, 55.9, {"large": 16_501, "medium": 76_768, "small": 215_468}),
)

LARGE_SCALE = Shape(
    "large-scale",
    (CohortSet("cohort", 10, (_cq_set(_plain_sets((35, 60, 150), (11, 300, 350), (4, 700, 700)), 100),)),),
    Published(1179.411, 38.64, {"large": 105_604, "medium": 256_413, "small": 700_379}),
)

_RACK = "cloud.provider.com/topology-rack"


def _tas_sets() -> tuple[WorkloadSet, ...]:
    out = []
    for size, interval, runtime, priority, request, pods, counts, slices in (
            ("small", 100, 200, 50, "500m", 2, (120, 120, 110), 1),
            ("medium", 500, 500, 100, "1250m", 4, (34, 33, 33), 2),
            ("large", 1200, 1000, 200, "2500m", 8, (17, 17, 16), 4)):
        for constraint, count in zip(("required", "preferred", "balanced"), counts, strict=True):
            template = WorkloadClass(f"{size}-{constraint}-rack", runtime, priority, request, pods, constraint, _RACK,
                                     slices if constraint == "balanced" else 0)
            out.append(WorkloadSet(count, interval, (template,)))
    return tuple(out)


TAS = Shape(
    "tas",
    (CohortSet("cohort", 5, (_cq_set(_tas_sets(), 6),)),),
    Published(401.472, 62.41, {
        "large-balanced-rack": 37_862, "large-preferred-rack": 39_573, "large-required-rack": 39_625,
        "medium-balanced-rack": 106_303, "medium-preferred-rack": 106_324, "medium-required-rack": 107_071,
        "small-balanced-rack": 237_846, "small-preferred-rack": 246_090, "small-required-rack": 246_755}),
    flavor="tas-flavor", topology="default-topology",
    levels=(TopologyLevel("block", 1, "cloud.provider.com/topology-block"), TopologyLevel("rack", 10, _RACK),
            TopologyLevel("node", 64, HOSTNAME)),
)

SHAPES: dict[str, Shape] = {s.name: s for s in (BASELINE, LARGE_SCALE, TAS)}


def scaled(shape: Shape, cohorts: int, queues: int, workloads: float) -> Shape:
    """A smaller copy of ``shape`` (for tests): ``cohorts`` cohorts of ``queues`` ClusterQueues, each Workload
    set cut to ``workloads`` of its count (at least 1); quotas, classes and intervals unchanged."""
    def cut(s: WorkloadSet) -> WorkloadSet:
        return WorkloadSet(max(1, round(s.count * workloads)), s.creation_interval_ms, s.workloads)
    sets = tuple(CohortSet(c.class_name, cohorts, tuple(
        QueueSet(q.class_name, queues, q.nominal_quota, q.borrowing_limit, q.reclaim_within_cohort,
                 q.within_cluster_queue, tuple(cut(s) for s in q.workload_sets)) for q in c.queue_sets))
        for c in shape.cohorts)
    return Shape(f"{shape.name}-scaled", sets, shape.published, shape.flavor, shape.topology, shape.levels,
                 shape.node_cpu, shape.node_memory)


# ---- the objects ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadArrival:
    """A Workload and when the generator creates it (seconds from the start), with its class and runtime."""

    at_seconds: float
    workload: Raw
    class_name: str
    runtime_seconds: float
    cluster_queue: str


@dataclass
class Objects:
    """What a shape generates: cluster objects (flavor, topology, nodes, ClusterQueues, namespaces,
    LocalQueues) and the Workloads in creation order."""

    cluster: list[Raw] = field(default_factory=list)
    arrivals: list[WorkloadArrival] = field(default_factory=list)


def generate(shape: Shape) -> Objects:
    out = Objects()
    if shape.topology:
        out.cluster.append({"apiVersion": API, "kind": "Topology", "metadata": {"name": shape.topology},
                            "spec": {"levels": [{"nodeLabel": level.node_label} for level in shape.levels]}})
        out.cluster += list(nodes(shape))
    out.cluster.append(_flavor(shape))
    for cohort_set in shape.cohorts:
        for cohort_index in range(cohort_set.count):
            cohort = f"{cohort_set.class_name}-{cohort_index}"
            for set_index, queue_set in enumerate(cohort_set.queue_sets):
                for queue_index in range(queue_set.count):
                    name = f"{queue_set.class_name}-{set_index}-{queue_index}-{cohort}"
                    out.cluster += [_cluster_queue(shape, queue_set, name, cohort),
                                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                                    {"apiVersion": API, "kind": "LocalQueue",
                                     "metadata": {"name": name, "namespace": name}, "spec": {"clusterQueue": name}}]
                    out.arrivals += _workloads(queue_set, name)
    out.arrivals.sort(key=lambda a: a.at_seconds)  # stable: equal times keep the generation order
    return out


def _flavor(shape: Shape) -> Raw:
    spec: Raw = {}
    if shape.topology:
        spec = {"nodeLabels": {TAS_NODE_GROUP_LABEL: "tas"}, "topologyName": shape.topology}
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": shape.flavor}, "spec": spec}


def _cluster_queue(shape: Shape, queue_set: QueueSet, name: str, cohort: str) -> Raw:
    quota = {"name": "cpu", "nominalQuota": queue_set.nominal_quota, "borrowingLimit": queue_set.borrowing_limit}
    metadata = {"name": name, "labels": {CLASS_LABEL: queue_set.class_name}}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": metadata,
            "spec": {"cohortName": cohort, "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["cpu"],
                                         "flavors": [{"name": shape.flavor, "resources": [quota]}]}],
                     "preemption": {"reclaimWithinCohort": queue_set.reclaim_within_cohort,
                                    "withinClusterQueue": queue_set.within_cluster_queue}}}


def _workloads(queue_set: QueueSet, namespace: str) -> Iterator[WorkloadArrival]:
    for set_index, workload_set in enumerate(queue_set.workload_sets):
        created = 0
        for step in range(workload_set.count):
            for template_index, template in enumerate(workload_set.workloads):
                created += 1
                name = f"{template.name}-{set_index}-{step}-{template_index}"
                yield WorkloadArrival(created * workload_set.creation_interval_ms / 1000,
                                      workload(template, name, namespace), template.name,
                                      template.runtime_ms / 1000, namespace)


def workload(template: WorkloadClass, name: str, namespace: str) -> Raw:
    """The Workload the generator creates for ``template`` (MakeWorkload(...).Queue(...).Request(...))."""
    container = {"name": "c", "resources": {"requests": {"cpu": template.request}}}
    pod_set: Raw = {"name": "main", "count": template.pod_count,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}
    if template.tas_level:
        pod_set["topologyRequest"] = _topology_request(template)
    return {"apiVersion": API, "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {RUNNING_MS_LABEL: str(template.runtime_ms), CLASS_LABEL: template.name}},
            "spec": {"queueName": namespace, "priority": template.priority, "podSets": [pod_set]}}


def _topology_request(template: WorkloadClass) -> Raw:
    if template.tas_constraint == "required":
        return {"required": template.tas_level}
    if template.tas_constraint == "preferred":
        return {"preferred": template.tas_level}
    request: Raw = {"podSetSliceRequiredTopology": template.tas_level}  # "balanced": a required slice level
    if template.slice_size:
        request["podSetSliceSize"] = template.slice_size
    return request


def nodes(shape: Shape) -> Iterator[Raw]:
    """The tas nodes, every combination of the levels' values: ``block-0``/``rack-2``/``node-15`` labels,
    named ``node-b0-r2-n15``."""
    def walk(depth: int, values: list[str]) -> Iterator[list[str]]:
        if depth == len(shape.levels):
            yield values
            return
        level = shape.levels[depth]
        for index in range(level.count):
            yield from walk(depth + 1, [*values, f"{level.name}-{index}"])
    allocatable = {"cpu": shape.node_cpu, "memory": shape.node_memory, "pods": "110"}
    for values in walk(0, []):
        name = "node" + "".join(f"-{v[0]}{v.split('-')[1]}" for v in values)
        # The hostname level's value is the level's own (node-15, the same in every rack), as Kueue's
        # generator labels it: its nodes get no other hostname label.
        labels = {TAS_NODE_GROUP_LABEL: "tas"}
        labels.update((level.node_label, value) for level, value in zip(shape.levels, values, strict=True))
        yield {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
               "status": {"capacity": allocatable, "allocatable": allocatable,
                          "conditions": [{"type": "Ready", "status": "True"}]}}

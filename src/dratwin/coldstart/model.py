"""A pod's cold start in four steps, and the caches that shorten it.

1. **Image pull**: the image's size over the node's image bandwidth. Each node keeps the images it has
   pulled: a second pod of the same image on that node pulls nothing (it waits for a pull in flight).
   Pulls on one node share its bandwidth, or run one after another (see :mod:`dratwin.coldstart.pulls`).
   The containers start when the image is there.
2. **Model weights**: from object storage at its bandwidth, one download per pod; or, with the in-cluster
   cache (the LADF pattern: the pod is created only when its model is cached), from the cache at its
   bandwidth. The cache is filled by one download per model from object storage, started by the first pod
   (or by :meth:`ColdStartModel.model_cached_at`, which the creator of pods asks before creating one).
3. **Loading into GPU memory**: the weights' size over the host-to-GPU bandwidth.
4. **Warm-up**: a fixed time (CUDA graphs, KV-cache profiling, the first requests).

A bandwidth of 0 makes its step take no time, as the scenario's ``ColdStartSpec`` says. Object storage and
the cache serve each pod at the full bandwidth: their aggregate limits are far above a cluster's demand
(an assumption; the node's image bandwidth is the shared one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from dratwin.coldstart.pulls import NodePulls
from dratwin.scenario.model import ColdStartSpec

WeightsSource = Literal["none", "object-storage", "cluster-cache"]


@dataclass(frozen=True)
class ColdStartSettings:
    image_bytes: Mapping[str, int] = field(default_factory=dict)
    default_image_bytes: int = 0
    node_image_bandwidth: float = 0.0
    model_bytes: Mapping[str, int] = field(default_factory=dict)  # by workload (namespace/name)
    object_storage_bandwidth: float = 0.0
    cluster_cache: bool = False
    cluster_cache_bandwidth: float = 0.0
    gpu_load_bandwidth: float = 0.0
    warm_up_seconds: float = 0.0
    # The kubelet's default is true; the EKS-optimized AMIs set false, the fleet this twin models first.
    serialize_image_pulls: bool = False

    @classmethod
    def from_spec(cls, spec: ColdStartSpec, *, serialize_image_pulls: bool = False) -> ColdStartSettings:
        return cls(
            dict(spec.image_bytes),
            spec.default_image_bytes,
            spec.node_image_bandwidth,
            dict(spec.model_bytes),
            spec.object_storage_bandwidth,
            spec.cluster_cache,
            spec.cluster_cache_bandwidth,
            spec.gpu_load_bandwidth,
            spec.warm_up_seconds,
            serialize_image_pulls,
        )


@dataclass(frozen=True)
class ColdStart:
    """When pod ``pod`` on ``node`` starts its containers and becomes ready, step by step.

    ``image_pull_seconds`` includes the wait for a pull already in flight or queued; ``weights_seconds``
    includes the wait for the cluster cache when the pod came before its model was cached."""

    pod: str
    node: str
    image: str
    workload: str
    requested_at: float
    containers_started_at: float
    image_cached: bool  # the image was on the node (or being pulled there) already
    weights_source: WeightsSource
    weights_seconds: float
    gpu_load_seconds: float
    warm_up_seconds: float

    @property
    def image_pull_seconds(self) -> float:
        return self.containers_started_at - self.requested_at

    @property
    def ready_at(self) -> float:
        return self.containers_started_at + self.weights_seconds + self.gpu_load_seconds + self.warm_up_seconds

    @property
    def total_seconds(self) -> float:
        return self.ready_at - self.requested_at


@dataclass(frozen=True)
class StartAnswer:
    """The pod's cold start, and the earlier pods whose image pull this one slowed (their new plans)."""

    cold_start: ColdStart
    delayed: tuple[ColdStart, ...] = ()


class ColdStartModel:
    """Owns the per-node image caches and the cluster's model cache; answers when pods start."""

    def __init__(self, settings: ColdStartSettings) -> None:
        self.settings = settings
        self._nodes: dict[str, NodePulls] = {}
        self._models: dict[str, float] = {}  # model (workload) -> when the cluster cache holds it
        self._waiting: dict[str, dict[str, list[ColdStart]]] = {}  # node -> image -> pods waiting on its pull

    @classmethod
    def from_spec(cls, spec: ColdStartSpec, *, serialize_image_pulls: bool = False) -> ColdStartModel:
        return cls(ColdStartSettings.from_spec(spec, serialize_image_pulls=serialize_image_pulls))

    def image_size(self, image: str) -> int:
        return self.settings.image_bytes.get(image, self.settings.default_image_bytes)

    def model_size(self, workload: str) -> int:
        return self.settings.model_bytes.get(workload, 0)

    def model_cached_at(self, workload: str, at: float) -> float:
        """When the cluster cache holds ``workload``'s model; the first ask starts its one download."""
        if workload not in self._models:
            bandwidth = self.settings.object_storage_bandwidth
            size = self.model_size(workload)
            self._models[workload] = at + (size / bandwidth if bandwidth > 0 and size > 0 else 0.0)
        return self._models[workload]

    def is_model_cached(self, workload: str, at: float) -> bool:
        return workload in self._models and self._models[workload] <= at

    def start(
        self, pod: str, image: str, workload: str, node: str, at: float, *, node_bandwidth: float | None = None
    ) -> StartAnswer:
        """Pod ``pod`` (image ``image``, model of ``workload``) started by the kubelet of ``node`` at ``at``.

        ``node_bandwidth`` is the node's image bandwidth when it differs from the scenario's (set on the
        node's first pull). Calls must come in time order.
        """
        pulls = self._node(node, node_bandwidth)
        cached = image in pulls.cached
        ready, moved = pulls.pull(image, self.image_size(image), at)
        plan = self._plan(pod, image, workload, node, at, ready, cached)
        waiting = self._waiting.setdefault(node, {})
        for done in [i for i in waiting if pulls.cached.get(i, at) <= at]:
            del waiting[done]
        delayed = self._delay(waiting, moved)
        if ready > at:
            waiting.setdefault(image, []).append(plan)
        return StartAnswer(plan, delayed)

    def forget_node(self, node: str) -> None:
        """The node is gone: its image cache goes with it."""
        self._nodes.pop(node, None)
        self._waiting.pop(node, None)

    # ---- the steps -------------------------------------------------------------------------------

    def _node(self, node: str, bandwidth: float | None) -> NodePulls:
        if node not in self._nodes:
            rate = self.settings.node_image_bandwidth if bandwidth is None else bandwidth
            self._nodes[node] = NodePulls(rate, self.settings.serialize_image_pulls, clock=0.0)
        return self._nodes[node]

    def _plan(
        self, pod: str, image: str, workload: str, node: str, at: float, started: float, cached: bool
    ) -> ColdStart:
        size, s = self.model_size(workload), self.settings
        source: WeightsSource = "none"
        weights = 0.0
        if size > 0:
            if s.cluster_cache:
                source = "cluster-cache"
                available = self.model_cached_at(workload, started)
                weights = max(0.0, available - started) + _seconds(size, s.cluster_cache_bandwidth)
            else:
                source, weights = "object-storage", _seconds(size, s.object_storage_bandwidth)
        load = _seconds(size, s.gpu_load_bandwidth)
        return ColdStart(pod, node, image, workload, at, started, cached, source, weights, load, s.warm_up_seconds)

    def _replan(self, plan: ColdStart, started: float) -> ColdStart:
        return self._plan(plan.pod, plan.image, plan.workload, plan.node, plan.requested_at, started, plan.image_cached)

    def _delay(self, waiting: dict[str, list[ColdStart]], moved: Mapping[str, float]) -> tuple[ColdStart, ...]:
        delayed: list[ColdStart] = []
        for image, finish in sorted(moved.items()):
            plans = waiting.get(image, [])
            plans[:] = [self._replan(p, finish) for p in plans]
            delayed.extend(plans)
        return tuple(delayed)


def _seconds(size: int, bandwidth: float) -> float:
    return size / bandwidth if bandwidth > 0 and size > 0 else 0.0

"""The kubelet's cold start from the scenario's sizes and bandwidths: :class:`~dratwin.coldstart.ColdStartModel`
answers when a bound pod's containers start (image pull) and when it is Ready (weights, GPU load, warm-up).

One model per run owns the node image caches and the cluster's model cache. The pod's image is its first
container's; its model is its workload's (:func:`~dratwin.sim.workloads.workload_of`). When a new pull on a
node slows earlier pulls there, their pods' start moves later (:meth:`Kubelet.revise`). With the cluster
cache (LADF) the workload controllers ask :meth:`creatable_at` before creating pods: the first ask starts
the model's one download, and pods are created when it is cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dratwin.cluster.state import PodRecord
from dratwin.coldstart import ColdStart, ColdStartModel
from dratwin.scenario.model import ColdStartSpec
from dratwin.sim.clock import Clock
from dratwin.sim.outcomes import ColdStartSummary, Distribution
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import workload_of


@dataclass
class ColdStarts:
    model: ColdStartModel
    clock: Clock
    revised: Callable[[str, float], None] | None = None  # pod key, new containers-start time
    plans: dict[str, ColdStart] = field(default_factory=dict)  # by pod key, the latest plan

    @classmethod
    def from_spec(cls, spec: ColdStartSpec, store: Store) -> ColdStarts:
        starts = cls(ColdStartModel.from_spec(spec), store.clock)
        store.subscribe("Node", starts._on_node)
        return starts

    def __call__(self, record: PodRecord, node: str) -> float:
        """Seconds from now until the pod's containers run on ``node``."""
        containers = record.pod.spec.containers
        image = containers[0].image if containers and containers[0].image else ""
        key = record.info.key
        now = self.clock.now()
        answer = self.model.start(key, image, workload_of(record.raw), node, now)
        self.plans[key] = answer.cold_start
        for plan in answer.delayed:
            self.plans[plan.pod] = plan
            if self.revised is not None:
                self.revised(plan.pod, plan.containers_started_at)
        return answer.cold_start.containers_started_at - now

    def ready_after(self, key: str) -> float:
        """Seconds from the containers' start until the pod is Ready."""
        plan = self.plans.get(key)
        return plan.ready_at - plan.containers_started_at if plan is not None else 0.0

    def creatable_at(self, workload: str, now: float) -> float:
        settings = self.model.settings
        if not settings.cluster_cache or self.model.model_size(workload) <= 0:
            return now
        return self.model.model_cached_at(workload, now)

    def _on_node(self, change: Change) -> None:
        if change.type == "Deleted":
            self.model.forget_node(change.key)

    def summary(self) -> ColdStartSummary:
        plans = list(self.plans.values())
        return ColdStartSummary(
            pods=len(plans),
            image_pull_seconds=Distribution.of([p.image_pull_seconds for p in plans]),
            weights_seconds=Distribution.of([p.weights_seconds for p in plans]),
            gpu_load_seconds=Distribution.of([p.gpu_load_seconds for p in plans]),
            warm_up_seconds=Distribution.of([p.warm_up_seconds for p in plans]),
            total_seconds=Distribution.of([p.total_seconds for p in plans]),
            image_cache_hits=sum(1 for p in plans if p.image_cached),
        )

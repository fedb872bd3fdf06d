"""The Deployment and ReplicaSet controllers over time: a Deployment keeps ``spec.replicas`` pods.

A Deployment's first pods come with its arrival (:class:`~dratwin.sim.workloads.WorkloadController`) or
with the cluster at time 0; afterwards this controller owns its replica count. :meth:`scale` is what an
autoscaler's update of ``spec.replicas`` does; a pod that leaves (preempted, deleted) is replaced, as the
ReplicaSet controller does. Scaling down deletes the pods ``ReplicaSet`` ranks first for deletion
(``controller.ActivePodsWithRanks``): not yet on a node, then Pending before Running, not Ready before
Ready, more pods of the set on the same node, Ready for a shorter time, and newer first. Not modelled: pod
deletion cost annotations and the logarithmic bucketing of timestamps (exact times are compared).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.sim.engine import CONTROLLER, Engine
from dratwin.sim.kubelet import is_ready
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import WorkloadController, pod_phase, workload_of

Raw = dict[str, Any]


@dataclass
class Deployment:
    key: str
    raw: Raw
    replicas: int
    pods: dict[str, float] = field(default_factory=dict)  # pod key -> created at, in creation order
    ready_at: dict[str, float] = field(default_factory=dict)
    creating: int = 0  # pods asked for and not created yet (LADF: waiting for the model cache)


@dataclass
class DeploymentController:
    engine: Engine
    store: Store
    workloads: WorkloadController
    deployments: dict[str, Deployment] = field(default_factory=dict)
    _due: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.workloads.on_deployment.append(self.adopt)
        self.store.subscribe("Pod", self._on_pod)

    def adopt(self, raw: Raw) -> None:
        meta = raw.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        replicas = (raw.get("spec") or {}).get("replicas")
        self.deployments[key] = Deployment(key, raw, 1 if replicas is None else int(replicas))

    def replicas(self, key: str) -> int:
        return self.deployments[key].replicas

    def pods(self, key: str) -> list[str]:
        return list(self.deployments[key].pods)

    def ready_since(self, pod: str) -> float | None:
        deployment = self.deployments.get(workload_of(self.store.state.pods[pod].raw))
        return deployment.ready_at.get(pod) if deployment is not None else None

    def scale(self, key: str, replicas: int) -> None:
        """``spec.replicas`` set to ``replicas`` (an autoscaler's update); pods follow at once."""
        deployment = self.deployments[key]
        if deployment.replicas != replicas:
            deployment.replicas = replicas
            self._reconcile_soon(key)

    def _on_pod(self, change: Change) -> None:
        if change.type == "Deleted":
            owner = workload_of(change.pod.raw) if change.pod is not None else None
            deployment = self.deployments.get(owner) if owner else None
            if deployment is not None and deployment.pods.pop(change.key, None) is not None:
                deployment.ready_at.pop(change.key, None)
                if len(deployment.pods) < deployment.replicas:
                    self._reconcile_soon(deployment.key)
            return
        record = self.store.state.pods.get(change.key)
        if record is None:
            return
        deployment = self.deployments.get(workload_of(record.raw))
        if deployment is None:
            return
        if change.type == "Added":
            deployment.pods[change.key] = change.time
            deployment.creating = max(deployment.creating - 1, 0)
        if change.key not in deployment.ready_at and is_ready(record.raw):
            deployment.ready_at[change.key] = change.time

    def _reconcile_soon(self, key: str) -> None:
        if key not in self._due:
            self._due.add(key)
            self.engine.at(self.engine.now(), CONTROLLER, lambda: self._reconcile(key))

    def _reconcile(self, key: str) -> None:
        self._due.discard(key)
        deployment = self.deployments[key]
        missing = deployment.replicas - len(deployment.pods) - deployment.creating
        if missing > 0:
            self._create(deployment, missing)
        elif missing < 0:
            for pod in self._to_delete(deployment, -missing):
                self.store.delete_pod(pod)

    def _create(self, deployment: Deployment, count: int) -> None:
        raw = copy.deepcopy(deployment.raw)
        raw.setdefault("spec", {})["replicas"] = count
        taken = self.store.state.pods
        pods = [p for p in self.workloads.expand([raw], notes=False)
                if f"{p['metadata']['namespace']}/{p['metadata']['name']}" not in taken]
        deployment.creating += len(pods)
        self.workloads.create(pods, None, None)

    def _to_delete(self, deployment: Deployment, count: int) -> Sequence[str]:
        state = self.store.state
        records = [(key, state.pods[key]) for key in deployment.pods if key in state.pods]
        per_node = Counter(r.pod.spec.node_name for _, r in records if r.pod.spec.node_name)
        now = self.engine.now()

        def rank(item: tuple[str, Any]) -> tuple[bool, bool, bool, int, float, float]:
            key, record = item
            node = record.pod.spec.node_name
            ready = key in deployment.ready_at and is_ready(record.raw)
            return (bool(node), pod_phase(record.raw) == "Running", ready, -per_node[node] if node else 0,
                    now - deployment.ready_at[key] if ready else 0.0, -deployment.pods[key])

        return [key for key, _ in sorted(records, key=rank)[:count]]

"""Opt-in score plugins: the FGD paper's placement policies over DRA GPU shares (never in the default profile).

Weng et al., "Beware of Fragmentation", USENIX ATC '23: Random, DotProd, GpuClustering, GpuPacking,
BestFit and FGD (fragmentation gradient descent). The scores are those of
:mod:`dratwin.gpushare.policies` (each cites its formula), computed on what the cluster state says about a
node: its GPUs are the devices of its ResourceSlices from ``driver`` that have a consumable capacity
``capacity`` (the share, 1000 for a whole GPU, as ``dratwin trace import`` publishes them), less what
allocated claims consume (an exclusively allocated GPU has nothing left); CPU and memory are the node's
allocatable less its pods' requests. A pod's GPU demand is read from its claims' first request: its
count, and the capacity it asks for (the whole GPU when it names none).

The plugin only scores; the DRA allocator still picks the devices, first fit. So FGD here prefers the
node whose best GPU choice fragments the least, as the paper's score does, but the GPU the allocator
takes on that node may differ from the one the paper's simulator would reserve. Random scores every
node alike: kube-scheduler's random tie-break then places at random.

FGD's target workload is given, or else the task classes of the pods the cluster holds (bound and
pending) when the plugin is made, CPU-only pods included, as the paper's simulator takes the typical pods
of the workload it runs. It stays fixed while the plugin lives: the scheduler keeps a node's scores until
that node changes, which holds only if the measure does not change under it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dratwin.allocator.state import DeviceID
from dratwin.api.quantity import Quantity
from dratwin.api.resource import ResourceClaimSpec
from dratwin.cluster.state import ClusterState
from dratwin.gpushare.cluster import GpuCluster, GpuNode, Task
from dratwin.gpushare.fragmentation import MILLI, TargetWorkload, TaskClass, target_workload
from dratwin.gpushare.policies import PAPER_NAMES, Policy, make_policy
from dratwin.scheduler.framework import CycleState, NodeInfo, PodInfo
from dratwin.scheduler.resources import make_pod_info

MIB = 1024 * 1024
DEFAULT_DRIVER = "gpu.nvidia.com"
DEFAULT_CAPACITY = "milli"
MODEL_ATTRIBUTE = "model"


@dataclass(frozen=True)
class GpuDemand:
    """What a pod asks of GPUs: ``count`` devices with ``share`` of the capacity each (0: none)."""

    count: int = 0
    share: int = 0


class GpuShareScore:
    """One of the paper's policies as a score plugin; ``policy`` is a name of :data:`PAPER_NAMES`."""

    normalizes = False  # raw scores are already 0..100, as the paper's simulator uses them

    def __init__(
        self, policy: str, cluster: ClusterState, workload: TargetWorkload | None = None, weight: int = 1,
        driver: str = DEFAULT_DRIVER, capacity: str = DEFAULT_CAPACITY,
    ) -> None:
        self.name = f"{PAPER_NAMES[policy]}Score"
        self.weight = weight
        self.cluster = cluster
        self.driver = driver
        self.capacity = capacity
        if workload is None and policy == "fgd":
            workload = self.cluster_workload()
        self.policy_name = policy
        self.workload = workload or TargetWorkload((), ())

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        task = self.task_of(pod)
        view = self.node_view(node)
        # A policy per view: FGD keeps each node's fragmentation by the node's place and version, which
        # every one-node view shares.
        policy: Policy = make_policy(self.policy_name, self.workload)
        return int(policy.scores(view, task, np.zeros(1, dtype=np.int64))[0])

    def cluster_workload(self) -> TargetWorkload:
        """The target workload of the pods the cluster holds, bound and pending."""
        return target_workload(self.task_of(make_pod_info(r.pod)).task_class for r in self.cluster.pods.values())

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        return None

    # ---- reading the cluster -------------------------------------------------------------------------

    def demand_of(self, pod: PodInfo) -> GpuDemand:
        """The GPU demand of the pod's claims (the first request naming ``capacity`` or the driver's class)."""
        meta = pod.pod.metadata
        for reference in pod.pod.spec.resource_claims:
            template = reference.resource_claim_template_name
            spec = self._claim_spec(meta.namespace, reference.resource_claim_name, template)
            for request in spec.devices.requests if spec is not None else []:
                exact = request.exactly
                if exact is None:
                    continue
                amount = exact.capacity.requests.get(self.capacity) if exact.capacity is not None else None
                share = MILLI if amount is None else min(int(Quantity.parse(amount).value), MILLI)
                return GpuDemand(exact.count or 1, share)
        return GpuDemand()

    def task_of(self, pod: PodInfo) -> Task:
        demand = self.demand_of(pod)
        cpu = pod.requests.get("cpu", 0)
        task_class = TaskClass(cpu or 100, demand.share, demand.count)
        return Task(pod.key, cpu, pod.requests.get("memory", 0) // MIB, task_class)

    def node_view(self, node: NodeInfo) -> GpuCluster:
        """A one-node :class:`GpuCluster` with the node's free shares, CPU, memory and placed demands."""
        lefts, model = self._gpu_lefts(node.name)
        cpu = node.allocatable.get("cpu", 0)
        memory = node.allocatable.get("memory", 0) // MIB
        view = GpuCluster([GpuNode(node.name, cpu, memory, len(lefts), model)])
        if lefts:
            view.gpu_left[0, : len(lefts)] = lefts
        view.cpu_left[0] = cpu - node.requested.get("cpu", 0)
        view.memory_left[0] = memory - node.requested.get("memory", 0) // MIB
        for placed in node.pods:
            placed_task = self.task_of(placed)
            if placed_task.uses_gpu:
                view.tag_counts[0, view.tag_column(placed_task)] += 1
        return view

    def _claim_spec(self, namespace: str, claim: str | None, template: str | None) -> ResourceClaimSpec | None:
        if template is not None:
            found = self.cluster.templates.get(f"{namespace}/{template}")
            return found.spec.spec if found is not None else None
        record = self.cluster.claims.get(f"{namespace}/{claim}") if claim is not None else None
        return record.claim.spec if record is not None else None

    def _gpu_lefts(self, node: str) -> tuple[list[int], str]:
        allocated = self.cluster.allocated
        lefts: list[int] = []
        model = ""
        for resource_slice in self.cluster.slice_index.for_node(node):  # not a scan of every slice per node
            spec = resource_slice.spec
            if spec.node_name != node or spec.driver != self.driver:
                continue
            for device in spec.devices:
                if self.capacity not in device.capacity:
                    continue
                attribute = device.attributes.get(MODEL_ATTRIBUTE)
                model = model or (attribute.string or "" if attribute is not None else "")
                key = DeviceID(spec.driver, spec.pool.name, device.name)
                total = int(Quantity.parse(device.capacity[self.capacity].value).value)
                if key in allocated.exclusive:
                    lefts.append(0)
                    continue
                used = allocated.aggregated_capacity.get(key, {})
                lefts.append(max(total - int(used.get(self.capacity, 0)), 0))
        return lefts, model


__all__ = ["GpuDemand", "GpuShareScore"]

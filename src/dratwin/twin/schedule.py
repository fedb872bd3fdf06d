"""Scheduling a loaded cluster: the default profile, the binder that writes decisions back, the report.

The binder is the only place that changes the cluster state after loading: it writes the claims'
``status.allocation`` and ``reservedFor`` (the DRA plugin's PreBind), the pod's ``spec.nodeName`` and
``PodScheduled`` condition (Bind), and removes preemption victims together with the claims the
resourceclaim controller would delete or deallocate after them.
"""

from __future__ import annotations

import contextlib
import gc
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.api.core import PodStatus
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClusterState, pod_claim_keys
from dratwin.scheduler.framework import PodInfo, ScorePlugin
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources, ExtendedRequest
from dratwin.scheduler.plugins.node_affinity import NodeAffinity
from dratwin.scheduler.plugins.node_name import NodeName
from dratwin.scheduler.plugins.node_resources import (
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
    ScoringStrategy,
)
from dratwin.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dratwin.scheduler.plugins.taint_toleration import TaintToleration
from dratwin.scheduler.scheduler import Attempt, Binder, Profile, Scheduler
from dratwin.twin.build import LoadedCluster, imex_daemons

SCHEDULED_CONDITION = "PodScheduled"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


@dataclass(frozen=True)
class Options:
    seed: int = 0
    scoring: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED
    percentage_of_nodes_to_score: int = 0
    # An opt-in placement policy of the FGD paper (a key of dratwin.gpushare.names.PAPER_NAMES): it
    # replaces every score plugin (see dratwin.scheduler.scoring); None: upstream's scoring.
    policy: str | None = None


@dataclass
class ScheduleReport:
    loaded: LoadedCluster
    attempts: list[Attempt] = field(default_factory=list)
    dra: DynamicResources | None = None

    @property
    def state(self) -> ClusterState:
        return self.loaded.state

    def attempt_of(self, pod: str) -> Attempt | None:
        return next((a for a in self.attempts if a.pod == pod), None)

    def devices_of(self, attempt: Attempt) -> list[str]:
        """``claim/request: driver/pool/device`` for every claim the pod uses.

        A claim shared by several pods is allocated once, when the first of them is scheduled; the others
        reuse that allocation, so their attempts allocate nothing: the devices are read from the claims
        the bound pod references. A pod that was evicted later in the run keeps what it got when it was
        scheduled."""
        record = self.state.pods.get(attempt.pod)
        if record is None or record.pod.spec.node_name != attempt.node:
            return device_lines(attempt.allocations)
        allocations = {}
        for key in pod_claim_keys(record.pod):
            claim = self.state.claims.get(key)
            allocation = claim.claim.status.allocation if claim is not None else None
            if allocation is None:
                allocation = attempt.allocations.get(key)
            if allocation is not None:
                allocations[key] = allocation
        return device_lines(allocations)


def device_lines(allocations: dict[str, AllocationResult]) -> list[str]:
    return [
        f"{claim}/{result.request}: {result.driver}/{result.pool}/{result.device}"
        for claim, allocation in allocations.items()
        for result in allocation.devices.results
    ]


def default_profile(cluster: ClusterState, options: Options, compiler: SelectorCompiler | None = None) -> Profile:
    """kube-scheduler's default profile, reduced to the plugins that matter here, in upstream order.

    With an opt-in policy (``options.policy``) the policy is the only score plugin, as the FGD paper's
    simulator configures kube-scheduler; FGD measures fragmentation against the pods the cluster holds
    (bound and pending) when the profile is built."""
    dra = DynamicResources(cluster, compiler)
    fit = NodeResourcesFit(options.scoring, dra_extended_resources=frozenset(dra.extended_classes))
    affinity = NodeAffinity()
    taints = TaintToleration()
    scores: list[ScorePlugin] = [taints, affinity, fit, NodeResourcesBalancedAllocation(), dra]
    if options.policy is not None:
        from dratwin.scheduler.plugins.gpu_share_scores import GpuShareScore  # numpy: only for an opt-in policy

        scores = [GpuShareScore(options.policy, cluster)]
    return Profile(
        pre_filters=[affinity, dra],
        filters=[NodeUnschedulable(), NodeName(), taints, affinity, fit, dra],
        scores=scores,
        dra=dra,
        percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
    )


def schedule(
    loaded: LoadedCluster, options: Options, compiler: SelectorCompiler | None = None, until: str | None = None
) -> ScheduleReport:
    """Run the scheduler over the pending pods (all of them, or up to and including ``until``)."""
    profile = default_profile(loaded.state, options, compiler)
    scheduler = Scheduler(loaded.state, profile, random.Random(options.seed), StateBinder(loaded.state))
    with gc_paused():
        attempts = scheduler.run(loaded.pending, until)
        if until is None or all(p.key != until for p in loaded.pending):
            # pods that controllers create once the first ones are placed (the IMEX daemons of ComputeDomains)
            attempts += scheduler.run(imex_daemons(loaded, random.Random(f"imex-daemons/{options.seed}")), until)
    for attempt in attempts:
        if not attempt.scheduled:
            _mark_unschedulable(loaded.state, attempt)
    return ScheduleReport(loaded, attempts, profile.dra)


@contextlib.contextmanager
def gc_paused(*, keep: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while scheduling: the cluster holds millions of objects, a full
    collection walks all of them, and a scheduling cycle makes almost no cyclic garbage.

    With ``keep``, what was built meanwhile is moved out of the collector's sight (``gc.freeze``) before it
    resumes, for objects that live until the command ends: the first collection after the pause would
    otherwise walk every one of them (0.3 s after scheduling 5,000 pods)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if was_enabled:
            gc.enable()


class StateBinder(Binder):
    def bind(self, pod: PodInfo, node: str, allocations: dict[str, AllocationResult], claims: list[str]) -> None:
        state = self.cluster
        for key, allocation in allocations.items():
            state.allocate_claim(key, allocation)
        for key in claims:
            state.reserve_claim(key, state.pods[pod.key].raw)
        record = state.pods[pod.key]
        current = record.raw
        raw = {**current, "spec": {**(current.get("spec") or {}), "nodeName": node}}
        raw["status"] = _with_condition(raw.get("status") or {}, {"type": SCHEDULED_CONDITION, "status": "True"})
        # Of the typed pod only spec.nodeName and the status change: the rest is not decoded again.
        status = msgspec.convert(raw["status"], PodStatus, strict=False)
        spec = msgspec.structs.replace(record.pod.spec, node_name=node)
        state.bind_pod(pod.key, node, raw, msgspec.structs.replace(record.pod, spec=spec, status=status))

    def create_extended_claim(self, pod: PodInfo, claim: ResourceClaim, requests: Sequence[ExtendedRequest]) -> None:
        """What PreBind creates for extended resources backed by DRA, and the pod status that points to it."""
        state = self.cluster
        meta = pod.pod.metadata
        raw = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": claim.metadata.name,
                "generateName": f"{meta.name}-extended-resources-",
                "namespace": meta.namespace,
                "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": meta.name,
                        "uid": meta.uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": msgspec.to_builtins(claim.spec),
        }
        state.add_claim(raw)
        record = state.pods[pod.key]
        mappings = [{"containerName": r.container, "resourceName": r.resource, "requestName": r.name} for r in requests]
        status = {
            **(record.raw.get("status") or {}),
            "extendedResourceClaimStatus": {"requestMappings": mappings, "resourceClaimName": claim.metadata.name},
        }
        record.raw = {**record.raw, "status": status}

    def evict(self, victims: Sequence[PodInfo], preemptor: PodInfo) -> None:
        for victim in victims:
            self.cluster.release_claims_of(self.cluster.remove_pod(victim.key))


def _mark_unschedulable(state: ClusterState, attempt: Attempt) -> None:
    record = state.pods.get(attempt.pod)
    if record is None:
        return
    reason = "SchedulerError" if attempt.error else "Unschedulable"
    condition = {"type": SCHEDULED_CONDITION, "status": "False", "reason": reason, "message": attempt.message}
    status = _with_condition(record.raw.get("status") or {}, condition)
    if attempt.nominated_node:
        status["nominatedNodeName"] = attempt.nominated_node
    record.raw = {**record.raw, "status": status}


def _with_condition(status: dict[str, Any], condition: dict[str, Any]) -> dict[str, Any]:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
    return {**status, "phase": status.get("phase") or "Pending", "conditions": [*conditions, condition]}

"""The binder: the one place that writes the scheduler's decisions into the cluster state.

It writes the claims' ``status.allocation`` and ``reservedFor`` (the DRA plugin's PreBind), the pod's
``spec.nodeName`` and ``PodScheduled`` condition (Bind), the claims PreBind creates for extended resources
backed by DRA, and removes preemption victims together with the claims the resourceclaim controller would
delete or deallocate after them. :func:`mark_unschedulable` writes a failed attempt's condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from dratwin.api.core import PodStatus
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.cluster.state import ClusterState
from dratwin.scheduler.framework import PodInfo
from dratwin.scheduler.plugins.dynamic_resources import ExtendedRequest
from dratwin.scheduler.scheduler import Attempt, Binder

SCHEDULED_CONDITION = "PodScheduled"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


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
        raw["status"] = with_condition(raw.get("status") or {}, {"type": SCHEDULED_CONDITION, "status": "True"})
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


def mark_unschedulable(state: ClusterState, attempt: Attempt) -> None:
    record = state.pods.get(attempt.pod)
    if record is None:
        return
    reason = "SchedulerError" if attempt.error else "Unschedulable"
    condition = {"type": SCHEDULED_CONDITION, "status": "False", "reason": reason, "message": attempt.message}
    current = record.raw.get("status") or {}
    if _holds_last(current, condition) and (not attempt.nominated_node or
                                            current.get("nominatedNodeName") == attempt.nominated_node):
        return  # a retry that failed the same way: writing the condition again would give an equal pod
    status = with_condition(current, condition)
    if attempt.nominated_node:
        status["nominatedNodeName"] = attempt.nominated_node
    record.raw = {**record.raw, "status": status}


def _holds_last(status: dict[str, Any], condition: dict[str, Any]) -> bool:
    """Whether ``with_condition(status, condition)`` would equal ``status``: a phase is set and the condition
    is the last one, the only one of its type."""
    conditions: list[dict[str, Any]] = status.get("conditions") or []
    if not status.get("phase") or not conditions or conditions[-1] != condition:
        return False
    kind = condition["type"]
    return [c.get("type") for c in conditions].count(kind) == 1


def with_condition(status: dict[str, Any], condition: dict[str, Any]) -> dict[str, Any]:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
    return {**status, "phase": status.get("phase") or "Pending", "conditions": [*conditions, condition]}

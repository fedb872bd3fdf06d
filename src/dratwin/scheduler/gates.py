"""Scheduling gates (``spec.schedulingGates``): a gated pod is not tried until every gate is removed.

Follows Kubernetes (``pkg/scheduler/framework/plugins/schedulinggates``, ``pkg/registry/core/pod/strategy.go``):
the API server gives a pod created with gates the ``PodScheduled=False`` condition with reason
``SchedulingGated``; the scheduler's PreEnqueue plugin keeps the pod out of the active queue ("waiting for
scheduling gates: [...]") until an update removes the last gate, when it is queued like a new pod. Gates
can only be removed after creation, never added (the API server refuses it), so a pod that is tried once
is never gated again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dratwin.scheduler.binder import SCHEDULED_CONDITION, with_condition

GATED_REASON = "SchedulingGated"
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"

Raw = dict[str, Any]


def scheduling_gates(pod: Mapping[str, Any]) -> list[str]:
    """The names of the pod's scheduling gates, in order (empty: the scheduler may try it)."""
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return [str(g.get("name") or "") for g in gates if isinstance(g, Mapping)]


def pre_enqueue_message(gates: list[str]) -> str:
    """The SchedulingGates plugin's PreEnqueue status message."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def with_gated_condition(pod: Raw) -> Raw:
    """The pod as the API server stores a gated one: Pending, ``PodScheduled=False`` ``SchedulingGated``."""
    condition = {"type": SCHEDULED_CONDITION, "status": "False", "reason": GATED_REASON, "message": GATED_MESSAGE}
    return {**pod, "status": with_condition(dict(pod.get("status") or {}), condition)}

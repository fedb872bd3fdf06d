"""What Karpenter reads from pods and nodes to decide what it may disrupt: which pods come back after an
eviction, which keep a node (``do-not-disrupt``, eviction costs), which nodes are initialized, ready or
being deleted, and whether ``consolidateAfter`` has passed since a node's last pod event."""

from __future__ import annotations

import contextlib
import math
from datetime import datetime, timedelta
from typing import Any

from dratwin.cluster.state import ClusterState, PodRecord
from dratwin.provisioner.budgets import (
    NodePoolPolicy,
    go_duration,
    show_duration,
    utc,
)
from dratwin.provisioner.consolidation.model import (
    DISRUPTED_TAINT,
    DO_NOT_DISRUPT,
    INITIALIZED_LABEL,
    POD_DELETION_COST,
    Context,
    World,
)
from dratwin.scheduler.framework import NodeInfo, PodInfo

Raw = dict[str, Any]


def consolidate_after_pending(ctx: Context, world: World, name: str, policy: NodePoolPolicy) -> str:
    """The NodeClaim is not Consolidatable yet: ``consolidateAfter`` has not passed since its last pod event.

    The twin has no NodeClaim: the last pod event is taken as the latest of the node's creation and its
    pods' start (or creation) times, and "now" for a node that received pods earlier in this plan."""
    after = policy.consolidate_after
    if after is None or after <= timedelta(0):
        return ""
    if name in world.touched:
        return f"consolidateAfter {show_duration(after)} has not passed since pods moved onto it (earlier action)"
    if ctx.now is None:
        return ""
    last = ctx.last_pod_events.get(name) or _last_pod_event(world.state, name)
    if last is None or ctx.now - last >= after:
        return ""
    return f"consolidateAfter {show_duration(after)} has not passed since its last pod event ({_stamp(last)})"


def _last_pod_event(state: ClusterState, name: str) -> datetime | None:
    raw = state.node_raw.get(name) or {}
    times = [_timestamp((raw.get("metadata") or {}).get("creationTimestamp"))]
    for pod in state.nodes[name].pods:
        record = state.pods[pod.key].raw
        status, meta = record.get("status") or {}, record.get("metadata") or {}
        times.append(_timestamp(status.get("startTime") or meta.get("creationTimestamp")))
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _owners(raw: Raw) -> list[tuple[str, str]]:
    return [
        (str(o.get("apiVersion", "")), str(o.get("kind", "")))
        for o in (raw.get("metadata") or {}).get("ownerReferences") or []
    ]


def _terminal(raw: Raw) -> bool:
    return (raw.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _terminating(raw: Raw) -> bool:
    return bool((raw.get("metadata") or {}).get("deletionTimestamp"))


def is_active(raw: Raw) -> bool:
    return not _terminal(raw) and not _terminating(raw)


def is_reschedulable(raw: Raw) -> bool:
    """``pod.IsReschedulable``: active (or a terminating StatefulSet pod), not a DaemonSet or mirror pod."""
    owners = _owners(raw)
    statefulset = ("apps/v1", "StatefulSet") in owners
    return (
        (is_active(raw) or (statefulset and _terminating(raw)))
        and ("apps/v1", "DaemonSet") not in owners
        and ("v1", "Node") not in owners
    )


def is_provisionable(record: PodRecord) -> bool:
    """``pod.IsProvisionable``: pending, marked Unschedulable by kube-scheduler, not nominated, not a
    DaemonSet or mirror pod."""
    raw = record.raw
    status = raw.get("status") or {}
    if record.pod.spec.node_name or status.get("nominatedNodeName") or not is_active(raw):
        return False
    owners = _owners(raw)
    if ("apps/v1", "DaemonSet") in owners or ("v1", "Node") in owners:
        return False
    return any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in status.get("conditions") or []
    )


def is_do_not_disrupt(raw: Raw, now: datetime | None) -> bool:
    """``IsDoNotDisruptActive``: "true", or a duration not yet elapsed since the pod started."""
    value = ((raw.get("metadata") or {}).get("annotations") or {}).get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    try:
        duration = go_duration(value)
    except ValueError:
        return False  # an invalid value is ignored (Karpenter emits an event)
    if duration <= timedelta(0):
        return False
    started = _timestamp((raw.get("status") or {}).get("startTime"))
    if started is None or now is None:
        return True
    return now - started < duration


def eviction_cost(record: PodRecord, info: PodInfo) -> float:
    """``disruption.EvictionCost``: 1, plus the pod deletion cost / 2^27, plus the priority / 2^25, in
    [-10, 10]."""
    cost = 1.0
    annotation = record.pod.metadata.annotations.get(POD_DELETION_COST)
    if annotation is not None:
        with contextlib.suppress(ValueError):  # Karpenter logs the parse error and ignores the annotation
            cost += float(annotation) / 2**27
    cost += info.priority / 2**25
    return min(max(cost, -10.0), 10.0)


def is_initialized(info: NodeInfo) -> bool:
    """Karpenter labels initialized nodes ``karpenter.sh/initialized=true``; a node without the label (a
    hand-written input) counts as initialized."""
    return info.node.metadata.labels.get(INITIALIZED_LABEL, "true") == "true"


def is_marked_for_deletion(raw: Raw, info: NodeInfo) -> bool:
    if (raw.get("metadata") or {}).get("deletionTimestamp"):
        return True
    return any(t.key == DISRUPTED_TAINT for t in info.node.spec.taints)


def is_ready(raw: Raw) -> bool:
    """The Ready condition; a node without conditions (a hand-written input) counts as Ready."""
    for condition in (raw.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return True


def _timestamp(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return utc(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
    except ValueError:
        return None


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def money(amount: float) -> str:
    if math.isinf(amount):
        return "$?"
    if amount == 0 or amount >= 1:
        return f"${amount:.2f}"
    text = f"{amount:.4f}".rstrip("0")
    return "$" + (text if len(text.split(".")[1]) >= 2 else f"{amount:.2f}")

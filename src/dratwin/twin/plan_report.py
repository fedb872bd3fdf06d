"""Rendering a plan: the nodes to launch and their cost, where pods land, what cannot be provisioned."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from dratwin.api.codec import dump_json, dump_yaml
from dratwin.api.core import Node
from dratwin.api.karpenter import DRA_DRIVERS_ANNOTATION
from dratwin.api.resource import AllocationResult, ResourceSlice
from dratwin.cluster.state import ClaimRecord, ClusterState, PodRecord
from dratwin.provisioner.candidates import CAPACITY_TYPE, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL
from dratwin.provisioner.consolidation import DriftedNode
from dratwin.provisioner.solver import ANY_POOL, PlannedClaim, Unplaced
from dratwin.scheduler.framework import NodeInfo
from dratwin.twin.optimal import OptimalComparison
from dratwin.twin.plan import PlanReport
from dratwin.twin.schedule import StateBinder

MAX_TYPES = 6
_NODE_CLAIM_LABELS = (NODEPOOL_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL, CAPACITY_TYPE)


def render_table(report: PlanReport) -> str:
    plan = report.plan
    lines = [f"{len(plan.claims)} node(s) to launch, ${plan.cost_per_hour:.4f}/hour", ""]
    if not report.scheduled.attempts and not plan.unplaced:
        lines[-1:] = ["no pod is pending: nothing to provision (give the workload's Pods or controllers with -f)", ""]
    if plan.claims:
        rows = [("NODECLAIM", "NODEPOOL", "INSTANCE TYPE", "ZONE", "CAPACITY", "$/HOUR", "PODS")]
        for claim in plan.claims:
            chosen = claim.chosen()
            offering = claim.offering()
            rows.append(
                (
                    claim.name,
                    claim.pool.name,
                    chosen.instance_type.name,
                    offering.zone if offering else "-",
                    offering.capacity_type if offering else "-",
                    f"{offering.price:.4f}" if offering else "-",
                    ", ".join(p.info.key for p in claim.pods),
                )
            )
        lines += [*_columns(rows), ""]
    existing = [a for a in report.scheduled.attempts if a.scheduled]
    if existing:
        lines.append(f"ON EXISTING NODES ({len(existing)})")
        lines += [f"{a.pod} -> {a.node}" for a in existing] + [""]
    if plan.unplaced:
        lines.append(f"CANNOT BE PROVISIONED ({len(plan.unplaced)})")
        groups: dict[tuple[str, ...], list[str]] = {}
        for unplaced in plan.unplaced:
            groups.setdefault(tuple(_why(unplaced)), []).append(unplaced.pod)
        for why, pods in groups.items():
            more = f" and {len(pods) - 1} more like it" if len(pods) > 1 else ""
            lines.append(f"{pods[0]}{more}:")
            lines += [f"  {line}" for line in why]
        lines.append("")
    if report.consolidation is not None and report.consolidation.drifted:
        lines += _drifted_lines(report.consolidation.drifted)
    if report.consolidation is not None:
        consolidation = report.consolidation
        change = consolidation.savings_per_hour
        effect = f"saves ${change:.4f}/hour" if change >= 0 else f"costs ${-change:.4f}/hour more"
        lines.append(f"CONSOLIDATION ({effect})")
        lines += consolidation.lines() or ["nothing to consolidate"]
        lines += [f"note: {n}" for n in consolidation.notes]
        lines.append("")
    if report.optimal is not None:
        lines.append("COMPARED WITH THE COST-OPTIMAL FLEET")
        lines += report.optimal.lines()
        lines.append("")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def _drifted_lines(drifted: Sequence[DriftedNode]) -> list[str]:
    lines = [f"DRIFTED ({len(drifted)})"]
    lines += [f"{d.name} (NodePool {d.nodepool}, {d.instance_type}, ${d.price:.4f}/hour): {d.drift}" for d in drifted]
    lines.append("Karpenter replaces drifted nodes one by one as the NodePools' Drifted budgets allow (below)")
    return [*lines, ""]


def _why(unplaced: Unplaced) -> list[str]:
    """Per NodePool, instance types grouped by the reason they were turned down."""
    out = []
    for pool, rejections in unplaced.reasons.items():
        if pool == ANY_POOL:
            out += [r.reason for r in rejections]
            continue
        if len(rejections) == 1 and not rejections[0].instance_type:  # about the NodePool, not a type
            out.append(f"NodePool {pool}: {rejections[0].reason}")
            continue
        grouped: dict[str, list[str]] = defaultdict(list)
        for rejection in rejections:
            if rejection.instance_type not in grouped[rejection.reason]:  # Auto Mode: one per device-manager role
                grouped[rejection.reason].append(rejection.instance_type)
        count = len({r.instance_type for r in rejections})
        out.append(f"NodePool {pool}: none of its {count} instance types fits")
        for reason, types in sorted(grouped.items(), key=lambda item: -len(item[1])):
            shown = ", ".join(types[:MAX_TYPES]) + (
                f" and {len(types) - MAX_TYPES} more" if len(types) > MAX_TYPES else ""
            )
            out.append(f"  {len(types)} type(s) ({shown}): {reason}")
    return out


def summary(report: PlanReport) -> dict[str, Any]:
    plan = report.plan
    return {
        "apiVersion": "dratwin/v1",
        "kind": "Plan",
        "costPerHour": round(plan.cost_per_hour, 6),
        "nodeClaims": [_claim_summary(c) for c in plan.claims],
        "onExistingNodes": [{"pod": a.pod, "node": a.node} for a in report.scheduled.attempts if a.scheduled],
        "unprovisionable": [
            {
                "pod": u.pod,
                "nodePools": {
                    pool: [{"instanceType": r.instance_type, "reason": r.reason} for r in rs]
                    for pool, rs in u.reasons.items()
                },
            }
            for u in plan.unplaced
        ],
        "notes": report.notes,
        "consolidation": None
        if report.consolidation is None
        else {
            "savingsPerHour": round(report.consolidation.savings_per_hour, 6),
            "actions": [a.sentence for a in report.consolidation.actions],
            "kept": [{"node": n, "reason": r} for n, r in report.consolidation.blocked],
            "drifted": [
                {
                    "node": d.name,
                    "nodePool": d.nodepool,
                    "instanceType": d.instance_type,
                    "pricePerHour": d.price,
                    "reason": d.drift.reason,
                    "message": d.drift.message,
                }
                for d in report.consolidation.drifted
            ],
        },
        "optimal": None if report.optimal is None else _optimal_summary(report.optimal),
    }


def _optimal_summary(comparison: OptimalComparison) -> dict[str, Any]:
    fleet = comparison.fleet
    return {
        "status": fleet.status,
        "costPerHour": round(fleet.cost_per_hour, 6),
        "lowerBound": round(fleet.lower_bound, 6),
        "solveSeconds": round(fleet.solve_seconds, 3),
        "karpenterOverOptimal": round(comparison.ratio, 6),
        "nodes": dict(sorted(comparison.nodes.items())),
        "unplaceablePods": sum(fleet.unplaceable.values()),
        "unverifiedNodes": comparison.unverified,
    }


def _claim_summary(claim: PlannedClaim) -> dict[str, Any]:
    chosen = claim.chosen()
    offering = claim.offering()
    return {
        "name": claim.name,
        "nodePool": claim.pool.name,
        "instanceType": chosen.instance_type.name,
        "zone": offering.zone if offering else None,
        "capacityType": offering.capacity_type if offering else None,
        "pricePerHour": offering.price if offering else None,
        "pods": [p.info.key for p in claim.pods],
        "otherInstanceTypes": sorted(t.instance_type.name for t in claim.options if t is not chosen),
    }


def objects(report: PlanReport) -> list[dict[str, Any]]:
    """NodeClaims, the Nodes and ResourceSlices they bring, the pods and claims bound to them (as kube-scheduler's
    binder writes them: the claims' allocation on the node's pools, ``reservedFor`` and the finalizer), and the
    existing NodeClaims Karpenter marks Drifted."""
    found: list[dict[str, Any]] = []
    scratch = ClusterState(features=report.scheduled.state.features)
    bound: list[tuple[str, list[str]]] = []  # (pod, its claims) in plan order
    for claim in report.plan.claims:
        chosen = claim.chosen()
        node_name = f"{claim.name}-{chosen.instance_type.name.replace('.', '-')}"
        node = _node(claim, node_name)
        found += [_node_claim(claim, node_name), node]
        found += [_slice(resource_slice, node) for resource_slice in chosen.slices]
        bound += _bind(report, scratch, claim, node)
    pods = [scratch.pods[key].raw for key, _ in bound]
    claims = [scratch.claims[key].raw for _, keys in bound for key in keys]
    return found + pods + claims + _drifted_node_claims(report)


def _node(claim: PlannedClaim, node_name: str) -> dict[str, Any]:
    node = {"apiVersion": "v1", "kind": "Node", **msgspec.to_builtins(claim.chosen().node)}
    node["metadata"]["name"] = node_name
    node["metadata"]["labels"]["kubernetes.io/hostname"] = node_name
    offering = claim.offering()
    if offering is not None:
        node["metadata"]["labels"][ZONE_LABEL] = offering.zone
        node["metadata"]["labels"][CAPACITY_TYPE] = offering.capacity_type
    return node


def _slice(resource_slice: ResourceSlice, node: dict[str, Any]) -> dict[str, Any]:
    """A slice of the template, published by the drivers of the launched node: its pool is the node's name."""
    name = node["metadata"]["name"]
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **msgspec.to_builtins(resource_slice)}
    raw["metadata"]["name"] = f"{name}-{resource_slice.spec.driver}"
    raw["metadata"]["generateName"] = f"{name}-{resource_slice.spec.driver}-"
    for owner in raw["metadata"].get("ownerReferences") or []:
        if owner.get("kind") == "Node":
            owner["name"], owner["uid"] = name, node["metadata"].get("uid", "")
    raw["spec"]["nodeName"] = name
    raw["spec"]["pool"]["name"] = name
    return raw


def _bind(
    report: PlanReport, scratch: ClusterState, claim: PlannedClaim, node: dict[str, Any]
) -> list[tuple[str, list[str]]]:
    """Bind the NodeClaim's pods on its node through the scheduler's own binder, on a scratch copy of their pods
    and claims (the report's cluster stays as it is)."""
    state = report.scheduled.state
    chosen = claim.chosen()
    node_name = node["metadata"]["name"]
    typed = msgspec.convert(node, Node, strict=False)
    scratch.add_node(node, typed, NodeInfo(typed, dict(chosen.allocatable)))
    binder = StateBinder(scratch)
    allocations = claim.allocations.get(chosen.instance_type.name, {})
    bound = []
    for pod in claim.pods:
        record = state.pods[pod.info.key]
        info = dataclasses.replace(record.info)
        scratch.pods[info.key] = PodRecord(copy.deepcopy(record.raw), record.pod, info)
        fresh = [key for key in pod.claim_keys if key not in scratch.claims]
        for key in fresh:
            scratch.claims[key] = ClaimRecord(copy.deepcopy(state.claims[key].raw), state.claims[key].claim)
        placed = {key: _on_node(allocations[key], chosen.node.metadata.name, node_name) for key in fresh}
        binder.bind(info, node_name, placed, list(pod.claim_keys))
        bound.append((info.key, fresh))
    return bound


def _on_node(allocation: AllocationResult, template: str, node_name: str) -> AllocationResult:
    """An allocation made on the template's devices, as it reads on the launched node: its pools and node
    selector name the node."""
    raw = msgspec.to_builtins(allocation)
    for result in (raw.get("devices") or {}).get("results") or []:
        if result.get("pool") == template:
            result["pool"] = node_name
    for term in (raw.get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            field["values"] = [node_name]
    return msgspec.convert(raw, AllocationResult, strict=False)


def _drifted_node_claims(report: PlanReport) -> list[dict[str, Any]]:
    """The NodeClaim of each drifted node with its ``Drifted`` condition (the input's NodeClaim when given, else
    the one the node's labels and owner reference tell of)."""
    if report.consolidation is None:
        return []
    state = report.scheduled.state
    found = []
    for drifted in report.consolidation.drifted:
        raw = copy.deepcopy(report.node_claims.get(drifted.name)) or _node_claim_of(state.node_raw[drifted.name])
        status = raw.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Drifted"]
        conditions.append(
            {"type": "Drifted", "status": "True", "reason": drifted.drift.reason, "message": drifted.drift.message}
        )
        status["conditions"] = conditions
        found.append(raw)
    return found


def _node_claim_of(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata") or {}
    owner: dict[str, Any] = next((o for o in meta.get("ownerReferences") or [] if o.get("kind") == "NodeClaim"), {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k in _NODE_CLAIM_LABELS}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": owner.get("name") or meta.get("name", ""), "labels": labels},
        "status": {"nodeName": meta.get("name", ""), "providerID": (node.get("spec") or {}).get("providerID", "")},
    }


def _node_claim(claim: PlannedClaim, node_name: str) -> dict[str, Any]:
    chosen = claim.chosen()
    offering = claim.offering()
    requests = {k: str(v) if k != "cpu" else f"{v}m" for k, v in claim.requested.items() if v}
    metadata: dict[str, Any] = {
        "name": claim.name,
        "labels": {"karpenter.sh/nodepool": claim.pool.name, INSTANCE_TYPE_LABEL: chosen.instance_type.name},
    }
    drivers = sorted(
        {
            result.driver
            for allocation in claim.allocations.get(chosen.instance_type.name, {}).values()
            for result in allocation.devices.results
        }
    )
    if drivers:
        # Karpenter records the drivers whose devices it promised; the node stays Initialized=Unknown
        # (DRADriverPoolsNotPublished) until each has published a complete node-local pool.
        metadata["annotations"] = {DRA_DRIVERS_ANNOTATION: ",".join(drivers)}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": metadata,
        "spec": {
            "requirements": [
                {
                    "key": INSTANCE_TYPE_LABEL,
                    "operator": "In",
                    "values": sorted(t.instance_type.name for t in claim.options),
                },
                {"key": "karpenter.sh/nodepool", "operator": "In", "values": [claim.pool.name]},
            ],
            "resources": {"requests": requests},
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": claim.pool.node_class},
        },
        "status": {
            "nodeName": node_name,
            "providerID": f"aws:///{offering.zone if offering else 'us-east-1a'}/i-{_instance_id(node_name)}",
        },
    }


def _instance_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:17]


def render_yaml(report: PlanReport) -> str:
    return dump_yaml(objects(report))


def render_json(report: PlanReport) -> str:
    body = summary(report)
    body["objects"] = objects(report)
    return dump_json([body])


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]

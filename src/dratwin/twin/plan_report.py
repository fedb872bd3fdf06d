"""Rendering a plan: the nodes to launch and their cost, where pods land, what cannot be provisioned."""

from __future__ import annotations

import copy
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from dratwin.api.codec import dump_json, dump_yaml
from dratwin.api.karpenter import DRA_DRIVERS_ANNOTATION
from dratwin.provisioner.candidates import CAPACITY_TYPE, INSTANCE_TYPE_LABEL, ZONE_LABEL
from dratwin.provisioner.solver import ANY_POOL, PlannedClaim, Unplaced
from dratwin.twin.optimal import OptimalComparison
from dratwin.twin.plan import PlanReport

MAX_TYPES = 6


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
    if report.consolidation is not None:
        consolidation = report.consolidation
        lines.append(f"CONSOLIDATION (saves ${consolidation.savings_per_hour:.4f}/hour)")
        lines += consolidation.lines() or ["nothing to consolidate"]
        lines += [f"note: {n}" for n in consolidation.notes]
        lines.append("")
    if report.optimal is not None:
        lines.append("COMPARED WITH THE COST-OPTIMAL FLEET")
        lines += report.optimal.lines()
        lines.append("")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines).rstrip() + "\n"


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
            grouped[rejection.reason].append(rejection.instance_type)
        out.append(f"NodePool {pool}: none of its {len(rejections)} instance types fits")
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
    """NodeClaims, the Nodes and ResourceSlices they bring, and the pods and claims bound to them."""
    state = report.scheduled.state
    found: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    for claim in report.plan.claims:
        chosen = claim.chosen()
        node_name = f"{claim.name}-{chosen.instance_type.name.replace('.', '-')}"
        found.append(_node_claim(claim, node_name))
        node = {"apiVersion": "v1", "kind": "Node", **msgspec.to_builtins(chosen.node)}
        node["metadata"]["name"] = node_name
        node["metadata"]["labels"]["kubernetes.io/hostname"] = node_name
        offering = claim.offering()
        if offering is not None:
            node["metadata"]["labels"][ZONE_LABEL] = offering.zone
            node["metadata"]["labels"][CAPACITY_TYPE] = offering.capacity_type
        found.append(node)
        for resource_slice in chosen.slices:
            raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **msgspec.to_builtins(resource_slice)}
            raw["metadata"]["name"] = f"{node_name}-{resource_slice.spec.driver}"
            raw["spec"]["nodeName"] = node_name
            raw["spec"]["pool"]["name"] = node_name
            found.append(raw)
        allocations = claim.allocations.get(chosen.instance_type.name, {})
        for pod in claim.pods:
            record = state.pods[pod.info.key]
            raw_pod = copy.deepcopy(record.raw)
            raw_pod.setdefault("spec", {})["nodeName"] = node_name
            pods.append(raw_pod)
            for key in pod.claim_keys:
                raw_claim = copy.deepcopy(state.claims[key].raw)
                allocation = msgspec.to_builtins(allocations[key])
                selector = allocation.get("nodeSelector")
                if selector:
                    for term in selector.get("nodeSelectorTerms", []):
                        for field in term.get("matchFields", []):
                            field["values"] = [node_name]
                raw_claim.setdefault("status", {})["allocation"] = allocation
                claims.append(raw_claim)
    return found + pods + claims


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

"""Planning: what Karpenter would launch for the pods that fit no existing node, and what it costs.

The cluster is loaded and scheduled first (the pods that fit existing nodes land there, as
kube-scheduler would place them before Karpenter reacts); the rest go to the provisioning solver over
the NodePools of the input and the instance catalog.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator import Features
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.api.validation import validate_objects
from dratwin.api.validation_base import Severity
from dratwin.catalog import Catalog, load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.provisioner.consolidation import ConsolidationPlan, consolidate
from dratwin.provisioner.nodepools import (
    AUTO_MODE_NVIDIA_ROLE,
    PlanError,
    PlanOptions,
    managed_nodepools,
    read_pool,
)
from dratwin.provisioner.pending import pod_to_place, split_unprovisionable
from dratwin.provisioner.solver import Plan, PodToPlace, Pool, Solver
from dratwin.twin.optimal import OptimalComparison, optimal_fleet
from dratwin.twin.plan_devices import interface_warnings, neuron_note
from dratwin.twin.schedule import Options, ScheduleReport, schedule

__all__ = ["PlanError", "PlanOptions", "PlanReport", "plan", "read_pool"]


@dataclass
class PlanReport:
    scheduled: ScheduleReport
    plan: Plan
    pools: list[Pool]
    notes: list[str] = field(default_factory=list)
    consolidation: ConsolidationPlan | None = None
    optimal: OptimalComparison | None = None
    node_claims: dict[str, dict[str, Any]] = field(default_factory=dict)  # the input's NodeClaims, by node name


def plan(
    objects: Sequence[LoadedObject],
    features: Features,
    options: PlanOptions,
    catalog: Catalog | None = None,
    compiler: SelectorCompiler | None = None,
) -> PlanReport:
    compiler = compiler or SelectorCompiler(list_type_attributes=features.list_type_attributes)
    loaded = load_cluster(objects, features, random.Random(options.seed))
    scheduled = schedule(loaded, Options(seed=options.seed), compiler)
    written = [o.raw for o in objects if o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/")]
    if not written:
        raise PlanError(
            "the input has no Karpenter NodePool (karpenter.sh/v1): nothing could be launched; "
            "add the NodePools of your cluster, e.g. from `kubectl get nodepools -o yaml`"
        )
    _check_karpenter_objects(objects, compiler)
    nodepools, unusable = managed_nodepools(written, options.auto_mode)
    catalog = catalog or load_catalog()
    pools = []
    for raw in nodepools:
        try:
            pools.append(read_pool(raw, catalog, loaded, options))
        except PlanError as error:  # like Karpenter, a NodePool that can launch nothing is skipped
            unusable.append(str(error))
    if not pools:
        raise PlanError("; ".join(unusable))
    pending, missing_class = split_unprovisionable(_pending(scheduled, loaded), loaded.state.classes, pools, options)
    solver = Solver(pools, features, dict(loaded.state.classes), compiler)
    headroom = {p.name: {k: v - p.used.get(k, 0) for k, v in p.limits.items()} for p in pools if p.limits}
    result = PlanReport(scheduled, solver.solve(pending), pools, node_claims=_node_claims(objects))
    if options.optimal_time_limit is not None:
        # static NodePools' nodes are there either way: compare what is launched for the other pods
        on_static = {id(p) for c in result.plan.claims if c.pool.static for p in c.pods}
        dynamic_cost = sum((o.price for c in result.plan.claims if not c.pool.static if (o := c.offering())), 0.0)
        result.optimal = optimal_fleet(
            solver,
            [p for p in pending if id(p) not in on_static],
            dynamic_cost,
            headroom,
            options.optimal_time_limit,
        )
    result.plan.unplaced += missing_class
    result.notes += loaded.rejections + loaded.conversions + unusable + [n for p in pools for n in p.notes]
    result.notes += _warnings(result, objects, options)
    neuron = neuron_note(result.plan, pending, loaded.state.classes, catalog)
    if neuron:
        result.notes.append(neuron)
    if any("karpenter.sh/nodepool" in n.node.metadata.labels for n in loaded.state.nodes.values()):
        result.consolidation = consolidate(
            loaded.state, pools, nodepools, features, dict(loaded.state.classes), compiler, options.now
        )
    if any(
        "DRA: request" in r.reason and "mig" in r.reason
        for u in result.plan.unplaced
        for rs in u.reasons.values()
        for r in rs
    ):
        result.notes.append(
            "MIG claims cannot trigger provisioning: Karpenter's device templates list whole GPUs only, so a MIG "
            "partition is only ever found on nodes that already exist (and are partitioned)"
        )
    return result


def _node_claims(objects: Sequence[LoadedObject]) -> dict[str, dict[str, Any]]:
    found = {}
    for o in objects:
        node = (o.raw.get("status") or {}).get("nodeName") if o.kind == "NodeClaim" else None
        if node:
            found[str(node)] = o.raw
    return found


def _check_karpenter_objects(objects: Sequence[LoadedObject], compiler: SelectorCompiler) -> None:
    """A NodePool or EC2NodeClass that does not validate cannot be planned for: say where and what, as
    `dratwin validate` does, rather than fail on the first value that does not parse."""
    karpenter = [o for o in objects if o.api_version.startswith(("karpenter.sh/", "karpenter.k8s.aws/"))]
    errors = [p for p in validate_objects(karpenter, compiler) if p.severity == Severity.ERROR]
    if errors:
        listed = "\n".join(f"  {p}" for p in errors)
        raise PlanError(f"the Karpenter objects of the input are invalid (`dratwin validate` shows all):\n{listed}")


def _warnings(result: PlanReport, objects: Sequence[LoadedObject], options: PlanOptions) -> list[str]:
    found = []
    for claim in result.plan.claims:
        chosen = claim.chosen()
        devices = claim.allocations.get(chosen.instance_type.name, {})
        plugin_gpus = claim.requested.get("nvidia.com/gpu", 0)
        if devices and plugin_gpus and not options.auto_mode:
            found.append(
                f"{claim.name} ({chosen.instance_type.name}) would serve GPUs through both the DRA driver and the "
                f"device plugin ({plugin_gpus} nvidia.com/gpu): both hand out the same GPUs; Karpenter's docs require "
                "separate NodePools (with node selectors) for DRA and device-plugin pods"
            )
    found += interface_warnings(result.plan, objects, options.auto_mode)
    found += _fallback_subrequests(result.plan)
    found += result.scheduled.loaded.unmodelled
    if options.auto_mode and any(u.reasons for u in result.plan.unplaced):
        found += [
            f"static NodePool {p.name} launches device-plugin GPU nodes: nothing is pending when a static node "
            f"starts, so EKS Auto Mode needs the label {AUTO_MODE_NVIDIA_ROLE}: dra in its template for DRA claims"
            for p in result.pools
            if p.static and any(t.role == "device-plugin" and t.instance_type.gpus for t in p.templates)
        ]
    return found


def _fallback_subrequests(plan_: Plan) -> list[str]:
    """Karpenter launches the cheapest type on which *some* subrequest of a firstAvailable request fits: the
    preference orders devices on a node, it does not choose the node. Say so where it decided the outcome."""
    found = []
    for claim in plan_.claims:
        chosen = claim.chosen().instance_type.name
        allocations = claim.allocations.get(chosen, {})
        for pod in claim.pods:
            for key, resource_claim in zip(pod.claim_keys, pod.claims, strict=True):
                allocation = allocations.get(key)
                found += [
                    f"{pod.info.key}: claim {key} request {request} gets {taken} on {chosen} ({claim.name}), not "
                    f"the preferred {preferred}: Karpenter launches the cheapest type that any subrequest fits; to "
                    "get the preferred device, constrain the NodePool or the pod"
                    for request, taken, preferred in _lost_preferences(resource_claim, allocation)
                ]
    return found


def _lost_preferences(
    resource_claim: ResourceClaim, allocation: AllocationResult | None
) -> list[tuple[str, str, str]]:
    """(request, subrequest taken, preferred subrequest) for each firstAvailable request that did not get its
    first choice."""
    if allocation is None:
        return []
    got = {r.request for r in allocation.devices.results}
    lost = []
    for request in resource_claim.spec.devices.requests:
        if not request.first_available:
            continue
        preferred = f"{request.name}/{request.first_available[0].name}"
        taken = sorted(g for g in got if g.startswith(f"{request.name}/"))
        if taken and preferred not in taken:
            lost.append((request.name, taken[0], preferred))
    return lost


def _pending(scheduled: ScheduleReport, loaded: LoadedCluster) -> list[PodToPlace]:
    state = loaded.state
    return [pod_to_place(state, state.pods[a.pod]) for a in scheduled.attempts if not a.scheduled]

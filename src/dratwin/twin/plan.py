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
from dratwin.allocator.nodes import selector_matches
from dratwin.api.core import Node, NodeSelectorRequirement, Taint
from dratwin.api.loader import LoadedObject
from dratwin.api.meta import ObjectMeta
from dratwin.api.quantity import Quantity
from dratwin.catalog import Catalog, InstanceType, load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.errors import DratwinError
from dratwin.provisioner.candidates import (
    CAPACITY_TYPE,
    ZONE_LABEL,
    Offering,
    build_template,
    requirement_selector,
)
from dratwin.provisioner.solver import Plan, PodToPlace, Pool, Solver
from dratwin.twin.build import LoadedCluster, load_cluster
from dratwin.twin.schedule import Options, ScheduleReport, schedule

DEFAULT_ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f")
OFFERING_KEYS = (ZONE_LABEL, CAPACITY_TYPE)


@dataclass(frozen=True)
class PlanOptions:
    seed: int = 0
    dra: bool = True  # Karpenter with DRA support on (settings.enableDRA)
    zones: tuple[str, ...] = DEFAULT_ZONES


@dataclass
class PlanReport:
    scheduled: ScheduleReport
    plan: Plan
    pools: list[Pool]
    notes: list[str] = field(default_factory=list)


class PlanError(DratwinError):
    """The input cannot be planned (no NodePool, a NodePool that names nothing launchable)."""


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
    nodepools = [o.raw for o in objects if o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/")]
    if not nodepools:
        raise PlanError(
            "the input has no Karpenter NodePool (karpenter.sh/v1): nothing could be launched; "
            "add the NodePools of your cluster, e.g. from `kubectl get nodepools -o yaml`"
        )
    pools = [read_pool(raw, catalog or load_catalog(), loaded, options) for raw in nodepools]
    pending = _pending(scheduled, loaded)
    solver = Solver(pools, features, dict(loaded.state.classes), compiler)
    result = PlanReport(scheduled, solver.solve(pending), pools)
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


def read_pool(raw: dict[str, Any], catalog: Catalog, loaded: LoadedCluster, options: PlanOptions) -> Pool:
    """A NodePool's templates: every catalog type its requirements allow, with the offerings they allow."""
    name = str(raw.get("metadata", {}).get("name", ""))
    spec = raw.get("spec") or {}
    template_spec = (spec.get("template") or {}).get("spec") or {}
    labels = dict(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
    requirements = [r for r in template_spec.get("requirements") or [] if isinstance(r, dict)]
    type_reqs = [_requirement(r) for r in requirements if r.get("key") not in OFFERING_KEYS]
    offer_reqs = [_requirement(r) for r in requirements if r.get("key") in OFFERING_KEYS]
    taints = [
        Taint(key=t.get("key", ""), value=t.get("value", ""), effect=t.get("effect", ""))
        for t in template_spec.get("taints") or []
    ]
    limits = {k: _amount(k, v) for k, v in (spec.get("limits") or {}).items()}
    pool = Pool(
        name,
        int(spec.get("weight") or 0),
        [],
        limits,
        min_values={r["key"]: int(r["minValues"]) for r in requirements if r.get("minValues")},
    )
    for instance_type in catalog:
        offerings = _offerings(instance_type, offer_reqs, options.zones)
        if not offerings:
            continue
        type_labels = {**instance_type.well_known_labels(), **labels}
        if type_reqs and not _labels_match(type_labels, type_reqs):
            continue
        try:
            template = build_template(
                name, instance_type, labels, taints, offerings, dra=options.dra, device_plugin_resources=True
            )
        except DratwinError:
            continue  # a type the catalog cannot model as a node (no vCPU/memory data)
        pool.templates.append(template)
    if not pool.templates:
        raise PlanError(f"NodePool {name}: its requirements allow no instance type of the catalog")
    return pool


def _pending(scheduled: ScheduleReport, loaded: LoadedCluster) -> list[PodToPlace]:
    state = loaded.state
    found = []
    for attempt in scheduled.attempts:
        if attempt.scheduled:
            continue
        record = state.pods[attempt.pod]
        statuses = {s.name: s.resource_claim_name for s in record.pod.status.resource_claim_statuses}
        claims, keys = [], []
        for reference in record.pod.spec.resource_claims:
            name = reference.resource_claim_name or statuses.get(reference.name)
            claim = state.claims.get(f"{record.pod.metadata.namespace}/{name}") if name else None
            if claim is not None and claim.claim.status.allocation is None:
                claims.append(claim.claim)
                keys.append(claim.key)
        found.append(PodToPlace(record.info, claims, keys))
    return found


def _offerings(
    instance_type: InstanceType, reqs: list[NodeSelectorRequirement], zones: Sequence[str]
) -> list[Offering]:
    price = instance_type.price_usd_per_hour
    if price is None:
        return []
    found = []
    for zone in zones:
        labels = {ZONE_LABEL: zone, CAPACITY_TYPE: "on-demand"}
        if _labels_match(labels, reqs):
            found.append(Offering(zone, "on-demand", price))
    return found


def _labels_match(labels: dict[str, str], reqs: list[NodeSelectorRequirement]) -> bool:
    node = Node(metadata=ObjectMeta(name="-", labels=labels))
    return selector_matches(node, requirement_selector(reqs))


def _requirement(raw: dict[str, Any]) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(
        key=str(raw.get("key", "")),
        operator=str(raw.get("operator", "")),
        values=[str(v) for v in raw.get("values") or []],
    )


def _amount(name: str, value: Any) -> int:
    quantity = Quantity.parse(value).value
    return int(quantity * 1000) if name == "cpu" else int(quantity)

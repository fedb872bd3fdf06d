"""Reading the NodePools of a plan: which instance types and offerings each allows, and why, when none.

A NodePool is read in the label set of the provisioner being planned (:mod:`dratwin.provisioner.labels`):
requirements on its instance labels narrow the catalog's types, on zone and capacity type the offerings, and
requirements on keys it does not know become labels of the nodes and narrow nothing, as in Karpenter. A
NodePool whose nodeClassRef is the other provisioner's NodeClass is not managed at all. When a NodePool allows
nothing it can launch, :func:`why_nothing` names the first real cause: a requirement no catalog type meets
(with the values the catalog has, closest first), then EKS Auto Mode's supported types, then offerings (zones,
capacity types, prices).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dratwin.api.core import Taint
from dratwin.api.karpenter import NODEPOOL_LABEL
from dratwin.api.quantity import Quantity
from dratwin.catalog import Catalog, InstanceType, Offering
from dratwin.catalog.auto_mode import auto_mode_refusal
from dratwin.cluster.load import LoadedCluster
from dratwin.errors import DratwinError
from dratwin.provisioner.candidates import CAPACITY_TYPE, ZONE_LABEL, Template, build_template
from dratwin.provisioner.labels import KeyKind, LabelSet, foreign_key_hint, instance_requirements, label_set
from dratwin.provisioner.requirements import Requirement, RequirementError, Requirements
from dratwin.provisioner.solver import Pool
from dratwin.scheduler.resources import node_capacity

AUTO_MODE_NVIDIA_ROLE = "eks.amazonaws.com/device-manager-nvidia"
AUTO_MODE_DRA_VERSION = (1, 36)
_SHOWN = 8  # values or types named in one cause


@dataclass(frozen=True)
class PlanOptions:
    seed: int = 0
    dra: bool = True  # Karpenter with DRA support on (settings.enableDRA)
    zones: tuple[str, ...] | None = None  # the zones the subnets cover (default: the catalog's zones)
    auto_mode: bool = False  # EKS Auto Mode instead of self-managed Karpenter
    kubernetes_version: tuple[int, int] = (1, 36)  # the cluster's minor version (Auto Mode's DRA needs 1.36)
    now: datetime | None = None  # for disruption budget schedules and consolidateAfter (None: always due)
    optimal_time_limit: float | None = None  # also solve the cost-optimal fleet (MILP), in at most this long


class PlanError(DratwinError):
    """The input cannot be planned (no NodePool, a NodePool that names nothing launchable)."""


@dataclass(frozen=True)
class _Requirements:
    """A NodePool's requirements by what they constrain."""

    instance: Requirements
    offering: Requirements
    custom: list[Requirement]
    unmodelled: list[Requirement]


def managed_nodepools(raws: Sequence[dict[str, Any]], auto_mode: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The NodePools the planned provisioner manages (by their nodeClassRef), and a note for each other one."""
    labels = label_set(auto_mode)
    kept, notes = [], []
    for raw in raws:
        ref = ((raw.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
        group, kind = str(ref.get("group") or ""), str(ref.get("kind") or "")
        if labels.manages(group, kind):
            kept.append(raw)
            continue
        name = (raw.get("metadata") or {}).get("name", "")
        owner = "plan it with --auto-mode" if not auto_mode else "plan it without --auto-mode"
        notes.append(
            f"NodePool {name} is not managed by {labels.name}: its nodeClassRef is {group or '?'}/{kind or '?'}, "
            f"{labels.name} only manages NodePools of {labels.node_class_group}/{labels.node_class_kind} ({owner})"
        )
    return kept, notes


def read_pool(raw: dict[str, Any], catalog: Catalog, loaded: LoadedCluster, options: PlanOptions) -> Pool:
    """A NodePool's templates: every catalog type its requirements allow, with the offerings they allow.

    PlanError, saying why, when it allows nothing the catalog can launch."""
    labels = label_set(options.auto_mode)
    name = str(raw.get("metadata", {}).get("name", ""))
    spec = raw.get("spec") or {}
    template_spec = (spec.get("template") or {}).get("spec") or {}
    written = [r for r in template_spec.get("requirements") or [] if isinstance(r, dict)]
    reqs = _split(name, written, labels)
    node_labels = {**_custom_labels(reqs.custom), **_template_labels(spec)}
    limits = {k: _amount(k, v) for k, v in (spec.get("limits") or {}).items()}
    used = _pool_usage(name, loaded, [*limits, "nodes"])
    pool = Pool(
        name,
        int(spec.get("weight") or 0),
        [],
        limits,
        used,
        min_values={r["key"]: int(r["minValues"]) for r in written if r.get("minValues")},
        replicas=_replicas(name, spec),
        node_class=str((template_spec.get("nodeClassRef") or {}).get("name") or "default"),
        existing_nodes=used.get("nodes", 0),
        notes=_key_notes(name, reqs, labels, node_labels),
    )
    taints = [
        Taint(key=t.get("key", ""), value=t.get("value", ""), effect=t.get("effect", ""))
        for t in template_spec.get("taints") or []
    ]
    zones = options.zones or catalog.zones
    for instance_type in catalog:
        if not _allows(instance_type, reqs, labels, catalog.region, options):
            continue
        offerings = _offerings(instance_type, reqs.offering, zones)
        if not offerings:
            continue
        try:
            found = _templates(name, instance_type, node_labels, taints, offerings, options)
        except DratwinError:
            continue  # a type the catalog cannot model as a node (no vCPU/memory data)
        if options.auto_mode and pool.static:
            # nothing is pending when a static node launches: its role is the NodePool's label or the default
            role = "dra" if node_labels.get(AUTO_MODE_NVIDIA_ROLE) == "dra" else "device-plugin"
            found = [t for t in found if t.role == role] or found[:1]
        pool.templates += found
    if not pool.templates:
        causes = why_nothing(name, reqs, labels, catalog, options)
        raise PlanError(f"NodePool {name}: its requirements allow no instance type of the catalog with an available "
                        f"offering: {'; '.join(causes)}")
    return pool


# ---- requirements --------------------------------------------------------------------------------------


def _split(name: str, written: Iterable[Mapping[str, Any]], labels: LabelSet) -> _Requirements:
    instance: list[Requirement] = []
    offering: list[Requirement] = []
    custom: list[Requirement] = []
    unmodelled: list[Requirement] = []
    for raw in written:
        try:
            requirement = Requirement.create(
                str(raw.get("key", "")), str(raw.get("operator", "")), [str(v) for v in raw.get("values") or []]
            )
        except RequirementError as error:
            raise PlanError(f"NodePool {name}: {error}") from None
        kind = labels.key_kind(requirement.key)
        {KeyKind.INSTANCE: instance, KeyKind.OFFERING: offering, KeyKind.CUSTOM: custom,
         KeyKind.UNMODELLED: unmodelled}[kind].append(requirement)  # fmt: skip
    return _Requirements(Requirements(instance), Requirements(offering), custom, unmodelled)


def _custom_labels(custom: Iterable[Requirement]) -> dict[str, str]:
    """Karpenter labels every node with one allowed value of each custom requirement (the smallest here; upstream
    picks any)."""
    found = {}
    for requirement in Requirements(custom).values():
        value = requirement.any()
        if value is not None:
            found[requirement.key] = value
    return found


def _template_labels(spec: Mapping[str, Any]) -> dict[str, str]:
    metadata = (spec.get("template") or {}).get("metadata") or {}
    return {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}


def _key_notes(name: str, reqs: _Requirements, labels: LabelSet, node_labels: Mapping[str, str]) -> list[str]:
    notes = []
    for requirement in reqs.custom:
        hint = foreign_key_hint(requirement.key, labels)
        if hint is None:
            continue
        value = node_labels.get(requirement.key)
        labelled = f"its nodes get {requirement.key}={value}" if value is not None else "its nodes do not get it"
        notes.append(
            f'NodePool {name}: requirement key "{requirement.key}" {hint}: {labels.name} takes it as a custom label, '
            f"which narrows no instance type ({labelled})"
        )
    notes += [
        f"NodePool {name}: the requirement {r} is not modelled (zone IDs, capacity reservations, placement groups "
        "and Nitro Enclaves are per account): the plan ignores it"
        for r in reqs.unmodelled
    ]
    return notes


def _allows(
    instance_type: InstanceType, reqs: _Requirements, labels: LabelSet, region: str, options: PlanOptions
) -> bool:
    if options.auto_mode and auto_mode_refusal(instance_type) is not None:
        return False
    return instance_requirements(instance_type, labels, region).intersects(reqs.instance) is None


def _offerings(instance_type: InstanceType, offering: Requirements, zones: Sequence[str]) -> list[Offering]:
    """The type's available offerings that the NodePool's zone and capacity-type requirements allow."""
    zone, capacity = offering.for_key(ZONE_LABEL), offering.for_key(CAPACITY_TYPE)
    return [
        o
        for o in instance_type.offerings
        if o.available and o.zone in zones and zone.has(o.zone) and capacity.has(o.capacity_type)
    ]


# ---- why a NodePool allows nothing -----------------------------------------------------------------------


def why_nothing(
    name: str, reqs: _Requirements, labels: LabelSet, catalog: Catalog, options: PlanOptions
) -> list[str]:
    """The causes, most basic first: foreign or misspelt keys (which narrow nothing, so the types the user meant
    to pick are not what stopped it), requirements no catalog type meets, EKS Auto Mode's supported types, then
    the offerings of the types the requirements allow."""
    causes = [
        f'"{r.key}" {hint}, so it narrows nothing'
        for r in reqs.custom
        if (hint := foreign_key_hint(r.key, labels)) is not None
    ]
    modelled = [it for it in catalog if it.vcpu is not None and it.memory_mib is not None and it.arch is not None]
    typed = {it.name: instance_requirements(it, labels, catalog.region) for it in modelled}
    alone = [
        r for r in reqs.instance.values() if not any(t.intersects(Requirements([r])) is None for t in typed.values())
    ]
    if alone:
        return causes + [_no_type_has(r, typed) for r in alone]
    allowed = [it for it in modelled if typed[it.name].intersects(reqs.instance) is None]
    if not allowed:
        return [*causes, f"no instance type of the catalog meets all of {reqs.instance} together (each alone is met)"]
    if options.auto_mode:
        refused = {it.name: why for it in allowed if (why := auto_mode_refusal(it)) is not None}
        if len(refused) == len(allowed):
            return [*causes, _grouped(f"{labels.name} launches none of the {len(allowed)} types they allow", refused)]
        allowed = [it for it in allowed if it.name not in refused]
    return causes + _offering_causes(allowed, reqs.offering, catalog, options)


def _no_type_has(requirement: Requirement, typed: Mapping[str, Requirements]) -> str:
    if requirement.operator == "DoesNotExist":
        return f"its requirements on {requirement.key} allow no value together (each In/NotIn narrows the others)"
    values = sorted({v for t in typed.values() if (r := t.get(requirement.key)) is not None for v in r.values})
    if not values:
        return f"no instance type of the catalog has the label {requirement.key} ({requirement})"
    if requirement.operator == "In" and requirement.greater_than is None and requirement.less_than is None:
        missing = requirement.values_list()
        closest = _closest(missing, values)
        listed = ", ".join(closest[:_SHOWN]) + (f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")
        return (f"no instance type of the catalog has {requirement.key} {' or '.join(missing)}; "
                f"its values in the catalog, closest first: {listed}")
    numbers = sorted(int(v) for v in values if v.lstrip("-").isdigit())
    span = f" (the catalog's values run from {numbers[0]} to {numbers[-1]})" if numbers else ""
    return f"no instance type of the catalog meets {requirement}{span}"


def _closest(wanted: Sequence[str], values: Sequence[str]) -> list[str]:
    """``values`` ordered by how alike they are to any of ``wanted`` (ties in sorted order)."""
    def likeness(value: str) -> float:
        return max(difflib.SequenceMatcher(None, w, value).ratio() + (0.5 if value.startswith(w[:2]) else 0)
                   for w in wanted)

    return sorted(values, key=lambda v: (-likeness(v), v))


def _offering_causes(
    allowed: Sequence[InstanceType], offering: Requirements, catalog: Catalog, options: PlanOptions
) -> list[str]:
    """Why none of ``allowed`` (the types the requirements allow) has an offering the NodePool can launch."""
    causes: list[str] = []
    offered = [it for it in allowed if it.offerings]
    if not offered:
        unpriced = {it.name: it.notes[0] if it.notes else f"no on-demand price in {catalog.region}" for it in allowed}
        return [_grouped(f"the {len(allowed)} types they allow have no offering", unpriced)]
    zones = options.zones or catalog.zones
    zone, capacity = offering.for_key(ZONE_LABEL), offering.for_key(CAPACITY_TYPE)
    wanted = [z for z in zones if zone.has(z)]
    if not wanted:
        outside = ", ".join(zone.values_list()) if not zone.complement else str(zone)
        causes.append(f"zone {outside} is not a zone of the catalog ({catalog.region}: {', '.join(zones)}); "
                      "for another region or your account's zones, give a catalog with --catalog "
                      "(dratwin/data/CATALOG.md)")
        return causes
    types_ = sorted({o.capacity_type for it in offered for o in it.offerings if o.zone in wanted})
    if not any(capacity.has(t) for t in types_):
        causes.append(f"{capacity} is not offered: the catalog sells these types as {', '.join(types_)} only (the "
                      "bundled catalog has on-demand prices of us-east-1 and no spot prices); give your prices with "
                      "--catalog (spot, other regions; see dratwin/data/CATALOG.md)")
        return causes
    causes.append("every offering they have in the zones and capacity types allowed is marked unavailable "
                  "(the catalog's unavailable list)")
    return causes


def _grouped(prefix: str, reasons: Mapping[str, str]) -> str:
    by_reason: dict[str, list[str]] = {}
    for type_name, reason in reasons.items():
        by_reason.setdefault(reason, []).append(type_name)
    parts = []
    for reason, names in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
        parts.append(f"{shown}: {reason}")
    return f"{prefix} ({'; '.join(parts)})"


# ---- templates and the NodePool's books ----------------------------------------------------------------


def _templates(
    pool: str,
    instance_type: InstanceType,
    labels: dict[str, str],
    taints: list[Taint],
    offerings: list[Offering],
    options: PlanOptions,
) -> list[Template]:
    """Self-managed Karpenter imagines one node per type with its capacity (``nvidia.com/gpu``) and, with
    DRA on, the devices of its metadata. EKS Auto Mode picks each node's device-manager role at launch
    from the pods it launches it for: a DRA node or a device-plugin node, never both."""
    known = label_set(options.auto_mode).well_known
    if not options.auto_mode:
        return [
            build_template(
                pool, instance_type, labels, taints, offerings, dra=options.dra, device_plugin_resources=True,
                well_known=known,
            )
        ]
    found = [
        build_template(
            pool, instance_type, labels, taints, offerings, dra=False, device_plugin_resources=True, auto_mode=True,
            well_known=known,
        )
    ]
    if (
        instance_type.gpus is not None
        and instance_type.dra is not None
        and options.kubernetes_version >= AUTO_MODE_DRA_VERSION
    ):
        found.append(
            build_template(
                pool, instance_type, labels, taints, offerings, dra=True, device_plugin_resources=False, auto_mode=True,
                well_known=known,
            )
        )
    return found


def _replicas(name: str, spec: dict[str, Any]) -> int | None:
    value = spec.get("replicas")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlanError(f"NodePool {name}: spec.replicas {value!r} is not a whole number of nodes (0 or more)")
    return value


def _pool_usage(name: str, loaded: LoadedCluster, limited: Sequence[str]) -> dict[str, int]:
    """What the NodePool's existing nodes hold of each ``limited`` resource (their capacity; ``nodes``: one each)."""
    used: dict[str, int] = {}
    for info in loaded.state.nodes.values():
        if info.node.metadata.labels.get(NODEPOOL_LABEL) != name:
            continue
        capacity = {**node_capacity(info.node), "nodes": 1}
        node_labels = info.node.metadata.labels
        gpus = node_labels.get("karpenter.k8s.aws/instance-gpu-count") or node_labels.get(
            "eks.amazonaws.com/instance-gpu-count", ""
        )
        if "nvidia.com/gpu" not in capacity and gpus.isdigit():  # a DRA node: Karpenter still counts its GPUs
            capacity["nvidia.com/gpu"] = int(gpus)
        for key in limited:
            used[key] = used.get(key, 0) + capacity.get(key, 0)
    return used


def _amount(name: str, value: Any) -> int:
    quantity = Quantity.parse(value).value
    return int(quantity * 1000) if name == "cpu" else int(quantity)

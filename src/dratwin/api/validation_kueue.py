"""Rules of Kueue's objects beyond their structure, as Kueue's CRDs and webhooks apply them.

Sources (kubernetes-sigs/kueue v0.17, v1beta2): the CRDs' OpenAPI limits and CEL rules
(``config/components/crd/bases``) and the validating webhooks (``pkg/webhooks/clusterqueue_webhook.go``,
``cohort_webhook.go``, ``resourceflavor_webhook.go``, ``common.go``). Both refuse the object, so both are
errors, worded as Kueue words them. Across objects (:func:`check_kueue_references`): a ClusterQueue whose
flavors or admission checks are not in the input is inactive in Kueue (``FlavorNotFound``,
``AdmissionCheckNotFound``), a LocalQueue whose ClusterQueue is missing admits nothing: warnings, since
those objects may exist in the cluster already.

The structure (unknown fields, types, required fields) is checked by :mod:`dratwin.api.intake` from the
CRDs themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.api.core import Taint
from dratwin.api.kueue import (
    BORROW_WITHIN_COHORT,
    DEFAULT_WHEN_CAN_BORROW,
    DEFAULT_WHEN_CAN_PREEMPT,
    FUNGIBILITY_PREFERENCES,
    MAX_POD_SETS,
    MAX_RESOURCE_GROUPS,
    QUEUEING_STRATEGIES,
    RECLAIM_WITHIN_COHORT,
    STOP_POLICIES,
    WHEN_CAN_BORROW,
    WHEN_CAN_PREEMPT,
    WITHIN_CLUSTER_QUEUE,
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    Configuration,
    FairSharing,
    FlavorFungibility,
    LocalQueue,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from dratwin.api.loader import FieldPath
from dratwin.api.quantity import Quantity
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_formats import did_you_mean
from dratwin.api.validation_refs import Checked

MAX_TOTAL_FLAVORS = 256  # clusterqueue_webhook.go validateTotalFlavors
MAX_TOTAL_COVERED = 256  # validateTotalCoveredResources
MAX_FLAVOR_RESOURCES = 512  # validateFlavorResourceCombinations, per group
MAX_PER_GROUP = 64  # the CRD's maxItems of coveredResources and flavors
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
PREEMPTION_STRATEGIES = (("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",),
                         ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
NEGATIVE = "must be greater than or equal to 0"  # apimachinery's IsNegativeErrorMsg


def validate_kueue_object(rep: Reporter, value: object) -> None:
    if isinstance(value, ClusterQueue):
        _cluster_queue(rep, value)
    elif isinstance(value, Cohort):
        _fair_sharing(rep, value.spec.fair_sharing, ("spec", "fairSharing"))
        _resource_groups(rep, value.spec.resource_groups, has_parent=bool(value.spec.parent_name), cohort=True)
    elif isinstance(value, ResourceFlavor):
        _node_taints(rep, value.spec.node_taints, ("spec", "nodeTaints"))
    elif isinstance(value, LocalQueue):
        _enum(rep, ("spec", "stopPolicy"), value.spec.stop_policy, STOP_POLICIES)
        _fair_sharing(rep, value.spec.fair_sharing, ("spec", "fairSharing"))
    elif isinstance(value, Workload):
        _workload(rep, value)
    elif isinstance(value, Configuration):
        _configuration(rep, value)


# ---- ClusterQueue and Cohort ---------------------------------------------------------------------


def _cluster_queue(rep: Reporter, cq: ClusterQueue) -> None:
    spec = cq.spec
    _enum(rep, ("spec", "queueingStrategy"), spec.queueing_strategy, QUEUEING_STRATEGIES)
    _enum(rep, ("spec", "stopPolicy"), spec.stop_policy, STOP_POLICIES)
    _fair_sharing(rep, spec.fair_sharing, ("spec", "fairSharing"))
    if spec.preemption is not None:
        _preemption(rep, spec.preemption)
    if spec.flavor_fungibility is not None:
        _fungibility(rep, spec.flavor_fungibility)
    _resource_groups(rep, spec.resource_groups, has_parent=bool(spec.cohort_name), cohort=False)


def _resource_groups(rep: Reporter, groups: Sequence[ResourceGroup], *, has_parent: bool, cohort: bool) -> None:
    path: FieldPath = ("spec", "resourceGroups")
    if len(groups) > MAX_RESOURCE_GROUPS:
        rep.too_many(path, len(groups), MAX_RESOURCE_GROUPS)
    flavors_total = sum(len(g.flavors) for g in groups)
    if flavors_total > MAX_TOTAL_FLAVORS:
        rep.invalid(path, flavors_total, f"total number of flavors across all resourceGroups must be ≤ "
                    f"{MAX_TOTAL_FLAVORS}, got {flavors_total}")
    covered_total = sum(len(g.covered_resources) for g in groups)
    if covered_total > MAX_TOTAL_COVERED:
        rep.invalid(path, covered_total, f"total number of covered resources across all resourceGroups must be ≤ "
                    f"{MAX_TOTAL_COVERED}, got {covered_total}")
    seen_resources: dict[str, int] = {}
    seen_flavors: dict[str, int] = {}
    for i, group in enumerate(groups):
        here = (*path, i)
        _group_limits(rep, here, group)
        for j, name in enumerate(group.covered_resources):
            if name in seen_resources:
                rep.duplicate((*here, "coveredResources", j), name, "",
                              f"a resource belongs to one resource group; it is covered by group "
                              f"{seen_resources[name]} already")
            else:
                seen_resources[name] = i
        for j, flavor in enumerate(group.flavors):
            fpath = (*here, "flavors", j)
            if flavor.name in seen_flavors:
                rep.duplicate((*fpath, "name"), flavor.name, "", "a flavor belongs to one resource group; "
                              f"it is in group {seen_flavors[flavor.name]} already")
            else:
                seen_flavors[flavor.name] = i
            _flavor_quotas(rep, fpath, flavor.resources, group.covered_resources, has_parent=has_parent,
                           cohort=cohort)


def _group_limits(rep: Reporter, path: FieldPath, group: ResourceGroup) -> None:
    if len(group.covered_resources) > MAX_PER_GROUP:
        rep.too_many((*path, "coveredResources"), len(group.covered_resources), MAX_PER_GROUP)
    if len(group.flavors) > MAX_PER_GROUP:
        rep.too_many((*path, "flavors"), len(group.flavors), MAX_PER_GROUP)
    combinations = len(group.flavors) * len(group.covered_resources)
    if combinations > MAX_FLAVOR_RESOURCES:
        rep.invalid(path, combinations, "number of flavor-resource combinations in a resourceGroup must be ≤ "
                    f"{MAX_FLAVOR_RESOURCES}, got {combinations}")
    if any(len(f.resources) != len(group.covered_resources) for f in group.flavors):
        rep.invalid(path, f"{len(group.covered_resources)} covered resources",
                    "flavors must have the same number of resources as the coveredResources",
                    "list every covered resource in each flavor, in the order of coveredResources (a nominalQuota "
                    "of 0 is allowed)")


def _flavor_quotas(rep: Reporter, path: FieldPath, quotas: Sequence[ResourceQuota], covered: Sequence[str], *,
                   has_parent: bool, cohort: bool) -> None:
    for i, quota in enumerate(quotas):
        if i >= len(covered):
            break
        here = (*path, "resources", i)
        if quota.name != covered[i]:
            rep.invalid((*here, "name"), quota.name, "must match the name in coveredResources",
                        f'resource {i} of each flavor is coveredResources[{i}], "{covered[i]}"')
        nominal = _quantity(rep, (*here, "nominalQuota"), quota.nominal_quota)
        parent = "parent" if cohort else "cohort"
        for key, value in (("borrowingLimit", quota.borrowing_limit), ("lendingLimit", quota.lending_limit)):
            if value is None:
                continue
            limit = _quantity(rep, (*here, key), value)
            if not has_parent:
                rep.invalid((*here, key), value, f"must be nil when {parent} is empty",
                            f"set spec.{'parentName' if cohort else 'cohortName'}, or remove {key}")
            if key == "lendingLimit" and not cohort and limit is not None and nominal is not None and nominal < limit:
                rep.invalid((*here, key), value, "must be less than or equal to the nominalQuota")


def _quantity(rep: Reporter, path: FieldPath, value: object) -> Quantity | None:
    if value is None:
        return None
    parsed = rep.quantity(path, value)
    if parsed is not None and parsed.sign() < 0:
        rep.invalid(path, value, NEGATIVE)
        return None
    return parsed


def _preemption(rep: Reporter, preemption: Preemption) -> None:
    path: FieldPath = ("spec", "preemption")
    _enum(rep, (*path, "withinClusterQueue"), preemption.within_cluster_queue, WITHIN_CLUSTER_QUEUE)
    _enum(rep, (*path, "reclaimWithinCohort"), preemption.reclaim_within_cohort, RECLAIM_WITHIN_COHORT)
    borrow = preemption.borrow_within_cohort
    policy = borrow.policy if borrow is not None else None
    _enum(rep, (*path, "borrowWithinCohort", "policy"), policy, BORROW_WITHIN_COHORT)
    reclaim = preemption.reclaim_within_cohort or "Never"
    if reclaim == "Never" and borrow is not None and (policy or "Never") != "Never":
        rep.invalid(path, f"reclaimWithinCohort={reclaim}", "reclaimWithinCohort=Never and "
                    "borrowWithinCohort.Policy!=Never", "preempting to borrow needs reclaimWithinCohort "
                    "LowerPriority or Any")


def _fungibility(rep: Reporter, fungibility: FlavorFungibility) -> None:
    path: FieldPath = ("spec", "flavorFungibility")
    _enum(rep, (*path, "whenCanBorrow"), fungibility.when_can_borrow, WHEN_CAN_BORROW)
    _enum(rep, (*path, "whenCanPreempt"), fungibility.when_can_preempt, WHEN_CAN_PREEMPT)
    _enum(rep, (*path, "preference"), fungibility.preference, FUNGIBILITY_PREFERENCES)
    borrow = fungibility.when_can_borrow or DEFAULT_WHEN_CAN_BORROW
    preempt = fungibility.when_can_preempt or DEFAULT_WHEN_CAN_PREEMPT
    if fungibility.preference is not None and (borrow, preempt) != ("TryNextFlavor", "TryNextFlavor"):
        rep.invalid((*path, "preference"), fungibility.preference, "preference can only be set when both "
                    "whenCanBorrow and whenCanPreempt are TryNextFlavor",
                    f"whenCanBorrow is {borrow}, whenCanPreempt is {preempt}")


def _fair_sharing(rep: Reporter, fair: FairSharing | None, path: FieldPath) -> None:
    if fair is None or fair.weight is None:
        return
    weight = rep.quantity((*path, "weight"), fair.weight)
    if weight is None:
        return
    if weight.sign() < 0:
        rep.invalid((*path, "weight"), fair.weight, NEGATIVE)
    elif weight.sign() > 0 and weight.compare(Quantity.parse("1n")) <= 0:  # collapses to 0 in the DRS division
        rep.invalid((*path, "weight"), fair.weight, "When not 0, weight must be > 10e-9")


def _node_taints(rep: Reporter, taints: Sequence[Taint], path: FieldPath) -> None:
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        _enum(rep, (*path, i, "effect"), taint.effect or None, TAINT_EFFECTS)
        key = (taint.key, taint.effect)
        if key in seen:
            rep.duplicate((*path, i), f"{taint.key}:{taint.effect}", "taints must be unique by key and effect pair")
        seen.add(key)


# ---- Workload and Configuration ------------------------------------------------------------------


def _workload(rep: Reporter, workload: Workload) -> None:
    pod_sets = workload.spec.pod_sets
    path: FieldPath = ("spec", "podSets")
    if len(pod_sets) > MAX_POD_SETS:
        rep.too_many(path, len(pod_sets), MAX_POD_SETS)
    names: set[str] = set()
    for i, pod_set in enumerate(pod_sets):
        if pod_set.name in names:
            rep.duplicate((*path, i, "name"), pod_set.name)
        names.add(pod_set.name)
        if pod_set.count < 0:
            rep.invalid((*path, i, "count"), pod_set.count, NEGATIVE)
        if pod_set.min_count is not None and pod_set.min_count > pod_set.count:
            rep.invalid((*path, i, "minCount"), pod_set.min_count, "should be less than or equal to count",
                        f"count is {pod_set.count}")


def _configuration(rep: Reporter, config: Configuration) -> None:
    mapped: dict[str, int] = {}
    names: set[str] = set()
    for i, mapping in enumerate(config.device_class_mappings):
        path: FieldPath = ("resources", "deviceClassMappings", i)
        if mapping.name in names:
            rep.duplicate((*path, "name"), mapping.name)
        names.add(mapping.name)
        if not mapping.device_class_names:
            rep.required((*path, "deviceClassNames"), "a mapping needs at least one DeviceClass")
        for j, class_name in enumerate(mapping.device_class_names):
            if class_name in mapped:
                rep.duplicate((*path, "deviceClassNames", j), class_name, "",
                              f"a DeviceClass maps to one resource; it is in mapping {mapped[class_name]} already")
            mapped.setdefault(class_name, i)
        modes = {"counter" if s.counter is not None else "capacity" for s in mapping.sources
                 if s.counter is not None or s.capacity is not None}
        if len(modes) > 1:
            rep.invalid((*path, "sources"), "counter and capacity", "counter and capacity sources cannot be mixed "
                        "in one mapping", "split them into two mappings with their own DeviceClasses")
    fair = config.fair_sharing
    if fair is not None and fair.preemption_strategies and tuple(fair.preemption_strategies) not in \
            PREEMPTION_STRATEGIES:
        rep.invalid(("fairSharing", "preemptionStrategies"), fair.preemption_strategies,
                    "must be one of [LessThanOrEqualToFinalShare], [LessThanInitialShare] or "
                    "[LessThanOrEqualToFinalShare, LessThanInitialShare]")


def _enum(rep: Reporter, path: FieldPath, value: str | None, supported: Sequence[str]) -> None:
    if value is not None and value not in supported:
        rep.unsupported(path, value, list(supported))


# ---- across objects ------------------------------------------------------------------------------


def check_kueue_references(items: list[Checked]) -> None:
    """ClusterQueues' flavors and admission checks, LocalQueues' ClusterQueues: are they in the input?"""
    flavors = sorted(i.obj.name for i in items if isinstance(i.value, ResourceFlavor))
    checks = sorted(i.obj.name for i in items if isinstance(i.value, AdmissionCheck))
    queues = sorted(i.obj.name for i in items if isinstance(i.value, ClusterQueue))
    for item in items:
        if isinstance(item.value, ClusterQueue):
            _cluster_queue_refs(item, item.value, flavors, checks)
        elif isinstance(item.value, LocalQueue) and queues and item.value.spec.cluster_queue not in queues:
            name = item.value.spec.cluster_queue
            item.rep.warn(ProblemKind.NOT_FOUND, ("spec", "clusterQueue"), f'no ClusterQueue "{name}" in the input: '
                          "the LocalQueue admits nothing until it exists",
                          did_you_mean(name, queues) or f"ClusterQueues in the input: {', '.join(queues)}")


def _cluster_queue_refs(item: Checked, cq: ClusterQueue, flavors: list[str], checks: list[str]) -> None:
    for i, group in enumerate(cq.spec.resource_groups):
        for j, flavor in enumerate(group.flavors):
            if flavor.name not in flavors:
                item.rep.warn(ProblemKind.NOT_FOUND, ("spec", "resourceGroups", i, "flavors", j, "name"),
                              f'no ResourceFlavor "{flavor.name}" in the input: Kueue keeps the ClusterQueue '
                              "inactive (FlavorNotFound) and admits nothing through it",
                              did_you_mean(flavor.name, flavors) or "add the ResourceFlavor with another -f")
    strategy = cq.spec.admission_checks_strategy
    for i, rule in enumerate(strategy.admission_checks if strategy is not None else []):
        if rule.name not in checks:
            item.rep.warn(ProblemKind.NOT_FOUND, ("spec", "admissionChecksStrategy", "admissionChecks", i, "name"),
                          f'no AdmissionCheck "{rule.name}" in the input: Kueue keeps the ClusterQueue inactive '
                          "(AdmissionCheckNotFound)", did_you_mean(rule.name, checks) or "")

"""A Workload's quota usage per PodSet, as Kueue computes it, DRA devices included.

Per PodSet (``pkg/workload/workload.go`` totalRequestsFromPodSets, at Kueue ``ff69552``):

1. the namespace's LimitRange defaults filled into containers that lack them (:mod:`.limit_range`), then
   the pod's effective requests as the scheduler computes them (containers summed, init containers as a
   peak with sidecars accumulating, ``spec.overhead`` added, a limit standing for a missing request):
   :func:`dratwin.scheduler.resources.exact_pod_requests`, the same rule the scheduler twin uses;
2. resources whose name starts with one of ``resources.excludeResourcePrefixes`` dropped;
3. ``resources.transformations`` applied (each output = its factor × the input's integer value, after
   ``multiplyBy``; the input kept with ``Retain``, the default, dropped with ``Replace``);
4. extended resources that a DeviceClass serves (``extendedResourceName``) replaced by the class's mapped
   name, then the DRA logical resources of the pod's ResourceClaimTemplates added (:mod:`.dra`);
5. everything floored at 0 and multiplied by the PodSet's count less its ``status.reclaimablePods`` (pods
   that finished and will not run again; ``podSetsCountsAfterReclaim``, gate ``ReclaimablePods``, beta, on).

Amounts are integers as Kueue keeps them (``resources.ResourceValue``): ``cpu`` in millicores, every other
resource in its unit rounded up. The special resource ``pods`` (one per pod) is added by the flavor
assigner only where the ClusterQueue covers it (:mod:`.admission`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import msgspec

from dratwin.api.core import LimitRange, Pod
from dratwin.api.kueue import Configuration, PodSet, ResourceTransformation, Workload
from dratwin.api.quantity import Quantity
from dratwin.errors import QuantityError
from dratwin.kueue.dra import DraInputs, DraUsage, dra_usage
from dratwin.kueue.limit_range import with_limit_range_defaults
from dratwin.scheduler.resources import exact_pod_requests

CPU = "cpu"
GATE_RECLAIMABLE_PODS = "ReclaimablePods"
Amounts = dict[str, int]


@dataclass(frozen=True)
class PodSetUsage:
    """What one PodSet charges: per pod and in total (× count)."""

    name: str
    count: int
    per_pod: Amounts
    total: Amounts


@dataclass(frozen=True)
class Inadmissible:
    """A Workload Kueue will not queue: ``QuotaReserved=False`` with this reason and message."""

    reason: str
    message: str


@dataclass(frozen=True)
class WorkloadUsage:
    pod_sets: list[PodSetUsage] = field(default_factory=list)

    def total(self) -> Amounts:
        out: Amounts = {}
        for pod_set in self.pod_sets:
            for name, amount in pod_set.total.items():
                out[name] = out.get(name, 0) + amount
        return out


def resource_value(name: str, amount: Fraction) -> int:
    """``resources.ResourceValue``: cpu in millicores, the rest in units, both rounded up."""
    return math.ceil(amount * 1000) if name == CPU else math.ceil(amount)


def workload_usage(workload: Workload, config: Configuration | None = None, dra: DraInputs | None = None,
                   limit_ranges: Sequence[LimitRange] = ()) -> WorkloadUsage | Inadmissible:
    """The usage of every PodSet of ``workload``, or why Kueue refuses to queue it; ``limit_ranges``: the
    cluster's LimitRanges (those of the Workload's namespace apply)."""
    config = config or Configuration()
    workload = with_limit_range_defaults(workload, limit_ranges)
    extra: Mapping[str, DraUsage] = {}
    if dra is not None:
        found = dra_usage(workload, config, dra)
        if isinstance(found, str):
            return Inadmissible("Misconfigured", found)
        extra = found
    counts = counts_after_reclaim(workload, config)
    try:
        return WorkloadUsage([pod_set_usage(ps, config, extra.get(ps.name), counts[ps.name])
                              for ps in workload.spec.pod_sets])
    except QuantityError as error:
        return Inadmissible("Misconfigured", str(error))


def counts_after_reclaim(workload: Workload, config: Configuration) -> dict[str, int]:
    """Each PodSet's count less its reclaimable pods, never below 0 (``podSetsCountsAfterReclaim``)."""
    counts = {ps.name: ps.count for ps in workload.spec.pod_sets}
    if not config.feature_gates.get(GATE_RECLAIMABLE_PODS, True):
        return counts
    reclaimable = workload.status.get("reclaimablePods") or []
    for item in reclaimable if isinstance(reclaimable, list) else []:
        name, count = (item.get("name"), item.get("count")) if isinstance(item, dict) else (None, None)
        if name in counts and isinstance(count, int) and count > 0:
            counts[name] -= min(count, counts[name])
    return counts


def pod_set_usage(pod_set: PodSet, config: Configuration, dra: DraUsage | None = None,
                  count: int | None = None) -> PodSetUsage:
    """One PodSet's usage; ``count`` (default: the PodSet's) is the number of pods charged."""
    pod = Pod(metadata=pod_set.template.metadata, spec=pod_set.template.spec)
    exact = exact_pod_requests(pod)
    resources = config.resources
    if resources is not None and resources.exclude_resource_prefixes:
        prefixes = tuple(resources.exclude_resource_prefixes)
        exact = {name: amount for name, amount in exact.items() if not name.startswith(prefixes)}
    if resources is not None and resources.transformations:
        exact = apply_transformations(exact, resources.transformations)
    per_pod = {name: resource_value(name, amount) for name, amount in exact.items()}
    if dra is not None:
        for name in dra.replaced:
            per_pod.pop(name, None)
        for name, amount in dra.charged.items():
            per_pod[name] = per_pod.get(name, 0) + amount
    per_pod = {name: max(0, amount) for name, amount in sorted(per_pod.items())}
    charged = pod_set.count if count is None else count
    total = {name: amount * charged for name, amount in per_pod.items()}
    return PodSetUsage(pod_set.name, charged, per_pod, total)


def apply_transformations(requests: Mapping[str, Fraction],
                          transformations: Sequence[ResourceTransformation]) -> dict[str, Fraction]:
    """``applyResourceTransformations``: outputs scale with the input's integer value (``Quantity.Value``)."""
    by_input = {t.input: t for t in transformations}
    if not any(name in by_input for name in requests):
        return dict(requests)
    out: dict[str, Fraction] = {}
    for name, amount in requests.items():
        rule = by_input.get(name)
        if rule is None:
            out[name] = out.get(name, Fraction(0)) + amount if name in out else amount
            continue
        if rule.multiply_by and rule.multiply_by in requests:
            amount = amount * math.ceil(requests[rule.multiply_by])
        for output, factor in rule.outputs.items():
            out[output] = out.get(output, Fraction(0)) + Quantity.parse(factor).value * math.ceil(amount)
        if (rule.strategy or "Retain") == "Retain":
            out[name] = amount
    return out


def decode_workload(raw: Mapping[str, object]) -> Workload:
    """The typed view of a Workload built by :mod:`.jobs` (or read from a file)."""
    return msgspec.convert(raw, Workload)

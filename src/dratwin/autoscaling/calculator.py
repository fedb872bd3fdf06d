"""The HPA's replica calculator: one metric's recommendation from the pods' samples.

Semantics of kubernetes/kubernetes ``pkg/controller/podautoscaler/replica_calculator.go`` (release 1.36):

- Pods being deleted or Failed are ignored; Pending pods count as unready; pods without a sample are
  missing. For the CPU resource only, a Running pod is also unready while it is inside the CPU
  initialization period (5 min after start) and not Ready or sampled less than one metric window after
  its Ready transition, or after that period when it is not Ready and never was
  (``--horizontal-pod-autoscaler-cpu-initialization-period``, ``--horizontal-pod-autoscaler-initial-
  readiness-delay`` 30 s).
- The usage ratio is computed over the ready pods with samples. Without missing pods, and without unready
  pods on a scale-up, the recommendation is ``ceil(ratio × ready pods)``, or the current count within the
  tolerance.
- Otherwise missing pods are filled in (a scale-down: at 100 % of their request, or the target when the
  target is above 100 %, for utilization; at the target for averages; a scale-up: at 0), unready pods at 0
  on a scale-up, the ratio is recomputed, and the current count stays when the new ratio is within the
  tolerance or points the other way, or the new count would move against the ratio.
- Utilization is an integer percentage, truncated (``int32(total * 100 / requests)``); per-pod averages are
  milli-values divided as integers, as the controller's int64 quantities are.
- An External metric with an AverageValue target (what KEDA creates) divides the metric's value by the
  target, with the tolerance against the status replica count; no pod is looked at.

Every function returns a :class:`Recommendation`; a metric the controller cannot use is a recommendation
without a count, with the reason (``FailedGetResourceMetric`` and friends, as the HPA's events say).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

PodPhase = Literal["Pending", "Running", "Succeeded", "Failed"]

# kube-controller-manager defaults (cmd/kube-controller-manager/app/options/hpacontroller.go).
CPU_INITIALIZATION_PERIOD_SECONDS = 300.0
INITIAL_READINESS_DELAY_SECONDS = 30.0
DEFAULT_TOLERANCE = 0.1
# Assumption: the window metrics-server reports with each sample equals its default --metric-resolution.
DEFAULT_METRIC_WINDOW_SECONDS = 15.0


@dataclass(frozen=True)
class Tolerances:
    """How far the usage ratio may be from 1 before the HPA scales (KEP-4951: one per direction)."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def holds(self, ratio: float) -> bool:
        return 1.0 - self.scale_down <= ratio <= 1.0 + self.scale_up


@dataclass(frozen=True)
class PodSample:
    """One pod of the scale target as the HPA sees it at a sync.

    ``value`` is the pod's metric sample (CPU usage in cores for a resource metric, the metric's value for a
    Pods metric); ``None`` when the metrics API has no sample for it. ``request`` is the pod's request of the
    resource (the sum over its containers), needed for utilization. Times are simulation seconds. ``count``
    stands for that many pods alike in everything but their names (the calculator counts each; names are
    distinct).
    """

    name: str
    value: float | None
    request: float = 0.0
    phase: PodPhase = "Running"
    ready: bool = True
    deleting: bool = False
    started_at: float | None = 0.0
    ready_changed_at: float | None = 0.0  # lastTransitionTime of the Ready condition; None: no condition
    sampled_at: float | None = None  # the sample's timestamp; None: the sync time
    window: float = DEFAULT_METRIC_WINDOW_SECONDS
    count: int = 1


@dataclass(frozen=True)
class Recommendation:
    """What one metric asks for: a replica count and the rule that gave it, or no count and why."""

    replicas: int | None
    rule: str
    usage: float | None = None  # the observed value: utilization %, per-pod average, or external average

    @property
    def failed(self) -> bool:
        return self.replicas is None


Counted = tuple[float, int, float]  # a sample's value (or the value filled in), its pods, their request each


@dataclass
class _Groups:
    ready: int
    unready: list[PodSample]
    missing: list[PodSample]
    values: list[Counted]  # the samples of the pods that count


def _is_unready_cpu(pod: PodSample, now: float, init_period: float, readiness_delay: float) -> bool:
    if pod.ready_changed_at is None or pod.started_at is None:
        return True
    if pod.started_at + init_period > now:
        sampled = now if pod.sampled_at is None else pod.sampled_at
        return not pod.ready or sampled < pod.ready_changed_at + pod.window
    return not pod.ready and pod.started_at + readiness_delay > pod.ready_changed_at


def _group(
    pods: Sequence[PodSample], now: float, cpu: bool, init_period: float, readiness_delay: float
) -> _Groups:
    groups = _Groups(0, [], [], [])
    for pod in pods:
        if pod.deleting or pod.phase == "Failed":
            continue
        if pod.phase == "Pending":
            groups.unready.append(pod)
            continue
        if pod.value is None:
            groups.missing.append(pod)
            continue
        if cpu and _is_unready_cpu(pod, now, init_period, readiness_delay):
            groups.unready.append(pod)
            continue
        groups.ready += pod.count
        groups.values.append((pod.value, pod.count, pod.request))
    return groups


def _pods(values: list[Counted]) -> int:
    return sum(count for _, count, _ in values)


def _utilization(values: list[Counted]) -> int | None:
    """Integer percent of the summed requests, truncated as the controller's int64 arithmetic does."""
    used = sum(_milli(v) * count for v, count, _ in values)
    requested = sum(_milli(request) * count for _, count, request in values)
    return None if requested == 0 else used * 100 // requested


def _average(values: list[Counted]) -> int:
    """The per-pod average as a milli-value, divided as integers (GetMetricUsageRatio)."""
    return sum(_milli(v) * count for v, count, _ in values) // _pods(values)


def _milli(value: float) -> int:
    # Quantity.MilliValue rounds up; the samples here are floats, so round up what is left after 1e-9.
    return math.ceil(value * 1000 - 1e-9)


def _settle(
    current: int,
    ratio: float,
    new_ratio: float,
    counted: int,
    tolerances: Tolerances,
) -> tuple[int, str]:
    """The second pass after missing and unready pods were filled in."""
    if tolerances.holds(new_ratio):
        return current, "WithinTolerance"
    if (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current, "DirectionReversedByMissingPods"
    replicas = math.ceil(new_ratio * counted)
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current, "DirectionReversedByMissingPods"
    return replicas, "MetricRatio"


def utilization_replicas(
    current: int,
    pods: Sequence[PodSample],
    target_utilization: int,
    *,
    now: float,
    cpu: bool = True,
    tolerances: Tolerances = Tolerances(),
    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD_SECONDS,
    initial_readiness_delay: float = INITIAL_READINESS_DELAY_SECONDS,
) -> Recommendation:
    """A Resource metric with a Utilization target (GetResourceReplicas)."""
    if not pods:
        return Recommendation(None, "FailedGetResourceMetric: no pods returned by selector")
    if any(p.request <= 0 for p in pods):
        return Recommendation(None, "FailedGetResourceMetric: missing request for the resource")
    groups = _group(pods, now, cpu, cpu_initialization_period, initial_readiness_delay)
    if not groups.values:
        return Recommendation(None, "FailedGetResourceMetric: did not receive metrics for any ready pods")
    utilization = _utilization(groups.values)
    assert utilization is not None  # requests are positive
    ratio = utilization / target_utilization
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.holds(ratio):
            return Recommendation(current, "WithinTolerance", utilization)
        return Recommendation(math.ceil(ratio * groups.ready), "MetricRatio", utilization)
    filled = list(groups.values)
    fallback = max(100, target_utilization) / 100
    if ratio != 1.0:  # upstream fills missing pods in only on a definite direction
        filled += [(p.request * fallback if ratio < 1.0 else 0.0, p.count, p.request) for p in groups.missing]
    if scale_up_with_unready:
        filled += [(0.0, p.count, p.request) for p in groups.unready]
    new_utilization = _utilization(filled)
    assert new_utilization is not None
    replicas, rule = _settle(current, ratio, new_utilization / target_utilization, _pods(filled), tolerances)
    return Recommendation(replicas, rule, utilization)


def average_value_replicas(
    current: int,
    pods: Sequence[PodSample],
    target_average: float,
    *,
    now: float,
    tolerances: Tolerances = Tolerances(),
) -> Recommendation:
    """A Pods metric (or a Resource metric with an AverageValue target) per pod (calcPlainMetricReplicas)."""
    if not pods:
        return Recommendation(None, "FailedGetPodsMetric: no pods returned by selector")
    groups = _group(pods, now, False, CPU_INITIALIZATION_PERIOD_SECONDS, INITIAL_READINESS_DELAY_SECONDS)
    if not groups.values:
        return Recommendation(None, "FailedGetPodsMetric: did not receive metrics for any ready pods")
    target = _milli(target_average)
    average = _average(groups.values)
    ratio = average / target
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.holds(ratio):
            return Recommendation(current, "WithinTolerance", average / 1000)
        return Recommendation(math.ceil(ratio * groups.ready), "MetricRatio", average / 1000)
    filled = list(groups.values)
    if ratio != 1.0:
        filled += [(target_average if ratio < 1.0 else 0.0, p.count, p.request) for p in groups.missing]
    if scale_up_with_unready:
        filled += [(0.0, p.count, p.request) for p in groups.unready]
    new_ratio = _average(filled) / target
    replicas, rule = _settle(current, ratio, new_ratio, _pods(filled), tolerances)
    return Recommendation(replicas, rule, average / 1000)


def external_average_replicas(
    status_replicas: int,
    total: float | None,
    target_average: float,
    *,
    tolerances: Tolerances = Tolerances(),
) -> Recommendation:
    """An External metric with an AverageValue target (GetExternalPerPodMetricReplicas), KEDA's default."""
    if total is None:
        return Recommendation(None, "FailedGetExternalMetric: the metrics adapter returned no value")
    usage = _milli(total)
    target = _milli(target_average)
    replicas = status_replicas
    rule = "WithinTolerance"
    # With no replicas the ratio is undefined in Go too (+Inf or NaN): both are outside any tolerance.
    ratio = usage / (target * status_replicas) if status_replicas else math.inf
    if not tolerances.holds(ratio):
        replicas, rule = math.ceil(usage / target), "MetricRatio"
    average = usage / status_replicas / 1000 if status_replicas else None
    return Recommendation(replicas, rule, average)

"""Kubernetes' horizontal pod autoscaler (autoscaling/v2) as a pure decision core.

Semantics of kubernetes/kubernetes ``pkg/controller/podautoscaler/horizontal.go`` (release 1.36), called
once per sync period (``--horizontal-pod-autoscaler-sync-period``, 15 s) by whoever owns the clock:

1. A target scaled to 0 with ``minReplicas`` > 0 is left alone (autoscaling is disabled); a count above
   ``maxReplicas`` or below ``minReplicas`` is brought back to the bound, whatever the metric says.
2. Otherwise the metric's recommendation (see :mod:`dratwin.autoscaling.calculator`) is normalized:
   - without ``spec.behavior`` (the API server then leaves it unset): the largest recommendation of the
     last 5 minutes (``--horizontal-pod-autoscaler-downscale-stabilization``), then at most
     ``max(2 × current, 4)`` and within min/max;
   - with ``spec.behavior`` (defaults filled in as the API server does: scale-up 100 % or 4 pods per 15 s,
     the larger, no window; scale-down 100 % per 15 s after a 300 s window): the recommendation is held
     between the smallest recommendation of the scale-up window and the largest of the scale-down window,
     then limited by the policies of its direction, measured from the replica count at the start of each
     policy's period (scale events of that period undone), combined by ``selectPolicy``.
3. A decision that changes the count is recorded as a scale event (behaviors only).

The controller's recommendation and event history is the one piece of state, owned here: each HPA object
is one :class:`HorizontalPodAutoscaler`. Nothing here reads a clock; ``now`` is passed in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dratwin.autoscaling import behavior as settings
from dratwin.autoscaling.behavior import (
    DOWNSCALE_STABILIZATION_SECONDS,
    AutoscalerSettingsError,
    Behavior,
    ScalingRules,
)
from dratwin.autoscaling.calculator import (
    CPU_INITIALIZATION_PERIOD_SECONDS,
    DEFAULT_TOLERANCE,
    INITIAL_READINESS_DELAY_SECONDS,
    PodSample,
    Recommendation,
    Tolerances,
    average_value_replicas,
    external_average_replicas,
    utilization_replicas,
)
from dratwin.scenario.model import AutoscalerSpec

MetricSource = Literal["Resource", "Pods", "External"]

SYNC_PERIOD_SECONDS = 15.0  # --horizontal-pod-autoscaler-sync-period
# Without spec.behavior: scaleUpLimitFactor and scaleUpLimitMinimum of horizontal.go.
LEGACY_SCALE_UP_FACTOR = 2.0
LEGACY_SCALE_UP_MINIMUM = 4.0


@dataclass(frozen=True)
class MetricSpec:
    """The one metric the HPA scales on.

    ``Resource``: ``target`` is an average utilization in percent of the pods' requests (``cpu`` says
    whether the CPU-only readiness rules apply). ``Pods``: ``target`` is the per-pod average value.
    ``External``: ``target`` is the AverageValue per replica (what KEDA creates for its triggers).
    """

    source: MetricSource
    target: float
    cpu: bool = True


HPA_SETTINGS = (
    "behavior",
    "tolerance",
    "syncPeriodSeconds",
    "downscaleStabilizationSeconds",
    "cpuInitializationPeriodSeconds",
    "initialReadinessDelaySeconds",
)


@dataclass(frozen=True)
class HpaConfig:
    metric: MetricSpec
    min_replicas: int = 1
    max_replicas: int = 10
    behavior: Behavior | None = None  # None: no spec.behavior, the controller's legacy rules
    tolerance: float = DEFAULT_TOLERANCE  # --horizontal-pod-autoscaler-tolerance
    downscale_stabilization_seconds: float = DOWNSCALE_STABILIZATION_SECONDS
    sync_period_seconds: float = SYNC_PERIOD_SECONDS
    cpu_initialization_period_seconds: float = CPU_INITIALIZATION_PERIOD_SECONDS
    initial_readiness_delay_seconds: float = INITIAL_READINESS_DELAY_SECONDS

    @classmethod
    def from_spec(cls, spec: AutoscalerSpec) -> HpaConfig:
        """The HPA a scenario's ``kind: hpa`` autoscaler describes.

        ``cpu`` is a Resource metric with a Utilization target; ``DCGM_FI_DEV_GPU_UTIL`` a Pods metric with an
        AverageValue target (the DCGM exporter's series served per pod by a custom-metrics adapter).
        ``settings`` holds the HPA's own knobs in camelCase: ``behavior`` (as in the HPA object), and the
        controller's flags ``tolerance``, ``syncPeriodSeconds``, ``downscaleStabilizationSeconds``,
        ``cpuInitializationPeriodSeconds``, ``initialReadinessDelaySeconds``.
        """
        metric = MetricSpec("Resource", spec.target) if spec.metric == "cpu" else MetricSpec("Pods", spec.target, False)
        return cls.from_settings(metric, spec.min_replicas, spec.max_replicas, spec.settings)

    @classmethod
    def from_settings(
        cls,
        metric: MetricSpec,
        min_replicas: int,
        max_replicas: int,
        raw: Mapping[str, Any],
        where: str = "autoscaler",
        other_keys: tuple[str, ...] = (),
    ) -> HpaConfig:
        """The config from the camelCase ``settings`` of the autoscaler at ``where``; ``other_keys`` are the
        caller's own (KEDA's)."""
        path = f"{where}.settings"
        settings.known_keys(raw, HPA_SETTINGS + other_keys, path)
        if min_replicas < 1 or max_replicas < min_replicas:
            raise AutoscalerSettingsError(
                f"{where}.min_replicas",
                f"an HPA needs 1 <= min_replicas <= max_replicas, got {min_replicas} and {max_replicas}",
                "scaling to zero is KEDA's: use kind: keda",
            )
        if metric.target <= 0:
            raise AutoscalerSettingsError(f"{where}.target", f"must be positive, got {metric.target:g}")
        window = settings.number(raw, "downscaleStabilizationSeconds", path, DOWNSCALE_STABILIZATION_SECONDS)
        return cls(
            metric,
            min_replicas,
            max_replicas,
            settings.behavior(raw["behavior"], f"{path}.behavior", window) if "behavior" in raw else None,
            settings.number(raw, "tolerance", path, DEFAULT_TOLERANCE),
            window,
            settings.number(raw, "syncPeriodSeconds", path, SYNC_PERIOD_SECONDS, minimum=1),
            settings.number(raw, "cpuInitializationPeriodSeconds", path, CPU_INITIALIZATION_PERIOD_SECONDS),
            settings.number(raw, "initialReadinessDelaySeconds", path, INITIAL_READINESS_DELAY_SECONDS),
        )

    def tolerances(self) -> Tolerances:
        if self.behavior is None:
            return Tolerances(self.tolerance, self.tolerance)
        down, up = self.behavior.scale_down.tolerance, self.behavior.scale_up.tolerance
        return Tolerances(self.tolerance if down is None else down, self.tolerance if up is None else up)


@dataclass(frozen=True)
class ScaleDecision:
    """One sync's outcome: the count to set, the rule that decided it, and what the metric said.

    ``reason`` names the deciding rule in the controller's words (``MetricRatio``, ``WithinTolerance``,
    ``ScaleDownStabilized``, ``ScaleUpLimit``, ``TooManyReplicas``, ``BelowMinReplicas``,
    ``FailedGetPodsMetric: ...``, KEDA's ``ScaledFromZero`` ...); ``recommendation`` is the metric's own
    count before stabilization and limits (None when the metric failed or was not asked).
    """

    at: float
    current_replicas: int
    desired_replicas: int
    reason: str
    recommendation: int | None = None
    metric_rule: str | None = None
    usage: float | None = None

    @property
    def rescale(self) -> bool:
        return self.desired_replicas != self.current_replicas


@dataclass
class _History:
    recommendations: list[tuple[float, int]] = field(default_factory=list)
    scale_up_events: list[tuple[float, int]] = field(default_factory=list)
    scale_down_events: list[tuple[float, int]] = field(default_factory=list)


class HorizontalPodAutoscaler:
    """One HPA object's controller state; :meth:`reconcile` is one sync."""

    def __init__(self, config: HpaConfig) -> None:
        self.config = config
        self._tolerances = config.tolerances()  # the config is frozen: computed once, read at every sync
        self._history = _History()

    def reconcile(
        self,
        now: float,
        replicas: int,
        *,
        pods: Sequence[PodSample] = (),
        external_value: float | None = None,
        status_replicas: int | None = None,
    ) -> ScaleDecision:
        """The sync at ``now`` of a target whose spec.replicas is ``replicas``.

        ``pods`` are the target's pods (Resource and Pods metrics); ``external_value`` is the External
        metric's value (the total the adapter returns); ``status_replicas`` the target's status.replicas
        (defaults to ``replicas``).
        """
        cfg = self.config
        if replicas == 0 and cfg.min_replicas != 0:
            return ScaleDecision(now, replicas, replicas, "ScalingDisabled")
        if replicas > cfg.max_replicas:
            return self._record(ScaleDecision(now, replicas, cfg.max_replicas, "AboveMaxReplicas"))
        if replicas < cfg.min_replicas:
            return self._record(ScaleDecision(now, replicas, cfg.min_replicas, "BelowMinReplicas"))
        status = replicas if status_replicas is None else status_replicas
        metric = self._recommend(now, replicas, pods, external_value, status)
        if metric.replicas is None:
            return ScaleDecision(now, replicas, replicas, metric.rule, None, metric.rule, metric.usage)
        if cfg.behavior is None:
            desired, reason = self._normalize_legacy(now, replicas, metric.replicas)
        else:
            desired, reason = self._normalize_with_behavior(now, replicas, metric.replicas, cfg.behavior)
        return self._record(
            ScaleDecision(now, replicas, desired, reason or metric.rule, metric.replicas, metric.rule, metric.usage)
        )

    # ---- the metric ------------------------------------------------------------------------------

    def _recommend(
        self, now: float, replicas: int, pods: Sequence[PodSample], external: float | None, status: int
    ) -> Recommendation:
        cfg, tolerances = self.config, self._tolerances
        metric = cfg.metric
        if metric.source == "Resource":
            return utilization_replicas(
                replicas,
                pods,
                round(metric.target),
                now=now,
                cpu=metric.cpu,
                tolerances=tolerances,
                cpu_initialization_period=cfg.cpu_initialization_period_seconds,
                initial_readiness_delay=cfg.initial_readiness_delay_seconds,
            )
        if metric.source == "Pods":
            return average_value_replicas(replicas, pods, metric.target, now=now, tolerances=tolerances)
        return external_average_replicas(status, external, metric.target, tolerances=tolerances)

    # ---- without spec.behavior -------------------------------------------------------------------

    def _normalize_legacy(self, now: float, current: int, recommended: int) -> tuple[int, str | None]:
        cutoff = now - self.config.downscale_stabilization_seconds
        kept = [entry for entry in self._history.recommendations if entry[0] >= cutoff]
        stabilized = max(recommended, max((r for _, r in kept), default=recommended))
        kept.append((now, recommended))
        self._history.recommendations = kept
        reason = "ScaleDownStabilized" if stabilized != recommended else None
        up_limit = int(max(LEGACY_SCALE_UP_FACTOR * current, LEGACY_SCALE_UP_MINIMUM))
        maximum, limit_reason = (up_limit, "ScaleUpLimit")
        if self.config.max_replicas <= up_limit:
            maximum, limit_reason = self.config.max_replicas, "TooManyReplicas"
        if stabilized < self.config.min_replicas:
            return self.config.min_replicas, "TooFewReplicas"
        if stabilized > maximum:
            return maximum, limit_reason
        return stabilized, reason

    # ---- with spec.behavior ----------------------------------------------------------------------

    def _normalize_with_behavior(
        self, now: float, current: int, recommended: int, behavior: Behavior
    ) -> tuple[int, str | None]:
        stabilized = self._stabilize(now, current, recommended, behavior)
        reason: str | None = None
        if stabilized != recommended:
            reason = "ScaleUpStabilized" if recommended >= current else "ScaleDownStabilized"
        limited, limit_reason = self._limit_rate(now, current, stabilized, behavior)
        return limited, (limit_reason if limited != stabilized else reason)

    def _stabilize(self, now: float, current: int, recommended: int, behavior: Behavior) -> int:
        up_cutoff = now - behavior.scale_up.stabilization_window_seconds
        down_cutoff = now - behavior.scale_down.stabilization_window_seconds
        up, down = recommended, recommended
        for at, value in self._history.recommendations:
            if at > up_cutoff:
                up = min(up, value)
            if at > down_cutoff:
                down = max(down, value)
        oldest = min(up_cutoff, down_cutoff)
        self._history.recommendations = [
            *((t, r) for t, r in self._history.recommendations if t >= oldest),
            (now, recommended),
        ]
        return min(max(current, up), down)

    def _limit_rate(self, now: float, current: int, desired: int, behavior: Behavior) -> tuple[int, str]:
        cfg = self.config
        if desired > current:
            limit = max(self._scale_up_limit(now, current, behavior.scale_up), current)
            if cfg.max_replicas > limit:
                return min(desired, limit), "ScaleUpLimit"
            return min(desired, cfg.max_replicas), "TooManyReplicas"
        if desired < current:
            limit = min(self._scale_down_limit(now, current, behavior.scale_down), current)
            if cfg.min_replicas < limit:
                return max(desired, limit), "ScaleDownLimit"
            return max(desired, cfg.min_replicas), "TooFewReplicas"
        return desired, "DesiredWithinRange"

    def _period_start(self, now: float, current: int, period: float) -> int:
        cutoff = now - period
        added = sum(change for at, change in self._history.scale_up_events if at > cutoff)
        deleted = sum(change for at, change in self._history.scale_down_events if at > cutoff)
        return current - added + deleted

    def _scale_up_limit(self, now: float, current: int, rules: ScalingRules) -> int:
        if rules.select_policy == "Disabled":
            return current
        proposals = []
        for policy in rules.policies:
            start = self._period_start(now, current, policy.period_seconds)
            if policy.type == "Pods":
                proposals.append(start + policy.value)
            else:  # rounded up so that a small target can always grow
                proposals.append(math.ceil(start * (1 + policy.value / 100)))
        return min(proposals) if rules.select_policy == "Min" else max(proposals)

    def _scale_down_limit(self, now: float, current: int, rules: ScalingRules) -> int:
        if rules.select_policy == "Disabled":
            return current
        proposals = []
        for policy in rules.policies:
            start = self._period_start(now, current, policy.period_seconds)
            if policy.type == "Pods":
                proposals.append(start - policy.value)
            else:  # truncated toward zero, as Go's int32() conversion does
                proposals.append(int(start * (1 - policy.value / 100)))
        # The smallest change on a scale-down is the largest count.
        return max(proposals) if rules.select_policy == "Min" else min(proposals)

    # ---- scale events ----------------------------------------------------------------------------

    def _record(self, decision: ScaleDecision) -> ScaleDecision:
        behavior = self.config.behavior
        if behavior is None or not decision.rescale:
            return decision
        change = decision.desired_replicas - decision.current_replicas
        history, now = self._history, decision.at
        if change > 0:
            cutoff = now - _longest_period(behavior.scale_up)
            history.scale_up_events = [*((t, c) for t, c in history.scale_up_events if t >= cutoff), (now, change)]
        else:
            cutoff = now - _longest_period(behavior.scale_down)
            history.scale_down_events = [
                *((t, c) for t, c in history.scale_down_events if t >= cutoff),
                (now, -change),
            ]
        return decision


def _longest_period(rules: ScalingRules) -> float:
    return max((p.period_seconds for p in rules.policies), default=0.0)

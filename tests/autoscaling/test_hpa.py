"""The HPA controller over successive syncs: bounds, stabilization and scaling policies.

Each case follows kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go (release 1.36):
reconcileAutoscaler, normalizeDesiredReplicas (no spec.behavior) and normalizeDesiredReplicasWithBehaviors,
and the defaults of pkg/apis/autoscaling/v2/defaults.go. A case is a list of syncs; each sync gives the
time, the current replicas and the pods' per-pod metric, and expects a count and the deciding rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.autoscaling import autoscaler, cpu_pods, value_pods

from dratwin.autoscaling import AutoscalerSettingsError, Behavior, HorizontalPodAutoscaler, HpaConfig, MetricSpec
from dratwin.autoscaling.behavior import DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP, ScalingPolicy, ScalingRules

GPU_UTIL = MetricSpec("Pods", 50.0, cpu=False)


@dataclass(frozen=True)
class Sync:
    at: float
    replicas: int
    per_pod: float  # every pod's metric value
    desired: int
    reason: str


@dataclass(frozen=True)
class Case:
    name: str
    syncs: tuple[Sync, ...]
    behavior: Behavior | None = None
    bounds: tuple[int, int] = (1, 10)
    config: dict[str, Any] = field(default_factory=dict)


def _rules(base: ScalingRules, **changes: Any) -> ScalingRules:
    values = {
        "stabilization_window_seconds": base.stabilization_window_seconds,
        "policies": base.policies,
        "select_policy": base.select_policy,
        **changes,
    }
    return ScalingRules(**values)


CASES = [
    # reconcileAutoscaler: spec.replicas 0 with minReplicas > 0 disables autoscaling.
    Case("zero-replicas-disable-autoscaling", (Sync(0, 0, 100, 0, "ScalingDisabled"),)),
    # Above maxReplicas or below minReplicas the bound wins, whatever the metric.
    Case("above-max", (Sync(0, 12, 10, 10, "AboveMaxReplicas"),)),
    Case("below-min", (Sync(0, 1, 10, 2, "BelowMinReplicas"),), bounds=(2, 10)),
    # Without behavior: the largest recommendation of the last 300 s holds a scale-down (stabilizeRecommendation;
    # a sample exactly at the cutoff still counts: !Before(cutoff)).
    Case(
        "legacy-stabilization-keeps-max",
        (
            Sync(0, 8, 50, 8, "WithinTolerance"),
            Sync(15, 8, 12.5, 8, "ScaleDownStabilized"),
            Sync(300, 8, 12.5, 8, "ScaleDownStabilized"),
            Sync(315, 8, 12.5, 2, "MetricRatio"),
        ),
    ),
    # Without behavior: at most max(2 × current, 4) per sync (calculateScaleUpLimit), then maxReplicas.
    Case("legacy-scale-up-limit", (Sync(0, 1, 500, 4, "ScaleUpLimit"), Sync(15, 4, 500, 8, "ScaleUpLimit"))),
    Case("legacy-too-many", (Sync(0, 4, 500, 6, "TooManyReplicas"),), bounds=(1, 6)),
    # With behavior (defaults): the scale-down window keeps the max; a recommendation exactly 300 s old no
    # longer counts (After(cutoff)), and 100 % per 15 s lets it go down at once.
    Case(
        "behavior-stabilization-keeps-max",
        (
            Sync(0, 8, 50, 8, "WithinTolerance"),
            Sync(15, 8, 12.5, 8, "ScaleDownStabilized"),
            Sync(285, 8, 12.5, 8, "ScaleDownStabilized"),
            Sync(300, 8, 12.5, 2, "MetricRatio"),
        ),
        behavior=Behavior(),
    ),
    # Default scale-up: max(100 %, 4 pods) per 15 s from the count at the period's start: 2 → 6, then within
    # the same period nothing more (6 - 4 added = 2 at the start), then 6 → 12.
    Case(
        "default-scale-up-policy",
        (
            Sync(0, 2, 500, 6, "ScaleUpLimit"),
            Sync(10, 6, 500, 6, "ScaleUpLimit"),
            Sync(15, 6, 500, 12, "ScaleUpLimit"),
        ),
        behavior=Behavior(),
        bounds=(1, 50),
    ),
    # selectPolicy Min takes the smaller change: min(2 × 2, 2 + 4) = 4.
    Case(
        "select-policy-min",
        (Sync(0, 2, 500, 4, "ScaleUpLimit"),),
        behavior=Behavior(scale_up=_rules(DEFAULT_SCALE_UP, select_policy="Min")),
        bounds=(1, 50),
    ),
    # selectPolicy Disabled: no scaling in that direction.
    Case(
        "scale-down-disabled",
        (Sync(0, 6, 5, 6, "ScaleDownLimit"),),
        behavior=Behavior(
            scale_down=_rules(DEFAULT_SCALE_DOWN, stabilization_window_seconds=0, select_policy="Disabled")
        ),
    ),
    # A Pods policy of 1 per 60 s: one pod per minute however low the metric.
    Case(
        "scale-down-one-pod-per-minute",
        (
            Sync(0, 5, 5, 4, "ScaleDownLimit"),
            Sync(30, 4, 5, 4, "ScaleDownLimit"),
            Sync(61, 4, 5, 3, "ScaleDownLimit"),
        ),
        behavior=Behavior(
            scale_down=ScalingRules(0, (ScalingPolicy("Pods", 1, 60),)),
        ),
    ),
    # A scale-up stabilization window takes the smallest recent recommendation.
    Case(
        "scale-up-window-keeps-min",
        (
            Sync(0, 2, 50, 2, "WithinTolerance"),
            Sync(15, 2, 100, 2, "ScaleUpStabilized"),
            Sync(61, 2, 100, 4, "MetricRatio"),
        ),
        behavior=Behavior(scale_up=_rules(DEFAULT_SCALE_UP, stabilization_window_seconds=60)),
    ),
    # Within min/max: the limit names the bound when the policy allows more (TooManyReplicas).
    Case(
        "behavior-too-many",
        (Sync(0, 4, 500, 5, "TooManyReplicas"),),
        behavior=Behavior(),
        bounds=(1, 5),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_syncs(case: Case) -> None:
    hpa = HorizontalPodAutoscaler(HpaConfig(GPU_UTIL, *case.bounds, behavior=case.behavior, **case.config))
    for sync in case.syncs:
        decision = hpa.reconcile(sync.at, sync.replicas, pods=value_pods(*[sync.per_pod] * max(sync.replicas, 1)))
        assert (decision.desired_replicas, decision.reason) == (sync.desired, sync.reason), f"sync at {sync.at}"


def test_failed_metric_keeps_the_count() -> None:
    # computeReplicasForMetrics: every metric invalid → no rescale, the error is the reason.
    hpa = HorizontalPodAutoscaler(HpaConfig(MetricSpec("Resource", 80)))
    decision = hpa.reconcile(0, 3, pods=cpu_pods(None, None, None))
    assert not decision.rescale
    assert decision.reason.startswith("FailedGetResourceMetric")


SPEC_CASES = [
    ("cpu-is-a-resource-utilization", autoscaler(metric="cpu", target=70), MetricSpec("Resource", 70), None),
    (
        "dcgm-is-a-pods-average",
        autoscaler(target=60, behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}),
        MetricSpec("Pods", 60, cpu=False),
        Behavior(scale_down=ScalingRules(60, DEFAULT_SCALE_DOWN.policies)),
    ),
]


@pytest.mark.parametrize(("spec", "metric", "behavior"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_from_spec(spec: Any, metric: MetricSpec, behavior: Behavior | None) -> None:
    config = HpaConfig.from_spec(spec)
    assert (config.metric, config.behavior) == (metric, behavior)
    assert (config.sync_period_seconds, config.tolerance) == (15.0, 0.1)


BAD_SPECS = [
    ("unknown-setting", autoscaler(syncPeriod=30), "autoscaler.settings.syncPeriod"),
    (
        "bad-policy-type",
        autoscaler(behavior={"scaleUp": {"policies": [{"type": "Pod", "value": 1, "periodSeconds": 15}]}}),
        "autoscaler.settings.behavior.scaleUp.policies[0].type",
    ),
    ("zero-minimum", autoscaler(min_replicas=0), "autoscaler.min_replicas"),
]


@pytest.mark.parametrize(("spec", "path"), [c[1:] for c in BAD_SPECS], ids=[c[0] for c in BAD_SPECS])
def test_bad_settings_name_the_field(spec: Any, path: str) -> None:
    with pytest.raises(AutoscalerSettingsError) as error:
        HpaConfig.from_spec(spec)
    assert error.value.path == path

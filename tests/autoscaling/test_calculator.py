"""The HPA's replica calculator, one metric at a time.

Each case follows kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go (release 1.36)
and the HPA docs' "Algorithm details" (kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from tests.builders.autoscaling import cpu_pods, pending, pod, value_pods

from dratwin.autoscaling.calculator import (
    Recommendation,
    Tolerances,
    average_value_replicas,
    external_average_replicas,
    utilization_replicas,
)


@dataclass(frozen=True)
class Case:
    name: str
    recommend: Callable[[], Recommendation]
    replicas: int | None
    rule: str


CASES = [
    # GetResourceReplicas: |1 - ratio| <= 0.1 keeps the count (85 / 80 = 1.06).
    Case("tolerance-holds", lambda: utilization_replicas(4, cpu_pods(85, 85, 85, 85), 80, now=0), 4, "WithinTolerance"),
    # ceil(4 × 90 / 80) = ceil(4.5).
    Case("outside-tolerance", lambda: utilization_replicas(4, cpu_pods(90, 90, 90, 90), 80, now=0), 5, "MetricRatio"),
    # GetResourceUtilizationRatio truncates: 88.9 % is 88 %, 88 / 80 = 1.1 is still within the tolerance.
    Case(
        "utilization-truncated",
        lambda: utilization_replicas(2, cpu_pods(88.9, 88.9), 80, now=0),
        2,
        "WithinTolerance",
    ),
    # Scale-down with a missing pod: it counts at 100 % of its request, (4 × 10 + 100) / 5 = 28 % → ceil(5 × .56).
    Case(
        "missing-pod-on-scale-down-counts-full",
        lambda: utilization_replicas(5, cpu_pods(10, 10, 10, 10, None), 50, now=0),
        3,
        "MetricRatio",
    ),
    # Scale-up with missing pods: they count at 0, (2 × 100) / 4 = 50 % is the target: no change.
    Case(
        "missing-pods-on-scale-up-count-zero",
        lambda: utilization_replicas(4, cpu_pods(100, 100, None, None), 50, now=0),
        4,
        "WithinTolerance",
    ),
    # Scale-up with an unready (Pending) pod: it counts at 0, 200 / 3 = 66 % → ceil(3 × 66 / 50) = ceil(3.96).
    Case(
        "unready-pod-on-scale-up-counts-zero",
        lambda: utilization_replicas(3, [*cpu_pods(100, 100), pending("new")], 50, now=0),
        4,
        "MetricRatio",
    ),
    # Scale-down with unready pods: they are left out, ceil(2 × 10 / 50) = 1.
    Case(
        "unready-pods-left-out-on-scale-down",
        lambda: utilization_replicas(4, [*cpu_pods(10, 10), pending("a"), pending("b")], 50, now=0),
        1,
        "MetricRatio",
    ),
    # The fill-in would reverse the direction: (2 × 100 + 0 + 0) / 4 = 50 % of an 80 % target → stay.
    Case(
        "fill-in-reverses-direction",
        lambda: utilization_replicas(4, cpu_pods(100, 100, None, None), 80, now=0),
        4,
        "DirectionReversedByMissingPods",
    ),
    # groupPods, CPU only: inside the 5-minute initialization period a pod whose sample is less than one
    # metric window after its Ready transition is unready; on a scale-up it counts at 0.
    Case(
        "cpu-sample-too-soon-after-ready",
        lambda: utilization_replicas(
            2,
            [*cpu_pods(100), pod("warm", 1.0, started_at=-60.0, ready_changed_at=-10.0)],
            50,
            now=0,
        ),
        2,
        "WithinTolerance",
    ),
    # The same pod on a Pods metric is ready: the initialization rules are the CPU resource's only.
    Case(
        "pods-metric-ignores-cpu-initialization",
        lambda: average_value_replicas(
            2, [*value_pods(100), pod("warm", 100, started_at=-60.0, ready_changed_at=-10.0)], 50, now=0
        ),
        4,
        "MetricRatio",
    ),
    # A pod Failed or being deleted is ignored altogether.
    Case(
        "failed-and-deleting-ignored",
        lambda: utilization_replicas(
            3, [*cpu_pods(40), pod("gone", None, phase="Failed"), pod("bye", None, deleting=True)], 80, now=0
        ),
        1,
        "MetricRatio",
    ),
    Case(
        "no-samples",
        lambda: utilization_replicas(2, cpu_pods(None, None), 80, now=0),
        None,
        "FailedGetResourceMetric",
    ),
    Case("no-pods", lambda: average_value_replicas(2, [], 60, now=0), None, "FailedGetPodsMetric"),
    # calcPlainMetricReplicas: DCGM utilization per pod, average 90 of a 60 target → ceil(3 × 1.5).
    Case("pods-average", lambda: average_value_replicas(3, value_pods(90, 90, 90), 60, now=0), 5, "MetricRatio"),
    # Scale-down with a missing pod on a Pods metric: it counts at the target, (20 + 60) / 2 = 40 → ceil(2 × 40/60).
    Case(
        "pods-missing-counts-target",
        lambda: average_value_replicas(2, value_pods(20, None), 60, now=0),
        2,
        "MetricRatio",
    ),
    # GetExternalPerPodMetricReplicas: ceil(250 / 50), tolerance against the status replicas.
    Case("external-average", lambda: external_average_replicas(2, 250, 50), 5, "MetricRatio"),
    Case("external-within-tolerance", lambda: external_average_replicas(5, 260, 50), 5, "WithinTolerance"),
    Case("external-missing", lambda: external_average_replicas(5, None, 50), None, "FailedGetExternalMetric"),
    # KEP-4951: a scale-up tolerance of 0 acts on 5 % above the target (84 / 80), ceil(4 × 1.05).
    Case(
        "configurable-scale-up-tolerance",
        lambda: utilization_replicas(4, cpu_pods(84, 84, 84, 84), 80, now=0, tolerances=Tolerances(0.1, 0.0)),
        5,
        "MetricRatio",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_recommendation(case: Case) -> None:
    result = case.recommend()
    assert result.replicas == case.replicas
    assert result.rule.startswith(case.rule)


def test_missing_request_is_an_error_value() -> None:
    # calculatePodRequests: a container without a request for the resource fails the metric.
    result = utilization_replicas(2, [pod("a", 0.5, request=0.0)], 80, now=0)
    assert result.failed and "missing request" in result.rule

"""A sample that counts several pods alike decides as those pods one by one would (what a sync of a large
replica set passes instead of a sample per pod)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.builders.autoscaling import one_by_one, pod

from dratwin.autoscaling.calculator import PodSample, Recommendation, average_value_replicas, utilization_replicas


@dataclass(frozen=True)
class Case:
    name: str
    samples: list[PodSample]
    current: int
    cpu_target: int | None  # a CPU utilization target in percent; None: a Pods metric with a target of 60
    expected: tuple[int, str]


RUNNING_LONG = {"started_at": -3600.0, "ready_changed_at": -3600.0}
CASES = [
    # 90 against 60 on three pods: ceil(1.5 × 3) = 5.
    Case("pods-metric-all-alike", [pod("p", 90.0, count=3, **RUNNING_LONG)], 3, None, (5, "MetricRatio")),
    # 30, 30 and a pod without a sample (filled in at the target on a scale-down): 40 on average, 2/3 of the
    # target, ceil(2/3 × 3) = 2; the Pending pod is not filled in on a scale-down.
    Case("pods-metric-missing-and-pending",
         [pod("p", 30.0, count=2), pod("m", None), pod("q", None, phase="Pending", ready=False, count=1)],
         4, None, (2, "MetricRatio")),
    # 90 % CPU on two pods with two Pending: on a scale-up the Pending ones count at 0, 45 % < 60 %: the
    # direction reverses, the count stays.
    Case("cpu-scale-up-with-unready",
         [pod("p", 0.9, 1.0, count=2, **RUNNING_LONG), pod("q", None, 1.0, phase="Pending", ready=False, count=2)],
         4, 60, (4, "DirectionReversedByMissingPods")),
    # 80 % on three pods, 40 % on one: 70 %, ceil(70/50 × 4) = 6.
    Case("cpu-two-groups", [pod("a", 0.8, 1.0, count=3, **RUNNING_LONG), pod("b", 0.4, 1.0, **RUNNING_LONG)],
         4, 50, (6, "MetricRatio")),
]


def _recommend(case: Case, samples: list[PodSample]) -> Recommendation:
    if case.cpu_target is None:
        return average_value_replicas(case.current, samples, 60.0, now=0.0)
    return utilization_replicas(case.current, samples, case.cpu_target, now=0.0)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_counted_sample_decides_as_its_pods_do(case: Case) -> None:
    counted = _recommend(case, case.samples)
    assert (counted.replicas, counted.rule) == case.expected
    assert counted == _recommend(case, one_by_one(case.samples))

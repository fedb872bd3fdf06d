"""What Kueue adjusts before it counts a Workload: its namespace's LimitRange defaults (pkg/workload/
resources.go handlePodLimitRange and its cases in resources_test.go TestAdjustResources; pkg/util/limitrange
Summarize) and the pods that will not run again (pkg/workload/workload.go podSetsCountsAfterReclaim,
status.reclaimablePods), at Kueue ff69552."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import configuration, container, pod_set, pod_spec, workload

from dratwin.api.core import LimitRange
from dratwin.api.kueue import Configuration, Workload
from dratwin.kueue.usage import WorkloadUsage, workload_usage

Wire = dict[str, Any]


def _limit_range(name: str = "foo", namespace: str = "team", kind: str = "Container", **values: Wire) -> LimitRange:
    """A LimitRange of one item; ``values``: default / defaultRequest / max / min → resource list."""
    return msgspec.convert({"metadata": {"name": name, "namespace": namespace},
                            "spec": {"limits": [{"type": kind, **values}]}}, LimitRange)


CPU_4_3 = _limit_range(default={"cpu": "4"}, defaultRequest={"cpu": "3"}, max={"cpu": "5"}, min={"cpu": "2"})
EMPTY_INIT = {"initContainers": [{"name": "init", "image": "busybox"}]}


@dataclass(frozen=True)
class LimitCase:
    name: str
    cite: str
    pod: Wire
    limit_ranges: list[LimitRange]
    cpu: int | None  # the pod's cpu usage in millicores (None: no cpu counted)


LIMIT_CASES = [
    LimitCase("defaults-fill-an-empty-container", "TestAdjustResources 'Handle container limit range' a: limit "
              "4 and request 3 in the container and the init container", pod_spec(**EMPTY_INIT), [CPU_4_3], 3000),
    LimitCase("default-request-before-limit-as-request", "'Handle container limit range' b: limit 6 kept, the "
              "request is defaultRequest 3 (LimitRange before handleLimitsToRequests)",
              pod_spec(container(limits={"cpu": "6"}), **EMPTY_INIT), [CPU_4_3], 3000),
    LimitCase("own-request-kept-init-defaulted", "'Handle container limit range' c: request 1 kept; the init "
              "container's defaulted 3 is the peak", pod_spec(container({"cpu": "1"}), **EMPTY_INIT), [CPU_4_3], 3000),
    LimitCase("own-request-kept", "MergeResourceListKeepFirst: the container's own values win",
              pod_spec(container({"cpu": "1"})), [CPU_4_3], 1000),
    LimitCase("without-limit-range-limit-stands-for-request", "handleLimitsToRequests",
              pod_spec(container(limits={"cpu": "6"})), [], 6000),
    LimitCase("default-limit-alone-becomes-the-request", "LimitRange default, then handleLimitsToRequests",
              pod_spec(container()), [_limit_range(default={"cpu": "2"})], 2000),
    LimitCase("other-namespace-ignored", "handlePodLimitRange lists the Workload's namespace only",
              pod_spec(container()), [_limit_range(namespace="other", default={"cpu": "2"})], None),
    LimitCase("pod-type-only-for-pod-level-resources", "'Handle pod limit range': containers unchanged",
              pod_spec(container()), [_limit_range(kind="Pod", default={"cpu": "4"}, defaultRequest={"cpu": "3"})],
              None),
    LimitCase("empty-limit-range", "'Handle empty container limit range'", pod_spec(container({"cpu": "1"})),
              [_limit_range()], 1000),
    LimitCase("first-limit-range-wins", "limitrange.Summarize: Default and DefaultRequest keep the first",
              pod_spec(container()), [_limit_range("b", defaultRequest={"cpu": "5"}),
                                      _limit_range("a", defaultRequest={"cpu": "2"})], 2000),
]


@pytest.mark.parametrize("case", LIMIT_CASES, ids=lambda c: c.name)
def test_limit_range_defaults(case: LimitCase) -> None:
    wl = msgspec.convert(workload("w", pod_set(spec=case.pod)), Workload)
    usage = workload_usage(wl, limit_ranges=case.limit_ranges)
    assert isinstance(usage, WorkloadUsage), usage
    assert usage.total().get("cpu") == case.cpu, case.cite


@dataclass(frozen=True)
class ReclaimCase:
    name: str
    cite: str
    reclaimable: list[Wire]
    counts: dict[str, int]  # PodSet → pods charged
    gates: dict[str, bool] = field(default_factory=dict)


RECLAIM_CASES = [
    ReclaimCase("none", "no status.reclaimablePods", [], {"main": 4, "workers": 3}),
    ReclaimCase("count-reduced", "podSetsCountsAfterReclaim: count - reclaimable", [{"name": "workers", "count": 2}],
                {"main": 4, "workers": 1}),
    ReclaimCase("never-below-zero", "podSetsCountsAfterReclaim: min(rc, count) (kueue#12670)",
                [{"name": "main", "count": 9}], {"main": 0, "workers": 3}),
    ReclaimCase("unknown-pod-set-ignored", "only PodSets of the Workload", [{"name": "gone", "count": 1}],
                {"main": 4, "workers": 3}),
    ReclaimCase("gate-off", "features.ReclaimablePods disabled: the full counts",
                [{"name": "workers", "count": 2}], {"main": 4, "workers": 3}, {"ReclaimablePods": False}),
]


@pytest.mark.parametrize("case", RECLAIM_CASES, ids=lambda c: c.name)
def test_reclaimable_pods(case: ReclaimCase) -> None:
    spec = pod_spec(container({"cpu": "1"}))
    wire = workload("w", pod_set("main", 4, spec), pod_set("workers", 3, spec))
    wire["status"] = {"reclaimablePods": case.reclaimable}
    config = msgspec.convert(configuration(featureGates=case.gates), Configuration)
    usage = workload_usage(msgspec.convert(wire, Workload), config)
    assert isinstance(usage, WorkloadUsage), usage
    assert {p.name: p.count for p in usage.pod_sets} == case.counts, case.cite
    assert {p.name: p.total.get("cpu", 0) for p in usage.pod_sets} == {k: v * 1000 for k, v in case.counts.items()}

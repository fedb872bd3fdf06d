"""Kueue's fair sharing: the dominant resource share of ClusterQueues and Cohorts (pkg/cache/scheduler/
fair_sharing.go, its cases in fair_sharing_test.go TestDominantResourceShare) at Kueue ff69552; concept:
site/content/en/docs/concepts/fair_sharing.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import cluster_queue, cohort, flavor_quotas, group, quota, quota_tree

from dratwin.kueue.fair_sharing import DRS, MAX_WEIGHTED_SHARE, compare_drs, dominant_resource_share

GPU = "example.com/gpu"
FR = tuple[str, str]


def _queue(name: str, cohort_name: str, weight: Any = None, flavor: str = "default", **nominal: Any) -> dict[str, Any]:
    """A ClusterQueue with one flavor; ``nominal`` maps cpu / gpu to (nominal[, lendingLimit])."""
    names = {"cpu": "cpu", "gpu": GPU}
    quotas = [quota(names[r], *(v if isinstance(v, tuple) else (v,))) for r, v in nominal.items()]
    spec: dict[str, Any] = {"fairSharing": {"weight": weight}} if weight is not None else {}
    return cluster_queue(name, group([q["name"] for q in quotas], flavor_quotas(flavor, *quotas)),
                         cohort=cohort_name, **spec)


def _gpu_cohort(name: str, nominal: Any = None, parent: str = "", weight: Any = None,
                borrowing: Any = None) -> dict[str, Any]:
    groups = [group([GPU], flavor_quotas("default", quota(GPU, nominal, borrowing)))] if nominal is not None else []
    return cohort(name, *groups, parent=parent, weight=weight)


def _lending_pair(cq: dict[str, Any], **nominal: Any) -> list[dict[str, Any]]:
    return [cq, _queue("lending-cq", "test-cohort", 1, **nominal)]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queues: list[dict[str, Any]]
    used: dict[FR, int]  # admitted in ClusterQueue "cq"
    want: dict[str, tuple[int, str, bool]]  # node → (weightedShare, dominant resource, borrowing)
    cohorts: list[dict[str, Any]] = field(default_factory=list)
    request: dict[FR, int] = field(default_factory=dict)  # added to each node's own usage


BELOW = {"cq:lending-cq": (0, "", False), "cohort:test-cohort": (0, "", False)}
CASES = [
    Case("no-cohort", "TestDominantResourceShare 'no cohort': a node without a parent has DRS 0",
         [_queue("cq", "", cpu=2, gpu=5)], {("default", "cpu"): 1000, ("default", GPU): 2},
         {"cq:cq": (0, "", False)}),
    Case("usage-below-nominal", "'usage below nominal'", _lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=5),
                                                                     cpu=8, gpu=5),
         {("default", "cpu"): 1000, ("default", GPU): 2}, {"cq:cq": (0, "", False), **BELOW}),
    Case("usage-above-nominal", "'usage above nominal': (7-5)*1000/10 on the dominant resource",
         _lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=5), cpu=8, gpu=5),
         {("default", "cpu"): 3000, ("default", GPU): 7}, {"cq:cq": (200, GPU, True), **BELOW}),
    Case("slightly-above-nominal-rounds-up", "'usage slightly above nominal in a cohort with large quotas': ceil",
         [_queue("cq", "test-cohort", 1, gpu=500), _queue("lending-cq", "test-cohort", 300, gpu=1000)],
         {("default", GPU): 501}, {"cq:cq": (1, GPU, True), **BELOW}),
    Case("way-above-nominal-with-weights", "'usage way above nominal ... and weights': 300*1000/1500/300",
         [_queue("cq", "test-cohort", 300, gpu=500), _queue("lending-cq", "test-cohort", 300, gpu=1000)],
         {("default", GPU): 800}, {"cq:cq": (1, GPU, True), **BELOW}),
    Case("one-resource-above-nominal", "'one resource above nominal': cpu (3-2)*1000/10",
         _lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=5), cpu=8, gpu=5),
         {("default", "cpu"): 3000, ("default", GPU): 3}, {"cq:cq": (100, "cpu", True), **BELOW}),
    Case("with-the-workload-request", "'usage with workload above nominal': (1+4-2)*1000/10",
         _lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=5), cpu=8, gpu=5),
         {("default", "cpu"): 1000, ("default", GPU): 2}, {"cq:cq": (300, "cpu", True), **BELOW},
         request={("default", "cpu"): 4000, ("default", GPU): 4}),
    Case("zero-lendable-resource-left-out", "'A resource with zero lendable': gpu lendingLimit 0 everywhere",
         _lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=(2, None, 0)), cpu=8, gpu=(64, None, 0)),
         {("default", "cpu"): 1000, ("default", GPU): 1}, {"cq:cq": (300, "cpu", True), **BELOW},
         request={("default", "cpu"): 4000, ("default", GPU): 4}),
    Case("integer-weight", "'above nominal with integer weight': (7-5)*1000/10/2",
         _lending_pair(_queue("cq", "test-cohort", 2, gpu=5), gpu=5), {("default", GPU): 7},
         {"cq:cq": (100, GPU, True), **BELOW}),
    Case("decimal-weight", "'above nominal with decimal weight': (7-5)*1000/10/0.5",
         _lending_pair(_queue("cq", "test-cohort", "0.5", gpu=5), gpu=5), {("default", GPU): 7},
         {"cq:cq": (400, GPU, True), **BELOW}),
    Case("zero-weight-borrowing", "'above nominal with zero weight': MaxInt64; fairsharing_types.go weightedShare",
         _lending_pair(_queue("cq", "test-cohort", 0, gpu=5), gpu=10), {("default", GPU): 7},
         {"cq:cq": (MAX_WEIGHTED_SHARE, GPU, True), **BELOW}),
    Case("cohort-has-resource-share", "'cohort has resource share': 5*1000/50, the child Cohort's /2",
         [_queue("cq", "child-cohort", 1, gpu=5)], {("default", GPU): 10},
         {"cq:cq": (100, GPU, True), "cohort:child-cohort": (50, GPU, True), "cohort:root": (0, "", False)},
         cohorts=[_gpu_cohort("child-cohort", parent="root", weight=2), _gpu_cohort("root", 45)]),
    Case("quota-only-at-the-root", "'resource share defined for resources only available at the root cohort'",
         [_queue("cq", "child-cohort", 1, gpu=0)], {("default", GPU): 10},
         {"cq:cq": (200, GPU, True), "cohort:child-cohort": (100, GPU, True), "cohort:root": (0, "", False)},
         cohorts=[_gpu_cohort("child-cohort", parent="root", weight=2), _gpu_cohort("root", 50)]),
    Case("borrowing-limit-shrinks-lendable", "'resource share affected by borrowing limit': 10/10 vs 10/50",
         [_queue("cq", "child-cohort", gpu=0)], {("default", GPU): 10},
         {"cq:cq": (1000, GPU, True), "cohort:child-cohort": (200, GPU, True), "cohort:root": (0, "", False)},
         cohorts=[_gpu_cohort("child-cohort", 0, parent="root", borrowing=10), _gpu_cohort("root", 50)]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_dominant_resource_share(case: Case) -> None:
    tree = quota_tree(case.queues, case.cohorts, {"cq": case.used})
    got = {}
    for key in case.want:
        drs = dominant_resource_share(tree, key, case.request)
        got[key] = (drs.weighted_share(), drs.dominant_resource, drs.borrowing)
    assert got == case.want, case.cite


def test_multiple_flavors_sum_per_resource_name() -> None:
    """'multiple flavors': borrowed cpu summed over flavors ((15+10-20)+0)*1000/200; spot stays under nominal."""
    cq = cluster_queue("cq", group(["cpu"], flavor_quotas("on-demand", quota("cpu", 20)),
                                   flavor_quotas("spot", quota("cpu", 80))), cohort="test-cohort")
    tree = quota_tree([cq, _queue("lending-cq", "test-cohort", flavor="on-demand", cpu=100)], [],
                      {"cq": {("on-demand", "cpu"): 15_000, ("spot", "cpu"): 5_000}})
    drs = dominant_resource_share(tree, "cq:cq", {("on-demand", "cpu"): 10_000})
    assert (drs.weighted_share(), drs.dominant_resource, drs.borrowed) == (25, "cpu", (("on-demand", "cpu"),))


@dataclass(frozen=True)
class OrderCase:
    name: str
    cite: str
    lower: DRS
    higher: DRS


ORDER_CASES = [
    OrderCase("lower-weighted-share-first", "CompareDRS: PreciseWeightedShare", DRS(2, 300), DRS(1, 200)),
    OrderCase("not-borrowing-before-borrowing", "PreciseWeightedShare: 0 when the ratio is 0", DRS(0, 0), DRS(1, 1)),
    OrderCase("zero-weight-borrower-last", "CompareDRS: zeroWeightBorrows loses", DRS(1, 900), DRS(0, 1)),
    OrderCase("zero-weight-borrowers-by-ratio", "CompareDRS: both zero weight: unweighted ratio", DRS(0, 1), DRS(0, 2)),
]


@pytest.mark.parametrize("case", ORDER_CASES, ids=lambda c: c.name)
def test_compare_drs(case: OrderCase) -> None:
    assert (compare_drs(case.lower, case.higher), compare_drs(case.higher, case.lower)) == (-1, 1), case.cite
    assert compare_drs(case.lower, case.lower) == 0


def test_borrowing_on_only_the_requested_flavor_resources() -> None:
    """fair_sharing_test.go TestIsBorrowingOn: borrowing on cpu says nothing about a gpu request."""
    tree = quota_tree(_lending_pair(_queue("cq", "test-cohort", 1, cpu=2, gpu=5), cpu=8, gpu=5), [],
                      {"cq": {("default", "cpu"): 3000}})
    drs = dominant_resource_share(tree, "cq:cq")
    assert drs.borrowing
    assert drs.borrowing_on({("default", "cpu"): 1})
    assert not drs.borrowing_on({("default", GPU): 1})


def test_infinite_share_is_serialised_as_max_int64() -> None:
    assert DRS(0, 5).precise_weighted_share() == math.inf
    assert DRS(0, 5).weighted_share() == 2**63 - 1
    assert DRS(0, 0).weighted_share() == 0

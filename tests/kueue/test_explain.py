"""The quota view of a Workload: Kueue's condition in its words, then per flavor and resource the numbers
behind it. The verdicts are the core's (flavorassigner.go fitsResourceQuota, resource_node.go available
and potentialAvailable, at Kueue ff69552); the cases check that the view reads them back right."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import (
    cluster_queue,
    container,
    flavor_quotas,
    gpu_queue,
    gpu_workload,
    group,
    pod_set,
    pod_spec,
    quota,
    resource_flavor,
    settled,
    workload,
)

from dratwin.kueue.cycle import Pending
from dratwin.kueue.explain import quota_view, shortfalls
from dratwin.kueue.tas.admission import TOPOLOGY_PLACEMENT_FAILED

GPU = "example.com/gpu"
H100 = [resource_flavor("h100", {"instance-type": "p5"})]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queues: list[dict[str, Any]]
    workloads: list[dict[str, Any]]  # the last is explained
    flavors: list[dict[str, Any]] = field(default_factory=lambda: H100)
    condition: str = ""  # "QuotaReserved=False WaitingForQuota" or "...=True QuotaReserved"
    lines: list[str] = field(default_factory=list)  # each found among the view's lines
    admitted: bool = False
    borrows: bool = False
    short: int = 0  # summed over the shortfall lines


RESEARCH = [gpu_queue("cq", 16, cohort_name="research", borrowing=4), gpu_queue("idle", 8, cohort_name="research")]
TAINTED_FIRST = cluster_queue("cq", group([GPU], flavor_quotas("reserved", quota(GPU, 8)),
                                          flavor_quotas("h100", quota(GPU, 8))))
CASES = [
    Case("borrowing-limit-leaves-a-shortfall", "resource_node.go available: local quota, then the parent's, "
         "capped by borrowingLimit", RESEARCH, [gpu_workload("first", 8), gpu_workload("second", 16)],
         condition="QuotaReserved=False WaitingForQuota",
         lines=["needs 16 example.com/gpu in flavor h100: 8 free of nominal 16, cohort research can lend 4, "
                "borrowingLimit 4: 4 short"], short=4),
    Case("lending-limit-is-what-the-cohort-can-lend", "cluster_queue.md lendingLimit",
         [gpu_queue("cq", 0, cohort_name="research"), gpu_queue("idle", 8, cohort_name="research", lending=2)],
         [gpu_workload("w", 2)], condition="QuotaReserved=True QuotaReserved", admitted=True, borrows=True,
         lines=["needs 2 example.com/gpu in flavor h100: 0 free of nominal 0, cohort research can lend 2: fits, "
                "borrowing 2 from cohort research"]),
    Case("no-cohort", "cluster_queue.md: without a cohort only nominal quota", [gpu_queue("cq", 8)],
         [gpu_workload("first", 6), gpu_workload("second", 4)], condition="QuotaReserved=False WaitingForQuota",
         lines=["needs 4 example.com/gpu in flavor h100: 2 free of nominal 8, no cohort to borrow from: 2 short"],
         short=2),
    Case("beyond-the-most-it-could-get", "fitsResourceQuota: ExceedsMaxQuota", [gpu_queue("cq", 8)],
         [gpu_workload("w", 12)], condition="QuotaReserved=False ExceedsMaxQuota",
         lines=["needs 12 example.com/gpu in flavor h100: 8 free of nominal 8, no cohort to borrow from: 4 short, "
                "more than the 8 it could get with the whole cohort idle (never fits as written)"], short=4),
    Case("skipped-flavor-names-the-taint", "checkFlavorForPodSets: untolerated taint", [TAINTED_FIRST],
         [gpu_workload("w", 2)], flavors=[resource_flavor("reserved", taints=[
             {"key": "reserved", "value": "ml", "effect": "NoSchedule"}]), *H100],
         condition="QuotaReserved=True QuotaReserved", admitted=True,
         lines=["flavor reserved: skipped: untolerated taint reserved=ml:NoSchedule in flavor reserved",
                "flavor h100: Fit (chosen)"]),
    Case("skipped-flavor-names-the-affinity", "checkFlavorForPodSets: node affinity", [gpu_queue("cq", 8)],
         [gpu_workload("w", 1, nodeSelector={"instance-type": "p4d"})], condition="QuotaReserved=False "
         "NoMatchingFlavor", lines=["flavor h100: skipped: flavor h100 doesn't match node affinity"]),
    Case("earlier-pod-sets-count", "fitsResourceQuota: previously considered podsets requests",
         [gpu_queue("cq", 8)], [workload("w", pod_set("a", 2, pod_spec(container(limits={GPU: 2}))),
                                        pod_set("b", 2, pod_spec(container(limits={GPU: 3}))))],
         condition="QuotaReserved=False ExceedsMaxQuota",
         lines=["needs 4 example.com/gpu in flavor h100: 8 free of nominal 8, no cohort to borrow from: fits",
                "needs 10 example.com/gpu in flavor h100: 8 free of nominal 8, no cohort to borrow from: 2 short, "
                "more than the 8"],
         short=2),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_quota_view(case: Case) -> None:
    snapshot, entries, verdicts = settled(case.queues, case.workloads, flavors=case.flavors)
    key = list(entries)[-1]
    view = quota_view(snapshot, entries[key], verdicts.get(key))
    lines = view.lines()
    assert view.condition is not None
    assert view.condition.text().startswith(case.condition), view.condition.text()
    for line in case.lines:
        assert any(line in found for found in lines), "\n".join(lines)
    assert (view.admitted, view.borrows) == (case.admitted, case.borrows)
    assert sum(r.short for r in shortfalls(view)) == case.short
    assert view.to_dict()["condition"]["reason"] == view.condition.reason


def test_never_tried_behind_a_strict_fifo_head() -> None:
    """StrictFIFO (cluster_queue.md queueingStrategy): the head that does not fit blocks those behind it; no
    cycle tries them, so Kueue has written no condition."""
    queue = gpu_queue("cq", 8, queueingStrategy="StrictFIFO")
    snapshot, entries, verdicts = settled([queue], [gpu_workload("big", 12), gpu_workload("small", 1)],
                                         flavors=H100)
    view = quota_view(snapshot, entries["team/small"], verdicts.get("team/small"))
    assert view.condition is None
    assert view.would_fit and not view.admitted
    assert "StrictFIFO" in view.notes[0]


def test_topology_that_cannot_place_is_no_fit_not_chosen() -> None:
    """tas_flavorassigner.go: a flavor whose quota fits but whose topology finds no placement for the PodSet
    ends NoFit (TopologyPlacementFailed): the view must not call it chosen, and the Workload does not fit."""
    snapshot, entries, _ = settled([gpu_queue("cq", 16)], [gpu_workload("w", 4)], flavors=H100)
    entry = entries["team/w"]
    message = ('couldn\'t assign flavors to pod set main: topology "t" allows to fit only 1 out of 4 pod(s)')
    view = quota_view(snapshot, entry, Pending(entry, TOPOLOGY_PLACEMENT_FAILED, message))
    text = "\n".join(view.lines())
    assert "(chosen)" not in text
    assert "flavor h100: NoFit: the quota fits, its topology cannot place the pods (TopologyPlacementFailed)" in text
    assert "no cohort to borrow from: fits" in text  # the quota numbers are still shown
    assert not view.would_fit
    flavor = view.to_dict()["podSets"][0]["flavors"][0]
    assert (flavor["mode"], flavor["quotaMode"], flavor["topology"]) == ("NoFit", "Fit", TOPOLOGY_PLACEMENT_FAILED)
    # the same Workload waiting for quota keeps its quota-only view
    plain = quota_view(snapshot, entry, Pending(entry, "WaitingForQuota", "insufficient quota"))
    assert plain.to_dict()["podSets"][0]["flavors"][0]["topology"] is None

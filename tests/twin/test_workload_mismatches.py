"""The two mismatches between Kueue's quota view and the scheduler's placement view (the problem of
kubernetes-sigs/kueue#12422: Kueue admits on quota alone, concepts/cluster_queue.md; the scheduler places
without quota). Each case settles Kueue's cycles over builders' queues, then pairs the quota view with a
placement of the Workload's pods."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import gpu_queue, gpu_workload, resource_flavor, settled

from dratwin.kueue.explain import quota_view
from dratwin.twin.explain_workload import (
    PLACEABLE_QUOTA_BLOCKS,
    QUOTA_ADMITS_UNPLACEABLE,
    PlacementView,
    mismatches,
)

H100 = [resource_flavor("h100")]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queues: list[dict[str, Any]]
    workloads: list[dict[str, Any]]  # the last is the one explained
    placed: int  # how many of its pods the scheduler places
    kinds: tuple[str, ...]
    words: list[str] = field(default_factory=list)


CASES = [
    Case("admitted-but-unplaceable", "cluster_queue.md: admission reserves quota; #12422", [gpu_queue("cq", 8)],
         [gpu_workload("w", 2, count=2)], placed=1, kinds=(QUOTA_ADMITS_UNPLACEABLE,),
         words=["Kueue reserved quota in ClusterQueue cq", "1 of 2 pods find no node", "waitForPodsReady"]),
    Case("quota-room-but-unplaceable", "a StrictFIFO head blocks a Workload the quota has room for "
         "(cluster_queue.md queueingStrategy)", [gpu_queue("cq", 8, queueingStrategy="StrictFIFO")],
         [gpu_workload("big", 12), gpu_workload("w", 2)], placed=0, kinds=(QUOTA_ADMITS_UNPLACEABLE,),
         words=["the quota of ClusterQueue cq has room"]),
    Case("placeable-but-quota-blocks", "fitsResourceQuota: WaitingForQuota", [gpu_queue("cq", 8)],
         [gpu_workload("first", 8), gpu_workload("w", 4)], placed=1, kinds=(PLACEABLE_QUOTA_BLOCKS,),
         words=["the nodes have room for the pod", "needs 4 example.com/gpu in flavor h100: 0 free of nominal 8, "
                "no cohort to borrow from: 4 short"]),
    Case("both-refuse", "no mismatch: quota and nodes both say no", [gpu_queue("cq", 8)],
         [gpu_workload("first", 8), gpu_workload("w", 4)], placed=0, kinds=()),
    Case("both-agree", "no mismatch: admitted and placed", [gpu_queue("cq", 8)], [gpu_workload("w", 4)],
         placed=1, kinds=()),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_mismatches(case: Case) -> None:
    snapshot, entries, verdicts = settled(case.queues, case.workloads, flavors=H100)
    key = list(entries)[-1]
    view = quota_view(snapshot, entries[key], verdicts.get(key))
    count = entries[key].workload.spec.pod_sets[0].count
    pods = [f"team/w-{i}" for i in range(count)]
    placement = PlacementView(view.admitted, ["h100"], pods, {p: "node-1" for p in pods[:case.placed]})
    found = mismatches(view, placement)
    assert tuple(m.kind for m in found) == case.kinds
    for word in case.words:
        assert word in found[0].message, found[0].message

"""Kueue's admission core: flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go), quota,
borrowing and lending in the cohort tree (pkg/cache/scheduler/resource_node.go) and the scheduling cycle
(pkg/scheduler/scheduler.go), at Kueue ff69552; concepts: cluster_queue.md, cohort.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import (
    cluster_queue,
    cohort,
    container,
    flavor_quotas,
    gpu_queue,
    gpu_workload,
    group,
    pod_set,
    pod_spec,
    quota,
    resource_flavor,
    workload,
)

from dratwin.api.kueue import ClusterQueue, Cohort, ResourceFlavor, Workload
from dratwin.kueue.cycle import (
    NO_LONGER_FITS,
    CycleOptions,
    Entry,
    Queues,
    Snapshot,
    run_until_settled,
    scheduling_cycle,
)
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.kueue.usage import WorkloadUsage, workload_usage

GPU = "example.com/gpu"
FLAVORS = [resource_flavor("h100", {"instance-type": "p5"}), resource_flavor("a100", {"instance-type": "p4d"})]


def _typed_usage(wl: Workload) -> WorkloadUsage:
    usage = workload_usage(wl)
    assert isinstance(usage, WorkloadUsage)
    return usage


def _snapshot(queues: Sequence[dict[str, Any]], cohorts: Sequence[dict[str, Any]] = (),
              flavors: Sequence[dict[str, Any]] = tuple(FLAVORS),
              used: dict[str, dict[tuple[str, str], int]] | None = None) -> Snapshot:
    cqs = [msgspec.convert(q, ClusterQueue) for q in queues]
    tree = QuotaTree.build(cqs, [msgspec.convert(c, Cohort) for c in cohorts])
    for name, usage in (used or {}).items():
        tree.add_usage(cq_key(name), usage)
    return Snapshot({cq.metadata.name: cq for cq in cqs},
                    {f["metadata"]["name"]: msgspec.convert(f, ResourceFlavor) for f in flavors}, tree)


def _entry(wire: dict[str, Any], cq: str = "cq", timestamp: float = 0.0) -> Entry:
    wl = msgspec.convert(wire, Workload)
    return Entry(wl, cq, _typed_usage(wl), timestamp)


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queues: list[dict[str, Any]]
    workload: dict[str, Any]
    cohorts: list[dict[str, Any]] = field(default_factory=list)
    used: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    flavors: list[dict[str, Any]] = field(default_factory=lambda: FLAVORS)
    # admitted: resource → flavor, and whether it borrows; or the QuotaReserved=False reason and message
    flavor: dict[str, str] | None = None
    borrows: bool = False
    reason: str = ""
    message: str = ""


TWO_FLAVORS = cluster_queue("cq", group([GPU], flavor_quotas("h100", quota(GPU, 8)),
                                         flavor_quotas("a100", quota(GPU, 8))))
CASES = [
    Case("fits-within-nominal", "flavorassigner.go fitsResourceQuota: Fit", [gpu_queue()],
         gpu_workload("w", 2, count=4), flavor={GPU: "h100"}),
    Case("insufficient-unused-quota", "fitsResourceQuota: Preempt without candidates → WaitingForQuota",
         [gpu_queue()], gpu_workload("w", 8), used={"cq": {("h100", GPU): 4}}, reason="WaitingForQuota",
         message="couldn't assign flavors to pod set main: insufficient unused quota for example.com/gpu in flavor "
                 "h100, 4 more needed"),
    Case("exceeds-max-quota", "fitsResourceQuota: beyond potential available", [gpu_queue()], gpu_workload("w", 20),
         reason="ExceedsMaxQuota", message="couldn't assign flavors to pod set main: insufficient quota for "
         "example.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (20) > "
         "maximum capacity (8)"),
    Case("next-flavor-when-the-first-is-full", "findFlavorForPodSets: flavors in order", [TWO_FLAVORS],
         gpu_workload("w", 8), used={"cq": {("h100", GPU): 1}}, flavor={GPU: "a100"}),
    Case("borrows-from-the-cohort", "cohort.md: idle quota of members is lent", [
        gpu_queue("cq", 4, cohort_name="research"), gpu_queue("idle", 8, cohort_name="research")],
         gpu_workload("w", 8), flavor={GPU: "h100"}, borrows=True),
    Case("borrowing-limit-caps-the-loan", "cluster_queue.md borrowingLimit; potentialAvailable", [
        gpu_queue("cq", 4, cohort_name="research", borrowing=2), gpu_queue("idle", 8, cohort_name="research")],
         gpu_workload("w", 8), reason="ExceedsMaxQuota", message="maximum capacity (6)"),
    Case("borrowing-limit-counts-what-is-borrowed-already", "resource_node.go available: the borrowingLimit cap", [
        gpu_queue("cq", 4, cohort_name="research", borrowing=4), gpu_queue("idle", 8, cohort_name="research")],
         gpu_workload("w", 4), used={"cq": {("h100", GPU): 6}}, reason="WaitingForQuota",
         message="insufficient unused quota for example.com/gpu in flavor h100, 2 more needed"),
    Case("lending-limit-caps-what-is-lent", "cluster_queue.md lendingLimit; localQuota", [
        gpu_queue("cq", 4, cohort_name="research"), gpu_queue("idle", 8, cohort_name="research", lending=2)],
         gpu_workload("w", 8), reason="ExceedsMaxQuota", message="maximum capacity (6)"),
    Case("cohort-quota-is-shared", "cohort.md: a Cohort's resourceGroups add quota",
         [gpu_queue("cq", 4, cohort_name="research")], gpu_workload("w", 8),
         cohorts=[cohort("research", group([GPU], flavor_quotas("h100", quota(GPU, 4))))],
         flavor={GPU: "h100"}, borrows=True),
    Case("hierarchical-cohorts", "cohort.md: parentName; quota from the root",
         [gpu_queue("cq", 2, cohort_name="team")], gpu_workload("w", 6),
         cohorts=[cohort("team", parent="org"), cohort("org", group([GPU], flavor_quotas("h100", quota(GPU, 4))))],
         flavor={GPU: "h100"}, borrows=True),
    Case("untolerated-taint", "checkFlavorForPodSets: taints", [gpu_queue()], gpu_workload("w", 1),
         flavors=[resource_flavor("h100", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])],
         reason="NoMatchingFlavor", message="untolerated taint nvidia.com/gpu:NoSchedule in flavor h100"),
    Case("flavor-tolerations-cover-its-taints", "checkFlavorForPodSets: the flavor's own tolerations",
         [gpu_queue()], gpu_workload("w", 1), flavors=[resource_flavor(
             "h100", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
             tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])], flavor={GPU: "h100"}),
    Case("node-selector-picks-the-flavor", "flavorSelector: only the flavor's label keys", [TWO_FLAVORS],
         gpu_workload("w", 1, nodeSelector={"instance-type": "p4d", "zone": "a"}), flavor={GPU: "a100"}),
    Case("no-flavor-matches-affinity", "checkFlavorForPodSets: node affinity", [gpu_queue()],
         gpu_workload("w", 1, nodeSelector={"instance-type": "p4d"}), reason="NoMatchingFlavor",
         message="flavor h100 doesn't match node affinity"),
    Case("resource-not-covered", "findFlavorForPodSets: resource unavailable", [gpu_queue()],
         workload("w", pod_set(spec=pod_spec(container({"memory": "1Gi"})))), reason="NoMatchingFlavor",
         message="resource memory unavailable in ClusterQueue"),
    Case("borrowing-stops-the-search-by-default", "flavorFungibility whenCanBorrow: MayStopSearch", [
        cluster_queue("cq", group([GPU], flavor_quotas("h100", quota(GPU, 2)), flavor_quotas("a100", quota(GPU, 8))),
                      cohort="research"), gpu_queue("idle", 8, cohort_name="research")],
         gpu_workload("w", 4), flavor={GPU: "h100"}, borrows=True),
    Case("try-next-flavor-before-borrowing", "flavorFungibility whenCanBorrow: TryNextFlavor", [
        cluster_queue("cq", group([GPU], flavor_quotas("h100", quota(GPU, 2)), flavor_quotas("a100", quota(GPU, 8))),
                      cohort="research", flavorFungibility={"whenCanBorrow": "TryNextFlavor"}),
        gpu_queue("idle", 8, cohort_name="research")], gpu_workload("w", 4), flavor={GPU: "a100"}),
    Case("pod-sets-count-against-each-other", "fitsResourceQuota: previously considered podsets", [gpu_queue()],
         workload("w", pod_set("a", 6, pod_spec(container(limits={GPU: 1}))),
                  pod_set("b", 6, pod_spec(container(limits={GPU: 1})))), reason="ExceedsMaxQuota",
         message="couldn't assign flavors to pod set b: insufficient quota for example.com/gpu in flavor h100, "
                 "previously considered podsets requests (6) + current podset request (6) > maximum capacity (8)"),
    Case("pods-counted-when-covered", "assignFlavors: the pods resource", [cluster_queue(
        "cq", group([GPU, "pods"], flavor_quotas("h100", quota(GPU, 64), quota("pods", 3))))], gpu_workload("w", 1, 4),
         reason="ExceedsMaxQuota", message="current podset request (4) > maximum capacity (3)"),
    Case("inactive-without-its-flavor", "cluster_queue.md: inactive when a flavor is missing", [gpu_queue()],
         gpu_workload("w", 1), flavors=[], reason="Inadmissible", message="ClusterQueue cq is inactive"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_admission(case: Case) -> None:
    snapshot = _snapshot(case.queues, case.cohorts, case.flavors, case.used)
    result = scheduling_cycle(snapshot, [_entry(case.workload)])
    if case.flavor is not None:
        assert not result.pending, result.pending
        [admitted] = result.admitted
        assert admitted.assignment.pod_sets[0].flavors == case.flavor
        assert admitted.borrowing is case.borrows
        return
    assert not result.admitted
    [pending] = result.pending
    assert pending.reason == case.reason
    assert case.message in pending.message


def test_the_admission_is_written_as_kueue_stores_it() -> None:
    result = scheduling_cycle(_snapshot([gpu_queue()]), [_entry(gpu_workload("w", 2, count=3))])
    assert result.admitted[0].admission_status() == {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "main", "flavors": {GPU: "h100"}, "count": 3, "resourceUsage": {GPU: "6"}}]}


def test_an_admission_uses_the_quota_of_the_next() -> None:
    """scheduler.go processEntry: heads are nominated on the same snapshot, then re-checked as each is admitted;
    the one within nominal quota goes first, the borrowing one no longer fits."""
    queues = [gpu_queue("a", 4, cohort_name="research"), gpu_queue("b", 4, cohort_name="research")]
    borrowing = _entry(gpu_workload("big", 6), "a", timestamp=1)
    within = _entry(gpu_workload("small", 4, namespace="other"), "b", timestamp=2)
    result = scheduling_cycle(_snapshot(queues), [borrowing, within])
    assert [a.entry.workload.metadata.name for a in result.admitted] == ["small"]
    [pending] = result.pending
    assert (pending.entry.workload.metadata.name, pending.message) == ("big", NO_LONGER_FITS)


@pytest.mark.parametrize(("option", "admitted"), [(False, 2), (True, 1)], ids=["upstream", "one-borrowing-per-cohort"])
def test_one_borrowing_admission_per_cohort_is_an_option(option: bool, admitted: int) -> None:
    queues = [gpu_queue("a", 1, cohort_name="r"), gpu_queue("b", 1, cohort_name="r"), gpu_queue("idle", 16,
                                                                                               cohort_name="r")]
    heads = [_entry(gpu_workload("x", 3), "a"), _entry(gpu_workload("y", 3, namespace="o"), "b", 1)]
    result = scheduling_cycle(_snapshot(queues), heads, CycleOptions(one_borrowing_per_cohort=option))
    assert len(result.admitted) == admitted


@pytest.mark.parametrize(("strategy", "admitted"), [("BestEffortFIFO", ["small"]), ("StrictFIFO", [])])
def test_a_blocked_head(strategy: str, admitted: list[str]) -> None:
    """cluster_queue.md queueingStrategy: StrictFIFO keeps a head that does not fit in front; BestEffortFIFO lets
    the next Workload try."""
    snapshot = _snapshot([gpu_queue(queueingStrategy=strategy)], used={"cq": {("h100", GPU): 6}})
    queues = Queues.of(snapshot.cluster_queues.values())
    queues.push(_entry(gpu_workload("big", 4), timestamp=1))
    queues.push(_entry(gpu_workload("small", 2), timestamp=2))
    done, pending = run_until_settled(snapshot, queues)
    assert [a.entry.workload.metadata.name for a in done] == admitted
    assert pending["team/big"].reason == "WaitingForQuota"


def test_the_queue_orders_by_priority_then_time() -> None:
    snapshot = _snapshot([gpu_queue(gpus=4)])
    queues = Queues.of(snapshot.cluster_queues.values())
    queues.push(_entry(gpu_workload("first", 4), timestamp=1))
    queues.push(_entry(gpu_workload("urgent", 4, priority=100), timestamp=5))
    done, pending = run_until_settled(snapshot, queues)
    assert [a.entry.workload.metadata.name for a in done] == ["urgent"]
    assert list(pending) == ["team/first"]


def test_set_aside_workloads_come_back_when_quota_is_freed() -> None:
    snapshot = _snapshot([gpu_queue(gpus=4)], used={"cq": {("h100", GPU): 4}})
    queues = Queues.of(snapshot.cluster_queues.values())
    queues.push(_entry(gpu_workload("w", 4)))
    assert run_until_settled(snapshot, queues)[0] == []
    snapshot.tree.remove_usage(cq_key("cq"), {("h100", GPU): 4})
    queues.requeue_inadmissible()
    assert [a.entry.workload.metadata.name for a in run_until_settled(snapshot, queues)[0]] == ["w"]


def test_a_cohort_cycle_does_not_hang_the_tree() -> None:
    """cohort.go: a cycle of parentName is refused by Kueue (ErrCohortHasCycle); the tree stays finite."""
    snapshot = _snapshot([gpu_queue("cq", 2, cohort_name="a")], [cohort("a", parent="b"), cohort("b", parent="a")])
    assert list(snapshot.tree.path_to_root(cq_key("cq")))[:2] == [cq_key("cq"), "cohort:a"]
    assert len(list(snapshot.tree.path_to_root(cq_key("cq")))) <= 3


def test_the_conditions_are_kueue_s() -> None:
    """workload.go SetQuotaReservation, admissionchecks.go: the conditions a Workload carries."""
    snapshot = _snapshot([gpu_queue(gpus=4)])
    result = scheduling_cycle(snapshot, [_entry(gpu_workload("a", 4)), _entry(gpu_workload("b", 8, namespace="o"))])
    [admitted], [pending] = result.admitted, result.pending
    now = "2026-01-01T00:00:00Z"
    assert [(c["type"], c["status"], c["message"]) for c in admitted.conditions(now)] == [
        ("QuotaReserved", "True", "Quota reserved in ClusterQueue cq"),
        ("Admitted", "True", "The workload is admitted")]
    [condition] = pending.conditions(now)
    assert (condition["status"], condition["reason"]) == ("False", "ExceedsMaxQuota")
    assert condition["message"].startswith("couldn't assign flavors to pod set main: insufficient quota")


def _usages(tree: QuotaTree) -> dict[str, dict[tuple[str, str], int]]:
    return {key: {fr: amount for fr, amount in node.usage.items() if amount} for key, node in tree.nodes.items()}


def test_the_tree_s_usage_does_not_depend_on_how_changes_are_grouped() -> None:
    """A Cohort's usage is what its children use beyond their local quota (resource_node.go): adding or
    removing amounts one by one, or their sums per ClusterQueue at once, in any order, leaves every node
    the same; the scheduling cycle takes claimed victims out per ClusterQueue on this account."""
    queues = [gpu_queue("a", 4, cohort_name="mid", lending=1), gpu_queue("b", 2, cohort_name="mid", lending=2),
              gpu_queue("c", 6, cohort_name="top", lending=3)]
    cohorts = [cohort("mid", parent="top"), cohort("top")]
    cqs = [msgspec.convert(q, ClusterQueue) for q in queues]
    trees = [QuotaTree.build(cqs, [msgspec.convert(c, Cohort) for c in cohorts]) for _ in range(2)]
    fr = ("h100", GPU)
    steps = [("a", 3), ("b", 4), ("a", 2), ("c", 7), ("b", 1), ("a", 1)]
    for name, amount in steps:
        trees[0].add_usage(cq_key(name), {fr: amount})
    for name in ("c", "b", "a"):
        trees[1].add_usage(cq_key(name), {fr: sum(a for n, a in steps if n == name)})
    assert _usages(trees[0]) == _usages(trees[1])
    assert trees[0].nodes["cohort:mid"].usage[fr] == (6 - 3) + (5 - 0)  # beyond a's and b's local quota
    for name, amount in [("a", 2), ("b", 4), ("a", 3)]:
        trees[0].remove_usage(cq_key(name), {fr: amount})
    trees[1].remove_usage(cq_key("b"), {fr: 4})
    trees[1].remove_usage(cq_key("a"), {fr: 5})
    assert _usages(trees[0]) == _usages(trees[1])
    assert trees[0].nodes["cohort:mid"].usage[fr] == 0 + 1  # b's 1 is beyond its local quota of 0
    # a: 2 of its local 3 left, and the 1 the top Cohort has left (6 lent to it, 1 + 4 used)
    assert trees[0].available(cq_key("a"), fr) == 3

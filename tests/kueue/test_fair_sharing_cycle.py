"""The order of a scheduling cycle's nominated Workloads under fair sharing: the DRS tournament over the cohort
tree (pkg/scheduler/fair_sharing_iterator.go; cases of pkg/scheduler/scheduler_fs_test.go
TestScheduleForFairSharing) at Kueue ff69552, beside the classical order it replaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import (
    cluster_queue,
    cohort,
    cpu_flavor,
    cpu_workload,
    flavor_quotas,
    group,
    kueue_snapshot,
    queued,
    quota,
)

from dratwin.api.kueue import Configuration
from dratwin.kueue.cycle import NO_LONGER_FITS, CycleOptions, Entry, scheduling_cycle
from dratwin.kueue.fair_sharing import Nominee, tournament_order

FAIR = CycleOptions(fair_sharing=True)
Wire = dict[str, Any]


def _cpu_queue(name: str, cohort_name: str, *flavors: Wire, weight: Any = None) -> Wire:
    spec: Wire = {"fairSharing": {"weight": weight}} if weight is not None else {}
    return cluster_queue(name, group(["cpu"], *flavors), cohort=cohort_name, **spec)


def _cpu_cohort(name: str, nominal: Any = None, parent: str = "") -> Wire:
    groups = [group(["cpu"], cpu_flavor("on-demand", nominal))] if nominal is not None else []
    return cohort(name, *groups, parent=parent)


def _empty(name: str, cohort_name: str, **spec: Any) -> Wire:
    """A ClusterQueue with no quota of its own in flavor on-demand: all it admits is borrowed."""
    return _cpu_queue(name, cohort_name, cpu_flavor("on-demand", 0), **spec)


def _cpu(cores: int) -> dict[tuple[str, str], int]:
    """Usage of ``cores`` cpu in flavor on-demand, in millicores as the quota tree counts it."""
    return {("on-demand", "cpu"): cores * 1000}


ENG = [
    cluster_queue("eng-alpha", group(["cpu"], cpu_flavor("on-demand", 50, 50), cpu_flavor("spot", 100, 0)),
                  cohort="eng"),
    cluster_queue("eng-beta", group(["cpu"], cpu_flavor("on-demand", 50, 10), cpu_flavor("spot", 0, 100)),
                  group(["example.com/gpu"], flavor_quotas("model-a", quota("example.com/gpu", 20, 0))),
                  cohort="eng"),
    _cpu_queue("eng-shared", "eng", cpu_flavor("on-demand", 10, 0)),
]
FS_NOM = [
    cluster_queue("fs-nom-a", group(["cpu"], cpu_flavor("on-demand", 50, 0), cpu_flavor("spot", 50, 50)),
                  cohort="fs-nom"),
    cluster_queue("fs-nom-b", group(["cpu"], cpu_flavor("on-demand", 10, 50), cpu_flavor("spot", 50, 0)),
                  cohort="fs-nom"),
]
FS_NOM_USED = {"fs-nom-a": {("spot", "cpu"): 80_000}, "fs-nom-b": _cpu(5)}
FS_NOM_PENDING = [(cpu_workload("borrow-wl", 1, count=15), "fs-nom-b", -60.0),
                  (cpu_workload("nom-wl", 1, count=45), "fs-nom-a", 0.0)]
TOURNAMENT = [_empty("d", "B"), _empty("e", "B"), _empty("f", "C"), _empty("g", "C")]
TOURNAMENT_COHORTS = [_cpu_cohort("A", 200), _cpu_cohort("B", parent="A"), _cpu_cohort("C", parent="A")]


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queues: list[Wire]
    pending: list[tuple[Wire, str, float]]  # (workload, ClusterQueue, timestamp)
    admitted: list[str]  # in the order admitted
    cohorts: list[Wire] = field(default_factory=list)
    used: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    options: CycleOptions = FAIR
    no_longer_fits: list[str] = field(default_factory=list)


CASES = [
    Case("lowest-share-first", "'with fair sharing: schedule workload with lowest share first': alpha 5/210 "
         "beats beta 6/210 though beta's head is older", ENG,
         [(cpu_workload("older_new", 1), "eng-beta", -60.0), (cpu_workload("new", 1, count=5), "eng-alpha", 0.0)],
         ["new"], used={"eng-alpha": _cpu(50), "eng-beta": _cpu(55)},
         no_longer_fits=["older_new"]),
    Case("classical-order-without-fair-sharing", "scheduler.go classicalIterator: same borrowing, then FIFO", ENG,
         [(cpu_workload("older_new", 1), "eng-beta", -60.0), (cpu_workload("new", 1, count=5), "eng-alpha", 0.0)],
         ["older_new"], used={"eng-alpha": _cpu(50), "eng-beta": _cpu(55)},
         options=CycleOptions(), no_longer_fits=["new"]),
    Case("nominal-first-beats-lower-share", "'nominal-first ordering admits workload fitting within nominal despite "
         "higher CQ DRS' (FairSharingPrioritizeNonBorrowing)", FS_NOM, FS_NOM_PENDING, ["nom-wl"],
         used=FS_NOM_USED, no_longer_fits=["borrow-wl"]),
    Case("lower-share-wins-with-the-gate-off", "fair_sharing_iterator.go less: step 2 skipped, DRS 62.5 < 187.5",
         FS_NOM, FS_NOM_PENDING, ["borrow-wl"], used=FS_NOM_USED,
         options=CycleOptions(fair_sharing=True, fair_sharing_prioritize_non_borrowing=False),
         no_longer_fits=["nom-wl"]),
    Case("hierarchical-non-borrowing-subtree", "'hierarchical nominal-first prefers non-borrowing subtree'",
         [_empty("cq-a", "Cohort-A"), _cpu_queue("cq-b", "Cohort-B", cpu_flavor("on-demand", 5)),
          _empty("cq-c", "Cohort-B")],
         [(cpu_workload("wl-b", 5), "cq-b", 0.0), (cpu_workload("wl-a", 5), "cq-a", 0.0)], ["wl-a"],
         cohorts=[_cpu_cohort("root"), _cpu_cohort("Cohort-A", 10, parent="root"),
                  _cpu_cohort("Cohort-B", parent="root")],
         used={"cq-c": _cpu(10)}, no_longer_fits=["wl-b"]),
    Case("hierarchical-tournament", "'hierarchical fair sharing schedule workload which wins tournament': d1 wins "
         "in B (80 < 81), B beats C at the root (100 < 101)", TOURNAMENT,
         [(cpu_workload("g1", 1), "g", 0.0), (cpu_workload("f1", 1), "f", 0.0),
          (cpu_workload("e1", 61), "e", 0.0), (cpu_workload("d1", 70), "d", 0.0)], ["d1"],
         cohorts=TOURNAMENT_COHORTS,
         used={"d": _cpu(10), "e": _cpu(20), "g": _cpu(100)},
         no_longer_fits=["e1", "f1", "g1"]),
    Case("lowest-share-after-admission", "'fair sharing schedule workload with lowest drf after admission': "
         "10+50 < 75", [_empty("b", "A"), _empty("c", "A")],
         [(cpu_workload("c1", 75), "c", 0.0), (cpu_workload("b1", 50), "b", 0.0)], ["b1"],
         cohorts=[_cpu_cohort("A", 100)], used={"b": _cpu(10)}, no_longer_fits=["c1"]),
    Case("weight-zero-borrows-less-first", "'fair sharing two queues with weight 0 schedules workload which borrows "
         "less': both infinite, the lower unweighted ratio wins over priority",
         [_empty("b", "A", weight=0), _empty("c", "A", weight=0)],
         [(cpu_workload("b1", 4, priority=9001), "b", 0.0), (cpu_workload("c1", 4), "c", 0.0)], ["c1"],
         cohorts=[_cpu_cohort("A", 8)], used={"b": _cpu(4)}, no_longer_fits=["b1"]),
    Case("high-weight-borrows-less-first", "'fair sharing two queues with high weight schedules workload which "
         "borrows less'", [_empty("b", "A", weight=123456789), _empty("c", "A", weight=123456789)],
         [(cpu_workload("b1", 4, priority=9001), "b", 0.0), (cpu_workload("c1", 4), "c", 0.0)], ["c1"],
         cohorts=[_cpu_cohort("A", 8)], used={"b": _cpu(4)}, no_longer_fits=["b1"]),
    Case("singletons-and-no-cohort", "'fair sharing schedule singleton cqs and cq without cohort'",
         [_empty("a", "A"), _cpu_queue("b", "B", cpu_flavor("on-demand", 10)),
          _cpu_queue("c", "", cpu_flavor("on-demand", 10))],
         [(cpu_workload("a1", 10), "a", 0.0), (cpu_workload("b1", 10), "b", 0.0), (cpu_workload("c1", 10), "c", 0.0)],
         ["a1", "b1", "c1"], cohorts=[_cpu_cohort("A", 10), _cpu_cohort("B")]),
    Case("higher-priority-on-equal-shares", "'fair sharing schedule highest priority first'",
         [_empty("b", "A"), _empty("c", "A")],
         [(cpu_workload("b1", 10, priority=99), "b", 0.0), (cpu_workload("c1", 10, priority=101), "c", 0.0)],
         ["c1"], cohorts=[_cpu_cohort("A", 10)], no_longer_fits=["b1"]),
    Case("earlier-timestamp-on-equal-priority", "'fair sharing schedule earliest timestamp first'",
         [_empty("b", "A"), _empty("c", "A")],
         [(cpu_workload("b1", 10, priority=101), "b", 1.0), (cpu_workload("c1", 10, priority=101), "c", 0.0)],
         ["c1"], cohorts=[_cpu_cohort("A", 10)], no_longer_fits=["b1"]),
]


def _names(entries: list[Entry]) -> list[str]:
    return [e.workload.metadata.name for e in entries]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cycle_order(case: Case) -> None:
    snapshot = kueue_snapshot(case.queues, case.cohorts, case.used)
    heads = [queued(wire, cq, timestamp) for wire, cq, timestamp in case.pending]
    result = scheduling_cycle(snapshot, heads, case.options)
    assert _names([a.entry for a in result.admitted]) == case.admitted, case.cite
    assert sorted(_names([p.entry for p in result.pending if p.message == NO_LONGER_FITS])) == case.no_longer_fits
    assert len(result.pending) == len(case.no_longer_fits)


def test_tournament_reads_the_tree_as_admissions_change_it() -> None:
    """fair_sharing_iterator.go pop: the DRS are computed again at every pop, on the snapshot as the admissions
    before it left it. Cohort X (b, c) against Y (d) under root R: b wins first (X at 10 after it, Y at 15);
    once b's 10 are admitted, X would be at 22 with c, so d (15) goes before c."""
    tree = kueue_snapshot([_empty("b", "X"), _empty("c", "X"), _empty("d", "Y")],
                          [_cpu_cohort("R", 100), _cpu_cohort("X", parent="R"), _cpu_cohort("Y", parent="R")]).tree
    nominees = [Nominee(name, name, _cpu(cores), 0, 0.0) for name, cores in [("c", 12), ("d", 15), ("b", 10)]]
    order = tournament_order(tree, nominees)
    assert next(order) == "b"
    tree.add_usage("cq:b", _cpu(10))  # what the cycle does when it admits b's Workload
    assert list(order) == ["d", "c"]
    assert tree.nodes["cq:c"].usage.get(("on-demand", "cpu"), 0) == 0  # each nominee's usage is taken away again


def test_tournament_without_admissions_keeps_the_first_order() -> None:
    """The same nominees with nothing admitted between pops: X's c (12) before Y's d (15)."""
    tree = kueue_snapshot([_empty("b", "X"), _empty("c", "X"), _empty("d", "Y")],
                          [_cpu_cohort("R", 100), _cpu_cohort("X", parent="R"), _cpu_cohort("Y", parent="R")]).tree
    nominees = [Nominee(name, name, _cpu(cores), 0, 0.0) for name, cores in [("c", 12), ("d", 15), ("b", 10)]]
    assert list(tournament_order(tree, nominees)) == ["b", "c", "d"]


@pytest.mark.parametrize(("config", "fair", "non_borrowing_first"), [
    ({}, False, True),
    ({"fairSharing": {}}, True, True),
    ({"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]},
      "featureGates": {"FairSharingPrioritizeNonBorrowing": False}}, True, False),
], ids=["no-stanza", "empty-stanza-turns-it-on", "gate-off"])
def test_options_from_configuration(config: Wire, fair: bool, non_borrowing_first: bool) -> None:
    """kueue-model.md 4.2: fair sharing is on by the mere presence of the Configuration's fairSharing stanza."""
    options = CycleOptions.from_configuration(msgspec.convert(config, Configuration))
    assert (options.fair_sharing, options.fair_sharing_prioritize_non_borrowing) == (fair, non_borrowing_first)

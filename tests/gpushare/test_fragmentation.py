"""FGD's fragmentation measure (Weng et al., ATC '23, §3) on hand-computed nodes, and its target workload.

Workload W: A = 4 CPUs + half a GPU (popularity 0.5), B = 8 CPUs + one whole GPU (0.25), C = 2 CPUs and
no GPU (0.25). For each class, a node that can host it loses the GPUs whose free share is below the
class's share; a node that cannot (or a class without GPUs) loses all of its free GPU share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dratwin.gpushare.fragmentation import (
    FragmentationModel,
    TargetWorkload,
    TaskClass,
    cluster_fragmentation,
    node_fragmentation,
    target_workload,
)

A = TaskClass(4000, 500, 1)
B = TaskClass(8000, 1000, 1)
C = TaskClass(2000, 0, 0)
W = TargetWorkload((A, B, C), (0.5, 0.25, 0.25))
A_ON_V100 = TaskClass(4000, 500, 1, ("V100M16",))


@dataclass(frozen=True)
class Case:
    name: str
    gpu_left: tuple[int, ...]
    cpu_left: int
    expected: float
    workload: TargetWorkload = W
    model: str = "T4"


CASES = [
    # A and B fit with nothing lost; C loses the 2000 idle: 0.25 * 2000
    Case("idle node: only the GPU-less class counts", (1000, 1000), 32000, 500.0),
    # A: 300 (below 500); B: 300 (below 1000); C: 1300 -> 0.5*300 + 0.25*300 + 0.25*1300
    Case("a 300 left over is lost to A and B", (300, 1000), 32000, 550.0),
    # A: 300; B cannot be hosted: all 900; C: 900 -> 150 + 225 + 225
    Case("no whole GPU left: B loses everything", (300, 600), 32000, 600.0),
    # too little CPU for A and B: all 2000 for every class
    Case("CPU exhausted: every class loses all", (1000, 1000), 3000, 2000.0),
    Case("fully used node has nothing to lose", (0, 0), 32000, 0.0),
    # A only on V100M16: 0.5 * 2000 lost on a T4 node; C: 0.25 * 2000
    Case("a model the class does not accept", (1000, 1000), 32000, 1500.0,
         TargetWorkload((A_ON_V100, B, C), (0.5, 0.25, 0.25))),
    Case("the accepted model", (1000, 1000), 32000, 500.0,
         TargetWorkload((A_ON_V100, B, C), (0.5, 0.25, 0.25)), model="V100M16"),
    Case("a node without GPUs", (), 32000, 0.0, model=""),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_fragmentation_by_hand(case: Case) -> None:
    assert node_fragmentation(case.gpu_left, case.cpu_left, case.model, case.workload) == pytest.approx(case.expected)


def test_many_nodes_at_once_give_each_node_its_own_measure() -> None:
    rows = [c for c in CASES[:5]]
    model = FragmentationModel(W, ("T4",))
    left = np.array([c.gpu_left for c in rows], dtype=np.int64)
    cpu = np.array([c.cpu_left for c in rows], dtype=np.int64)
    measured = model.fragmentation(left, cpu, np.zeros(len(rows), dtype=np.int64))
    assert measured.tolist() == pytest.approx([c.expected for c in rows])
    amount, ratio = cluster_fragmentation(measured, left)
    assert amount == pytest.approx(3650.0)
    assert ratio == pytest.approx(3650.0 / left.sum())


def test_an_empty_workload_fragments_nothing() -> None:
    model = FragmentationModel(TargetWorkload((), ()), ("T4",))
    left = np.array([[1000, 300]], dtype=np.int64)
    assert model.fragmentation(left, np.array([1000]), np.zeros(1, dtype=np.int64)).tolist() == [0.0]
    assert cluster_fragmentation(np.zeros(0), np.zeros((0, 1), dtype=np.int64)) == (0.0, 0.0)


@dataclass(frozen=True)
class WorkloadCase:
    name: str
    tasks: tuple[TaskClass, ...]
    threshold: int
    classes: tuple[TaskClass, ...]
    popularity: tuple[float, ...]


D = TaskClass(1000, 250, 1)
WORKLOADS = [
    # 10 tasks, 95% = 9.5: A (6) and B (9) stay below, D (10) crosses it and is included
    WorkloadCase("the class crossing the threshold is kept", (A,) * 6 + (B,) * 3 + (D,), 95, (A, B, D),
                 (0.6, 0.3, 0.1)),
    # 90% = 9: A and B reach it; the rest is dropped and the two renormalised to 6/9 and 3/9
    WorkloadCase("rare classes dropped, the rest renormalised", (A,) * 6 + (B,) * 3 + (D,), 90, (A, B),
                 (6 / 9, 3 / 9)),
    # equal counts: the larger shape (more CPU) first
    WorkloadCase("ties: the larger shape first", (D, B), 50, (B,), (1.0,)),
    WorkloadCase("no tasks", (), 95, (), ()),
]


@pytest.mark.parametrize("case", WORKLOADS, ids=lambda c: c.name)
def test_target_workload(case: WorkloadCase) -> None:
    workload = target_workload(case.tasks, case.threshold)
    assert workload.classes == case.classes
    assert workload.popularity == pytest.approx(case.popularity)


def test_a_workload_needs_one_popularity_per_class() -> None:
    with pytest.raises(ValueError, match="one popularity per class"):
        TargetWorkload((A,), ())


def test_task_class_accepts_models() -> None:
    assert A.accepts("T4") and A.accepts("")
    assert A_ON_V100.accepts("V100M16") and not A_ON_V100.accepts("T4") and not A_ON_V100.accepts("")
    assert A.is_gpu_sharing and not B.is_gpu_sharing and B.gpu_total_milli == 1000

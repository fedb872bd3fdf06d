"""FGD's fragmentation measure (Weng et al., ATC '23, §3) on hand-computed nodes, and its target workload.

Workload W: A = 4 CPUs + half a GPU (popularity 0.5), B = 8 CPUs + one whole GPU (0.25), C = 2 CPUs and
no GPU (0.25). For each class, a node that can host it loses the GPUs whose free share is below the
class's share; a node that cannot (or a class without GPUs) loses all of its free GPU share.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest

from dratwin.gpushare.fragmentation import (
    FragmentationModel,
    FragmentationTable,
    IntArray,
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


def test_target_workload_keeps_each_class_count() -> None:
    workload = target_workload((A,) * 6 + (B,) * 3 + (D,), 90)
    assert workload.counts == (6, 3)
    with pytest.raises(ValueError, match="one count per class"):
        TargetWorkload((A, B), (0.5, 0.5), (1,))


def _random_workload(rng: random.Random, tasks: int) -> TargetWorkload:
    """Classes of every kind: CPU-only, shares (some with a GPU model), whole GPUs (some more than a node
    has), drawn with repeats so that the counts differ."""
    drawn = []
    for _ in range(tasks):
        cpu = rng.choice((0, 1000, 2000, 4000, 8000, 16000))
        models = rng.choice(((), ("T4",), ("G2",), ("T4", "G2")))
        kind = rng.random()
        if kind < 0.2:
            drawn.append(TaskClass(cpu, 0, 0))
        elif kind < 0.6:
            drawn.append(TaskClass(cpu, rng.randrange(1, 1001), 1, models))
        else:
            drawn.append(TaskClass(cpu, 1000, rng.choice((1, 2, 4, 8, 9)), models))
    return target_workload(drawn)


def _reference_units(left: list[int], cpu: int, model: str, workload: TargetWorkload) -> int:
    """The measure x the number of tasks, class by class, in integers (the module docstring's definition)."""
    total = sum(left)
    units = 0
    for task, count in zip(workload.classes, workload.counts, strict=True):
        fits = sum(free >= task.gpu_milli for free in left) >= task.num_gpu
        hosted = task.num_gpu > 0 and task.gpu_milli > 0 and task.accepts(model) and fits and cpu >= task.cpu_milli
        units += count * (sum(free for free in left if free < task.gpu_milli) if hosted else total)
    return units


def _random_nodes(rng: random.Random, count: int) -> tuple[IntArray, IntArray, IntArray]:
    left = np.array(
        [[rng.choice((0, 1000, rng.randrange(0, 1001))) for _ in range(8)] for _ in range(count)], dtype=np.int64
    )
    left[: count // 4, 4:] = 0  # nodes with 4 GPUs of the 8 columns
    # the scoring CPU (free CPU less the task's) may go below 0
    cpu = np.array([rng.randrange(-2000, 20_000) for _ in range(count)], dtype=np.int64)
    model = np.array([rng.randrange(3) for _ in range(count)], dtype=np.int64)
    return left, cpu, model


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_table_measures_exactly_what_each_class_loses(seed: int) -> None:
    rng = random.Random(seed)
    workload = _random_workload(rng, 600)
    models = ("", "G2", "T4")
    left, cpu, model = _random_nodes(rng, 400)
    table = FragmentationTable(workload, models, 8)
    units = table.units(left, cpu, model)
    assert units.dtype == np.int64 and table.scale == sum(workload.counts)
    expected = [_reference_units(left[i].tolist(), int(cpu[i]), models[model[i]], workload) for i in range(len(cpu))]
    assert units.tolist() == expected
    # and the same measure as the per-class model, in milli-GPU
    per_class = FragmentationModel(workload, models).fragmentation(left, cpu, model)
    assert table.fragmentation(left, cpu, model).tolist() == pytest.approx(per_class.tolist(), rel=1e-12, abs=1e-9)


def test_the_table_without_counts_weighs_by_popularity() -> None:
    table = FragmentationTable(W, ("T4",), 2)
    left = np.array([c.gpu_left for c in CASES[:5]], dtype=np.int64)
    cpu = np.array([c.cpu_left for c in CASES[:5]], dtype=np.int64)
    assert table.scale == 1.0
    assert table.fragmentation(left, cpu, np.zeros(5, dtype=np.int64)).tolist() == pytest.approx(
        [c.expected for c in CASES[:5]]
    )
    empty = FragmentationTable(TargetWorkload((), ()), ("T4",), 2)
    assert empty.fragmentation(left, cpu, np.zeros(5, dtype=np.int64)).tolist() == [0.0] * 5

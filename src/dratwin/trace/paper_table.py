"""The FGD paper's table: unallocated GPU % at 100% arrival per workload and policy, beside the published one.

A *trace folder* holds a node list and pod lists in the Alibaba format: the published trace's
``openb_node_list_gpu_node.csv`` (the 1,213 GPU nodes the paper uses) and ``openb_pod_list_<workload>.csv``,
or any ``*node_list*.csv`` with ``*pod_list*.csv`` files. The published results are the artifact's
``analysis_allo_discrete.csv`` (columns ``workload, sc_policy, tune, seed, total_gpus, 0..130``: the
allocation ratio in % at each arrival %), found in ``fgd-expected-results/`` beside or inside the folder.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dratwin.errors import InputError
from dratwin.gpushare.policies import PAPER_NAMES
from dratwin.trace.alibaba import AlibabaNode, read_nodes, read_pods
from dratwin.trace.replay import run_protocol
from dratwin.trace.tasks import task_from_pod

EXPECTED_FOLDER = "fgd-expected-results"
EXPECTED_FILE = "analysis_allo_discrete.csv"
PAPER_NODE_LIST = "openb_node_list_gpu_node.csv"
POD_LIST_PREFIX = "openb_pod_list_"


@dataclass(frozen=True)
class TraceFolder:
    """The node list and the pod list of each workload of a trace folder."""

    nodes: Path
    workloads: dict[str, Path]


def find_trace(folder: str | Path) -> TraceFolder:
    """The files of a trace folder (see the module docstring); an InputError says what is missing."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: not a folder (expected a trace folder with a node list and pod lists)")
    paper_nodes = root / PAPER_NODE_LIST
    node_lists = [paper_nodes] if paper_nodes.is_file() else sorted(root.glob("*node_list*.csv"))
    if len(node_lists) != 1:
        found = ", ".join(p.name for p in node_lists) or "none"
        raise InputError(
            f"{root}: expected one node list ({PAPER_NODE_LIST} or one *node_list*.csv), found {found}"
        )
    workloads = {_workload_name(p): p for p in sorted(root.glob("*pod_list*.csv"))}
    if not workloads:
        raise InputError(f"{root}: no pod list (*pod_list*.csv) in the folder")
    return TraceFolder(node_lists[0], workloads)


def _workload_name(path: Path) -> str:
    stem = path.stem
    return stem[len(POD_LIST_PREFIX):] if stem.startswith(POD_LIST_PREFIX) else stem


def find_expected(folder: str | Path) -> Path | None:
    """The published results next to a trace folder (``../fgd-expected-results/`` or inside it)."""
    root = Path(folder)
    for candidate in (root / EXPECTED_FOLDER, root.parent / EXPECTED_FOLDER, root):
        if (candidate / EXPECTED_FILE).is_file():
            return candidate / EXPECTED_FILE
    return None


Published = dict[tuple[str, str], dict[int, float]]
"""(workload, policy) -> seed -> unallocated GPU % at the arrival asked for."""


def read_published(path: str | Path, arrival_pct: int = 100) -> Published:
    """The published unallocated GPU % (100 - allocation ratio) at ``arrival_pct`` per workload, policy and
    seed. Workloads and policies are named as here (``default``, ``fgd``)."""
    path = Path(path)
    by_paper_name = {paper.lower(): name for name, paper in PAPER_NAMES.items()}
    result: Published = {}
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                where = f"{path}:{reader.line_num}"
                try:
                    workload = row["workload"].removeprefix(POD_LIST_PREFIX)
                    policy = by_paper_name[row["sc_policy"].split("-", 1)[-1].lower()]
                    seed = int(row["seed"])
                    value = row[str(arrival_pct)]
                except (KeyError, ValueError, AttributeError) as error:
                    raise InputError(f"{where}: not a row of {EXPECTED_FILE}: {error}") from None
                if value:
                    result.setdefault((workload, policy), {})[seed] = round(100 - float(value), 2)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read the published results: {error}") from error
    return result


@dataclass(frozen=True)
class Cell:
    """One workload and policy: our unallocated GPU % per seed, their mean, and the published mean."""

    workload: str
    policy: str
    ours: dict[int, float]
    published: dict[int, float]

    @property
    def mean(self) -> float | None:
        return round(statistics.fmean(self.ours.values()), 2) if self.ours else None

    @property
    def published_mean(self) -> float | None:
        return round(statistics.fmean(self.published.values()), 2) if self.published else None

    @property
    def difference(self) -> float | None:
        mean, published = self.mean, self.published_mean
        return None if mean is None or published is None else round(mean - published, 2)


def run_table(
    trace: TraceFolder, workloads: Sequence[str], policies: Sequence[str], seeds: Sequence[int],
    published: Published, arrival_pct: int = 100, progress: Callable[[str, str, int, float], None] | None = None,
) -> list[Cell]:
    """Replay every workload x policy x seed; the cells in that order."""
    nodes: list[AlibabaNode] = read_nodes(trace.nodes)
    cells = []
    for workload in workloads:
        tasks = [task_from_pod(p) for p in read_pods(trace.workloads[workload])]
        for policy in policies:
            ours: dict[int, float] = {}
            for seed in seeds:
                value = run_protocol(nodes, tasks, policy, seed).unallocated_pct_at(arrival_pct)
                if value is not None:
                    ours[seed] = value
                    if progress is not None:
                        progress(workload, policy, seed, value)
            expected = published.get((workload, policy), {})
            cells.append(Cell(workload, policy, ours, {s: v for s, v in expected.items() if s in seeds}))
    return cells


__all__ = [
    "EXPECTED_FILE",
    "EXPECTED_FOLDER",
    "Cell",
    "Published",
    "TraceFolder",
    "find_expected",
    "find_trace",
    "read_published",
    "run_table",
]

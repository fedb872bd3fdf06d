"""The FGD paper's policies as opt-in score plugins of the scheduler, over DRA GPU shares.

The cluster comes from ``dratwin trace import``'s manifests: two T4 nodes with two 1000-milli GPUs each.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from dratwin.allocator.features import Features
from dratwin.api.input_set import read_inputs
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.gpushare.fragmentation import TargetWorkload, TaskClass
from dratwin.scheduler.framework import CycleState
from dratwin.scheduler.plugins.gpu_share_scores import GpuDemand, GpuShareScore
from dratwin.scheduler.scheduler import Scheduler
from dratwin.trace.alibaba import AlibabaNode, AlibabaPod
from dratwin.trace.manifests import ImportOptions, manifests
from dratwin.twin.schedule import Options, StateBinder, default_profile

NODES = [AlibabaNode("n-a", 32_000, 131_072, 2, "T4"), AlibabaNode("n-b", 32_000, 131_072, 2, "T4")]


def _pod(name: str, share: int, gpus: int = 1, cpu: int = 4000) -> AlibabaPod:
    return AlibabaPod(name, cpu, 8192, gpus if share else 0, share)


def _load(tmp_path: Path, pods: list[AlibabaPod]) -> LoadedCluster:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(manifests(NODES, pods, ImportOptions())))
    return load_cluster(read_inputs([str(path)], False).merged().objects, Features(), random.Random(0))


# FGD's target workload: half of the tasks take half a GPU, half a whole one
WORKLOAD = TargetWorkload((TaskClass(4000, 500, 1), TaskClass(4000, 1000, 1)), (0.5, 0.5))


def _schedule(loaded: LoadedCluster, policy: str | None) -> dict[str, str | None]:
    profile = default_profile(loaded.state, Options())
    if policy is not None:
        profile.scores.append(GpuShareScore(policy, loaded.state, WORKLOAD, weight=1000))
    attempts = Scheduler(loaded.state, profile, random.Random(0), StateBinder(loaded.state)).run(loaded.pending)
    return {a.pod.split("/")[1]: a.node for a in attempts}


def test_the_plugin_reads_demands_and_free_shares(tmp_path: Path) -> None:
    loaded = _load(tmp_path, [_pod("half", 500), _pod("two", 1000, gpus=2), _pod("cpu", 0)])
    plugin = GpuShareScore("gpupacking", loaded.state)
    demands = {p.key.split("/")[1]: plugin.demand_of(p) for p in loaded.pending}
    assert demands == {"half": GpuDemand(1, 500), "two": GpuDemand(2, 1000), "cpu": GpuDemand()}
    _schedule(loaded, "gpupacking")
    first = loaded.pending[0]
    placed = loaded.state.pods["default/half"].pod.spec.node_name
    view = plugin.node_view(loaded.state.nodes[placed])
    # "two" needs two idle GPUs, so it took the other node: here one GPU has half left
    assert sorted(view.gpu_left[0].tolist()) == [500, 1000]
    assert view.cpu_left[0] == 32_000 - 4000 * len(loaded.state.nodes[placed].pods)
    assert view.tag_counts[0, view.tag_column(plugin.task_of(first))] == 1


@pytest.mark.parametrize("policy", ["gpupacking", "bestfit", "fgd"])
def test_a_packing_policy_puts_two_halves_on_one_gpu(policy: str, tmp_path: Path) -> None:
    # FGD: the second half on the used GPU leaves [0, 1000] (no fragment: decrease 250, score 56); on the
    # idle node it leaves [500, 1000], a fragment for the whole-GPU half of the workload (score 43)
    loaded = _load(tmp_path, [_pod("first", 500), _pod("second", 500)])
    placed = _schedule(loaded, policy)
    assert placed["first"] == placed["second"] is not None


def test_the_default_profile_spreads_them(tmp_path: Path) -> None:
    loaded = _load(tmp_path, [_pod("first", 500), _pod("second", 500)])
    placed = _schedule(loaded, None)
    assert placed["first"] != placed["second"]  # LeastAllocated prefers the emptier node


def test_scores_are_the_papers_on_the_nodes_state(tmp_path: Path) -> None:
    loaded = _load(tmp_path, [_pod("first", 500), _pod("second", 500)])
    profile = default_profile(loaded.state, Options())
    scheduler = Scheduler(loaded.state, profile, random.Random(0), StateBinder(loaded.state))
    first, second = loaded.pending
    used = scheduler.schedule_one(first).node
    assert used is not None
    plugin = GpuShareScore("gpupacking", loaded.state)
    scores = {name: plugin.score(CycleState(), second, node) for name, node in loaded.state.nodes.items()}
    # GpuPacking: a used GPU with half left: 100 - 50 // 10 = 95; an idle 2-GPU node: max(33 - 2, 2) = 31
    assert scores == {used: 95, ({"n-a", "n-b"} - {used}).pop(): 31}
    assert plugin.name == "GpuPackingScore" and GpuShareScore("fgd", loaded.state).name == "FGDScore"


@pytest.mark.parametrize("order", ["used node first", "idle node first"])
def test_fgd_scores_each_node_on_its_own_state(order: str, tmp_path: Path) -> None:
    # The second half: on the used GPU the fragment of the whole-GPU half of the workload goes (250 ->
    # 0: score 56); on the idle node one appears (0 -> 250: score 43), whichever node is scored first.
    loaded = _load(tmp_path, [_pod("first", 500), _pod("second", 500)])
    profile = default_profile(loaded.state, Options())
    scheduler = Scheduler(loaded.state, profile, random.Random(0), StateBinder(loaded.state))
    first, second = loaded.pending
    used = scheduler.schedule_one(first).node
    assert used is not None
    idle = ({"n-a", "n-b"} - {used}).pop()
    plugin = GpuShareScore("fgd", loaded.state, WORKLOAD)
    names = [used, idle] if order == "used node first" else [idle, used]
    scores = {name: plugin.score(CycleState(), second, loaded.state.nodes[name]) for name in names}
    assert scores == {used: 56, idle: 43}


def test_fgd_without_a_workload_measures_against_the_clusters_pods(tmp_path: Path) -> None:
    loaded = _load(tmp_path, [_pod("a", 500), _pod("b", 500), _pod("c", 1000), _pod("cpu", 0)])
    workload = GpuShareScore("fgd", loaded.state).workload
    shares = dict(zip([(c.gpu_milli, c.num_gpu) for c in workload.classes], workload.popularity, strict=True))
    assert shares == {(500, 1): 0.5, (1000, 1): 0.25, (0, 0): 0.25}

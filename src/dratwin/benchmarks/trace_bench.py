"""The FGD paper's replay (``dratwin trace replay``), timed per policy and seed.

Shape: ``trace.replay_<policy>``: one run of the protocol (tuning to 130% of the GPUs, then every
arrival placed) of 8,152 pods on 1,213 GPU nodes, seed 42; target < 5 s per policy and seed (the
paper's Go simulator needs about 10 minutes per run on 2 vCPUs). The published trace is read from
``$DRATWIN_SHARED/data/alibaba-gpu-v2023/csv`` when it is there (research-use data, never in the
repository); otherwise a seeded synthetic trace of the same size and node mix stands in, and the detail
says so. The time is the median of 3 runs; the trace is read once, outside the timing.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from dratwin.benchmarks import BenchResult
from dratwin.gpushare.cluster import Task
from dratwin.gpushare.policies import POLICY_NAMES
from dratwin.trace.alibaba import AlibabaNode, AlibabaPod, read_nodes, read_pods
from dratwin.trace.replay import run_protocol
from dratwin.trace.tasks import task_from_pod

TARGET_S = 5.0
SEED = 42
PODS = 8152
# GPU node mix of the published cluster: (GPUs, model, count); 1,213 nodes, 6,212 GPUs.
NODE_MIX = [
    (8, "G2", 549), (2, "T4", 387), (4, "T4", 17), (2, "P100", 131), (1, "P100", 3), (8, "G3", 39),
    (4, "V100M16", 28), (1, "V100M16", 19), (8, "V100M16", 8), (8, "V100M32", 21), (4, "V100M32", 9), (1, "A10", 2),
]


def published_trace() -> tuple[list[AlibabaNode], list[AlibabaPod]] | None:
    shared = os.environ.get("DRATWIN_SHARED")
    folder = Path(shared) / "data" / "alibaba-gpu-v2023" / "csv" if shared else None
    if folder is None or not (folder / "openb_node_list_gpu_node.csv").is_file():
        return None
    return read_nodes(folder / "openb_node_list_gpu_node.csv"), read_pods(folder / "openb_pod_list_default.csv")


def synthetic_trace(seed: int = SEED) -> tuple[list[AlibabaNode], list[AlibabaPod]]:
    """A trace of the published size: its node mix, and pods 13% without GPUs, 38% sharing one, 48% one
    whole GPU and 1% several (values drawn here, describing no real cluster)."""
    rng = random.Random(seed)
    nodes: list[AlibabaNode] = []
    for gpus, model, count in NODE_MIX:
        cpu = 96_000 if gpus == 8 else 64_000 if gpus >= 2 else 32_000
        for _ in range(count):
            nodes.append(AlibabaNode(f"node-{len(nodes):04d}", cpu, cpu * 8 // 1000 * 1024, gpus, model))
    pods: list[AlibabaPod] = []
    for index in range(PODS):
        kind = rng.random()
        cpu = rng.choice((1000, 2000, 4000, 8000, 12000, 16000))
        gpus, share = (0, 0) if kind < 0.13 else (1, rng.randrange(50, 1000, 10)) if kind < 0.51 else (1, 1000)
        if kind > 0.99:
            gpus = rng.choice((2, 4, 8))
        pods.append(AlibabaPod(f"pod-{index:04d}", cpu, cpu * 4 // 1000 * 1024, gpus, share))
    return nodes, pods


def _time(nodes: list[AlibabaNode], tasks: list[Task], policy: str) -> float:
    start = time.perf_counter()
    run_protocol(nodes, tasks, policy, SEED)
    return time.perf_counter() - start


def run(repeats: int = 3) -> list[BenchResult]:
    trace = published_trace()
    source = "published trace (default workload)" if trace is not None else "synthetic trace of the same size"
    nodes, pods = trace if trace is not None else synthetic_trace()
    tasks = [task_from_pod(p) for p in pods]
    results = []
    for policy in POLICY_NAMES:
        values = sorted(_time(nodes, tasks, policy) for _ in range(repeats))
        detail = (f"{len(pods):,} pods on {len(nodes):,} nodes, {source}, seed {SEED}; median of {repeats} runs, "
                  f"range {values[0]:.2f}-{values[-1]:.2f} s")
        results.append(BenchResult(f"trace.replay_{policy}", round(values[len(values) // 2], 2), "s", TARGET_S, detail))
    return results


__all__ = ["run", "synthetic_trace"]

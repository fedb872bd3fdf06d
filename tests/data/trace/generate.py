"""Write the small trace of this folder: ``python tests/data/trace/generate.py`` (seeded, so the files are stable).

The shapes follow the published trace's columns and value ranges (node sizes of 2-8 GPUs, pods asking for
a share of one GPU, whole GPUs or several, CPU-only pods, LS/BE/Burstable/Guaranteed, times in seconds);
the values themselves are drawn here and describe no real cluster.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_SHAPES = [  # (gpus, model, cpu_milli, memory_mib)
    (8, "V100M32", 96000, 786432),
    (8, "V100M32", 96000, 786432),
    (4, "T4", 96000, 393216),
    (2, "T4", 64000, 262144),
    (2, "P100", 64000, 262144),
    (1, "A10", 32000, 131072),
    (0, "", 64000, 262144),
    (0, "", 32000, 131072),
]
QOS = ["LS", "LS", "LS", "BE", "BE", "Burstable", "Guaranteed"]


def nodes() -> list[list[object]]:
    return [[f"trace-node-{i:02d}", cpu, mem, gpus, model] for i, (gpus, model, cpu, mem) in enumerate(NODE_SHAPES)]


def pods(rng: random.Random, count: int = 60) -> list[list[object]]:
    rows: list[list[object]] = []
    clock = 0
    for i in range(count):
        clock += rng.randint(30, 1800)
        kind = rng.choices(["share", "one", "multi", "cpu"], weights=[4, 4, 1, 2])[0]
        num_gpu, gpu_milli = {
            "share": (1, rng.choice([100, 250, 460, 500])),
            "one": (1, 1000),
            "multi": (rng.choice([2, 4, 8]), 1000),
            "cpu": (0, 0),
        }[kind]
        spec = rng.choice(["", "", "", "V100M32", "T4|P100"]) if num_gpu else ""
        cpu = rng.choice([1000, 2000, 4000, 8000, 12000])
        memory = cpu // 1000 * rng.choice([1024, 2048, 4096])
        phase = rng.choices(["Running", "Succeeded", "Failed", "Pending"], weights=[5, 3, 1, 1])[0]
        scheduled = clock + rng.randint(0, 120) if phase != "Pending" else ""
        deletion = clock + rng.randint(600, 86400)
        rows.append([f"trace-pod-{i:03d}", cpu, memory, num_gpu, gpu_milli, spec, rng.choice(QOS), phase,
                     clock, deletion, scheduled])
    return rows


def write(name: str, header: list[str], rows: list[list[object]]) -> None:
    with (HERE / name).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


if __name__ == "__main__":
    write("node_list.csv", ["sn", "cpu_milli", "memory_mib", "gpu", "model"], nodes())
    write("pod_list.csv", ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                           "pod_phase", "creation_time", "deletion_time", "scheduled_time"], pods(random.Random(2023)))

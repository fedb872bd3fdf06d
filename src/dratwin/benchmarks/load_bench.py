"""Reading and writing at cluster scale, each command in a fresh process (wall time and peak RSS).

Shapes:
  validate_list_2500_p5  ``dratwin validate`` of ``cluster generate -t p5.48xlarge=2500`` as one
      ``kind: List`` (a ``kubectl get -o yaml`` dump: 60 MB, 7,500 objects, 100,000 devices);
      targets < 15 s and < 1.5 GiB
  validate_documents_2500_p5  the same objects as multi-document YAML (``---`` between them)
  schedule_json_5000pods  ``dratwin schedule -o json`` end to end (start, loading, controllers,
      scheduling, JSON output) of scheduler_perf's 5,000 pods on 500 nodes x 10 devices (the shape of
      ``scheduler_bench``), in pods per second; target >= 2,500 pods/s
  generate_10000_p5  ``cluster generate -t p5.48xlarge=10000 -o json`` (the objects are written one at a
      time): peak RSS, bounded when it stays that of a few hundred nodes; the YAML of 2,500 nodes is
      timed too, as it is made for the validate shapes

Each figure is the median of a few runs; RSS is the largest of them (``ru_maxrss`` of the child). The
package's bytecode is compiled first, as ``pip install`` compiles it: where ``PYTHONDONTWRITEBYTECODE`` is
set and dratwin is installed from its source tree, every run would otherwise compile each module again
(about 0.15 s of each command).
"""

from __future__ import annotations

import compileall
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from dratwin.api.codec import write_list
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.scheduler_bench import cluster_objects, pod, template

VALIDATE_TARGET_S = 15.0
VALIDATE_TARGET_MIB = 1536.0
SCHEDULE_TARGET_PODS_PER_S = 2500.0
GENERATE_TARGET_MIB = 512.0
_NODES, _PODS = 2500, 5000

# Runs one command and reports its wall time and the peak RSS of that command alone.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "wb"), stderr=subprocess.PIPE)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": done.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mib": usage.ru_maxrss / 1024, "stderr": done.stderr.decode()[-400:]}))
"""


def measure(command: Sequence[str], output: Path) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of ``command`` in a fresh process; stdout to ``output``."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(output), *command], capture_output=True, text=True,
                          check=True)
    result: dict[str, float] = json.loads(done.stdout)
    if result["rc"] not in (0, 1):
        raise RuntimeError(f"benchmark load: {' '.join(command)} failed: {result['stderr']}")
    return result


def _dratwin(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("dratwin")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "dratwin.cli.main", *args]


def as_documents(list_text: str) -> str:
    """A ``kind: List`` dump (entries at column 0, as kubectl writes it) as multi-document YAML."""
    _, _, rest = list_text.partition("\nitems:\n")
    body, _, _ = rest.rpartition("\nkind: List\n")
    documents = []
    for entry in ("\n" + body).split("\n- ")[1:]:
        lines = entry.split("\n")
        documents.append("\n".join([lines[0], *(line[2:] for line in lines[1:])]) + "\n")
    return "---\n".join(documents)


def schedule_shape(path: Path) -> None:
    """scheduler_perf's 5,000 pods on 500 nodes x 10 devices, one claim per pod, as a YAML List."""
    objects = [*cluster_objects(500, 10), template("t")] + [pod(f"pod-{i}", template_name="t") for i in range(_PODS)]
    with path.open("w", encoding="utf-8") as out:
        write_list((o.raw for o in objects), out)


def _runs(command: Sequence[str], output: Path, repeats: int) -> tuple[float, float, float, list[float]]:
    results = [measure(command, output) for _ in range(repeats)]
    walls = sorted(r["wall"] for r in results)
    return (statistics.median(walls), statistics.median(r["cpu"] for r in results),
            max(r["rss_mib"] for r in results), walls)


def compile_bytecode() -> None:
    """Write the bytecode of every dratwin module (nothing happens where it is up to date)."""
    compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)  # a read-only install has it already


def run(repeats: int = 3, nodes: int = _NODES, big: int = 10_000) -> list[BenchResult]:
    compile_bytecode()
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory(prefix="dratwin-bench-") as folder:
        root = Path(folder)
        listed, documents, out = root / "list.yaml", root / "documents.yaml", root / "out"
        made = measure(_dratwin("cluster", "generate", "-t", f"p5.48xlarge={nodes}"), listed)
        size_mb = listed.stat().st_size / 1e6
        documents.write_text(as_documents(listed.read_text(encoding="utf-8")), encoding="utf-8")
        for name, path, shape in (("list", listed, "one kind: List"), ("documents", documents, "multi-document")):
            wall, cpu, rss, walls = _runs(_dratwin("validate", "-f", str(path)), out, repeats)
            detail = (f"{nodes:,} p5.48xlarge nodes + slices ({size_mb:.0f} MB, {shape}); median of {repeats}, "
                      f"range {walls[0]:.1f}-{walls[-1]:.1f} s, CPU {cpu:.1f} s")
            results.append(BenchResult(f"load.validate_{name}_{nodes}_p5", round(wall, 2), "s", VALIDATE_TARGET_S,
                                       detail))
            results.append(BenchResult(f"load.validate_{name}_{nodes}_p5_rss", round(rss), "MiB",
                                       VALIDATE_TARGET_MIB, detail))
        shape_file = root / "schedule.yaml"
        schedule_shape(shape_file)
        wall, cpu, rss, walls = _runs(_dratwin("schedule", "-f", str(shape_file), "-o", "json"), out, repeats)
        detail = (f"{_PODS:,} pods, 500 nodes x 10 devices, whole command (start, load, schedule, JSON output: "
                  f"{out.stat().st_size / 1e6:.0f} MB); median of {repeats}, range {walls[0]:.2f}-{walls[-1]:.2f} s, "
                  f"CPU {cpu:.2f} s, RSS {rss:.0f} MiB")
        results.append(BenchResult("load.schedule_json_5000pods", round(_PODS / wall), "pods/s",
                                   SCHEDULE_TARGET_PODS_PER_S, detail, higher_is_better=True))
        generated = measure(_dratwin("cluster", "generate", "-t", f"p5.48xlarge={big}", "-o", "json"), out)
        detail = (f"{big:,} nodes, {out.stat().st_size / 1e6:.0f} MB of JSON in {generated['wall']:.0f} s; YAML of "
                  f"{nodes:,} nodes: {made['wall']:.0f} s, {made['rss_mib']:.0f} MiB")
        results.append(BenchResult(f"load.generate_{big}_p5_rss", round(generated["rss_mib"]), "MiB",
                                   GENERATE_TARGET_MIB, detail))
    return results

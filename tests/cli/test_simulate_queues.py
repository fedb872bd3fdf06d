"""Kueue's queues in ``dratwin simulate``: a Queues block per variant in the table (means over the seeds),
``--workloads`` with Kueue's print columns, and ``kueue`` in ``-o json`` (null without Kueue objects).

The scenario is examples/simulate/kueue-teams.yaml for its first 6 hours: team a borrows team b's idle GPUs
and is preempted when team b takes them back.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from tests.builders.simulate_cli import simulate, small_scenario
from tests.conftest import EXAMPLES

from dratwin.cli.simulate_queues import borrowed_text

TEAMS = str(EXAMPLES / "simulate" / "kueue-teams.yaml")


def _json(*args: str) -> dict[str, Any]:
    outcome = simulate(*args, "-o", "json")
    assert outcome.code in (0, 1), outcome.err
    document: dict[str, Any] = json.loads(outcome.out)
    return document


def test_the_table_has_a_queues_block_per_variant() -> None:
    outcome = simulate(TEAMS, "--until", "6h", "--jobs", "1")
    lines = outcome.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("VARIANT") and "CLUSTERQUEUE" in line)
    assert lines[header].split()[:4] == ["VARIANT", "CLUSTERQUEUE", "ADMITTED", "PREEMPTED"]
    rows = [line.split() for line in lines[header + 1:header + 3]]
    assert [row[:2] for row in rows] == [["default", "team-a"], ["default", "team-b"]]
    assert rows[0][3] == "1"  # team a is preempted once as team b reclaims its quota
    assert rows[1][-2:] == ["p5/nvidia.com/gpu", "8"]  # team b borrowed all of team a's GPUs at its peak
    assert "NAMESPACE" not in outcome.out  # Workloads only when asked


def test_workloads_are_listed_with_kueue_print_columns_when_asked() -> None:
    outcome = simulate(TEAMS, "--until", "6h", "--jobs", "1", "--workloads")
    lines = outcome.out.splitlines()
    start = lines.index("workloads of default, seed 1:")
    assert lines[start + 1].split() == ["NAMESPACE", "NAME", "QUEUE", "RESERVED", "IN", "ADMITTED", "FINISHED", "AGE"]
    first = lines[start + 2].split()
    assert first[0] == "team-b" and first[1].startswith("job-finetune-b-0-") and first[2:6] == [
        "team-b", "team-b", "True", "True"]
    pending = [line.split() for line in lines[start + 2:] if " False " in line]
    assert pending and all(row[3] == "False" for row in pending)  # no RESERVED IN while waiting


def test_json_has_the_kueue_summary_and_the_compared_queues() -> None:
    document = _json(TEAMS, "--until", "6h", "--jobs", "1")
    kueue = document["runs"][0]["kueue"]
    assert set(kueue) == {"admissions", "preemptions", "lost_gpu_hours", "cluster_queues", "workloads"}
    queue = kueue["cluster_queues"][0]
    assert set(queue) == {"name", "cohort", "workloads", "admissions", "preemptions", "evictions", "finished",
                          "pending_at_end", "admitted_at_end", "waiting_seconds", "lost_gpu_hours", "borrowed",
                          "at_seconds", "pending", "admitted", "bin_seconds", "admissions_per_bin",
                          "preemptions_per_bin"}
    assert (queue["name"], queue["cohort"]) == ("team-a", "research")
    assert len(queue["at_seconds"]) == len(queue["pending"]) == len(queue["admitted"])
    assert set(kueue["workloads"][0]) == {"namespace", "name", "queue", "reserved_in", "admitted", "finished",
                                          "age_seconds", "cluster_queue", "created_seconds", "reserved_seconds",
                                          "admitted_seconds", "finished_seconds", "evictions", "preemptions",
                                          "reason", "evicted"}
    compared = document["comparison"][0]["queues"]
    assert [q["cluster_queue"] for q in compared] == ["team-a", "team-b"]
    assert compared[0]["preemptions"] == queue["preemptions"]  # one seed: the mean is the run's


def test_without_kueue_objects_kueue_is_null_and_no_queues_block(tmp_path: Path) -> None:
    path = small_scenario(tmp_path)
    document = _json(path, "--jobs", "1", "--seed", "7", "--until", "1h")
    assert document["runs"][0]["kueue"] is None
    assert document["comparison"][0]["queues"] == []
    assert "CLUSTERQUEUE" not in simulate(path, "--jobs", "1", "--seed", "7", "--until", "1h").out


def test_the_bare_form_shows_the_queues_too(tmp_path: Path) -> None:
    """examples/queues/team-quota over time: team a's second Job waits for quota, team b admits nothing."""
    for source in [EXAMPLES / "deviceclasses.yaml", EXAMPLES / "queues" / "cluster.yaml",
                   *sorted((EXAMPLES / "queues" / "team-quota").glob("*.yaml"))]:
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    outcome = simulate(str(tmp_path), "--until", "2h", "--workloads")
    lines = outcome.out.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("CLUSTERQUEUE")))
    assert [line.split()[:4] for line in lines[header + 1:header + 3]] == [
        ["team-a", "1", "0", "1"], ["team-b", "0", "0", "0"]]
    assert lines[header + 2].split()[4:6] == ["-", "-"]  # no admission: no waiting time
    assert any(line.split()[:2] == ["team-a", "job-pretrain-53bbe"] for line in lines)


def test_borrowed_peaks_in_kueue_amounts() -> None:
    assert borrowed_text({"p5/cpu": 96000.0, "p5/nvidia.com/gpu": 8.0, "p5/memory": 0.0}) == \
        "p5/cpu 96, p5/nvidia.com/gpu 8"
    assert borrowed_text({}) == "-"


def test_a_sweep_shows_the_queues_of_each_combination(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"""\
apiVersion: dratwin.io/v1alpha1
kind: Sweep
metadata: {{name: teams}}
spec:
  scenario: {TEAMS}
  axes:
    scoring: [LeastAllocated, MostAllocated]
""", encoding="utf-8")
    outcome = simulate(str(sweep), "--until", "3h", "--jobs", "1")
    assert outcome.code in (0, 1), outcome.err
    rows = [line.split()[:2] for line in outcome.out.splitlines() if line.split()[1:2] in (["team-a"], ["team-b"])]
    assert rows == [["LeastAllocated", "team-a"], ["LeastAllocated", "team-b"], ["MostAllocated", "team-a"],
                    ["MostAllocated", "team-b"]]


def test_a_variant_changes_kueue_objects(tmp_path: Path) -> None:
    """overrides.objects replaces the teams' ClusterQueues in one variant: without borrowing, team b never
    borrows team a's GPUs, so team a's reclaim preempts nothing; the scenario's own queues preempt once."""
    document = yaml.safe_load(Path(TEAMS).read_text(encoding="utf-8"))
    queues = [copy.deepcopy(o) for o in document["spec"]["cluster"]["objects"] if o["kind"] == "ClusterQueue"]
    for queue in queues:
        for resource in queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            resource["borrowingLimit"] = 0
    document["spec"]["variants"] = [{"name": "borrowing"},
                                    {"name": "no-borrowing", "overrides": {"objects": queues}}]
    path = tmp_path / "teams.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    found = _json(str(path), "--until", "6h", "--jobs", "1")
    by_variant = {run["variant"]: run["kueue"] for run in found["runs"]}
    assert by_variant["borrowing"]["preemptions"] == 1
    assert by_variant["no-borrowing"]["preemptions"] == 0
    assert all(q["borrowed"] == [] for q in by_variant["no-borrowing"]["cluster_queues"])
    assert by_variant["borrowing"]["cluster_queues"][1]["borrowed"]  # team b borrowed team a's idle GPUs

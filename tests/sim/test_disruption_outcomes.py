"""Seeded Karpenter runs with the disruption controller, pinned: the same commands at the same times, the same
evictions, bindings and cost for the same seed (the controller's caches and early stops change how fast it
decides, never what).

When the decisions change on purpose, regenerate the files and review the diff before committing::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/sim/test_disruption_outcomes.py
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
from pathlib import Path

import pytest

from dratwin.benchmarks.simulate_bench import karpenter_spec
from dratwin.catalog import load_catalog
from dratwin.sim.run import SimOptions, Simulation, simulate

GOLDEN = Path(__file__).parent.parent / "golden" / "disruption"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"


@dataclasses.dataclass(frozen=True)
class PinnedRun:
    name: str
    seed: int
    jobs: int
    hours: float
    consolidate_after: str


CASES = [
    PinnedRun("40-jobs-3h-seed-1", 1, 40, 3, "1m"),
    PinnedRun("30-jobs-2h-seed-2-consolidate-after-30s", 2, 30, 2, "30s"),
    PinnedRun("50-jobs-3h-seed-3-consolidate-after-5m", 3, 50, 3, "5m"),
]


def _outcome(sim: Simulation) -> str:
    """What the run decided and what came of it, one fact a line (readable in a diff)."""
    result = sim.result
    d = result.disruptions
    lines = [
        f"cost_usd {result.cost_usd:.4f}",
        f"pods_succeeded {result.pods_succeeded} pending_at_end {result.pods_pending_at_end}",
        f"disruptions empty {d.nodes_empty} underutilized {d.nodes_underutilized} drifted {d.nodes_drifted} "
        f"replacements {d.replacements_launched} evicted {d.pods_evicted} work_lost {d.work_lost_seconds} "
        f"invalidated {d.commands_invalidated}",
    ]
    lines += [f"command {json.dumps(dataclasses.asdict(c), sort_keys=True)}" for c in d.commands]
    for change in sim.events:
        if (change.kind == "Pod" and change.type == "Scheduled") or change.type in (
                "Validating", "Invalidated", "Disrupting", "Evicted", "Consolidated"):
            lines.append(f"{change.time:.3f} {change.type} {change.kind} {change.key} {change.message}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_seeded_karpenter_run_decides_as_pinned(case: PinnedRun) -> None:
    spec = karpenter_spec(case.seed, case.jobs, case.hours, case.consolidate_after)
    sim = simulate(spec, SimOptions(catalog=load_catalog(), keep_events=True))
    assert sim.result.disruptions.commands, "the run should exercise the disruption controller"
    got = _outcome(sim)
    golden = GOLDEN / f"{case.name}.txt"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
        return
    assert golden.exists(), f"{golden} is missing: run with DRATWIN_UPDATE_GOLDEN=1 to create it"
    expected = golden.read_text()
    if got != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), got.splitlines(keepends=True),
                                            f"tests/golden/disruption/{case.name}.txt", "simulate"))
        pytest.fail(f"the run decided differently from the pinned outcome:\n{diff}")


def test_every_pinned_file_has_a_case() -> None:
    names = {f"{c.name}.txt" for c in CASES}
    assert {p.name for p in GOLDEN.glob("*.txt")} <= names

"""Golden-file tests of ``dratwin plan`` on the bundled examples: the exact text and YAML a user reads.

Regenerate on purpose, then review the diff before committing::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/twin/test_plan_golden.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"

CASES = {
    # scale from zero: the LLM and training pods share one p5en.48xlarge, web gets a CPU node, MIG cannot
    "plan-from-zero": (["-f", "examples/deviceclasses.yaml", "-f", "examples/plan/"], 1),
    # beside the example cluster: what fits p5-node-1 and p4d-node-1 goes there first (MIG included)
    "plan-with-existing": (["-f", "examples/", "-f", "examples/plan/"], 0),
    "plan-from-zero-yaml": (["-f", "examples/deviceclasses.yaml", "-f", "examples/plan/", "-o", "yaml"], 1),
    # the same NodePools in EKS Auto Mode's labels: Auto Mode's supported types, a device-manager role per node
    "plan-auto-mode": (
        ["--auto-mode", "-f", "examples/deviceclasses.yaml", "-f", "examples/plan/workload.yaml", "-f",
         "examples/plan/auto-mode/"],
        1,
    ),
    # p5-node-1's NodePool now asks for H200s: the node is drifted and replaced by a p5en.48xlarge
    "plan-drifted": (["-f", "examples/", "-f", "examples/plan/drifted/"], 0),
    # NVIDIA's ComputeDomain demo beside the plan example: Karpenter never launches for its channel claim
    "plan-compute-domain": (
        ["-f", "examples/deviceclasses.yaml", "-f", "examples/compute-domain/deviceclasses.yaml", "-f",
         "examples/compute-domain/channel-injection.yaml", "-f", "examples/plan/"],
        1,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_output_matches_golden(
    case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    arguments, status = CASES[case]
    monkeypatch.chdir(REPO)
    assert main(["plan", *arguments]) == status
    out = capsys.readouterr().out
    golden = GOLDEN / f"{case}.out"
    if UPDATE:
        golden.write_text(out)
        return
    assert golden.exists(), f"{golden} is missing: run with DRATWIN_UPDATE_GOLDEN=1 and review it"
    expected = golden.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True), str(golden), "actual"))
    assert out == expected, diff


def test_every_plan_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("plan-*.out")) == sorted(CASES)

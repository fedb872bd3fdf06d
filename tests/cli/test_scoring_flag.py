"""``--scoring`` on ``schedule`` and ``simulate`` (bare form): upstream's strategies and the FGD paper's opt-in
policies, which change where pods land and are noted in the result."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders.gpu_trace import HALVES_THEN_WHOLE, share_manifests
from tests.builders.manifests import manifest

from dratwin.cli.main import main
from dratwin.scheduler.scoring import OPT_IN_SCORING, UPSTREAM_SCORING


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def run(*args: str) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse: --help, or a bad choice
            code = int(exit_.code or 0)
    return Outcome(code, out.getvalue(), err.getvalue())


def halves(tmp_path: Path) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(manifest(share_manifests(HALVES_THEN_WHOLE)), encoding="utf-8")
    return str(path)


def placements(outcome: Outcome) -> dict[str, str]:
    return {entry["pod"].split("/")[1]: entry["node"] for entry in json.loads(outcome.out)["scheduled"]}


@dataclass(frozen=True)
class PlacementCase:
    name: str
    scoring: str | None
    halves_together: bool
    noted: bool


CASES = [
    PlacementCase("the default profile spreads the halves", None, False, False),
    PlacementCase("LeastAllocated is the default", "LeastAllocated", False, False),
    PlacementCase("FGD packs the second half onto the first one's GPU", "FGD", True, True),
    PlacementCase("GpuPacking packs them too", "GpuPacking", True, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_schedule_scoring_changes_where_pods_land(case: PlacementCase, tmp_path: Path) -> None:
    flag = ["--scoring", case.scoring] if case.scoring else []
    outcome = run("schedule", "-f", halves(tmp_path), "-o", "json", *flag)
    assert outcome.code == 0, outcome.err
    placed = placements(outcome)
    assert set(placed) == {"half-1", "half-2", "whole"}
    assert (placed["half-1"] == placed["half-2"]) is case.halves_together
    notes = json.loads(outcome.out)["notes"]
    assert any("opt-in placement policy of the FGD paper" in n for n in notes) is case.noted


def test_schedule_help_lists_the_names_and_says_which_are_upstream() -> None:
    outcome = run("schedule", "--help")
    text = " ".join(outcome.out.split())
    assert outcome.code == 0
    for name in (*UPSTREAM_SCORING, *OPT_IN_SCORING):
        assert name in text
    assert "kube-scheduler's default profile" in text and "not upstream" in text


def test_an_unknown_scoring_is_refused_with_the_names() -> None:
    outcome = run("schedule", "-f", "nowhere.yaml", "--scoring", "Fgd")
    assert outcome.code == 2
    assert "invalid choice: 'Fgd'" in outcome.err and "FGD" in outcome.err


def test_simulate_bare_form_takes_the_scoring_and_notes_it(tmp_path: Path) -> None:
    path = halves(tmp_path)
    upstream = run("simulate", path, "--until", "1h", "-o", "json")
    fgd = run("simulate", path, "--until", "1h", "-o", "json", "--scoring", "FGD")
    assert upstream.code == fgd.code == 0, fgd.err
    assert not any("FGD paper" in n for n in json.loads(upstream.out)["notes"])
    assert any(n.startswith("scoring FGD: an opt-in placement policy") for n in json.loads(fgd.out)["notes"])


def test_simulate_refuses_the_flag_on_a_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text("apiVersion: dratwin.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec: {duration: 1h}\n")
    outcome = run("simulate", str(path), "--scoring", "FGD")
    assert outcome.code == 2
    assert "overrides.scoring" in outcome.err

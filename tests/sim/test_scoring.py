"""The scheduler's scoring in the simulation: the bare form's RunSpec and a scenario's variants, upstream
strategies and the FGD paper's opt-in policies (which change the engine's profile and are noted)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders.gpu_trace import HALVES_THEN_WHOLE, share_manifests
from tests.builders.manifests import manifest
from tests.builders.scenarios import scenario, write_document

from dratwin.api.loader import load_text
from dratwin.errors import InputError
from dratwin.scenario.document import load
from dratwin.sim.quick_scenario import run_spec
from dratwin.sim.run import SimOptions, Simulation, simulate

HOUR = 3600.0


def nodes_of(sim: Simulation) -> dict[str, str]:
    """Each pod's node, by the pod's name without its generated suffix."""
    found: dict[str, str] = {}
    for key, record in sim.store.state.pods.items():
        name = key.split("/")[1]
        stem = next(p.name for p in HALVES_THEN_WHOLE if name.startswith(p.name))
        found[stem] = record.pod.spec.node_name or ""
    return found


@dataclass(frozen=True)
class Case:
    name: str
    scoring: str
    halves_together: bool


CASES = [
    Case("LeastAllocated spreads the halves", "LeastAllocated", False),
    Case("MostAllocated packs them", "MostAllocated", True),
    Case("FGD packs them", "FGD", True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_run_specs_scoring_builds_the_profile(case: Case) -> None:
    spec = run_spec(load_text(manifest(share_manifests(HALVES_THEN_WHOLE)), "trace.yaml"), name="trace.yaml",
                    until_seconds=HOUR)
    sim = simulate(dataclasses.replace(spec, scoring=case.scoring), SimOptions(check_invariants=True))
    placed = nodes_of(sim)
    assert all(placed.values()), placed
    assert (placed["half-1"] == placed["half-2"]) is case.halves_together
    assert any("opt-in placement policy" in n for n in sim.result.notes) is (case.scoring == "FGD")


def test_an_unknown_scoring_is_an_input_error() -> None:
    spec = run_spec(load_text(manifest(share_manifests(HALVES_THEN_WHOLE)), "trace.yaml"), name="trace.yaml")
    with pytest.raises(InputError, match=r"unknown scoring 'Tetris'.*opt-in policies of the FGD paper"):
        simulate(dataclasses.replace(spec, scoring="Tetris"))


def test_a_variants_scoring_changes_its_profile(tmp_path: Path) -> None:
    objects = share_manifests(HALVES_THEN_WHOLE)
    cluster = [o for o in objects if o["kind"] != "Pod"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    document = scenario(
        [{"name": "shares", "template": pods, "arrival": {"at": "0s"}}], duration="1h",
        cluster={"objects": cluster},
        variants=[{"name": "upstream"}, {"name": "fgd", "overrides": {"scoring": "FGD"}}],
    )
    runs = load(write_document(tmp_path, document))[1]
    assert [(r.variant, r.scoring) for r in runs] == [("upstream", "LeastAllocated"), ("fgd", "FGD")]
    upstream, fgd = (simulate(r, SimOptions(check_invariants=True)) for r in runs)
    assert nodes_of(upstream)["half-1"] != nodes_of(upstream)["half-2"]
    assert nodes_of(fgd)["half-1"] == nodes_of(fgd)["half-2"]
    assert not any("FGD paper" in n for n in upstream.result.notes)
    assert any("FGD paper" in n for n in fgd.result.notes)

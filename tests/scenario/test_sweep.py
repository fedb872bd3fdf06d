"""Sweep files read, judged and expanded: good files give one run per combination and seed, named after the
values; bad ones every problem at file:line with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.builders.scenarios import edited, write
from tests.builders.sweeps import sweep_text, write_sweep

from dratwin.scenario.sweep import check

# ---- bad files: (name, old text of SWEEP, new text, line, field, a part of the hint) -----------------------

AXES_END = "    arrivalRateScale: [1, 2]\n"
BAD = [
    ("unknown axis", "    scoring:", "    scorring:", 9, "spec.axes.scorring", 'did you mean "scoring"?'),
    ("scoring policy", "MostAllocated]", "MostAlocated]", 9, "spec.axes.scoring[1]", 'did you mean "MostAllocated"?'),
    ("variant of no name", AXES_END, AXES_END + "    variant: [dra, device-plugins]\n", 12, "spec.axes.variant[1]",
     'did you mean "device-plugin"?'),
    ("an axis without values", "autoscalerTarget: [50, 80]", "autoscalerTarget: []", 10, "spec.axes.autoscalerTarget",
     "leave the axis out"),
    ("a value twice", "arrivalRateScale: [1, 2]", "arrivalRateScale: [2, 2]", 11, "spec.axes.arrivalRateScale[1]",
     "give each value once"),
    ("a rate scale of 0", "arrivalRateScale: [1, 2]", "arrivalRateScale: [0, 2]", 11, "spec.axes.arrivalRateScale[0]",
     "0.5 halves"),
    ("a target over 100", "autoscalerTarget: [50, 80]", "autoscalerTarget: [50, 180]", 10,
     "spec.axes.autoscalerTarget[1].target", "must be more than 0 and at most 100"),
    ("autoscaler metric", AXES_END, AXES_END + "    autoscalerMetric: [cpu, DCGM_FI_DEV_GPU_UTILS]\n", 12,
     "spec.axes.autoscalerMetric[1]", 'did you mean "DCGM_FI_DEV_GPU_UTIL"?'),
    ("a scenario file that is not there", "scenario: scenario.yaml", "scenario: scenari.yaml", 6, "spec.scenario",
     "relative to the sweep file"),
    ("a seed twice", "seeds: [1, 2]", "seeds: [1, 1]", 7, "spec.seeds[1]", "give each seed once"),
    ("sharing of no generated type", AXES_END, AXES_END + "    sharing: [whole, {mig: [1g.10gb], instanceTypes: "
     "[p5.48xlage]}]\n", 12, "spec.axes.sharing[1].instanceTypes[0]", 'did you mean "p5.48xlarge"?'),
    ("bad MIG profile", AXES_END, AXES_END + "    sharing: [{mig: [big]}]\n", 12, "spec.axes.sharing[0].mig[0]",
     "--mig"),
    ("fleet of an unknown instance type", AXES_END, AXES_END + "    fleet: [{name: big, generate: [{instanceType: "
     "p9.48xlarge, count: 4}]}]\n", 12, "spec.axes.fleet[0].generate[0].instanceType", "cluster generate --help"),
    ("fleet named twice", AXES_END, AXES_END + "    fleet:\n    - {name: a, generate: [{instanceType: p5.48xlarge}]}\n"
     "    - {name: a, generate: [{instanceType: g6.12xlarge}]}\n", 14, "spec.axes.fleet[1]", "give each value once"),
    ("fleet entry of no count", AXES_END, AXES_END + "    fleet: [{name: a, generate: [{instanceType: p5.48xlarge, "
     "count: 0}]}]\n", 12, "spec.axes.fleet[0].generate[0].count", ""),
    ("too many runs", AXES_END, AXES_END + "    autoscalerMetric: [cpu, DCGM_FI_DEV_GPU_UTIL]\n"
     "    gpuManager: [dra, device-plugin]\n"
     "    sharing: [whole, {mig: [1g.10gb]}, {mig: [2g.20gb]}, {mig: [3g.40gb]}, {mig: [4g.40gb]}, {mig: [7g.80gb]}]\n"
      "    fleet: [" + ", ".join(f"{{name: f{n}, generate: [{{instanceType: p5.48xlarge, count: {n}}}]}}"
                                for n in range(1, 41)) + "]\n", 8, "spec.axes", "fewer values"),
    ("wrong kind", "kind: Sweep", "kind: Swept", 2, "kind", 'did you mean "Sweep"?'),
    ("a sweep field of a scenario", "  seeds: [1, 2]", "  seeds: [1, 2]\n  duration: 2d", 8, "spec.duration",
     "known fields: axes, scenario, seeds"),
]


@pytest.mark.parametrize(("old", "new", "line", "field", "hint"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_sweeps(tmp_path: Path, old: str, new: str, line: int, field: str, hint: str) -> None:
    path = write_sweep(tmp_path, sweep_text(old, new))
    sweep, runs, problems = check(path)
    errors = [p for p in problems if p.is_error]
    assert sweep is None and runs == []
    found = [p for p in errors if p.field == field]
    assert found, f"no error at {field}: {[str(p) for p in errors]}"
    assert (found[0].file, found[0].line) == (path, line)
    assert hint in found[0].hint or hint in found[0].message, str(found[0])


def test_a_problem_of_the_scenario_is_at_its_own_file_and_line(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, scenario=edited("  seed: 7", "  sead: 7"))
    problems = [p for p in check(path)[2] if p.is_error]
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [("scenario.yaml", 7, "spec.sead")]


def test_a_problem_of_an_inline_scenario_is_at_the_sweep_files_line(tmp_path: Path) -> None:
    inline = "".join(f"    {line}\n" for line in edited("  seed: 7", "  sead: 7").splitlines())
    path = write(tmp_path, sweep_text("  scenario: scenario.yaml\n", "  scenario:\n" + inline), "sweep.yaml")
    problems = [p for p in check(path)[2] if p.is_error]
    assert [(p.file, p.line, p.field) for p in problems] == [(path, 13, "spec.sead")]


def test_a_choice_that_needs_generated_nodes_on_a_cluster_without_them(tmp_path: Path) -> None:
    static = edited("    generate:\n    - {instanceType: p5.48xlarge, count: 2}\n    - {instanceType: g6.12xlarge, "
                    "count: 1}\n", "    objects: []\n", edited("    overrides: {gpuManager: device-plugin}\n", ""))
    path = write_sweep(tmp_path, sweep_text(AXES_END, AXES_END + "    gpuManager: [dra, device-plugin]\n"), static)
    problems = [p for p in check(path)[2] if p.is_error]
    assert [(p.line, p.field) for p in problems] == [(12, "spec.axes.gpuManager[0]"), (12, "spec.axes.gpuManager[1]")]
    assert "cluster.generate" in problems[0].hint


# ---- good files ------------------------------------------------------------------------------------------


def test_the_grid_is_every_combination_with_every_seed_named_after_its_values(tmp_path: Path) -> None:
    sweep, runs, problems = check(write_sweep(tmp_path))
    assert sweep is not None and problems == []
    # the scenario's variants (dra, device-plugin) are the first axis, then the file's axes in its order
    assert sweep.axes == ("variant", "scoring", "autoscalerTarget", "arrivalRateScale")
    assert len(runs) == 2 * 2 * 2 * 2 * 2
    assert [(r.variant, r.seed) for r in runs[:4]] == [
        ("dra/LeastAllocated/target-50/rate-x1", 1), ("dra/LeastAllocated/target-50/rate-x1", 2),
        ("dra/LeastAllocated/target-50/rate-x2", 1), ("dra/LeastAllocated/target-50/rate-x2", 2)]
    assert runs[-1].variant == "device-plugin/MostAllocated/target-80/rate-x2"
    assert {r.scenario for r in runs} == {"grid"}
    assert sweep.values["dra/MostAllocated/target-80/rate-x1"] == ("dra", "MostAllocated", "target-80", "rate-x1")


def test_each_value_changes_what_it_names(tmp_path: Path) -> None:
    _, runs, _ = check(write_sweep(tmp_path))
    by_name = {(r.variant, r.seed): r for r in runs}
    run = by_name[("device-plugin/MostAllocated/target-80/rate-x1", 1)]
    assert run.scoring == "MostAllocated"
    assert [s.autoscaler.target for s in run.services if s.autoscaler] == [80]
    # the rest of the service's autoscaler stays as the scenario wrote it
    assert [(s.autoscaler.kind, s.autoscaler.metric, s.autoscaler.max_replicas) for s in run.services
            if s.autoscaler] == [("hpa", "DCGM_FI_DEV_GPU_UTIL", 4)]

    def gpu_slices(name: str) -> int:
        objects = by_name[(name, 1)].objects
        return sum(o.kind == "ResourceSlice" and o.raw["spec"]["driver"] == "gpu.nvidia.com" for o in objects)

    assert gpu_slices("device-plugin/MostAllocated/target-80/rate-x1") == 0
    assert gpu_slices("dra/MostAllocated/target-80/rate-x1") == 3


def test_a_rate_scale_of_two_halves_the_gaps_between_the_same_arrivals(tmp_path: Path) -> None:
    _, runs, _ = check(write_sweep(tmp_path))
    by_name = {(r.variant, r.seed): r for r in runs}

    def jobs(scale: int) -> list[float]:
        run = by_name[(f"dra/LeastAllocated/target-50/rate-x{scale}", 2)]
        return [a.at_seconds for a in run.arrivals if a.objects[0].kind == "Job"]

    once, twice = jobs(1), jobs(2)
    assert len(twice) > 1.5 * len(once)
    assert twice[: len(once) // 2] == pytest.approx([t / 2 for t in once[: len(once) // 2]])


def test_one_value_is_the_same_for_every_run_and_no_part_of_the_names(tmp_path: Path) -> None:
    text = sweep_text("    autoscalerTarget: [50, 80]\n    arrivalRateScale: [1, 2]\n", "    variant: [dra]\n")
    sweep, runs, _ = check(write_sweep(tmp_path, text))
    assert sweep is not None and sweep.axes == ("scoring",) and sweep.fixed == (("variant", "dra"),)
    assert [(r.variant, r.seed, r.scoring) for r in runs] == [
        ("LeastAllocated", 1, "LeastAllocated"), ("LeastAllocated", 2, "LeastAllocated"),
        ("MostAllocated", 1, "MostAllocated"), ("MostAllocated", 2, "MostAllocated")]


def test_without_axes_the_runs_are_the_scenarios(tmp_path: Path) -> None:
    text = sweep_text("  axes:\n    scoring: [LeastAllocated, MostAllocated]\n    autoscalerTarget: [50, 80]\n"
                      "    arrivalRateScale: [1, 2]\n", "")
    sweep, runs, _ = check(write_sweep(tmp_path, text), seeds=[5])
    assert sweep is not None and sweep.axes == ("variant",)
    assert [(r.variant, r.seed) for r in runs] == [("dra", 5), ("device-plugin", 5)]


def test_fleets_and_sharing_make_other_clusters(tmp_path: Path) -> None:
    axes = ("    variant: [dra]\n    fleet:\n    - {name: one, generate: [{instanceType: p5.48xlarge}]}\n"
            "    - {name: four, generate: [{instanceType: p5.48xlarge, count: 4}]}\n"
            "    sharing: [whole, {mig: [1g.10gb=7], instanceTypes: [p5.48xlarge]}]\n")
    text = sweep_text("    scoring: [LeastAllocated, MostAllocated]\n    autoscalerTarget: [50, 80]\n"
                      "    arrivalRateScale: [1, 2]\n", axes)
    sweep, runs, problems = check(write_sweep(tmp_path, text), seeds=[1])
    assert sweep is not None, [str(p) for p in problems]
    nodes = {r.variant: sum(o.kind == "Node" for o in r.objects) for r in runs}
    assert nodes == {"one/whole": 1, "one/mig-1g.10gb=7": 1, "four/whole": 4, "four/mig-1g.10gb=7": 4}
    mig = next(r for r in runs if r.variant == "one/mig-1g.10gb=7")
    devices = [d for o in mig.objects if o.kind == "ResourceSlice" for d in o.raw["spec"].get("devices", [])]
    assert any("1g.10gb" in str(d) for d in devices)



def test_a_null_axis_is_an_absent_one(tmp_path: Path) -> None:
    sweep, runs, _ = check(write_sweep(tmp_path, sweep_text("autoscalerTarget: [50, 80]", "autoscalerTarget: null")))
    assert sweep is not None and sweep.axes == ("variant", "scoring", "arrivalRateScale") and len(runs) == 16

"""Scenario files read, judged and reported: good files give runs, bad ones every problem at file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builders.scenarios import BASE, edited, write
from tests.conftest import DATA

from dratwin.api.loader import LoadedObject, SourceLocation, load_paths
from dratwin.cli.main import main
from dratwin.scenario.document import ScenarioError, check, check_document, load

# ---- bad files: (name, old text of BASE, new text, line, field, a part of the hint) ------------------------

BAD = [
    ("unknown field", "  seed: 7", "  sead: 7", 7, "spec.sead", 'did you mean "seed"?'),
    ("duration without unit", "duration: 2d", "duration: 3600", 6, "spec.duration", '"3600s"'),
    ("duration in words", "duration: 2d", "duration: 2days", 6, "spec.duration", "90s, 10m, 2h"),
    ("rate in words", "rate: 12/h", "rate: 12 per hour", 14, "spec.workloads[0].arrival.poisson.rate",
     "12/h, 0.5/min"),
    ("run time as a number", "mean: 30m", "mean: 30", 15, "spec.workloads[0].runFor.exponential.mean", '"30s"'),
    ("two arrival processes", "arrival: {poisson: {rate: 12/h}}", "arrival: {poisson: {rate: 12/h}, at: 30s}", 14,
     "spec.workloads[0].arrival", "e.g. arrival: {poisson"),
    ("peak past midnight", 'peak: "14:00"', 'peak: "25:00"', 41, "spec.workloads[1].service.rate.diurnal.peak",
     '"14:00"'),
    ("autoscaler kind", "kind: hpa", "kind: hap", 43, "spec.workloads[1].service.autoscaler.kind",
     'did you mean "hpa"?'),
    ("autoscaler metric", "metric: DCGM_FI_DEV_GPU_UTIL", "metric: DCGM_FI_DEV_GPU_UTILS", 43,
     "spec.workloads[1].service.autoscaler.metric", 'did you mean "DCGM_FI_DEV_GPU_UTIL"?'),
    ("HPA to zero", "maxReplicas: 4", "maxReplicas: 4, minReplicas: 0", 43,
     "spec.workloads[1].service.autoscaler.minReplicas", "kind: keda"),
    ("GPU manager", "{gpuManager: device-plugin}", "{gpuManager: device-plugins}", 47,
     "spec.variants[1].overrides.gpuManager", 'did you mean "device-plugin"?'),
    ("variant twice", "  - name: device-plugin", "  - name: dra", 46, "spec.variants[1].name",
     "name each variant once"),
    ("workload twice", "  - name: serve", "  - name: train", 29, "spec.workloads[1].name", "name each workload once"),
    ("Job without run time", "    runFor: {exponential: {mean: 30m}}\n", "", 13, "spec.workloads[0].runFor",
     "runFor: 30m"),
    ("unknown instance type", "p5.48xlarge, count: 2", "p9.48xlarge, count: 2", 10,
     "spec.cluster.generate[0].instanceType", "cluster generate --help"),
    ("scoring policy", "  seed: 7", "  seed: 7\n  scoring: MostAlocated", 8, "spec.scoring",
     'did you mean "MostAllocated"?'),
    ("seed and seeds", "  seed: 7", "  seed: 7\n  seeds: [1, 2]", 8, "spec.seeds", "into the seeds list"),
    ("model of no workload", "  seed: 7", "  seed: 7\n  coldStart: {models: {trian: 16Gi}}", 8,
     "spec.coldStart.models[trian]", 'did you mean "train"?'),
    ("bandwidth without /s", "  seed: 7", "  seed: 7\n  coldStart: {imagePullBandwidth: 200Mi}", 8,
     "spec.coldStart.imagePullBandwidth", "200Mi/s"),
    ("service of no Deployment", "requestsPerSecondPerGpu: 20", "requestsPerSecondPerGpu: 20\n      deployment: vlm",
     43, "spec.workloads[1].service.deployment", 'did you mean "vllm"?'),
    ("missing cluster file", "    generate:", "    files: [missing.yaml]\n    generate:", 9, "spec.cluster.files[0]",
     "relative to the scenario file"),
    ("bad MIG profile", "{gpuManager: device-plugin}", "{sharing: {mig: [big]}}", 47,
     "spec.variants[1].overrides.sharing.mig[0]", "--mig"),
    ("sharing without profiles", "{gpuManager: device-plugin}", "{sharing: mig}", 47,
     "spec.variants[1].overrides.sharing", "mapping"),
    ("wrong apiVersion", "apiVersion: dratwin.io/v1alpha1", "apiVersion: dratwin.io/v1", 1, "apiVersion",
     'did you mean "dratwin.io/v1alpha1"?'),
    ("template without workload", "      kind: Job", "      kind: ConfigMap", 16, "spec.workloads[0].template",
     "add the workload's manifest"),
    ("cluster object in a template", "      kind: Job", "      kind: DeviceClass", 18,
     "spec.workloads[0].template.kind", "spec.cluster.objects"),
    ("trace run time without a trace", "runFor: {exponential: {mean: 30m}}", "runFor: trace", 15,
     "spec.workloads[0].runFor", "arrival: {trace"),
    ("missing trace", "arrival: {poisson: {rate: 12/h}}", "arrival: {trace: {file: nope.csv}}", 14,
     "spec.workloads[0].arrival.trace.file", "relative to the scenario file"),
    ("sharing of no generated type", "{gpuManager: device-plugin}", "{sharing: {mig: [1g.10gb], instanceTypes: "
     "[p5.48xlage]}}", 47, "spec.variants[1].overrides.sharing.instanceTypes[0]", 'did you mean "p5.48xlarge"?'),
    ("template of no workload", "{gpuManager: device-plugin}", "{templates: {trian: {kind: Job}}}", 47,
     "spec.variants[1].overrides.templates[trian]", 'did you mean "train"?'),
    ("a rate per second meant per hour", "rate: 12/h", "rate: 12/s", 14, "spec.workloads[0].arrival",
     "check the rate's unit"),
    ("amplitude over 1", "amplitude: 0.5", "amplitude: 1.5", 41, "spec.workloads[1].service.rate.diurnal.amplitude",
     "0 is a flat rate"),
]


@pytest.mark.parametrize(("old", "new", "line", "field", "hint"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_scenarios(tmp_path: Path, old: str, new: str, line: int, field: str, hint: str) -> None:
    path = write(tmp_path, edited(old, new))
    scenario, runs, problems = check(path)
    errors = [p for p in problems if p.is_error]
    assert scenario is None and runs == []
    found = [p for p in errors if p.field == field]
    assert found, f"no error at {field}: {[str(p) for p in errors]}"
    assert (found[0].file, found[0].line) == (path, line)
    assert hint in found[0].hint, str(found[0])


def test_a_manifest_inside_is_validated_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, edited("restartPolicy: Never", "restartPolicy: Never\n            nodeSelectr: {}"))
    problems = [p for p in check(path)[2] if p.is_error]
    assert [(p.line, p.object, p.field) for p in problems] == [(24, "Job ml/train", "spec.template.spec.nodeSelectr")]
    assert 'did you mean "nodeSelector"?' in problems[0].hint


def test_an_arrival_after_the_end_is_a_warning(tmp_path: Path) -> None:
    text = edited("    arrival: {poisson: {rate: 12/h}}", "    arrival: {at: 3d}")
    scenario, runs, problems = check(write(tmp_path, text))
    assert scenario is not None and [(p.line, p.field, p.is_error) for p in problems] == [
        (14, "spec.workloads[0].arrival.at", False)]
    assert scenario.warnings == tuple(problems) and "before the duration" in problems[0].hint
    assert not [a for a in runs[0].arrivals if a.objects[0].kind == "Job"]


def test_several_errors_at_once(tmp_path: Path) -> None:
    text = edited("  seed: 7", "  sead: 7", edited("rate: 12/h", "rate: 12 per hour", edited(
        'peak: "14:00"', 'peak: "25:00"')))
    problems = check(write(tmp_path, text))[2]
    assert [p.line for p in problems] == [7, 14, 41]


def test_load_raises_every_problem_as_one_input_error(tmp_path: Path) -> None:
    path = write(tmp_path, edited("rate: 12/h", "rate: 12 per hour", edited('peak: "14:00"', 'peak: "25:00"')))
    with pytest.raises(ScenarioError) as raised:
        load(path)
    assert len(raised.value.problems) == 2
    assert f"{path}:14:" in str(raised.value) and f"{path}:41:" in str(raised.value)


@pytest.mark.parametrize(("text", "message"), [("", "has 0"), ("a: [\n", "not valid YAML"),
                                               (BASE + "---\n" + BASE, "has 2")],
                         ids=["empty", "not YAML", "two documents"])
def test_files_that_are_no_scenario(tmp_path: Path, text: str, message: str) -> None:
    problems = check(write(tmp_path, text))[2]
    assert len(problems) == 1 and problems[0].is_error and message in str(problems[0]), problems


def test_validate_command_checks_scenarios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, BASE, "good.yaml")
    bad = write(tmp_path, edited("  seed: 7", "  sead: 7"), "bad.yaml")
    assert main(["validate", "-f", good]) == 0
    assert main(["validate", "-f", bad]) == 1
    assert f'{bad}:7: Scenario small: spec.sead: Unknown field: unknown field "sead" (did you mean "seed"?)' in (
        capsys.readouterr().out)


# ---- good files: (name, edit of BASE, what the runs show) ---------------------------------------------------


def _runs(tmp_path: Path, text: str) -> list:  # type: ignore[type-arg]
    scenario, runs, problems = check(write(tmp_path, text))
    assert scenario is not None, [str(p) for p in problems]
    assert not [p for p in problems if p.is_error]
    return runs


def test_the_base_scenario(tmp_path: Path) -> None:
    runs = _runs(tmp_path, BASE)
    assert [(r.variant, r.seed, r.until_seconds) for r in runs] == [("dra", 7, 172800.0),
                                                                     ("device-plugin", 7, 172800.0)]
    run = runs[0]
    assert run.provisioner == "none" and run.scoring == "LeastAllocated"
    kinds = sorted({o.kind for o in run.objects})
    assert kinds == ["Node", "ResourceSlice"]
    assert not any(o.kind == "ResourceSlice" and "gpu.nvidia.com" in str(o.raw) for o in runs[1].objects)
    (service,) = run.services
    assert service.deployment == "default/vllm" and service.requests_per_second_per_gpu == 20
    assert service.autoscaler is not None and service.autoscaler.settings["tolerance"] == 0.1
    assert run.arrivals[0].at_seconds == 0.0 and run.arrivals[0].objects[0].name == "vllm"


GOOD = [
    ("node pools: karpenter", "    generate:\n",
     "    nodePools:\n    - {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: gpu}, spec: {template: "
     "{spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}, requirements: []}}}}\n"
     "    - {apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: gpu}, spec: {role: r, "
     "amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms:"
     " [{tags: {a: b}}]}}\n    generate:\n",
     lambda r: r.provisioner == "karpenter" and sum(o.kind in ("NodePool", "EC2NodeClass") for o in r.objects) == 2),
    ("auto mode", "    generate:\n", "    autoMode: true\n    generate:\n",
     lambda r: r.provisioner == "auto-mode"
     and any("eks.amazonaws.com/instance-category" in o.raw["metadata"].get("labels", {}) for o in r.objects)),
    ("launch times", "    generate:\n", "    launchTimes: {default: 90s, byInstanceType: {p5.48xlarge: 6m}}\n"
     "    generate:\n",
     lambda r: r.default_node_launch_seconds == 90 and r.node_launch_seconds == {"p5.48xlarge": 360}),
    ("seeds", "  seed: 7", "  seeds: [1, 2]", lambda r: r.seed in (1, 2)),
    ("scoring", "  seed: 7", "  seed: 7\n  scoring: FGD", lambda r: r.scoring == "FGD"),
    ("rate points", "rate: {diurnal: {mean: 40/s, peak: \"14:00\", amplitude: 0.5}}",
     "rate: {points: [{at: 0s, requestsPerSecond: 5}, {at: 1h, requestsPerSecond: 50}]}",
     lambda r: [(p.at_seconds, p.requests_per_second) for p in r.services[0].rate] == [(0, 5), (3600, 50)]),
    ("keda defaults", "autoscaler: {kind: hpa, metric: DCGM_FI_DEV_GPU_UTIL, target: 70, maxReplicas: 4}",
     "autoscaler: {kind: keda, target: 70, pollingInterval: 10s}",
     lambda r: (r.services[0].autoscaler.min_replicas, r.services[0].autoscaler.max_replicas,
                r.services[0].autoscaler.settings["pollingInterval"],
                r.services[0].autoscaler.settings["cooldownPeriod"]) == (0, 100, 10, 300)),
    ("cold start", "  seed: 7", "  seed: 7\n  coldStart: {images: {vllm: 12Gi}, models: {serve: 16Gi}, "
     "clusterCache: true, warmUp: 1m}",
     lambda r: r.cold_start.image_bytes == {"vllm": 12 * 2**30} and r.cold_start.cluster_cache
     and r.cold_start.model_bytes == {"default/vllm": 16 * 2**30} and r.cold_start.warm_up_seconds == 60
     and r.cold_start.node_image_bandwidth == 125 * 2**20),
    ("fixed arrival of several", "    arrival: {poisson: {rate: 12/h}}", "    arrival: {at: 1h}\n    count: 3",
     lambda r: [(a.at_seconds, a.objects[0].name) for a in r.arrivals if a.objects[0].kind == "Job"]
     == [(3600, "train-0"), (3600, "train-1"), (3600, "train-2")]),
    ("until", "    arrival: {poisson: {rate: 12/h}}", "    arrival: {poisson: {rate: 12/h}}\n    until: 3h",
     lambda r: all(a.at_seconds < 3 * 3600 for a in r.arrivals) and len(r.arrivals) > 10),
]


@pytest.mark.parametrize(("old", "new", "holds"), [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_good_scenarios(tmp_path: Path, old: str, new: str, holds: object) -> None:
    runs = _runs(tmp_path, edited(old, new))
    assert runs and all(holds(run) for run in runs)  # type: ignore[operator]


def test_cluster_files_and_a_trace_relative_to_the_scenario(tmp_path: Path) -> None:
    shutil.copy(DATA / "trace" / "pod_list.csv", tmp_path / "pods.csv")
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "deviceclasses.yaml", tmp_path / "classes.yaml")
    text = edited("    generate:", "    files: [classes.yaml]\n    generate:", edited(
        "    arrival: {poisson: {rate: 12/h}}\n    runFor: {exponential: {mean: 30m}}",
        "    arrival: {trace: {file: pods.csv, format: alibaba-v2023}}\n    runFor: trace\n    count: 5"))
    (run, _) = _runs(tmp_path, text)
    assert any(o.kind == "DeviceClass" and o.source.path.endswith("classes.yaml") for o in run.objects)
    jobs = [a for a in run.arrivals if a.objects[0].kind == "Job"]
    # the first five rows: created at, run from scheduling (from creation when never scheduled) to deletion
    assert [(a.at_seconds, a.run_seconds) for a in jobs] == [
        (814, 84428 - 814), (2450, 26208 - 2567), (2514, 61694 - 2575), (3243, 34858 - 3316), (4533, 68055 - 4533)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_no_input_raises(data: st.DataObject) -> None:
    """Any value anywhere in a scenario is reported, never raised."""
    doc = load_paths([write(Path(_scratch()), BASE)])[0]
    raw = doc.raw
    values = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
                       st.text(max_size=8), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                                    st.integers(),
                                                                                                    max_size=2))
    for _ in range(data.draw(st.integers(1, 3))):
        target = raw
        while isinstance(target, dict | list) and target and data.draw(st.booleans()):
            keys = list(target) if isinstance(target, dict) else list(range(len(target)))
            step = data.draw(st.sampled_from(keys))
            if not isinstance(target[step], dict | list):  # type: ignore[index]
                break
            target = target[step]  # type: ignore[index]
        if isinstance(target, dict) and target:
            target[data.draw(st.sampled_from(list(target)))] = data.draw(values)
    check_document(LoadedObject(raw, SourceLocation("fuzz.yaml", 0, 1)))


_SCRATCH: list[str] = []


def _scratch() -> str:
    if not _SCRATCH:
        import tempfile

        _SCRATCH.append(tempfile.mkdtemp(prefix="dratwin-scenario-"))
    return _SCRATCH[0]

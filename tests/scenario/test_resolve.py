"""Scenarios resolved into run specifications: variants, seeds, determinism, names and references."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.builders.scenarios import claim_template, gpu_class, job, scenario, write_document

from dratwin.scenario.document import check, load
from dratwin.scenario.model import RunSpec

POISSON = {"poisson": {"rate": "6/h"}}
TRAIN = {"name": "train", "template": job("train"), "arrival": POISSON, "runFor": {"exponential": {"mean": "30m"}}}


def _deployment(name: str = "vllm") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "serve"},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "c", "image": "vllm", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}


SERVE = {"name": "serve", "template": _deployment(), "service": {
    "rate": {"points": [{"at": "0s", "requestsPerSecond": 10}]}, "requestsPerSecondPerGpu": 5,
    "autoscaler": {"kind": "hpa", "target": 70, "maxReplicas": 6}}}


def _load(tmp_path: Path, document: dict[str, Any], **options: Any) -> list[RunSpec]:
    return load(write_document(tmp_path, document), **options)[1]


def _fingerprint(run: RunSpec) -> Any:
    return (run.variant, run.seed, [o.raw for o in run.objects],
            [(a.at_seconds, a.run_seconds, [o.raw for o in a.objects]) for a in run.arrivals], run.services)


def test_same_file_same_runs(tmp_path: Path) -> None:
    document = scenario([TRAIN, SERVE], seeds=[1, 2])
    assert [_fingerprint(r) for r in _load(tmp_path, document)] == [_fingerprint(r) for r in _load(tmp_path, document)]


def test_variants_times_seeds_in_file_order(tmp_path: Path) -> None:
    document = scenario([TRAIN], seeds=[3, 1], variants=[{"name": "a"}, {"name": "b", "overrides": {"scoring":
                                                                                                      "MostAllocated"}}])
    runs = _load(tmp_path, document)
    assert [(r.variant, r.seed, r.scoring) for r in runs] == [("a", 3, "LeastAllocated"), ("a", 1, "LeastAllocated"),
                                                             ("b", 3, "MostAllocated"), ("b", 1, "MostAllocated")]
    assert [a.at_seconds for a in runs[0].arrivals] == [a.at_seconds for a in runs[2].arrivals]  # same seed, same
    assert [a.at_seconds for a in runs[0].arrivals] != [a.at_seconds for a in runs[1].arrivals]


def test_load_replaces_seeds_and_duration(tmp_path: Path) -> None:
    runs = _load(tmp_path, scenario([TRAIN], duration="7d"), seeds=[9], until_seconds=3600.0)
    assert [(r.seed, r.until_seconds) for r in runs] == [(9, 3600.0)]
    assert all(a.at_seconds < 3600.0 for a in runs[0].arrivals)


def test_every_object_of_a_run_has_its_own_name(tmp_path: Path) -> None:
    train = {**TRAIN, "template": [job("train", claim_template="gpu"), claim_template("gpu")]}
    document = scenario([train, SERVE], cluster={"objects": [gpu_class()], "generate": [
        {"instanceType": "p5.48xlarge", "count": 2}, {"instanceType": "p5.48xlarge", "count": 1, "taints":
                                                      ["nvidia.com/gpu:NoSchedule"]}]})
    (run,) = _load(tmp_path, document)
    names = [(o.kind, o.namespace, o.name) for o in run.objects] + [
        (o.kind, o.namespace, o.name) for a in run.arrivals for o in a.objects]
    assert len(names) == len(set(names))
    assert len([n for n in names if n[0] == "Node"]) == 3
    jobs = [a for a in run.arrivals if a.objects[0].kind == "Job"]
    assert len(jobs) > 50
    for number, arrival in enumerate(jobs):  # arrivals are in time order, numbered in that order
        made, template = arrival.objects
        assert (made.name, template.name) == (f"train-{number}", f"gpu-{number}")
        claims = made.raw["spec"]["template"]["spec"]["resourceClaims"]
        assert claims == [{"name": "gpu", "resourceClaimTemplateName": f"gpu-{number}"}]
    assert [a.at_seconds for a in run.arrivals] == sorted(a.at_seconds for a in run.arrivals)


def test_a_workload_added_leaves_the_others_samples(tmp_path: Path) -> None:
    alone = _load(tmp_path, scenario([TRAIN]))[0]
    other = {**TRAIN, "name": "finetune", "template": job("finetune")}
    together = _load(tmp_path, scenario([other, TRAIN]))[0]

    def train(run: RunSpec) -> list[tuple[float, float | None]]:
        return [(a.at_seconds, a.run_seconds) for a in run.arrivals if a.objects[0].name.startswith("train-")]

    assert train(alone) == train(together) and len(train(alone)) > 50


def test_another_run_time_leaves_the_arrival_times(tmp_path: Path) -> None:
    fixed = _load(tmp_path, scenario([{**TRAIN, "runFor": "10m"}]))[0]
    drawn = _load(tmp_path, scenario([TRAIN]))[0]
    assert [a.at_seconds for a in fixed.arrivals] == [a.at_seconds for a in drawn.arrivals]
    assert {a.run_seconds for a in fixed.arrivals} == {600.0}
    assert len({a.run_seconds for a in drawn.arrivals}) == len(drawn.arrivals)


def _nodes(run: RunSpec) -> list[dict[str, Any]]:
    return [o.raw for o in run.objects if o.kind == "Node"]


def _gpu_devices(run: RunSpec) -> list[dict[str, Any]]:
    return [d for o in run.objects if o.kind == "ResourceSlice" and o.raw["spec"]["driver"] == "gpu.nvidia.com"
            for d in o.raw["spec"]["devices"]]


VARIANTS = [
    ("DRA by default", {}, lambda r: len(_gpu_devices(r)) == 8 and "nvidia.com/gpu" not in _nodes(r)[0]["status"][
        "allocatable"]),
    ("device plugin", {"gpuManager": "device-plugin"},
     lambda r: not _gpu_devices(r) and _nodes(r)[0]["status"]["allocatable"]["nvidia.com/gpu"] == "8"),
    ("MIG", {"sharing": {"mig": ["3g.40gb=1", "1g.10gb"]}},
     lambda r: {d["attributes"]["profile"]["string"] for d in _gpu_devices(r)} == {"3g.40gb", "1g.10gb"}),
    ("MIG through the device plugin", {"gpuManager": "device-plugin", "sharing": {"mig": ["1g.10gb"]}},
     lambda r: _nodes(r)[0]["status"]["allocatable"].get("nvidia.com/mig-1g.10gb") == "56"),
    ("another fleet", {"cluster": {"generate": [{"instanceType": "g6.12xlarge", "count": 3}]}},
     lambda r: [n["metadata"]["labels"]["node.kubernetes.io/instance-type"] for n in _nodes(r)] == ["g6.12xlarge"] * 3),
    ("scoring", {"scoring": "GpuPacking"}, lambda r: r.scoring == "GpuPacking"),
]


@pytest.mark.parametrize(("overrides", "holds"), [c[1:] for c in VARIANTS], ids=[c[0] for c in VARIANTS])
def test_variant_overrides(tmp_path: Path, overrides: dict[str, Any], holds: object) -> None:
    document = scenario([TRAIN], variants=[{"name": "v", "overrides": overrides}])
    (run,) = _load(tmp_path, document)
    assert run.variant == "v" and holds(run)  # type: ignore[operator]


def test_sharing_whole_undoes_the_clusters_mig(tmp_path: Path) -> None:
    cluster = {"generate": [{"instanceType": "p5.48xlarge", "mig": ["1g.10gb"]}]}
    document = scenario([TRAIN], cluster=cluster, variants=[{"name": "mig"}, {"name": "whole", "overrides": {
        "sharing": "whole"}}])
    mig, whole = _load(tmp_path, document)
    assert len(_gpu_devices(mig)) == 56 and len(_gpu_devices(whole)) == 8


def test_autoscaler_override_replaces_only_what_it_names(tmp_path: Path) -> None:
    document = scenario([TRAIN, SERVE], variants=[{"name": "dcgm"}, {"name": "cpu", "overrides": {"autoscaler": {
        "metric": "cpu", "target": 60}}}, {"name": "keda", "overrides": {"autoscaler": {"kind": "keda"}}}])
    dcgm, cpu, keda = (run.services[0].autoscaler for run in _load(tmp_path, document))
    assert dcgm is not None and cpu is not None and keda is not None
    assert (dcgm.metric, dcgm.target, dcgm.max_replicas) == ("DCGM_FI_DEV_GPU_UTIL", 70, 6)
    assert (cpu.metric, cpu.target, cpu.max_replicas) == ("cpu", 60, 6)
    # bounds the service does not set take the new kind's defaults (KEDA: from zero), the ones it sets stay
    assert (keda.kind, keda.min_replicas, keda.max_replicas, keda.settings["cooldownPeriod"]) == (
        "keda", 0, 6, 300)


def test_a_service_that_arrives_several_times_is_several_services(tmp_path: Path) -> None:
    serve = {**SERVE, "arrival": {"at": "1h"}, "count": 2}
    (run,) = _load(tmp_path, scenario([serve]))
    assert [s.deployment for s in run.services] == ["serve/vllm-0", "serve/vllm-1"]


def test_two_workloads_making_one_name_is_an_error(tmp_path: Path) -> None:
    twin = {**TRAIN, "name": "again"}
    path = write_document(tmp_path, scenario([TRAIN, twin]))
    problems = [p for p in check(path)[2] if p.is_error]
    assert [(p.field, p.hint) for p in problems] == [
        ("spec.workloads[1].template", "give the objects of each workload their own names")]
    assert "train-0" in problems[0].value  # type: ignore[operator]


def test_generated_parts_with_other_options_get_other_names(tmp_path: Path) -> None:
    cluster = {"generate": [{"instanceType": "p5.48xlarge", "count": 2},
                            {"instanceType": "p5.48xlarge", "count": 2, "gpuManager": "device-plugin"}]}
    (run,) = _load(tmp_path, scenario([TRAIN], cluster=cluster))
    names = [n["metadata"]["name"] for n in _nodes(run)]
    assert len(set(names)) == 4
    managers = [n["metadata"]["labels"]["eks.amazonaws.com/device-manager-nvidia"] for n in _nodes(run)]
    assert managers == ["dra", "dra", "device-plugin", "device-plugin"]


_DIGEST = """
import hashlib, json, sys
from dratwin.scenario.document import load
runs = load(sys.argv[1])[1]
text = json.dumps([[r.variant, r.seed, [o.raw for o in r.objects],
                    [[a.at_seconds, a.run_seconds, [o.raw for o in a.objects]] for a in r.arrivals]] for r in runs])
print(hashlib.sha256(text.encode()).hexdigest())
"""


def test_runs_are_the_same_in_another_process(tmp_path: Path) -> None:
    """Byte for byte, whatever the interpreter's string-hash seed (no set or hash order leaks into a run)."""
    path = write_document(tmp_path, scenario([TRAIN, SERVE], seeds=[1, 2], variants=[
        {"name": "a"}, {"name": "b", "overrides": {"gpuManager": "device-plugin"}}]))
    digests = {subprocess.run([sys.executable, "-c", _DIGEST, path], env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout for seed in ("1", "2")}
    assert len(digests) == 1 and len(digests.pop().strip()) == 64



def test_every_autoscaler_of_the_example_is_one_the_cores_accept() -> None:
    # The scenario hands its knobs to the HPA and KEDA cores; a key they do not read is refused there.
    from dratwin.autoscaling.hpa import HpaConfig
    from dratwin.autoscaling.keda import KedaConfig
    from dratwin.scenario.autoscaling import HPA_DEFAULTS, KEDA_DEFAULTS, core_settings
    from dratwin.scenario.model import AutoscalerSpec

    example = Path(__file__).parents[2] / "examples" / "simulate" / "eks-gpu-fleet.yaml"
    _, runs = load(example)
    scalers = [s.autoscaler for run in runs for s in run.services if s.autoscaler is not None]
    assert {a.metric for a in scalers} == {"DCGM_FI_DEV_GPU_UTIL", "cpu"}
    for scaler in scalers:
        assert HpaConfig.from_spec(scaler).max_replicas == scaler.max_replicas
    for scale_up_given in (False, True):
        hpa = AutoscalerSpec("hpa", "cpu", 60.0, 1, 4, core_settings(dict(HPA_DEFAULTS), scale_up_given))
        assert (HpaConfig.from_spec(hpa).behavior is not None) == scale_up_given
        keda = AutoscalerSpec("keda", "DCGM_FI_DEV_GPU_UTIL", 60.0, 0, 4,
                              core_settings(dict(KEDA_DEFAULTS), scale_up_given))
        assert KedaConfig.from_spec(keda) is not None


def _queue(name: str, gpus: int) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                {"name": "p5", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}}


FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "p5"}}


def test_a_variants_objects_replace_the_clusters_in_place_or_are_added(tmp_path: Path) -> None:
    """overrides.objects: the object of the same group, kind, namespace and name is replaced where it stands (the
    version is not part of the identity); a new one is added; the other variant keeps the cluster's."""
    cluster = {"generate": [{"instanceType": "p5.48xlarge", "count": 1}], "objects": [FLAVOR, _queue("a", 8)]}
    cohort = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "research"}}
    small = {**_queue("a", 4), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    document = scenario([TRAIN], cluster=cluster, variants=[
        {"name": "base"}, {"name": "small", "overrides": {"objects": [small, cohort]}}])
    base, changed = _load(tmp_path, document)
    kinds = [o.kind for o in base.objects if o.kind not in ("Node", "ResourceSlice")]
    assert kinds == ["ResourceFlavor", "ClusterQueue"]
    assert [o.kind for o in changed.objects if o.kind not in ("Node", "ResourceSlice")] == [*kinds, "Cohort"]
    queues = [o.raw for o in changed.objects if o.kind == "ClusterQueue"]
    assert [q["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] for q in queues] == [4]
    assert [o.raw for o in base.objects if o.kind == "ClusterQueue"] == [_queue("a", 8)]


@pytest.mark.parametrize(("objects", "field", "hint"), [
    ([{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue"}], "spec.variants[0].overrides.objects[0]",
     "written whole"),
    ([FLAVOR, FLAVOR], "spec.variants[0].overrides.objects[1]", "write each object once"),
])
def test_a_variants_objects_must_be_named_once(tmp_path: Path, objects: list[dict[str, Any]], field: str,
                                              hint: str) -> None:
    document = scenario([TRAIN], variants=[{"name": "v", "overrides": {"objects": objects}}])
    _, _, problems = check(write_document(tmp_path, document))
    errors = [p for p in problems if p.is_error]
    assert any(p.field == field and hint in p.hint for p in errors), [str(p) for p in errors]

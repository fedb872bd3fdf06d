"""GPU-hours used, DCGM values per device at the samples, and GPU-hours of every way GPUs are handed out.

The expected values are worked out by hand from the serving model's rules (sim/gpu_use.py, serving/):
a replica offered ``rate`` requests per second on a whole GPU that serves ``per_gpu`` is busy
``rate / per_gpu``; DCGM_FI_DEV_GPU_UTIL is 100 times that, SM active 0.75 and tensor active 0.30 times
it, and vLLM holds 0.9 of the GPU's memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node, resource_claim
from tests.builders.sim import deployment, inference, job, mig_slice, shared_deployment, template

from dratwin.api.loader import load_text
from dratwin.catalog import load_catalog
from dratwin.scenario.model import ServiceSpec
from dratwin.sim.batch import RunOutput
from dratwin.sim.exports import metrics_sets
from dratwin.sim.gpu_use import GPU_UTILIZATION_ANNOTATION, TRAINING_GPU_UTIL_PERCENT
from dratwin.sim.quick_scenario import parse_duration, run_spec
from dratwin.sim.run import SimOptions, Simulation, simulate
from dratwin.sim.timeline import Timeline

P5 = {"node.kubernetes.io/instance-type": "p5.48xlarge"}
MIB_80G = 80 * 1024.0


def run(text: str, until: str = "30m", services: tuple[ServiceSpec, ...] = ()) -> Simulation:
    spec = run_spec(load_text(text, "cluster.yaml"), name="cluster.yaml", seed=0, until_seconds=parse_duration(until))
    spec = dataclasses.replace(spec, services=services)
    return simulate(spec, SimOptions(catalog=load_catalog(), sample_every=300.0, check_invariants=True))


def timeline(sim: Simulation) -> Timeline:
    assert sim.timeline is not None
    return sim.timeline


def annotated_job(name: str, percent: str) -> dict[str, object]:
    raw = job(name, "one", at="10s", run_for="10m")
    raw["spec"]["template"]["metadata"] = {"annotations": {GPU_UTILIZATION_ANNOTATION: percent}}  # type: ignore[index]
    return raw


@dataclass(frozen=True)
class TrainingCase:
    name: str
    workload: dict[str, object]
    percent: float


TRAINING = [
    TrainingCase("the default utilization", job("a", "one", at="10s", run_for="10m"), TRAINING_GPU_UTIL_PERCENT),
    TrainingCase("the pod's annotation", annotated_job("a", "50"), 50.0),
]


@pytest.mark.parametrize("case", TRAINING, ids=[c.name for c in TRAINING])
def test_a_training_job_uses_its_utilization_of_its_gpu_while_it_runs(case: TrainingCase) -> None:
    sim = run(manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), template("one"), case.workload))
    # One GPU, running 10 minutes (no cold start): used = utilization x 1/6 h; allocated is the same 10 minutes.
    assert sim.result.gpu_hours_allocated == pytest.approx(10 / 60, abs=1e-3)
    assert sim.result.gpu_hours_used == pytest.approx(case.percent / 100 * 10 / 60, abs=1e-3)
    sampled = timeline(sim)
    assert sampled.used_gpus == pytest.approx([0.0, case.percent / 100, case.percent / 100, 0.0, 0.0, 0.0, 0.0])
    busy = [values for values in sampled.device_gpu_util.values() if any(values)]
    assert busy == [[0.0, case.percent, case.percent, 0.0, 0.0, 0.0, 0.0]]


def test_a_utilization_annotation_that_is_no_percentage_is_refused_with_its_pod() -> None:
    text = manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), template("one"), annotated_job("a", "x"))
    with pytest.raises(Exception, match=r"pod default/a-.*gpu-utilization='x'.*0 to 100"):
        run(text)


def serving(replicas: int = 1) -> str:
    return manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), template("one"),
                    deployment("svc", "one", replicas))


def test_a_half_busy_replica_shows_dcgms_values_and_uses_half_its_gpu() -> None:
    sim = run(serving(), until="1h", services=(inference("svc", (0.0, 5.0), (3600.0, 5.0), per_gpu=10.0),))
    sampled = timeline(sim)
    [key] = [k for k, values in sampled.device_pod.items() if any(values)]
    assert sampled.device_gpu_util[key][1:] == pytest.approx([50.0] * 12)
    assert sampled.device_sm_active[key][1:] == pytest.approx([0.375] * 12)
    assert sampled.device_tensor_active[key][1:] == pytest.approx([0.15] * 12)
    assert sampled.device_fb_used_mib[key][1:] == pytest.approx([0.9 * MIB_80G] * 12, rel=1e-6)
    assert sampled.used_gpus[1:] == pytest.approx([0.5] * 12)
    served = sim.result.services[0].served
    assert sim.result.gpu_hours_used == pytest.approx(served / 10.0 / 3600, abs=1e-6)
    assert sim.result.gpu_hours_used == pytest.approx(0.5 * sim.result.gpu_hours_allocated, rel=0.01)


def test_the_idle_gpu_shows_zero_and_no_pod() -> None:
    sampled = timeline(run(serving(), until="10m", services=(inference("svc", (0.0, 5.0), (600.0, 5.0)),)))
    idle = [k for k, values in sampled.device_pod.items() if not any(values)]
    assert len(idle) == 1 and sampled.device_gpu_util[idle[0]] == [0.0, 0.0, 0.0]


@dataclass(frozen=True)
class FootingCase:
    name: str
    text: str
    capacity_gpus: float
    allocated_gpus: float


PLUGIN_NODE = node("n1", labels=P5, extended={"nvidia.com/gpu": "2"})
PLUGIN_JOB = job("a", at="10s", run_for="10m")
PLUGIN_JOB["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}  # type: ignore[index]

FOOTING = [
    FootingCase("DRA GPUs", manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), template("one"),
                                     job("a", "one", at="10s", run_for="10m")), 2.0, 1.0),
    FootingCase("device-plugin GPUs", manifest(PLUGIN_NODE, PLUGIN_JOB), 2.0, 1.0),
    # Two 3g partitions: 3 of 7 compute slices each.
    FootingCase("MIG partitions", manifest(gpu_class(), node("n1", labels=P5), mig_slice("n1", "3g.40gb", 2),
                                           template("one"), job("a", "one", at="10s", run_for="10m")),
                6 / 7, 3 / 7),
]


@pytest.mark.parametrize("case", FOOTING, ids=[c.name for c in FOOTING])
def test_gpu_hours_count_gpus_however_they_are_handed_out(case: FootingCase) -> None:
    sim = run(case.text)
    sampled = timeline(sim)
    assert sampled.capacity_gpus == pytest.approx([case.capacity_gpus] * 7, abs=1e-6)
    assert sampled.allocated_gpus == pytest.approx([0.0, case.allocated_gpus, case.allocated_gpus, 0, 0, 0, 0],
                                                   abs=1e-6)
    present = sim.result.gpu_hours_allocated + sim.result.gpu_hours_idle
    assert present == pytest.approx(case.capacity_gpus * 0.5, abs=1e-5)
    assert sim.result.gpu_hours_allocated == pytest.approx(case.allocated_gpus * 10 / 60, abs=1e-3)


def test_a_device_plugin_gpu_is_attributed_to_its_pod_with_the_nodes_gpu_model() -> None:
    labelled = node("n1", labels={**P5, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                    extended={"nvidia.com/gpu": "2"})
    sampled = timeline(run(manifest(labelled, PLUGIN_JOB)))
    assert sorted(sampled.devices) == ["nvidia.com/gpu/n1/gpu-0", "nvidia.com/gpu/n1/gpu-1"]
    assert {d.model_name for d in sampled.devices.values()} == {"NVIDIA-H100-80GB-HBM3"}
    held = sampled.device_pod["nvidia.com/gpu/n1/gpu-0"]
    assert held[0] == "" and held[1] is not None and held[1].startswith("default/a-")


def test_fragmentation_is_the_free_gpu_a_popular_shape_cannot_use() -> None:
    # A two-GPU job runs first, then a one-GPU job holds one of the two GPUs: half the pods placed so far need
    # two GPUs, so the free GPU is a fragment for them: 0.5 x 1 GPU fragmented, half of the free GPU share.
    text = manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), template("one"), template("two", gpus=2),
                    job("big", "two", at="10s", run_for="4m"), job("small", "one", at="6m", run_for="20m"))
    sim = run(text)
    sampled = timeline(sim)
    assert sampled.fragmented_gpus[:3] == pytest.approx([0.0, 0.0, 0.5])
    assert sampled.fragmented_share[:3] == pytest.approx([0.0, 0.0, 0.5])
    assert sim.result.fragmentation is not None
    assert sim.result.fragmentation.mean_share == pytest.approx(sum(sampled.fragmented_share) / 7, abs=1e-6)
    assert sim.result.fragmentation.max_share == 0.5


def test_pods_time_slicing_a_gpu_each_show_its_values_and_use_it_once() -> None:
    # 6 requests/s over two replicas sharing one GPU of 10/s: 30% busy each, the GPU 60% busy.
    text = manifest(gpu_class(), node("n1", labels=P5), gpu_slice("n1", 2), resource_claim("shared", {
        "name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}), shared_deployment("svc", "shared", 2))
    sim = run(text, until="10m", services=(inference("svc", (0.0, 6.0), (600.0, 6.0)),))
    sampled = timeline(sim)
    assert sampled.used_gpus[1:] == pytest.approx([0.6, 0.6])
    [holders] = {pods[1] for pods in sampled.device_pod.values() if pods[1]}
    assert holders is not None and len(holders.split(",")) == 2
    util = [s for s in metrics_sets([RunOutput(sim.result, sim.timeline)])[0].device_series
            if s.field == "DCGM_FI_DEV_GPU_UTIL" and s.pod is not None]
    assert len(util) == 2 and all([x.value for x in s.samples[-2:]] == [60.0, 60.0] for s in util)

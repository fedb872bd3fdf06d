"""``dratwin simulate`` at scale: one simulated week of 10,000 training Jobs on 1,000 GPU nodes.

The fleet: 1,000 nodes labelled p5.48xlarge (192 CPU, 2 TiB, 8 GPUs each in one ResourceSlice of driver
gpu.nvidia.com). The workload: 10,000 Jobs arriving at random (seeded) over the week, each one pod with a
claim from a template of 1, 2, 4 or 8 GPUs (40/30/20/10 %), running 10 minutes to 12 hours (log-uniform).
The figure is the wall time of :func:`dratwin.sim.run.simulate` (loading the cluster, every controller,
the bookkeeping), building the objects is not timed; its CPU time and events/s beside it. Target: < 30 s.

The month (:func:`month_spec`, in a fresh process for its peak RSS): 10,000 nodes of three GPU shapes,
100,000 one-pod Jobs over 30 simulated days, a backlog at the start; targets < 10 minutes and < 4 GiB.

The second run adds an autoscaled inference service to the same week: Deployment ml/serve (one GPU per
replica) under a daily request curve (50 to 400 requests/s, 10 per GPU), an HPA on DCGM_FI_DEV_GPU_UTIL
(target 60 %, 2 to 60 replicas, synced every 15 s), and cold starts (a 10 GB image at 1.25 GB/s per node,
16 GB of weights from object storage at 1.25 GB/s, 16 GB/s into the GPU, 60 s warm-up).

The third (``simulate.karpenter_disruption_12h``) is Karpenter's disruption controller at work: 300 GPU Jobs
arriving over 12 simulated hours on an empty cluster that one NodePool (g6.xlarge, g6.12xlarge, g6.48xlarge,
``consolidateAfter: 1m``) grows and consolidates (:func:`karpenter_spec`), against the same Jobs with
consolidation off; medians of three runs each, CPU time and the ratio (target: at most 3x).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.benchmarks import BenchResult
from dratwin.catalog import load_catalog
from dratwin.scenario.model import Arrival, AutoscalerSpec, ColdStartSpec, RatePoint, RunSpec, ServiceSpec
from dratwin.sim.outcomes import RunResult
from dratwin.sim.run import SimOptions, simulate

NODES = 1_000
JOBS = 10_000
GPUS_PER_NODE = 8
WEEK = 7 * 86400.0
TARGET_S = 30.0
DRIVER = "gpu.nvidia.com"
SIZES = ((1, 40), (2, 30), (4, 20), (8, 10))
_SOURCE = SourceLocation("<benchmark>")

Raw = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class NodeShape:
    instance_type: str
    cpu: int
    memory_gi: int
    gpus: int
    gpu_memory_gi: int


P5 = NodeShape("p5.48xlarge", 192, 2048, GPUS_PER_NODE, 80)


def _obj(raw: Raw) -> LoadedObject:
    return LoadedObject(raw, _SOURCE)


def _node(index: int, shape: NodeShape | None = None, name: str = "") -> Raw:
    shape = shape or P5
    name = name or f"gpu-{index:04d}"
    allocatable = {"cpu": str(shape.cpu), "memory": f"{shape.memory_gi}Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": shape.instance_type,
              "topology.kubernetes.io/zone": f"us-east-1{'abc'[index % 3]}"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": allocatable, "allocatable": allocatable}}


def _slice(index: int, shape: NodeShape | None = None, name: str = "") -> Raw:
    shape = shape or P5
    name = name or f"gpu-{index:04d}"
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}, "index": {"int": i}},
                "capacity": {"memory": {"value": f"{shape.gpu_memory_gi}Gi"}}} for i in range(shape.gpus)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1,
                                                                   "resourceSliceCount": 1}, "devices": devices}}


def _template(gpus: int) -> Raw:
    request = {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": gpus}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpus-{gpus}", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [request]}}}}


def _job(index: int, gpus: int) -> Raw:
    pod = {"restartPolicy": "Never",
           "containers": [{"name": "train", "image": "trainer:1", "resources": {
               "requests": {"cpu": str(4 * gpus), "memory": f"{32 * gpus}Gi"}, "claims": [{"name": "gpu"}]}}],
           "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpus-{gpus}"}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"train-{index:05d}", "namespace": "ml"},
            "spec": {"template": {"spec": pod}}}


def week_spec(seed: int = 1, nodes: int = NODES, jobs: int = JOBS, until: float = WEEK) -> RunSpec:
    rng = random.Random(seed)
    selector = f"device.driver == '{DRIVER}'"
    objects = [_obj({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                     "spec": {"selectors": [{"cel": {"expression": selector}}]}})]
    objects += [_obj(_template(size)) for size, _ in SIZES]
    for index in range(nodes):
        objects += [_obj(_node(index)), _obj(_slice(index))]
    sizes, weights = [s for s, _ in SIZES], [w for _, w in SIZES]
    arrivals = []
    for index, at in enumerate(sorted(rng.uniform(0, until) for _ in range(jobs))):
        gpus = rng.choices(sizes, weights)[0]
        run_seconds = math.exp(rng.uniform(math.log(600), math.log(12 * 3600)))
        arrivals.append(Arrival(round(at, 3), (_obj(_job(index, gpus)),), round(run_seconds, 3)))
    return RunSpec(scenario="week-10k-jobs-1k-nodes", variant="default", seed=seed, until_seconds=until,
                   objects=tuple(objects), arrivals=tuple(arrivals))


MONTH = 30 * 86400.0
MONTH_NODES = 10_000
MONTH_PODS = 100_000
MONTH_TARGET_S = 600.0
MONTH_TARGET_RSS_MIB = 4096.0
# The month's fleet, in tenths: 4 p5.48xlarge (8 H100), 4 g6e.12xlarge (4 L40S), 2 g6e.2xlarge (1 L40S).
FLEET = ((NodeShape("p5.48xlarge", 192, 2048, 8, 80), 4), (NodeShape("g6e.12xlarge", 48, 384, 4, 48), 4),
         (NodeShape("g6e.2xlarge", 8, 64, 1, 48), 2))
MONTH_SIZES = ((1, 25), (2, 25), (4, 25), (8, 25))
MONTH_RUN_SECONDS = (3600.0, 18 * 86400.0)  # log-uniform
BACKLOG_SHARE, BACKLOG_SECONDS = 0.10, 12 * 3600.0  # a tenth of the Jobs is submitted in the first 12 hours


def month_spec(seed: int = 1, nodes: int = MONTH_NODES, pods: int = MONTH_PODS, until: float = MONTH) -> RunSpec:
    """The month: a mixed GPU fleet, one-pod Jobs of 1/2/4/8 GPUs running 1 hour to 18 days (log-uniform);
    a tenth of them is a backlog submitted in the first 12 hours (the 8-GPU pods among them queue for
    whole p5 nodes), the rest arrive uniformly over the month. The Jobs ask for about 63 % of the month's
    GPU-hours within it, 73 % counting their run times past its end (:func:`month_offered_load`)."""
    rng = random.Random(seed)
    selector = f"device.driver == '{DRIVER}'"
    objects = [_obj({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                     "spec": {"selectors": [{"cel": {"expression": selector}}]}})]
    objects += [_obj(_template(size)) for size, _ in MONTH_SIZES]
    for index, shape in enumerate(month_fleet(nodes)):
        name = f"{shape.instance_type.split('.')[0]}-{index:05d}"
        objects += [_obj(_node(index, shape, name)), _obj(_slice(index, shape, name))]
    arrivals = []
    for index, (at, gpus, run_seconds) in enumerate(_month_jobs(rng, pods, until)):
        arrivals.append(Arrival(round(at, 3), (_obj(_job(index, gpus)),), round(run_seconds, 3)))
    return RunSpec(scenario="month-100k-pods-10k-nodes", variant="default", seed=seed, until_seconds=until,
                   objects=tuple(objects), arrivals=tuple(arrivals))


def month_fleet(nodes: int) -> list[NodeShape]:
    """``nodes`` nodes in the proportions of :data:`FLEET`, interleaved (every tenth node the same mix)."""
    pattern = [shape for shape, tenths in FLEET for _ in range(tenths)]
    return [pattern[index % len(pattern)] for index in range(nodes)]


def _month_jobs(rng: random.Random, pods: int, until: float) -> list[tuple[float, int, float]]:
    sizes, weights = [s for s, _ in MONTH_SIZES], [w for _, w in MONTH_SIZES]
    low, high = (math.log(s) for s in MONTH_RUN_SECONDS)
    jobs = []
    for _ in range(pods):
        backlog = rng.random() < BACKLOG_SHARE
        at = rng.uniform(0, min(BACKLOG_SECONDS, until) if backlog else until)
        jobs.append((at, rng.choices(sizes, weights)[0], math.exp(rng.uniform(low, high))))
    return sorted(jobs)


def month_offered_load(spec: RunSpec, nodes: int) -> tuple[float, float]:
    """(GPU-seconds the Jobs ask for within the run, and in all) over the fleet's GPU-seconds: the share
    of GPU-hours the month would allocate if nothing waited, and the load once the fleet is full."""
    capacity = sum(shape.gpus for shape in month_fleet(nodes)) * spec.until_seconds
    within = total = 0.0
    for arrival in spec.arrivals:
        gpus = int(arrival.objects[0].raw["spec"]["template"]["spec"]["resourceClaims"][0]
                   ["resourceClaimTemplateName"].split("-")[1])
        run_seconds = arrival.run_seconds or 0.0
        within += gpus * min(run_seconds, spec.until_seconds - arrival.at_seconds)
        total += gpus * run_seconds
    return within / capacity, total / capacity


def _serving_deployment() -> Raw:
    labels = {"app": "serve"}
    pod = {"restartPolicy": "Always",
           "containers": [{"name": "vllm", "image": "vllm:1", "resources": {
               "requests": {"cpu": "8", "memory": "64Gi"}, "claims": [{"name": "gpu"}]}}],
           "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus-1"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": "ml"},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


def with_service(spec: RunSpec) -> RunSpec:
    """The week with the inference service ml/serve, its HPA and cold starts (see the module docstring)."""
    hours = int(spec.until_seconds // 3600)
    rate = tuple(RatePoint(h * 3600.0, round(50 + 350 * (0.5 - 0.5 * math.cos(2 * math.pi * h / 24)), 3))
                 for h in range(hours + 1))
    scaler = AutoscalerSpec("hpa", "DCGM_FI_DEV_GPU_UTIL", 60.0, 2, 60)
    gb = 10**9
    cold = ColdStartSpec(image_bytes={"vllm:1": 10 * gb}, default_image_bytes=2 * gb,
                         node_image_bandwidth=1.25 * gb, model_bytes={"ml/serve": 16 * gb},
                         object_storage_bandwidth=1.25 * gb, gpu_load_bandwidth=16 * gb, warm_up_seconds=60.0)
    arrivals = (Arrival(0.0, (_obj(_serving_deployment()),)), *spec.arrivals)
    return dataclasses.replace(spec, scenario="week-10k-jobs-and-a-service-1k-nodes", arrivals=arrivals,
                               services=(ServiceSpec("ml/serve", rate, 10.0, scaler),), cold_start=cold)


def run(skip_month: bool = False) -> list[BenchResult]:
    """Every simulate benchmark; ``skip_month`` leaves out the month, so that the quick ones run alone."""
    return [*_jobs_only(), *_jobs_and_service(), *_karpenter_disruption(), *([] if skip_month else _month())]


def month_figures(nodes: int = MONTH_NODES, pods: int = MONTH_PODS, until: float = MONTH) -> dict[str, float]:
    """One run of the month (building its objects is not timed); meant for a fresh process, whose peak
    RSS is then the run's own."""
    spec = month_spec(nodes=nodes, pods=pods, until=until)
    within, in_all = month_offered_load(spec, nodes)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = simulate(spec, SimOptions()).result
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    gpu_hours = result.gpu_hours_allocated + result.gpu_hours_idle
    return {"nodes": nodes, "pods": pods, "wall_s": elapsed, "cpu_s": cpu, "events": result.events,
            "attempts": result.scheduling_attempts, "started": result.pods_started,
            "pending": result.pods_pending_at_end, "allocated": result.gpu_hours_allocated / gpu_hours,
            "offered_within": within, "offered": in_all, "waiting_p50": result.waiting_seconds.p50,
            "waiting_p99": result.waiting_seconds.p99,
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _month_in_subprocess() -> dict[str, float]:
    code = ("import json; from dratwin.benchmarks.simulate_bench import month_figures; "
            "print(json.dumps(month_figures()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _month() -> list[BenchResult]:
    month = _month_in_subprocess()
    shape = (f"{MONTH_NODES:,} nodes (4/10 p5.48xlarge x 8 GPUs, 4/10 g6e.12xlarge x 4, 2/10 g6e.2xlarge x 1), "
             f"{MONTH_PODS:,} one-pod Jobs of 1/2/4/8 GPUs (25 % each) running 1 h to 18 days (log-uniform), a tenth "
             f"of them in the first 12 h, the rest uniform over 30 days; offered {month['offered_within']:.0%} of "
             f"the month's GPU-hours ({month['offered']:.0%} with the run times past its end)")
    outcome = (f"{month['events']:.0f} events, {month['attempts']:.0f} scheduling attempts, {month['started']:.0f} "
               f"pods started, {month['pending']:.0f} pending at the end, {month['allocated']:.0%} of GPU-hours "
               f"allocated, waiting p50 {month['waiting_p50']:.0f} s / p99 {month['waiting_p99']:.0f} s; "
               "in a fresh process")
    return [
        BenchResult("simulate.month_100k_pods_10k_nodes", month["wall_s"], "s", target=MONTH_TARGET_S,
                    detail=f"{shape}; {outcome}"),
        BenchResult("simulate.month_100k_pods_10k_nodes.cpu", month["cpu_s"], "s", target=MONTH_TARGET_S,
                    detail="the same run's CPU time"),
        BenchResult("simulate.month_100k_pods_10k_nodes.rss", round(month["rss_mib"]), "MiB",
                    target=MONTH_TARGET_RSS_MIB, detail="peak resident memory of the process (objects built, run)"),
        BenchResult("simulate.month.events_per_s", month["events"] / month["wall_s"], "events/s",
                    higher_is_better=True, detail="events of the month over its wall time"),
    ]


def _jobs_and_service() -> list[BenchResult]:
    spec = with_service(week_spec())
    started, cpu_started = time.perf_counter(), time.process_time()
    simulation = simulate(spec, SimOptions(catalog=load_catalog()))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    result = simulation.result
    service = result.services[0]
    peak = max((c.replicas for c in service.replicas_over_time), default=0)
    detail = (f"the week above and ml/serve (HPA on GPU util); {result.events} events, {len(service.scale_events)} "
              f"scale events, peak {peak} replicas, {service.requests:.0f} requests, {service.slo_misses:.0f} "
              f"missed, mean GPU util {service.mean_gpu_util or 0:.0f} %")
    return [
        BenchResult("simulate.week_10k_jobs_and_service_1k_nodes", elapsed, "s", target=TARGET_S, detail=detail),
        BenchResult("simulate.week_10k_jobs_and_service_1k_nodes.cpu", cpu, "s", target=TARGET_S,
                    detail="the same run's CPU time"),
        BenchResult("simulate.with_service.events_per_s", result.events / elapsed, "events/s",
                    higher_is_better=True, detail="events of the run above over its wall time"),
    ]


def _jobs_only() -> list[BenchResult]:
    spec = week_spec()
    catalog = load_catalog()
    started, cpu_started = time.perf_counter(), time.process_time()
    simulation = simulate(spec, SimOptions(catalog=catalog))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    result = simulation.result
    detail = (f"{NODES} nodes x {GPUS_PER_NODE} GPUs, {JOBS} Jobs over 7 simulated days; {result.events} events, "
              f"{result.scheduling_attempts} scheduling attempts, {result.pods_started} pods started, "
              f"{result.pods_pending_at_end} pending at the end, GPU-hours {result.gpu_hours_allocated:.0f} "
              f"allocated / {result.gpu_hours_idle:.0f} idle, waiting p99 {result.waiting_seconds.p99:.0f} s")
    return [
        BenchResult("simulate.week_10k_jobs_1k_nodes", elapsed, "s", target=TARGET_S, detail=detail),
        BenchResult("simulate.week_10k_jobs_1k_nodes.cpu", cpu, "s", target=TARGET_S,
                    detail="the same run's CPU time (time.process_time): what it costs on a machine it has alone"),
        BenchResult("simulate.events_per_s", result.events / elapsed, "events/s", higher_is_better=True,
                    detail="events of the run above over its wall time"),
    ]


# ---- Karpenter with its disruption controller ----------------------------------------------------------

KARPENTER_JOBS = 300
KARPENTER_HOURS = 12
KARPENTER_TYPES = ("g6.xlarge", "g6.12xlarge", "g6.48xlarge")  # 1, 4 and 8 L4 GPUs
KARPENTER_SIZES = ((1, 50), (2, 30), (4, 20))
KARPENTER_REPEATS = 3
DISRUPTION_TARGET_RATIO = 3.0  # with the disruption controller, at most this times the run without it


def _karpenter_objects(consolidate_after: str) -> list[LoadedObject]:
    selector = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"
    requirements = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(KARPENTER_TYPES)}]
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                            "name": "default"}, "requirements": requirements}},
                     "disruption": {"consolidateAfter": consolidate_after}}}
    node_class = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
                  "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                           "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
                           "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}]}}
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                    "spec": {"selectors": [{"cel": {"expression": selector}}]}}
    return [_obj(pool), _obj(node_class), _obj(device_class), *(_obj(_template(s)) for s, _ in KARPENTER_SIZES)]


def _small_job(index: int, gpus: int) -> Raw:
    raw = _job(index, gpus)
    raw["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1", "memory": "2Gi"}
    return raw


def karpenter_spec(seed: int = 1, jobs: int = KARPENTER_JOBS, hours: float = KARPENTER_HOURS,
                   consolidate_after: str = "1m") -> RunSpec:
    """GPU Jobs arriving at random (seeded) over ``hours`` on an empty cluster that one Karpenter NodePool of
    g6.xlarge, g6.12xlarge and g6.48xlarge grows and shrinks; each Job one pod claiming 1, 2 or 4 GPUs
    (50/30/20 %), running 5 minutes to 3 hours (log-uniform). ``consolidate_after``: the NodePool's
    ``consolidateAfter`` (``Never`` turns consolidation off, as a platform engineer would)."""
    rng = random.Random(seed)
    until = hours * 3600.0
    sizes, weights = [s for s, _ in KARPENTER_SIZES], [w for _, w in KARPENTER_SIZES]
    arrivals = []
    for index, at in enumerate(sorted(rng.uniform(0, until * 0.75) for _ in range(jobs))):
        gpus = rng.choices(sizes, weights)[0]
        run_seconds = math.exp(rng.uniform(math.log(300), math.log(3 * 3600)))
        arrivals.append(Arrival(round(at, 3), (_obj(_small_job(index, gpus)),), round(run_seconds, 3)))
    return RunSpec(scenario="karpenter-gpu-jobs", variant="default", seed=seed, until_seconds=until,
                   objects=tuple(_karpenter_objects(consolidate_after)), arrivals=tuple(arrivals),
                   provisioner="karpenter")


def _timed_run(spec: RunSpec) -> tuple[float, float, RunResult]:
    catalog = load_catalog()
    started, cpu_started = time.perf_counter(), time.process_time()
    result = simulate(spec, SimOptions(catalog=catalog)).result
    return time.perf_counter() - started, time.process_time() - cpu_started, result


def _karpenter_disruption() -> list[BenchResult]:
    """The Karpenter run with its disruption controller, and the same run with consolidation off
    (``consolidateAfter: Never``), taken in turns, medians of :data:`KARPENTER_REPEATS` each: their ratio is
    what the controller costs (CPU time, as the machine may be shared)."""
    on_runs, off_runs = [], []
    for _ in range(KARPENTER_REPEATS):
        on_runs.append(_timed_run(karpenter_spec(jobs=KARPENTER_JOBS, hours=KARPENTER_HOURS)))
        off_runs.append(_timed_run(karpenter_spec(jobs=KARPENTER_JOBS, hours=KARPENTER_HOURS,
                                                  consolidate_after="Never")))
    elapsed, cpu = statistics.median(r[0] for r in on_runs), statistics.median(r[1] for r in on_runs)
    off_elapsed, off_cpu = statistics.median(r[0] for r in off_runs), statistics.median(r[1] for r in off_runs)
    result, off = on_runs[0][2], off_runs[0][2]
    d = result.disruptions
    detail = (f"{KARPENTER_JOBS} GPU Jobs over {KARPENTER_HOURS} h, NodePool of {', '.join(KARPENTER_TYPES)}, "
              f"consolidateAfter 1m; {result.events} events, {len(d.commands)} commands "
              f"({d.commands_invalidated} invalidated), {d.pods_evicted} evictions, cost ${result.cost_usd:.0f} "
              f"(${off.cost_usd:.0f} without consolidation)")
    return [
        BenchResult("simulate.karpenter_disruption_12h", elapsed, "s", detail=detail),
        BenchResult("simulate.karpenter_disruption_12h.cpu", cpu, "s", detail="the same run's CPU time"),
        BenchResult("simulate.karpenter_disruption_12h.events_per_s", result.events / elapsed, "events/s",
                    higher_is_better=True, detail="events of the run above over its wall time"),
        BenchResult("simulate.karpenter_disruption_12h.off.cpu", off_cpu, "s",
                    detail=f"CPU time of the same Jobs with consolidation off ({off_elapsed:.1f} s wall)"),
        BenchResult("simulate.karpenter_disruption_12h.cpu_ratio", cpu / off_cpu, "x",
                    target=DISRUPTION_TARGET_RATIO,
                    detail="CPU time with the disruption controller over the run with consolidation off"),
    ]

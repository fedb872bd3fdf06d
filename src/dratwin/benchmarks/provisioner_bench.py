"""Karpenter's provisioning simulation (``dratwin plan``), timed, and its cost against the MILP optimum.

Shapes:
  karpenter_{5000,10000,20000}pods  Karpenter's own scheduling benchmark (scheduling_benchmark_test.go):
      one NodePool without requirements over the whole bundled catalog (428 instance types, against
      Karpenter's 400 fake ones), CPU requests drawn from {100, 250, 500, 1000, 1500}m and memory from
      {100, 256, 512, 1024, 2048, 4096}Mi. Karpenter's diverse pods are 1/5 each plain, zone spread,
      hostname spread, zone self-affinity and hostname anti-affinity; the twin does not model topology
      spread or inter-pod (anti-)affinity yet, so here half the pods are plain and half carry a zone
      nodeSelector. Karpenter reports 3.74 s / 8.11 s / 20.2 s (Apple M3 Pro); the target is no slower
      on one core (the twin is single-threaded).
  dra_2000pods  2,000 pods with DRA claims (single-gpu 50%, gpu-efa-aligned 20%, large-gpu,
      gpu-with-4-local-efa and eight-gpus 10% each) over every NVIDIA type of the catalog; target < 5 s.
  cost_ratio.*  Karpenter's fleet cost over the cost-optimal fleet (MILP, HiGHS) for the same pods, with
      the MILP's status, time and lower bound beside it; the target is 1.03 (within 3%).

Each time is the whole of ``plan()`` (scheduling on the existing nodes, NodePool templates, the
simulation), the median of several runs; the input is parsed once, outside the timing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import yaml

from dratwin.allocator import Features
from dratwin.api.loader import LoadedObject, load_text
from dratwin.benchmarks import BenchResult
from dratwin.catalog import Catalog, load_catalog
from dratwin.twin.plan import PlanOptions, PlanReport, plan

KARPENTER_REPORTED_S = {5000: 3.74, 10000: 8.11, 20000: 20.2}
DRA_TARGET_S = 5.0
COST_RATIO_TARGET = 1.03
MILP_TIME_LIMIT_S = 30.0
CPU_MILLIS = (100, 250, 500, 1000, 1500)
MEMORY_MI = (100, 256, 512, 1024, 2048, 4096)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
DRA_MIX = {"single-gpu": 50, "gpu-efa-aligned": 20, "large-gpu": 10, "gpu-with-4-local-efa": 10, "eight-gpus": 10}
NODE_CLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}

# The DeviceClasses of the NVIDIA GPU and aws-dranet charts, and the claims of the driver data set.
DRA_OBJECTS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: efa.networking.k8s.aws}
spec:
  selectors:
  - cel:
      expression: >-
        device.driver == "dra.net" && device.attributes["dra.net"].pciDevice == 'Elastic Fabric Adapter (EFA)'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: single-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: large-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: >-
                device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("9.0.0")) >= 0 &&
                device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("100Gi")) >= 0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-efa-aligned, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws}}
      constraints:
      - {requests: [gpu, efa], matchAttribute: resource.kubernetes.io/pcieRoot}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-with-4-local-efa, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: efas, exactly: {deviceClassName: efa.networking.k8s.aws, count: 4}}
      constraints:
      - {requests: [gpu, efas], matchAttribute: resource.kubernetes.io/pcieRoot}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: eight-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}
"""


def _nodepool(name: str, requirements: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"nodeClassRef": NODE_CLASS, "requirements": requirements}}},
    }


def _pod(name: str, spec: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def karpenter_shape(pods: int, seed: int = 1) -> list[LoadedObject]:
    """One open NodePool and ``pods`` pods drawn as Karpenter's benchmark draws them (see the docstring)."""
    rng = random.Random(seed)
    found = [_nodepool("default", [])]
    for i in range(pods):
        requests = {"cpu": f"{rng.choice(CPU_MILLIS)}m", "memory": f"{rng.choice(MEMORY_MI)}Mi"}
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
        if i % 2:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
        found.append(_pod(f"p{i}", spec))
    return load_text(yaml.safe_dump_all(found), "<benchmark>")


def dra_shape(pods: int, seed: int = 1) -> list[LoadedObject]:
    """A GPU NodePool over every NVIDIA type, with the DeviceClasses and claim templates of ``DRA_OBJECTS``."""
    rng = random.Random(seed)
    nvidia = {"key": "karpenter.k8s.aws/instance-gpu-manufacturer", "operator": "In", "values": ["nvidia"]}
    found: list[dict[str, Any]] = [_nodepool("gpu", [nvidia])]
    kinds, weights = list(DRA_MIX), list(DRA_MIX.values())
    for i in range(pods):
        kind = rng.choices(kinds, weights=weights)[0]
        requests = {"cpu": str(rng.choice((1, 2, 4))), "memory": f"{rng.choice((4, 8, 16))}Gi"}
        container = {"name": "c", "image": "x", "resources": {"requests": requests, "claims": [{"name": "gpu"}]}}
        spec = {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [container],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": kind}],
        }
        found.append(_pod(f"p{i}", spec, "ml"))
    return load_text(DRA_OBJECTS, "<benchmark>") + load_text(yaml.safe_dump_all(found), "<benchmark>")


def _timed_plan(objects: list[LoadedObject], catalog: Catalog) -> tuple[float, PlanReport]:
    started = time.perf_counter()
    report = plan(objects, Features(), PlanOptions(), catalog=catalog)
    return time.perf_counter() - started, report


def _median_time(objects: list[LoadedObject], catalog: Catalog, repeats: int) -> tuple[float, list[float], PlanReport]:
    runs = [_timed_plan(objects, catalog) for _ in range(repeats)]
    values = sorted(seconds for seconds, _ in runs)
    return values[len(values) // 2], values, runs[-1][1]


def _timing(
    name: str, objects: list[LoadedObject], catalog: Catalog, repeats: int, target: float | None
) -> BenchResult:
    median, values, report = _median_time(objects, catalog, repeats)
    plan_ = report.plan
    detail = (
        f"{len(plan_.claims)} NodeClaims, ${plan_.cost_per_hour:.2f}/hour, {len(plan_.unplaced)} unprovisionable; "
        f"median of {repeats}, range {values[0]:.2f}-{values[-1]:.2f} s"
    )
    return BenchResult(name, round(median, 3), "s", target, detail)


def _cost_ratio(name: str, objects: list[LoadedObject], catalog: Catalog, time_limit: float) -> BenchResult:
    options = PlanOptions(optimal_time_limit=time_limit)
    report = plan(objects, Features(), options, catalog=catalog)
    comparison = report.optimal
    assert comparison is not None  # asked for with optimal_time_limit
    fleet = comparison.fleet
    bound = comparison.karpenter_cost / fleet.lower_bound if fleet.lower_bound else float("inf")
    detail = (
        f"Karpenter ${comparison.karpenter_cost:.2f}/hour, MILP ${fleet.cost_per_hour:.2f}/hour "
        f"({fleet.status} in {fleet.solve_seconds:.1f} s, lower bound ${fleet.lower_bound:.2f}/hour: "
        f"Karpenter at most {bound:.3f} x the optimum)"
    )
    if comparison.unverified:
        detail += f"; {len(comparison.unverified)} MILP node(s) the allocator could not verify"
    return BenchResult(name, round(comparison.ratio, 4), "x", COST_RATIO_TARGET, detail)


def run(
    repeats: int = 3,
    sizes: tuple[int, ...] = (5000, 10000, 20000),
    dra_pods: int = 2000,
    cost_sets: tuple[tuple[str, Callable[[], list[LoadedObject]]], ...] | None = None,
    time_limit: float = MILP_TIME_LIMIT_S,
) -> list[BenchResult]:
    catalog = load_catalog()
    results = []
    for size in sizes:
        name, objects = f"provisioner.karpenter_{size}pods", karpenter_shape(size)
        results.append(_timing(name, objects, catalog, repeats, KARPENTER_REPORTED_S.get(size)))
    dra = dra_shape(dra_pods)
    results.append(_timing(f"provisioner.dra_{dra_pods}pods", dra, catalog, repeats, DRA_TARGET_S))
    sets = cost_sets or (
        ("karpenter_1000pods", lambda: karpenter_shape(1000)),
        ("dra_200pods", lambda: dra_shape(200)),
        (f"dra_{dra_pods}pods", lambda: dra),
    )
    for label, make in sets:
        results.append(_cost_ratio(f"provisioner.cost_ratio.{label}", make(), catalog, time_limit))
    return results

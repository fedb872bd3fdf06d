"""kube-scheduler's DRA benchmark shapes (scheduler_perf, clusterloader2), run through the cluster twin.

The cluster is scheduler_perf's: N nodes, one ResourceSlice per node with ``instance-0..k`` of driver
``test-driver.cdi.k8s.io`` (attributes model, family, driverVersion, numa; capacity memory 1Gi),
DeviceClass ``test-class``, one claim per pod from a ResourceClaimTemplate. The node choice is
kube-scheduler's (percentageOfNodesToScore, round-robin start, scoring, seeded tie-breaks), not first
fit, and every pod goes through the whole cycle and the binder. Figures are pods scheduled per second;
building the cluster and running the controllers is set-up and is not timed (except in the scale run).

Shapes (named as in the reference measurements of docs/benchmarks.md):
  A  fill-up: 500 nodes x 10 devices, 5,000 pods, the last 2,500 measured (50% -> 100% full)
  B  as A, with the claim selector of selector_empty_500nodes
  C  2 requests with matchAttribute, 2,500 claims, the last 1,250 measured
  D  steady state empty/half/full_500nodes: 0 / 2,500 / 4,990 claims allocated up front, then
     10 pods created, scheduled and deleted, again and again
  shared  1 claim : 5 pods (SchedulingWithResourceClaim 5000pods_500nodes, 500 nodes x 2 devices)
  scale   5,000 nodes x 8 devices filled to 90% with 1-device pods, in a fresh process (time and RSS)
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dratwin.allocator import Allocator, Features
from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.benchmarks import BenchResult
from dratwin.cluster.load import LoadedCluster, add_pods, load_cluster
from dratwin.scheduler.scheduler import Scheduler
from dratwin.twin.schedule import Options, StateBinder, default_profile, gc_paused

DRIVER = "test-driver.cdi.k8s.io"
SELECTOR = (
    f'device.attributes["{DRIVER}"].driverVersion.major() >= 1 && '
    f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1Mi"))'
)
TARGET_PODS_PER_S = 1000.0
TARGET_MATCH_PODS_PER_S = 500.0
SCALE_TARGET_S = 60.0
SCALE_TARGET_RSS_MIB = 2048.0
_SOURCE = SourceLocation("<benchmark>")


def _obj(raw: dict[str, Any]) -> LoadedObject:
    return LoadedObject(raw, _SOURCE)


def cluster_objects(nodes: int, devices: int) -> list[LoadedObject]:
    """scheduler_perf's nodes, one ResourceSlice each, and the DeviceClass ``test-class``."""
    found = [
        _obj({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    ]
    for n in range(nodes):
        name = f"node-{n}"
        found.append(_obj({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
        }))
        found.append(_obj({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-slice"},
            "spec": {
                "driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": f"instance-{i}",
                     "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                    "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": i}},
                     "capacity": {"memory": {"value": "1Gi"}}}
                    for i in range(devices)
                ],
            },
        }))
    return found


def claim_spec(requests: int = 1, selector: str = "", match: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "test-class"}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    spec: dict[str, Any] = {"requests": [{"name": f"req-{i}", "exactly": dict(exactly)} for i in range(requests)]}
    if match:
        spec["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    return {"devices": spec}


def template(name: str, **kind: Any) -> LoadedObject:
    return _obj({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": claim_spec(**kind)}})


def claim(name: str, **kind: Any) -> LoadedObject:
    return _obj({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": name, "namespace": "default"}, "spec": claim_spec(**kind)})


def pod(name: str, template_name: str = "", claim_name: str = "") -> LoadedObject:
    source = {"resourceClaimTemplateName": template_name} if template_name else {"resourceClaimName": claim_name}
    return _obj({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "dev"}]}}],
                 "resourceClaims": [{"name": "dev", **source}]},
    })


@dataclass
class Run:
    loaded: LoadedCluster
    scheduler: Scheduler

    def schedule(self, count: int | None = None) -> float:
        """Schedule the next ``count`` pending pods (all when None); pods per second."""
        pods = self.loaded.pending[:count] if count is not None else list(self.loaded.pending)
        del self.loaded.pending[: len(pods)]
        start = time.perf_counter()
        with gc_paused():
            attempts = self.scheduler.run(pods)
        elapsed = time.perf_counter() - start
        failed = [a.pod for a in attempts if not a.scheduled]
        if failed:
            raise AssertionError(f"{len(failed)} of {len(pods)} pods were not scheduled, e.g. {failed[0]}")
        return len(pods) / elapsed


def prepare(objects: list[LoadedObject], seed: int = 0) -> Run:
    loaded = load_cluster(objects, Features(), random.Random(seed))
    profile = default_profile(loaded.state, Options(seed=seed))
    return Run(loaded, Scheduler(loaded.state, profile, random.Random(seed), StateBinder(loaded.state)))


def fill_up(nodes: int = 500, devices: int = 10, pods: int = 5000, measured: int = 2500, **kind: Any) -> float:
    """Shapes A-C: pods per second over the last ``measured`` pods of a cluster filling up."""
    objects = [*cluster_objects(nodes, devices), template("t", **kind)]
    objects += [pod(f"pod-{i}", template_name="t") for i in range(pods)]
    run = prepare(objects)
    run.schedule(pods - measured)
    return run.schedule()


def steady_state(preallocated: int, nodes: int = 500, devices: int = 10, rounds: int = 100, batch: int = 10) -> float:
    """Shape D: claims allocated up front on random nodes (as scheduler_perf's allocResourceClaims), then
    ``batch`` pods created, scheduled and deleted, ``rounds`` times; pods per second of scheduling."""
    objects = [*cluster_objects(nodes, devices), template("t")]
    objects += [claim(f"init-{i}") for i in range(preallocated)]
    run = prepare(objects)
    _allocate_up_front(run, preallocated, random.Random(1))
    state, seconds, scheduled = run.loaded.state, 0.0, 0
    for round_ in range(rounds):
        batch_pods = [pod(f"pod-{round_}-{i}", template_name="t").raw for i in range(batch)]
        add_pods(run.loaded, batch_pods, random.Random(round_))
        pods = list(run.loaded.pending)
        rate = run.schedule()
        seconds += len(pods) / rate
        scheduled += len(pods)
        for info in pods:
            state.release_claims_of(state.remove_pod(info.key))
    return scheduled / seconds


def _allocate_up_front(run: Run, count: int, rng: random.Random) -> None:
    state = run.loaded.state
    names = sorted(state.nodes)
    allocator = Allocator(state.features, state.classes, state.slice_index, state.allocated, None, state.device_views)
    for i in range(count):
        record = state.claims[f"default/init-{i}"]
        for name in rng.sample(names, len(names)):
            outcome = allocator.allocate(state.nodes[name].node, [record.claim])
            if outcome.results is not None:
                state.allocate_claim(record.key, outcome.results[0])
                break


def shared_claims(nodes: int = 500, devices: int = 2, pods: int = 5000, per_claim: int = 5) -> float:
    objects = [*cluster_objects(nodes, devices)]
    objects += [claim(f"shared-{i}") for i in range(pods // per_claim)]
    objects += [pod(f"pod-{i}", claim_name=f"shared-{i // per_claim}") for i in range(pods)]
    return prepare(objects).schedule()


def scale(nodes: int = 5000, devices: int = 8, fill: float = 0.9) -> dict[str, float]:
    """The clusterloader2 DRA shape: seconds for loading + scheduling, and peak RSS (MiB)."""
    start = time.perf_counter()
    pods = int(nodes * devices * fill)
    objects = [*cluster_objects(nodes, devices), template("t")]
    objects += [pod(f"pod-{i}", template_name="t") for i in range(pods)]
    run = prepare(objects)
    loaded_s = time.perf_counter() - start
    rate = run.schedule()
    total = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"pods": pods, "load_s": loaded_s, "pods_per_s": rate, "total_s": total, "rss_mib": rss}


def _scale_in_subprocess() -> dict[str, float]:
    code = "import json; from dratwin.benchmarks.scheduler_bench import scale; print(json.dumps(scale()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _median(fn: Callable[[], float], repeats: int) -> tuple[float, list[float]]:
    values = sorted(fn() for _ in range(repeats))
    return values[len(values) // 2], values


def run(repeats: int = 3) -> list[BenchResult]:
    results = []
    shapes: list[tuple[str, Callable[[], float], float | None, str]] = [
        ("scheduler.A_fill_5000pods_500nodes", fill_up, TARGET_PODS_PER_S, "500x10 devices, last 2,500 of 5,000 pods"),
        ("scheduler.B_fill_with_selector", lambda: fill_up(selector=SELECTOR), TARGET_PODS_PER_S,
         "as A with the driverVersion/memory CEL selector"),
        ("scheduler.C_match_attribute", lambda: fill_up(pods=2500, measured=1250, requests=2, match=True),
         TARGET_MATCH_PODS_PER_S, "2 requests + matchAttribute, last 1,250 of 2,500 claims"),
        ("scheduler.D_steady_empty_500nodes", lambda: steady_state(0), TARGET_PODS_PER_S, "0 claims allocated"),
        ("scheduler.D_steady_half_500nodes", lambda: steady_state(2500), TARGET_PODS_PER_S, "2,500 claims allocated"),
        ("scheduler.D_steady_full_500nodes", lambda: steady_state(4990), TARGET_PODS_PER_S, "4,990 claims allocated"),
        ("scheduler.shared_claims_1to5", shared_claims, None, "500x2 devices, 1,000 claims, 5,000 pods"),
    ]
    for name, fn, target, detail in shapes:
        median, values = _median(fn, repeats)
        spread = f"; median of {repeats} runs, range {values[0]:.0f}-{values[-1]:.0f} pods/s"
        results.append(BenchResult(name, round(median), "pods/s", target, detail + spread, higher_is_better=True))
    big = _scale_in_subprocess()
    detail = (f"{int(big['pods'])} pods on 5,000 nodes x 8 devices (90%), load {big['load_s']:.1f} s, "
              f"{big['pods_per_s']:.0f} pods/s, in a fresh process")
    results.append(BenchResult("scheduler.scale_5000nodes_total", big["total_s"], "s", SCALE_TARGET_S, detail))
    results.append(BenchResult("scheduler.scale_5000nodes_rss", big["rss_mib"], "MiB", SCALE_TARGET_RSS_MIB, detail))
    return results

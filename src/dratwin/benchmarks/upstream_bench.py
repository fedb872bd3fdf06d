"""dratwin's allocator beside upstream's (the Go oracle) on scheduler_perf's DRA shapes, in one run.

The cluster is scheduler_perf's: 500 nodes, one ResourceSlice per node with 10 devices of driver
``test-driver.cdi.k8s.io``, DeviceClass ``test-class``, claims of one device from a template. Shapes
(``docs/benchmarks.md`` section 1):

- ``empty_500nodes`` / ``half_500nodes`` / ``full_500nodes``: 0 / 2,500 / 4,990 claims allocated up
  front, each on a random node with a free device (as scheduler_perf's ``allocResourceClaims``);
- ``selector_empty_500nodes``: the claim adds the driverVersion/memory CEL selector;
- ``match_empty_500nodes``: two requests and a ``matchAttribute`` constraint.

One call is ``Allocate(node, [claim])`` with the allocator and the allocated state built once, as
kube-scheduler builds them per pod in PreFilter and calls Allocate per node in Filter; calls cycle
through the 500 nodes in order, so a figure is the mean over every node of the cluster (full and
free ones alike). Both sides get the same objects, the same features (the 1.36 defaults, so
upstream picks ``incubating``, as scheduler_perf's ``BenchmarkPerfScheduling`` runs) and the same
loop shape (:mod:`dratwin.benchmarks.runner`). Each shape reports ``.dratwin`` and ``.go`` in µs
per call and ``.ratio``, dratwin's time over Go's; the detail says whether both allocated on the
same nodes. Without Go (no oracle binary and no ``go`` to build one) only the dratwin figures are
reported, with a note.
"""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from dratwin.allocator import AllocatedState, Allocator, Features
from dratwin.api.core import Node
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.runner import DEFAULT_MIN_REPEAT_S, DEFAULT_REPEATS, Timing, result_us, time_per_call
from dratwin.benchmarks.scheduler_bench import DRIVER, SELECTOR, claim_spec, cluster_objects
from dratwin.differential import oracle
from dratwin.errors import DratwinError

_T = TypeVar("_T")
NODES = 500
DEVICES = 10
CLAIM = "bench-claim"
# dratwin's feature flags -> the case format's feature names the oracle takes.
_FEATURE_NAMES = {
    "admin_access": "adminAccess",
    "prioritized_list": "prioritizedList",
    "partitionable_devices": "partitionableDevices",
    "device_taints": "deviceTaints",
    "binding_conditions": "deviceBindingConditions",
    "consumable_capacity": "consumableCapacity",
    "list_type_attributes": "listTypeAttributes",
}


@dataclass(frozen=True)
class Shape:
    name: str
    describe: str
    preallocated: int
    claim: dict[str, Any]


SHAPES = (
    Shape("empty_500nodes", "0 claims allocated", 0, claim_spec()),
    Shape("half_500nodes", "2,500 claims allocated", 2_500, claim_spec()),
    Shape("full_500nodes", "4,990 claims allocated", 4_990, claim_spec()),
    Shape("selector_empty_500nodes", "0 allocated, claim with the driverVersion/memory CEL selector", 0,
          claim_spec(selector=SELECTOR)),
    Shape("match_empty_500nodes", "0 allocated, 2 requests + matchAttribute model", 0,
          claim_spec(requests=2, match=True)),
)


def run(*, repeats: int = DEFAULT_REPEATS, min_repeat_s: float = DEFAULT_MIN_REPEAT_S,
        shapes: tuple[Shape, ...] = SHAPES, nodes: int = NODES) -> list[BenchResult]:
    binary, missing = _oracle()
    if binary is None:
        print(f"note: upstream benchmark: {missing}; reporting dratwin only", file=sys.stderr)
    results: list[BenchResult] = []
    for shape in shapes:
        results += measure(shape, binary, missing, repeats=repeats, min_repeat_s=min_repeat_s, nodes=nodes)
    return results


def _oracle() -> tuple[Path | None, str]:
    """The oracle binary (built when Go is there), or None and why not."""
    try:
        return (oracle.build() if shutil.which("go") else oracle.locate()), "no Go oracle (Go is not installed)"
    except DratwinError as error:
        return None, f"the Go oracle could not be built ({error})"


def objects_for(shape: Shape, nodes: int = NODES) -> list[dict[str, Any]]:
    """The cluster, the claims allocated up front (with status.allocation) and the claim to allocate."""
    cluster = [obj.raw for obj in cluster_objects(nodes, DEVICES)]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": CLAIM, "namespace": "default"}, "spec": _defaulted(shape.claim)}
    preallocated = shape.preallocated * nodes // NODES  # the same share of a smaller cluster
    return [*cluster, *preallocated_claims(preallocated, nodes), claim]


def _defaulted(spec: dict[str, Any]) -> dict[str, Any]:
    """The claim spec as the API server stores it (allocationMode and count written out): upstream's
    allocator does not default them itself."""
    requests = [
        {**r, "exactly": {"allocationMode": "ExactCount", "count": 1, **r["exactly"]}}
        for r in spec["devices"]["requests"]
    ]
    return {"devices": {**spec["devices"], "requests": requests}}


def preallocated_claims(count: int, nodes: int, seed: int = 1) -> list[dict[str, Any]]:
    """``count`` one-device claims, each on a random node that still has a free device."""
    rng = random.Random(seed)
    used = [0] * nodes
    claims = []
    for index in range(count):
        node = rng.choice([n for n in range(nodes) if used[n] < DEVICES])
        device = f"instance-{used[node]}"
        used[node] += 1
        result = {"request": "req-0", "driver": DRIVER, "pool": f"node-{node}", "device": device}
        selector = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [f"node-{node}"]}]}]}
        claims.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"init-{index}", "namespace": "default"}, "spec": _defaulted(claim_spec()),
            "status": {"allocation": {"devices": {"results": [result]}, "nodeSelector": selector}},
        })
    return claims


def measure(shape: Shape, binary: Path | None, missing: str, *, repeats: int, min_repeat_s: float,
            nodes: int = NODES) -> list[BenchResult]:
    objects = objects_for(shape, nodes)
    node_names = [f"node-{n}" for n in range(nodes)]
    timing, allocated = _time_dratwin(objects, node_names, repeats, min_repeat_s)
    name = f"upstream.{shape.name}"
    detail = f"{nodes} nodes x {DEVICES} devices, {shape.describe}; Allocate per node, allocator prebuilt"
    if binary is None:
        return [result_us(f"{name}.dratwin", timing, detail=f"{detail}; {missing}")]
    spec = {"features": _features(Features()), "objects": objects, "claims": [f"default/{CLAIM}"],
            "nodes": node_names, "repeats": repeats, "minRepeatSeconds": min_repeat_s}
    figures = oracle.bench(binary, spec)
    go = Timing(tuple(figures["perCallNs"]), int(figures["number"]))
    same = "both allocate on the same nodes" if figures["allocatedNodes"] == allocated else (
        f"ANSWERS DIFFER: dratwin allocates on {len(allocated)} nodes, upstream on {len(figures['allocatedNodes'])}")
    upstream = f"{figures.get('module', 'upstream')} {figures.get('variant', '')} on {figures.get('goVersion', 'Go')}"
    ratio = timing.median_ns / go.median_ns
    return [
        result_us(f"{name}.dratwin", timing, detail=f"{detail}; {same}"),
        result_us(f"{name}.go", go, detail=f"{detail}; {upstream}"),
        BenchResult(f"{name}.ratio", ratio, "x", None, f"dratwin's median over Go's ({upstream})"),
    ]


def _time_dratwin(objects: list[dict[str, Any]], node_names: list[str], repeats: int,
                  min_repeat_s: float) -> tuple[Timing, list[str]]:
    features = Features()
    classes = [_convert(o, DeviceClass) for o in objects if o["kind"] == "DeviceClass"]
    slices = [_convert(o, ResourceSlice) for o in objects if o["kind"] == "ResourceSlice"]
    claims = [_convert(o, ResourceClaim) for o in objects if o["kind"] == "ResourceClaim"]
    by_name = {o["metadata"]["name"]: _convert(o, Node) for o in objects if o["kind"] == "Node"}
    nodes = [by_name[name] for name in node_names]
    target = [c for c in claims if c.metadata.name == CLAIM]
    allocator = Allocator(features, classes, slices, AllocatedState.from_claims(claims, features))
    allocated = [n.metadata.name for n in nodes if allocator.allocate(n, target).allocated]
    timing = time_per_call(_cycling(allocator, nodes, target), repeats=repeats, min_repeat_s=min_repeat_s)
    return timing, allocated


def _cycling(allocator: Allocator, nodes: list[Node], claims: list[ResourceClaim]) -> Callable[[], object]:
    position = [0]

    def call() -> object:
        node = nodes[position[0] % len(nodes)]
        position[0] += 1
        return allocator.allocate(node, claims)

    return call


def _features(features: Features) -> list[str]:
    return [name for attribute, name in _FEATURE_NAMES.items() if getattr(features, attribute)]


def _convert(raw: dict[str, Any], kind: type[_T]) -> _T:
    return msgspec.convert(raw, kind, strict=False)

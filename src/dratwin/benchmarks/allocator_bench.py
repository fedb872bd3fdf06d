"""Allocator benchmarks: the time of one ``Allocator.allocate(node, claims)`` call.

Two shapes, with the targets of the issue:

- ``allocator.one_device_128_half_used``: a claim for 1 device on a node whose single ResourceSlice
  holds 128 devices (the scheduler_perf device shape: driver ``test-driver.cdi.k8s.io``, attributes
  model/family/driverVersion/numa, capacity memory), 64 of them already allocated to 64 one-device
  claims. Devices 0-63 are the used ones, as after an in-order fill, so a linear scan passes all of
  them before it finds a free device. Target: 200 µs per call.
- ``allocator.gpu_4efa_same_pcieroot_p5``: 1 GPU + 4 EFA with ``matchAttribute:
  resource.kubernetes.io/pcieRoot`` on the two slices a p5.48xlarge publishes (8 H100 + 32 EFA; read
  from examples/p5-slices.yaml, else from the shared driver data), with the example DeviceClasses.
  Target: 2 ms per call.

Each shape is reported three times. The target applies to the first figure, a prebuilt ``Allocator``:
kube-scheduler builds the allocator and the allocated state once per scheduling cycle (PreFilter)
and calls ``allocate`` once per candidate node (Filter). Without targets:

- ``.with_construction`` adds ``AllocatedState.from_claims`` and ``Allocator(...)`` to every call, with
  one ``SelectorCompiler`` shared by all calls, as kube-scheduler keeps its CEL cache across cycles:
  the cost of a cycle that looks at one node only;
- ``.cold`` also builds a new ``SelectorCompiler`` on every call (``Allocator(features, classes,
  slices, state)``), so every selector is compiled and evaluated afresh: a one-shot run such as
  ``dratwin allocate``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from dratwin.allocator import AllocatedState, Allocator, Features
from dratwin.api.core import Node
from dratwin.api.loader import load_paths
from dratwin.api.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.runner import DEFAULT_MIN_REPEAT_S, DEFAULT_REPEATS, result_us, time_per_call
from dratwin.cel import SelectorCompiler
from dratwin.errors import InputError

_T = TypeVar("_T")

TARGET_ONE_DEVICE_US = 200.0
TARGET_GPU_EFA_US = 2_000.0

TEST_DRIVER = "test-driver.cdi.k8s.io"
HALF_NODE = "bench-node-128"
DEVICES_PER_NODE = 128
DEVICES_IN_USE = 64

_REPO = Path(__file__).resolve().parents[3]
_P5_SLICES = (
    _REPO / "examples" / "p5-slices.yaml",
    Path(str(resources.files("dratwin").joinpath("data", "resourceslice-p5.48xlarge.yaml"))),
)
_DEVICE_CLASSES = (
    _REPO / "examples" / "deviceclasses.yaml",
    _REPO / "tests" / "data" / "drivers" / "deviceclasses.yaml",
)

_PER_CALL = (
    "prebuilt Allocator and AllocatedState (built once per scheduling cycle as in kube-scheduler's "
    "PreFilter; allocate() runs once per node in Filter); the target applies to this figure"
)
_WITH_CONSTRUCTION = (
    "AllocatedState.from_claims + Allocator(...) + allocate() on every call, CEL compiler shared across "
    "calls as kube-scheduler's CEL cache is (a cycle that checks one node); no target"
)
_COLD = (
    "as .with_construction plus a new SelectorCompiler on every call: every selector compiled and "
    "evaluated afresh (a one-shot run); no target"
)


@dataclass(frozen=True)
class Scenario:
    """Everything one allocate() call needs, plus a check that its answer is the expected one."""

    name: str
    describe: str
    classes: list[DeviceClass]
    slices: list[ResourceSlice]
    allocated: list[ResourceClaim]
    node: Node
    claims: list[ResourceClaim]
    check: Callable[[list[AllocationResult]], str | None]
    target_us: float


def run(*, repeats: int = DEFAULT_REPEATS, min_repeat_s: float = DEFAULT_MIN_REPEAT_S) -> list[BenchResult]:
    """Measure both scenarios; ``repeats``/``min_repeat_s`` shrink it for tests."""
    results: list[BenchResult] = []
    for scenario in (one_device_half_used(), gpu_with_four_efa_p5()):
        results.extend(measure(scenario, repeats=repeats, min_repeat_s=min_repeat_s))
    return results


def measure(scenario: Scenario, *, repeats: int, min_repeat_s: float) -> list[BenchResult]:
    """Time one scenario: prebuilt allocator, construction on every call, and fully cold."""
    features = Features()
    state = AllocatedState.from_claims(scenario.allocated, features)
    allocator = Allocator(features, scenario.classes, scenario.slices, state)
    node, claims = scenario.node, scenario.claims

    def prebuilt() -> object:
        return allocator.allocate(node, claims)

    compiler = SelectorCompiler(list_type_attributes=features.list_type_attributes)

    def constructed() -> object:
        fresh = AllocatedState.from_claims(scenario.allocated, features)
        cycle = Allocator(features, scenario.classes, scenario.slices, fresh, compiler=compiler)
        return cycle.allocate(node, claims)

    def cold() -> object:
        fresh = AllocatedState.from_claims(scenario.allocated, features)
        return Allocator(features, scenario.classes, scenario.slices, fresh).allocate(node, claims)

    _verify(scenario, allocator)
    timings = [
        time_per_call(function, repeats=repeats, min_repeat_s=min_repeat_s)
        for function in (prebuilt, constructed, cold)
    ]
    _verify(scenario, allocator)  # allocate() must not have changed the allocator's state
    name, shape = f"allocator.{scenario.name}", scenario.describe
    return [
        result_us(name, timings[0], target_us=scenario.target_us, detail=f"{shape}; {_PER_CALL}"),
        result_us(f"{name}.with_construction", timings[1], detail=f"{shape}; {_WITH_CONSTRUCTION}"),
        result_us(f"{name}.cold", timings[2], detail=f"{shape}; {_COLD}"),
    ]


def _verify(scenario: Scenario, allocator: Allocator) -> None:
    outcome = allocator.allocate(scenario.node, scenario.claims)
    if outcome.results is None:
        raise RuntimeError(f"benchmark {scenario.name}: the claims were not allocated; nothing to measure")
    problem = scenario.check(outcome.results)
    if problem:
        raise RuntimeError(f"benchmark {scenario.name}: unexpected allocation: {problem}")


# ---- scenario (a): 1 device out of 128, half of them in use -----------------------------------


def one_device_half_used() -> Scenario:
    in_use = {f"device-{index}" for index in range(DEVICES_IN_USE)}

    def check(results: list[AllocationResult]) -> str | None:
        devices = [r.device for result in results for r in result.devices.results]
        if len(devices) != 1:
            return f"expected 1 device, got {devices}"
        return f"{devices[0]} is already in use" if devices[0] in in_use else None

    return Scenario(
        name="one_device_128_half_used",
        describe=f"1 device of {DEVICES_PER_NODE} in one slice, devices 0-{DEVICES_IN_USE - 1} in use",
        classes=[_convert(_test_class(), DeviceClass)],
        slices=[_convert(_test_slice(HALF_NODE, DEVICES_PER_NODE), ResourceSlice)],
        allocated=[
            _convert(_allocated_claim(f"in-use-{index}", HALF_NODE, f"device-{index}"), ResourceClaim)
            for index in range(DEVICES_IN_USE)
        ],
        node=_node(HALF_NODE),
        claims=[_convert(_one_device_claim("bench-claim"), ResourceClaim)],
        check=check,
        target_us=TARGET_ONE_DEVICE_US,
    )


def _test_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{TEST_DRIVER}"'}}]},
    }


def _test_slice(node: str, count: int) -> dict[str, Any]:
    devices = [
        {
            "name": f"device-{index}",
            "attributes": {
                "model": {"string": "A100"},
                "family": {"string": "GPU"},
                "driverVersion": {"version": "1.2.3"},
                "dra.example.com/numa": {"int": index},
            },
            "capacity": {"memory": {"value": "1Gi"}},
        }
        for index in range(count)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{TEST_DRIVER}"},
        "spec": {
            "driver": TEST_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _one_device_claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "test-class"}}]}},
    }


def _allocated_claim(name: str, node: str, device: str) -> dict[str, Any]:
    claim = _one_device_claim(name)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": TEST_DRIVER, "pool": node, "device": device}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        }
    }
    return claim


# ---- scenario (b): GPU + 4 EFA on one PCIe root of a p5.48xlarge ------------------------------


def gpu_with_four_efa_p5() -> Scenario:
    slices = [_convert(obj.raw, ResourceSlice) for obj in load_paths([str(_first(_P5_SLICES))])]
    node_names = {s.spec.node_name for s in slices}
    if len(node_names) != 1 or None in node_names:
        raise InputError(f"{_first(_P5_SLICES)}: expected the slices of one node, found nodes {node_names}")
    node_name = str(node_names.pop())
    roots = _pcie_roots(slices)
    wanted = {"gpu.nvidia.com", "efa.networking.k8s.aws"}
    classes = [
        _convert(obj.raw, DeviceClass)
        for obj in load_paths([str(_first(_DEVICE_CLASSES))])
        if obj.kind == "DeviceClass" and obj.name in wanted
    ]

    def check(results: list[AllocationResult]) -> str | None:
        picked = [(r.driver, r.device) for result in results for r in result.devices.results]
        if sorted(driver for driver, _ in picked) != ["dra.net"] * 4 + ["gpu.nvidia.com"]:
            return f"expected 1 GPU + 4 EFA, got {picked}"
        on = {roots.get(device) for device in picked}
        return None if len(on) == 1 and None not in on else f"devices on several PCIe roots: {picked}"

    return Scenario(
        name="gpu_4efa_same_pcieroot_p5",
        describe="1 GPU + 4 EFA with one pcieRoot on a free p5.48xlarge (8 GPU, 32 EFA)",
        classes=classes,
        slices=slices,
        allocated=[],
        node=_node(node_name),
        claims=[_convert(_gpu_efa_claim("bench-gpu-efa"), ResourceClaim)],
        check=check,
        target_us=TARGET_GPU_EFA_US,
    )


_EFA_RDMA = 'device.attributes["dra.net"].rdma == true'


def _gpu_efa_claim(name: str) -> dict[str, Any]:
    """The shape of examples/claims.yaml ``train-gpu-efa``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
                    {
                        "name": "efa",
                        "exactly": {
                            "deviceClassName": "efa.networking.k8s.aws",
                            "allocationMode": "ExactCount",
                            "count": 4,
                            "selectors": [{"cel": {"expression": _EFA_RDMA}}],
                        },
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "efa"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
                ],
            }
        },
    }


def _pcie_roots(slices: list[ResourceSlice]) -> dict[tuple[str, str], str]:
    """(driver, device) -> its resource.kubernetes.io/pcieRoot, for checking the answer."""
    roots: dict[tuple[str, str], str] = {}
    for resource_slice in slices:
        for device in resource_slice.spec.devices:
            attribute = device.attributes.get("resource.kubernetes.io/pcieRoot")
            if attribute is not None and attribute.string is not None:
                roots[(resource_slice.spec.driver, device.name)] = attribute.string
    return roots


# ---- shared helpers ---------------------------------------------------------------------------


def _node(name: str) -> Node:
    return _convert({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}, Node)


def _convert(raw: dict[str, Any], kind: type[_T]) -> _T:
    return msgspec.convert(raw, kind, strict=False)


def _first(candidates: tuple[Path, ...]) -> Path:
    for path in candidates:
        if path.is_file():
            return path
    raise InputError(f"benchmark data not found; looked for {', '.join(map(str, candidates))}")

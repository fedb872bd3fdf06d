"""Structural check benchmarks: what reading objects as the API server does costs per value and per dump.

- ``schema.check_slice_128``: :func:`dratwin.api.schema.check_structure` over one ResourceSlice of 128
  H100 devices (the p5.48xlarge device shape, 12 attributes and one capacity each), per call.
- ``schema.per_value``: the same, divided by the number of values in the slice (every mapping, list and
  scalar counts one). Target: 2 µs per value ("a few µs per field at most").
- ``schema.intake_100k_devices``: :func:`dratwin.api.intake.read_object` (classification, structure,
  required fields; v1beta1 conversion) over a dump of 782 such slices = 100,096 devices, as
  resource.k8s.io/v1beta1 so that every slice is converted too; median of whole runs, in seconds. The
  file's loading (YAML parsing) is the loader's and not counted; together they must stay under 15 s.
"""

from __future__ import annotations

import copy
import statistics
import time
from typing import Any

import msgspec

from dratwin.api.intake import read_object
from dratwin.api.loader import LoadedObject, SourceLocation
from dratwin.api.schema import builtin_schema, check_structure
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.cel_bench import h100_device
from dratwin.benchmarks.runner import DEFAULT_MIN_REPEAT_S, DEFAULT_REPEATS, result_us, time_per_call

TARGET_PER_VALUE_US = 2.0
DEVICES_PER_SLICE = 128
DUMP_SLICES = 782  # x 128 = 100,096 devices


def make_slice(index: int, *, v1beta1: bool = False) -> dict[str, Any]:
    """A ResourceSlice of 128 H100 devices for node ``n<index>`` (devices under ``basic`` for v1beta1)."""
    template = msgspec.to_builtins(h100_device()[0])
    devices = []
    for number in range(DEVICES_PER_SLICE):
        device = copy.deepcopy(template)
        device["name"] = f"gpu-{number}"
        if v1beta1:
            device = {"name": device.pop("name"), "basic": device}
        devices.append(device)
    return {
        "apiVersion": "resource.k8s.io/v1beta1" if v1beta1 else "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"n{index}-gpu.nvidia.com"},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": f"n{index}",
                 "pool": {"name": f"n{index}", "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


def count_values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(count_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(count_values(v) for v in value)
    return 1


def run(
    *, repeats: int = DEFAULT_REPEATS, min_repeat_s: float = DEFAULT_MIN_REPEAT_S, dump_slices: int = DUMP_SLICES,
    dump_runs: int = 3,
) -> list[BenchResult]:
    raw = make_slice(0)
    root = builtin_schema().kind("resource.k8s.io/v1", "ResourceSlice")
    assert root is not None
    if check_structure(raw, root):
        raise RuntimeError("benchmark schema: the sample slice has structural issues")
    values = count_values(raw)
    timing = time_per_call(lambda: check_structure(raw, root), repeats=repeats, min_repeat_s=min_repeat_s)
    shape = f"ResourceSlice of {DEVICES_PER_SLICE} H100 devices, {values} values"
    per_value = BenchResult("schema.per_value", round(timing.median_us / values, 3), "µs", TARGET_PER_VALUE_US,
                            f"{shape}; {timing.describe()}")
    dump = [LoadedObject(make_slice(i, v1beta1=True), SourceLocation("dump.yaml", i, 1)) for i in range(dump_slices)]
    seconds = []
    for _ in range(dump_runs):
        start = time.perf_counter()
        for obj in dump:
            if read_object(obj).problems:
                raise RuntimeError("benchmark schema: the dump has structural problems")
        seconds.append(time.perf_counter() - start)
    devices = dump_slices * DEVICES_PER_SLICE
    dump_result = BenchResult(
        f"schema.intake_{devices // 1000}k_devices", round(statistics.median(seconds), 3), "s", None,
        f"{dump_slices} v1beta1 slices, {devices} devices, {dump_slices * count_values(dump[0].raw)} values: "
        f"checked and converted to v1; median of {dump_runs} runs",
    )
    return [result_us("schema.check_slice_128", timing, detail=shape), per_value, dump_result]

"""CEL selector benchmarks on the p5.48xlarge H100 device shape.

The selector is the usual "big enough GPU" one::

    device.driver == "gpu.nvidia.com" && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0

- ``cel.matches_cached``: ``CompiledSelector.matches`` on a device whose result is cached (what the
  allocator pays for every device after the first of its kind). Target: 2 µs.
- ``cel.matches_uncached``: ``matches`` on fresh content every call (the memory capacity differs), so
  every call builds the device's CEL view, checks all of its attributes and evaluates. No target.
- ``cel.compile``: compiling the selector with a fresh compiler (no compile cache). No target.

The device comes from the shared driver data (resourceslice-p5.48xlarge.yaml) when it is there,
else from an equivalent device embedded below.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import yaml

from dratwin.api.resource import Device, DeviceCapacity, ResourceSlice
from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.runner import DEFAULT_MIN_REPEAT_S, DEFAULT_REPEATS, result_us, time_per_call
from dratwin.cel import CelDevice, SelectorCompiler

TARGET_CACHED_US = 2.0
DRIVER = "gpu.nvidia.com"
SELECTOR = f'device.driver == "{DRIVER}" && device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) > 0'

_P5_SLICE = Path(str(resources.files("dratwin").joinpath("data", "resourceslice-p5.48xlarge.yaml")))
# Distinct device contents prepared ahead of timing (see _FreshDevices).
_FRESH_POOL = 4096

# gpu-0 of the p5.48xlarge slice (NVIDIA GPU DRA driver, H100 80GB), for when the package data is absent.
_EMBEDDED_H100: dict[str, Any] = {
    "name": "gpu-0",
    "attributes": {
        "addressingMode": {"string": "HMM"},
        "architecture": {"string": "Hopper"},
        "brand": {"string": "Nvidia"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "cudaDriverVersion": {"version": "13.0.0"},
        "driverVersion": {"version": "580.126.9"},
        "productName": {"string": "NVIDIA H100 80GB HBM3"},
        "resource.kubernetes.io/numaNode": {"int": 0},
        "resource.kubernetes.io/pciBusID": {"string": "0000:53:00.0"},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:44"},
        "type": {"string": "gpu"},
        "uuid": {"string": "GPU-66179fcd-786c-5ef1-b727-250404d3e97d"},
    },
    "capacity": {"memory": {"value": "81559Mi"}},
}


def run(*, repeats: int = DEFAULT_REPEATS, min_repeat_s: float = DEFAULT_MIN_REPEAT_S) -> list[BenchResult]:
    """The three figures; ``repeats``/``min_repeat_s`` shrink the run for tests."""
    device, source = h100_device()
    shape = f"p5.48xlarge H100 device ({source}), {len(device.attributes)} attributes"

    selector = SelectorCompiler().compile(SELECTOR)
    cached_device = CelDevice.build(DRIVER, device)
    if selector.matches(cached_device) is not True:
        raise RuntimeError(f"benchmark cel: the selector does not match the H100 device ({source})")

    def cached() -> object:
        return selector.matches(cached_device)

    fresh = _FreshDevices(device)

    def uncached() -> object:
        return fresh.match_next()

    def compile_fresh() -> object:
        return SelectorCompiler().compile(SELECTOR)

    timings = [
        time_per_call(fn, repeats=repeats, min_repeat_s=min_repeat_s) for fn in (cached, uncached, compile_fresh)
    ]
    if not fresh.every_call_evaluated():
        raise RuntimeError("benchmark cel: an 'uncached' call was served from the cache")
    uncached_detail = "fresh content every call: new CelDevice, all attributes checked, one CEL evaluation"
    return [
        result_us(
            "cel.matches_cached", timings[0], target_us=TARGET_CACHED_US, detail=f"{shape}; result already cached"
        ),
        result_us("cel.matches_uncached", timings[1], detail=f"{shape}; {uncached_detail}"),
        result_us("cel.compile", timings[2], detail="the selector above, with a new SelectorCompiler (no cache)"),
    ]


def h100_device() -> tuple[Device, str]:
    """gpu-0 of the shared p5.48xlarge slice, or the embedded copy; and which one it is."""
    if _P5_SLICE.is_file():
        for document in yaml.safe_load_all(_P5_SLICE.read_text(encoding="utf-8")):
            if isinstance(document, dict) and document.get("kind") == "ResourceSlice":
                resource_slice = msgspec.convert(document, ResourceSlice)
                if resource_slice.spec.driver == DRIVER and resource_slice.spec.devices:
                    return resource_slice.spec.devices[0], _P5_SLICE.name
    return msgspec.convert(_EMBEDDED_H100, Device), "embedded copy"


class _FreshDevices:
    """Device contents no selector has seen yet.

    A pool of devices that differ in their memory capacity is made before timing. Each call builds a
    new ``CelDevice`` from the next one (as the allocator builds one per device); when the pool wraps
    around, the selector is replaced by a freshly compiled one, whose result cache is empty.
    """

    def __init__(self, template: Device) -> None:
        base = 81559 * 2**20
        self._pool = [
            msgspec.structs.replace(template, capacity={"memory": DeviceCapacity(value=str(base + serial))})
            for serial in range(_FRESH_POOL)
        ]
        self._index = 0
        self._selector = SelectorCompiler().compile(SELECTOR)
        self._calls = 0
        self._evaluations = 0

    def match_next(self) -> bool:
        if self._index == len(self._pool):
            self._retire_selector()
            self._index = 0
        device = CelDevice.build(DRIVER, self._pool[self._index])
        self._index += 1
        self._calls += 1
        return self._selector.matches(device)

    def every_call_evaluated(self) -> bool:
        self._retire_selector()
        return self._evaluations == self._calls

    def _retire_selector(self) -> None:
        self._evaluations += self._selector.evaluations
        self._selector = SelectorCompiler().compile(SELECTOR)

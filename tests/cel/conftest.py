"""Fixtures for the CEL tests: devices from their wire form, and one-call matching.

Helpers are fixtures (not importable functions) because pytest runs with ``--import-mode=importlib``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import msgspec
import pytest

from dratwin.api.resource import Device
from dratwin.cel import CelDevice, SelectorCompiler

DRIVER = "gpu.example.com"

# Every scalar attribute type, qualified and unqualified names, capacities in two domains.
GPU: dict[str, Any] = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "H100"},
        "index": {"int": 3},
        "healthy": {"bool": True},
        "driverVersion": {"version": "580.126.9"},
        "resource.kubernetes.io/numaNode": {"int": 1},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:44"},
    },
    "capacity": {"memory": {"value": "80Gi"}, "other.example.com/slots": {"value": 4}},
}


class DeviceFactory(Protocol):
    def __call__(
        self, spec: dict[str, Any] | None = None, *, driver: str = DRIVER, lists: bool = False, **changes: Any
    ) -> CelDevice: ...


def _wire(spec: dict[str, Any] | None, changes: dict[str, Any]) -> Device:
    return msgspec.convert({**(GPU if spec is None else spec), **changes}, Device)


@pytest.fixture
def device() -> DeviceFactory:
    """device(spec=None, *, driver, lists, **top_level_changes) -> CelDevice (the GPU above by default)."""

    def build(
        spec: dict[str, Any] | None = None, *, driver: str = DRIVER, lists: bool = False, **changes: Any
    ) -> CelDevice:
        return CelDevice.build(driver, _wire(spec, changes), list_type_attributes=lists)

    return build


@pytest.fixture
def gpu_attributes() -> dict[str, Any]:
    """The test GPU's attributes (a copy)."""
    return dict(GPU["attributes"])


@pytest.fixture
def wire_device() -> Callable[..., Device]:
    """wire_device(spec=None, **top_level_changes) -> api Device."""
    return lambda spec=None, **changes: _wire(spec, changes)


@pytest.fixture
def compiler() -> SelectorCompiler:
    return SelectorCompiler()


@pytest.fixture
def match(compiler: SelectorCompiler, device: DeviceFactory) -> Callable[..., bool]:
    """match(expression, on=None) -> bool: compile and match against ``on`` (the GPU by default)."""

    def run(expression: str, on: CelDevice | None = None) -> bool:
        return compiler.compile(expression).matches(on or device())

    return run

"""The selectors of the shared driver data against the p5.48xlarge slices (8 H100 GPUs, 32 EFA)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from tests.conftest import DRIVERS

from dratwin.api.resource import ResourceSlice
from dratwin.cel import CelDevice, CompiledSelector, SelectorCompiler
from dratwin.errors import CelRuntimeError


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]


def _expressions(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["expression"]] if isinstance(node.get("expression"), str) else []
        return found + [e for value in node.values() for e in _expressions(value)]
    if isinstance(node, list):
        return [e for item in node for e in _expressions(item)]
    return []


@pytest.fixture(scope="module")
def p5_devices() -> list[CelDevice]:
    slices = [
        msgspec.convert(d, ResourceSlice)
        for d in _documents(DRIVERS / "resourceslice-p5.48xlarge.yaml")
        if d.get("kind") == "ResourceSlice"
    ]
    return [CelDevice.build(s.spec.driver, d) for s in slices for d in s.spec.devices]


def test_every_shared_selector_compiles() -> None:
    compiler = SelectorCompiler()
    expressions = [
        e
        for name in ("deviceclasses.yaml", "resourceclaims.yaml")
        for d in _documents(DRIVERS / name)
        for e in _expressions(d)
    ]
    assert len(expressions) >= 10
    for expression in expressions:
        compiler.compile(expression)


@pytest.mark.parametrize(
    ("expression", "gpus", "efas"),
    [
        ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", 8, 0),
        (
            'device.driver == "dra.net" &&\n'
            " device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'",
            0,
            32,
        ),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0', 8, 0),
        ('device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))', 8, 0),
        ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:44"', 1, 4),
    ],
    ids=["gpu-class", "efa-class", "memory", "driver-version", "pcie-root"],
)
def test_selectors_on_the_p5_devices(p5_devices: list[CelDevice], expression: str, gpus: int, efas: int) -> None:
    selector = SelectorCompiler().compile(expression)
    matched = [d for d in p5_devices if _matches(selector, d)]
    assert sum(d.driver == "gpu.nvidia.com" for d in matched) == gpus
    assert sum(d.driver == "dra.net" for d in matched) == efas


def _matches(selector: CompiledSelector, device: CelDevice) -> bool:
    try:
        return bool(selector.matches(device))
    except CelRuntimeError:  # a missing attribute on the other driver's devices
        return False


def test_one_evaluation_per_distinct_projection(p5_devices: list[CelDevice]) -> None:
    selector = SelectorCompiler().compile(
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
    )
    assert sum(selector.matches(d) for d in p5_devices) == 8
    assert selector.evaluations == 2  # one per driver: GPUs and EFAs differ only in unrelated attributes

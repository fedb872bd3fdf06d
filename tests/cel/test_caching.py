"""Result caching: a selector is evaluated once per distinct content (or projection), errors included."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.errors import CelRuntimeError

DeviceFactory = Callable[..., CelDevice]
PROJECTABLE = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0'
WHOLE_MAP = 'device.attributes["gpu.example.com"].exists(k, k == "model")'


def _with(gpu_attributes: dict[str, Any], **attributes: Any) -> dict[str, Any]:
    return {**gpu_attributes, **attributes}


def test_identical_content_is_evaluated_once(device: DeviceFactory) -> None:
    selector = SelectorCompiler().compile(WHOLE_MAP)
    devices = [device(name=f"gpu-{i}") for i in range(5)]  # same content, different names
    assert [selector.matches(d) for d in devices] == [True] * 5
    assert selector.evaluations == 1
    assert [selector.matches(d) for d in devices] == [True] * 5
    assert selector.evaluations == 1


def test_different_content_is_evaluated_again(device: DeviceFactory, gpu_attributes: dict[str, Any]) -> None:
    selector = SelectorCompiler().compile(WHOLE_MAP)
    selector.matches(device())
    selector.matches(device(attributes=_with(gpu_attributes, uuid={"string": "GPU-1"})))
    selector.matches(device(attributes=_with(gpu_attributes, uuid={"string": "GPU-2"})))
    assert selector.evaluations == 3


def test_projectable_selector_shares_results_across_unrelated_differences(
    device: DeviceFactory, gpu_attributes: dict[str, Any]
) -> None:
    selector = SelectorCompiler().compile(PROJECTABLE)
    assert selector.projectable
    gpus = [device(attributes=_with(gpu_attributes, uuid={"string": f"GPU-{i}"})) for i in range(8)]
    assert [selector.matches(g) for g in gpus] == [True] * 8
    assert selector.evaluations == 1
    small = device(capacity={"memory": {"value": "24Gi"}})
    assert selector.matches(small) is False
    assert selector.evaluations == 2


@pytest.mark.parametrize(
    ("change", "reevaluates"),
    [
        ({"driver": "other.example.com"}, True),  # the driver is always part of the projection
        ({"allowMultipleAllocations": True}, True),
        ({"capacity": {"memory": {"value": "81920Mi"}}}, False),  # the same quantity, spelled differently
        ({"capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "1"}}}, False),
        ({"capacity": {}}, True),  # memory missing: a different outcome (an error)
    ],
    ids=["driver", "allowMultipleAllocations", "same-quantity-other-text", "unrelated-capacity", "missing-capacity"],
)
def test_projection_contents(device: DeviceFactory, change: dict[str, Any], reevaluates: bool) -> None:
    selector = SelectorCompiler().compile(PROJECTABLE)
    selector.matches(device())
    fields = dict(change)
    driver = fields.pop("driver", "gpu.example.com")
    with contextlib.suppress(CelRuntimeError):  # the missing-capacity case fails, and is counted
        selector.matches(device(driver=driver, **fields))
    assert selector.evaluations == (2 if reevaluates else 1)


def test_whole_map_selectors_are_not_projectable(compiler: SelectorCompiler) -> None:
    assert not compiler.compile(WHOLE_MAP).projectable
    assert not compiler.compile("device.attributes.size() > 0").projectable
    assert not compiler.compile('cel.bind(a, device.attributes["d"], a.x == 1)').projectable
    assert compiler.compile('has(device.attributes["d"].x) && device.attributes["d"].?y.orValue(1) == 1').projectable
    assert compiler.compile('"x" in device.attributes["d"] && "d" in device.capacity').projectable


def test_membership_guarded_selector_shares_results(device: DeviceFactory, gpu_attributes: dict[str, Any]) -> None:
    selector = SelectorCompiler().compile(
        '"gpu.example.com" in device.attributes && device.attributes["gpu.example.com"].index < 4'
    )
    gpus = [device(attributes=_with(gpu_attributes, uuid={"string": f"GPU-{i}"})) for i in range(4)]
    assert [selector.matches(g) for g in gpus] == [True] * 4
    other = device(driver="other.example.com")  # its attributes are in another domain
    assert selector.matches(other) is False
    assert selector.evaluations == 2


def test_runtime_errors_are_cached(device: DeviceFactory) -> None:
    selector = SelectorCompiler().compile('device.attributes["gpu.example.com"].missing == 1')
    errors = []
    for _ in range(3):
        with pytest.raises(CelRuntimeError) as caught:
            selector.matches(device())
        errors.append(caught.value)
    assert selector.evaluations == 1
    assert len({id(e) for e in errors}) == 3  # a fresh exception each time
    assert len({str(e) for e in errors}) == 1


def test_conversion_errors_are_cached_without_evaluating(device: DeviceFactory) -> None:
    selector = SelectorCompiler().compile("true")
    broken = device(attributes={"x": {}})
    for _ in range(2):
        with pytest.raises(CelRuntimeError, match="unsupported attribute value"):
            selector.matches(broken)
    assert selector.evaluations == 0


def test_results_are_per_selector(device: DeviceFactory) -> None:
    compiler = SelectorCompiler()
    gpu = device()
    yes, no = compiler.compile(PROJECTABLE), compiler.compile(PROJECTABLE.replace("> 0", "< 0"))
    assert (yes.matches(gpu), no.matches(gpu)) == (True, False)
    assert (yes.evaluations, no.evaluations) == (1, 1)


def test_result_cache_is_bounded(monkeypatch: pytest.MonkeyPatch, device: DeviceFactory) -> None:
    from dratwin.cel import compiler as compiler_module

    monkeypatch.setattr(compiler_module, "RESULT_CACHE_SIZE", 2)
    selector = SelectorCompiler().compile(PROJECTABLE)
    sizes = ["41Gi", "42Gi", "43Gi"]
    gpus = [device(capacity={"memory": {"value": size}}) for size in sizes]
    for gpu in gpus:
        selector.matches(gpu)
    assert selector.evaluations == 3
    selector.matches(gpus[2])  # still cached
    assert selector.evaluations == 3
    selector.matches(gpus[0])  # evicted first (FIFO), so evaluated again
    assert selector.evaluations == 4

"""Selectors that compile but cannot work: each finding with and without a ResourceSlice that publishes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from tests.builders.validation import device, resource_slice

from dratwin.api.driver_shapes import Publications
from dratwin.api.resource import ResourceSlice
from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.cel.advice import Level
from dratwin.errors import CelRuntimeError

NV = "gpu.nvidia.com"
MY = "gpu.mycorp.io"  # a driver dratwin knows nothing about


def _slice(driver: str, attributes: dict[str, Any], capacity: dict[str, Any] | None = None) -> ResourceSlice:
    wire = resource_slice([device(attributes=attributes, capacity=capacity or {})], driver=driver)
    return msgspec.convert(wire, ResourceSlice)


MIG_ONLY = _slice(NV, {"type": {"string": "mig"}, "profile": {"string": "1g.5gb"}})
MY_GPU = _slice(MY, {"model": {"string": "x1"}, "firmware": {"version": "1.2.3"}}, {"memory": {"value": "8Gi"}})

# (id, expression, slices of the input, level, message fragment, hint fragment); level None: no finding.
CASES: list[tuple[str, str, list[ResourceSlice], Level | None, str, str]] = [
    ("known-driver-case-typo", f'device.attributes["{NV}"].productname == "H100"', [], Level.WARNING,
     'no known driver publishes attribute "productname" in domain "gpu.nvidia.com", looking it up is a runtime '
     "error", "did you mean productName?"),
    ("known-driver-right-name", f'device.attributes["{NV}"].productName == "H100"', [], None, "", ""),
    ("slices-of-another-model-do-not-hide-a-known-attribute", f'device.attributes["{NV}"].productName == "H100"',
     [MIG_ONLY], None, "", ""),
    ("typo-with-slices-of-the-driver", f'device.attributes["{NV}"].profle == "1g.5gb"', [MIG_ONLY], Level.WARNING,
     "neither the input's ResourceSlices nor the known drivers publish attribute \"profle\"", "did you mean profile?"),
    ("unknown-driver-without-slices", f'device.attributes["{MY}"].modle == "x1"', [], None, "", ""),
    ("unknown-driver-with-slices", f'device.attributes["{MY}"].modle == "x1"', [MY_GPU], Level.WARNING,
     "no device in the input's ResourceSlices has attribute \"modle\"", "did you mean model?"),
    ("unknown-driver-attribute-published", f'device.attributes["{MY}"].model == "x1"', [MY_GPU], None, "", ""),
    ("guarded-lookup-is-always-false", f'has(device.attributes["{NV}"].productname)', [], Level.WARNING,
     "so the test is always false", "did you mean productName?"),
    ("in-test", f'"productname" in device.attributes["{NV}"]', [], Level.WARNING, "always false", "productName"),
    ("optional-lookup", f'device.attributes["{NV}"].?productname.orValue("") == ""', [], Level.WARNING,
     "always false", "productName"),
    ("bound-domain", f'cel.bind(g, device.attributes["{NV}"], g.productNam == "x")', [], Level.WARNING,
     '"productNam"', "did you mean productName?"),
    ("attribute-written-as-capacity", f'has(device.capacity["{NV}"].productName)', [], Level.WARNING,
     'capacity "productName"',
     f'productName is an attribute: write device.attributes["{NV}"].productName'),
    ("capacity-written-as-attribute", f'device.attributes["{NV}"].memory > 0', [], Level.WARNING,
     'attribute "memory"', f'memory is a capacity: write device.capacity["{NV}"].memory'),
    ("capacity-published", f'device.capacity["{MY}"].memory.compareTo(quantity("4Gi")) > 0', [MY_GPU], None, "", ""),
    ("standard-domain", 'device.attributes["resource.kubernetes.io"].pcieroot == "x"', [], Level.WARNING,
     '"pcieroot"', "did you mean pcieRoot?"),
    ("domain-near-miss", 'device.attributes["gpu.nvidia.co"].productName == "x"', [], Level.WARNING,
     'no driver publishes attributes in domain "gpu.nvidia.co"', 'did you mean "gpu.nvidia.com"?'),
    ("driver-near-miss", 'device.driver == "gpu.nvidia.co"', [], Level.WARNING,
     'no known driver is called "gpu.nvidia.co"', 'did you mean "gpu.nvidia.com"?'),
    ("driver-of-the-input", f'device.driver == "{MY}"', [MY_GPU], None, "", ""),
    ("own-driver-not-near-a-known-one", 'device.driver == "tpu.google.com"', [], None, "", ""),
    ("invalid-quantity-literal", 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40GB")) >= 0', [],
     Level.WARNING, 'quantity("40GB") is not a valid quantity', "did you mean 40G?"),
    ("invalid-semver-literal", f'device.attributes["{NV}"].cudaComputeCapability.isGreaterThan(semver("9.0"))', [],
     Level.WARNING, 'semver("9.0") is not a valid version', 'write semver("9.0.0") or semver("9.0", true)'),
    ("normalized-semver-literal", f'device.attributes["{NV}"].cudaComputeCapability.isGreaterThan('
     'semver("9.0", true))', [], None, "", ""),
    ("is-semver-literal", 'isSemver("v1")', [], Level.WARNING, 'isSemver("v1") is always false', 'semver("1.0.0")'),
    ("version-equals-string", f'device.attributes["{NV}"].driverVersion == "550.0"', [], Level.WARNING,
     "is a version, compared with a string: values of different types are never equal, so this is always false",
     'semver("550.0.0")'),
    ("version-not-equals-string", f'device.attributes["{NV}"].driverVersion != "550.0"', [], Level.WARNING,
     "always true", 'semver("550.0.0")'),
    ("version-equals-version", f'device.attributes["{NV}"].driverVersion == semver("550.0.0")', [], None, "", ""),
    ("version-ordered-as-string", f'device.attributes["{NV}"].driverVersion < "550.0.0"', [], Level.WARNING,
     "which < cannot compare", "compareTo(semver"),
    ("version-compare-to-string", f'device.attributes["{MY}"].firmware.compareTo("1.0") > 0', [MY_GPU],
     Level.WARNING, "is a version, compared with a string: compareTo() is a runtime error", 'semver("1.0.0")'),
    ("int-equals-string", 'device.attributes["dra.net"].numaNode == "0"', [], Level.WARNING,
     "is an int, compared with a string", "write the number without quotes: 0"),
    ("quantity-compare-to-string", f'device.capacity["{NV}"].memory.compareTo("40Gi") > 0', [], Level.ERROR,
     "compareTo() of a quantity takes a quantity, not a string: the API server's CEL checker refuses",
     'quantity("40Gi")'),
    ("over-the-cost-limit", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10]"
     ".all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, "
     "[1,2,3,4,5,6,7,8,9,10].all(g, a + b + c + d + e + f + g > 0)))))))", [], Level.ERROR,
     "too complex: the estimated worst-case cost is", "split the condition"),
    ("within-the-limit-but-too-many-loops-for-dratwin", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
     "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a + b + c + d > 0))))", [], Level.WARNING,
     "dratwin's CEL runtime stops at 10,000 iterations", "runtime error"),
]


@pytest.mark.parametrize(("expression", "slices", "level", "message", "hint"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_advice(compiler: SelectorCompiler, expression: str, slices: list[ResourceSlice], level: Level | None,
                message: str, hint: str) -> None:
    found = compiler.advise(expression, Publications.of(slices))
    if level is None:
        assert found == []
        return
    [advice] = found
    assert advice.level is level
    assert message in advice.message
    assert hint in advice.hint


def test_advice_points_at_the_lookup(compiler: SelectorCompiler) -> None:
    expression = f'device.driver == "{NV}" && device.attributes["{NV}"].productname == "H100"'
    [advice] = compiler.advise(expression, Publications.of([]))
    assert expression[advice.offset:].startswith(f'device.attributes["{NV}"].productname')


def test_runtime_iteration_budget_is_reported_in_words(compiler: SelectorCompiler,
                                                       device: Callable[..., CelDevice]) -> None:
    loops = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, " \
            "[1,2,3,4,5,6,7,8,9,10].all(d, a + b + c + d > 0))))"
    with pytest.raises(CelRuntimeError) as raised:
        compiler.compile(loops).matches(device())
    assert "loops ran 10,000 times on this device, where dratwin's CEL runtime stops" in raised.value.message
    assert "Kubernetes would go on (estimated cost" in raised.value.message
    assert "INTERNAL" not in str(raised.value)


def test_runtime_cost_limit_is_reported_in_words(compiler: SelectorCompiler,
                                                 device: Callable[..., CelDevice]) -> None:
    expression = next(c[1] for c in CASES if c[0] == "over-the-cost-limit")
    with pytest.raises(CelRuntimeError) as raised:
        compiler.compile(expression).matches(device())
    assert raised.value.message.startswith("the selector exceeded the CEL cost limit of 1,000,000")

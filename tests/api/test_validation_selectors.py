"""Selector findings as validation problems: the object and field of the selector, the place in the
expression, warnings for what the API server accepts and errors for what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from tests.builders.validation import FakeCompiler, Wire, claim, device, request, resource_slice, validate

from dratwin.api.validation import ProblemKind, Severity
from dratwin.cel import SelectorCompiler


def _class(expression: str, name: str = "gpu.nvidia.com") -> Wire:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _nvidia_slice(**attributes: Any) -> Wire:
    return resource_slice([device(attributes=attributes)], driver="gpu.nvidia.com")


FIELD = "spec.selectors[0].cel.expression"
LOOPS = "[1,2,3,4,5,6,7,8,9,10]"
# Seven nested all() over ten elements: innermost 10 x (condition 2 + step 1) + list 10 + result 1 = 41,
# each level around it 10 x (2 + 1 + inner) + 11: 451, 4551, ..., 45,555,551.
TOO_COSTLY = "".join(f"{LOOPS}.all(x{i}, " for i in range(7)) + "true" + ")" * 7

# (id, expression, other objects, severity, problem kind, message fragment); severity None: no problem.
CASES: list[tuple[str, str, list[Wire], Severity | None, ProblemKind, str]] = [
    ("typo-without-slices", 'device.attributes["gpu.nvidia.com"].productname == "x"', [], Severity.WARNING,
     ProblemKind.INVALID, '"productname" in domain "gpu.nvidia.com"'),
    ("typo-with-a-slice-that-publishes-it", 'device.attributes["gpu.nvidia.com"].productname == "x"',
     [_nvidia_slice(productname={"string": "x"})], None, ProblemKind.INVALID, ""),
    ("right-name", 'device.attributes["gpu.nvidia.com"].productName == "x"', [], None, ProblemKind.INVALID, ""),
    ("version-compared-with-a-string", 'device.attributes["gpu.nvidia.com"].driverVersion == "580.0"', [],
     Severity.WARNING, ProblemKind.INVALID, "always false"),
    ("slice-says-the-type", 'device.attributes["gpu.nvidia.com"].driverVersion == "580.0"',
     [_nvidia_slice(driverVersion={"string": "580.0"})], None, ProblemKind.INVALID, ""),
    ("invalid-literal", 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40GB")) >= 0', [],
     Severity.WARNING, ProblemKind.INVALID, 'quantity("40GB") is not a valid quantity'),
    ("over-the-cost-limit", TOO_COSTLY, [], Severity.ERROR, ProblemKind.FORBIDDEN,
     "too complex: the estimated worst-case cost is 45,555,551, over the limit of 1,000,000"),
]


@pytest.mark.parametrize(("expression", "others", "severity", "kind", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_selector_findings(expression: str, others: list[Wire], severity: Severity | None, kind: ProblemKind,
                           message: str) -> None:
    problems = [p for p in validate(_class(expression), *others, compiler=SelectorCompiler()) if p.field == FIELD]
    if severity is None:
        assert problems == []
        return
    [problem] = problems
    assert (problem.severity, problem.kind, problem.object) == (severity, kind, "DeviceClass gpu.nvidia.com")
    assert message in problem.message


def test_the_place_in_the_expression_and_the_claim_field() -> None:
    expression = 'device.driver == "gpu.nvidia.com" &&\n  device.attributes["gpu.nvidia.com"].productname == "x"'
    selector = [{"cel": {"expression": expression}}]
    problems = validate(_class("true"), claim({"requests": [request(deviceClassName="gpu.nvidia.com",
                                                                     selectors=selector)]}),
                        compiler=SelectorCompiler())
    [problem] = problems
    assert problem.field == "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert problem.message.endswith("(line 2, column 3 of the expression)")
    assert problem.hint == "did you mean productName?"


def test_a_compiler_without_advice_is_fine() -> None:
    assert validate(_class('device.attributes["gpu.nvidia.com"].productname == "x"'), compiler=FakeCompiler()) == []

"""The estimated cost of selectors, against the figures Kubernetes' own tests expect, and the loop count.

The expected costs are those of kubernetes/dynamic-resource-allocation ``cel/compile_test.go`` (the
``expectCost`` of each case, commit 3d036712): the API server rejects a selector whose estimate exceeds
1,000,000, so dratwin must compute the same number.
"""

from __future__ import annotations

import pytest

from dratwin.cel import SelectorCompiler
from dratwin.cel.cost import COST_LIMIT

_LIST = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
_NESTED = (f"{_LIST}.all(x, {_LIST}.all(y, {_LIST}.all(z, {_LIST}.all(z2, {_LIST}.all(z3, {_LIST}.all(z4, "
           f"{_LIST}.all(z5, int('1'.find('[0-9]*')) < 100)))))))")
_ALL_KINDS = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
_ATTRIBUTE_VALUES = 64  # the most characters or list values of one attribute, as the estimator assumes

COSTS: list[tuple[str, str, int]] = [
    ("missing-attribute-select", 'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ("missing-attribute-index", 'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ("domain-check", '"no-such-domain" in device.attributes', 3),
    ("empty-driver-name", 'device.driver == ""', 2),
    ("driver-name", 'device.driver == "dra.example.com"', 4),
    ("attribute-select", 'device.attributes["dra.example.com"].name', 4),
    ("attribute-index", 'device.attributes["dra.example.com"]["name"]', 4),
    ("bind", 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ("int", 'device.attributes["dra.example.com"].name > 0', 5),
    ("string", 'device.attributes["dra.example.com"].name == "fish"', 5),
    ("exists-on-list", 'device.attributes["dra.example.com"].name.exists(x, x > 0)', 5 + 6 * _ATTRIBUTE_VALUES),
    ("all-on-strings", 'device.attributes["dra.example.com"].names.all(x, x != "")', 5 + 4 * _ATTRIBUTE_VALUES),
    ("all-on-versions", 'device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
     5 + 6 * _ATTRIBUTE_VALUES),
    ("exists-on-versions", 'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
     5 + 7 * _ATTRIBUTE_VALUES),
    ("includes", 'device.attributes["dra.example.com"].name.includes("fish")', 4 + 48),
    ("includes-semver", 'device.attributes["dra.example.com"].name.includes(semver("1.0.0"))', 4 + 48 + 1),
    ("list-size", 'device.attributes["dra.example.com"].names.size() == 2', 6),
    ("in-list-attribute", '1 in device.attributes["dra.example.com"].names', 4 + 64),
    ("version", 'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', 6),
    ("version-normalized", 'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && '
     'isSemver("v1.0.0", true)', 7),
    ("quantity", 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ("guarded-quantity", '"name" in device.capacity["dra.example.com"] && '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ("negated-guard", '!("name" in device.capacity["dra.example.com"]) || '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    ("all-kinds", _ALL_KINDS, 52),
    ("three-bools", 'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
     'device.attributes["dra.example.com"].c', 12),
    ("attribute-domains", 'device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ("attribute-ids", 'device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    ("split", 'device.attributes["dra.example.com"].services.split("example").size() >= 2', 19),
    ("regex", 'device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
    ("capacity-domains", 'device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ("capacity-ids", 'device.capacity["dra.example.com"].exists_one(x, x == "memory")', 133),
    ("expensive", _NESTED, 85555551),
    ("allow-multiple", "device.allowMultipleAllocations == true", 3),
]


@pytest.mark.parametrize(("expression", "cost"), [c[1:] for c in COSTS], ids=[c[0] for c in COSTS])
def test_estimated_cost_is_kubernetes_estimate(compiler: SelectorCompiler, expression: str, cost: int) -> None:
    estimate = compiler.compile(expression).cost()
    assert estimate.cost.high == cost
    assert estimate.exceeds_limit is (cost > COST_LIMIT)


LOOPS: list[tuple[str, str, int]] = [
    ("no-loop", 'device.driver == "a"', 0),
    ("over-a-domain", 'device.attributes["d"].exists(k, k == "a")', 32),
    ("nested-literals", "[1, 2, 3].all(x, [1, 2].all(y, x != y))", 3 * (1 + 2)),
    ("bind-is-no-loop", "cel.bind(x, [1, 2], x.size() == 2)", 0),
    ("seven-deep", _NESTED, 11_111_110),
]


@pytest.mark.parametrize(("expression", "iterations"), [c[1:] for c in LOOPS], ids=[c[0] for c in LOOPS])
def test_worst_case_loop_iterations(compiler: SelectorCompiler, expression: str, iterations: int) -> None:
    assert compiler.compile(expression).cost().iterations == iterations

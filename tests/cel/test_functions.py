"""The functions of the DRA CEL environment, true and false cases and their runtime errors.

Every expression runs against the test GPU (conftest.GPU): driver gpu.example.com, model "H100",
index 3, healthy true, driverVersion 580.126.9, numaNode 1, memory 80Gi, slots 4.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dratwin.errors import CelRuntimeError

GPU_ATTRS = 'device.attributes["gpu.example.com"]'
MEMORY = 'device.capacity["gpu.example.com"].memory'

TRUE_AND_FALSE: list[tuple[str, str, bool]] = [
    # ---- quantity ----
    ("quantity-eq-canonical", 'quantity("1") == quantity("1000m")', True),
    ("quantity-eq-binary-decimal", 'quantity("1Ki") == quantity("1024")', True),
    ("quantity-ne", 'quantity("1k") == quantity("1Ki")', False),
    ("quantity-eq-nano-rounding", 'quantity("1.0000000001") == quantity("1.000000001")', True),
    ("capacity-eq-quantity", f'{MEMORY} == quantity("80Gi")', True),
    ("capacity-ne-quantity", f'{MEMORY} == quantity("80G")', False),
    ("capacity-eq-other-spelling", f'{MEMORY} == quantity("81920Mi")', True),
    ("isQuantity-true", 'isQuantity("1.5Gi")', True),
    ("isQuantity-false-case", 'isQuantity("1gi")', False),
    ("isQuantity-false-word", 'isQuantity("three")', False),
    ("compareTo-greater", f'{MEMORY}.compareTo(quantity("40Gi")) == 1', True),
    ("compareTo-equal", 'quantity("200M").compareTo(quantity("0.2G")) == 0', True),
    ("compareTo-less", 'quantity("50M").compareTo(quantity("50Mi")) == -1', True),
    ("isGreaterThan-true", f'{MEMORY}.isGreaterThan(quantity("40Gi"))', True),
    ("isGreaterThan-false", f'{MEMORY}.isGreaterThan(quantity("80Gi"))', False),
    ("isLessThan-true", 'quantity("50M").isLessThan(quantity("50Mi"))', True),
    ("isLessThan-false", 'quantity("100M").isLessThan(quantity("50M"))', False),
    ("add-quantity", 'quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ("add-int", 'quantity("50k").add(20) == quantity("50020")', True),
    ("add-int-false", 'quantity("50k").add(20) == quantity("50k")', False),
    ("sub-quantity", 'quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ("sub-int", 'quantity("50k").sub(20000) == quantity("30k")', True),
    ("arith-chain", 'quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")', True),
    ("sign-positive", 'sign(quantity("5")) == 1', True),
    ("sign-negative", 'sign(quantity("-5m")) == -1', True),
    ("sign-zero", 'sign(quantity("0")) == 0', True),
    ("asInteger", 'quantity("50k").asInteger() == 50000', True),
    ("asInteger-capacity", f"{MEMORY}.asInteger() == 85899345920", True),
    ("isInteger-true", 'quantity("50").isInteger()', True),
    ("isInteger-fraction", 'quantity("1500m").isInteger()', False),
    ("isInteger-overflow", 'quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ("asApproximateFloat", 'quantity("50.703k").asApproximateFloat() == 50703.0', True),
    ("asApproximateFloat-false", 'quantity("1500m").asApproximateFloat() == 1.0', False),
    # ---- semver ----
    ("semver-eq", 'semver("1.2.3") == semver("1.2.3")', True),
    ("semver-eq-ignores-build", 'semver("1.2.3+build.5") == semver("1.2.3")', True),
    ("semver-ne-prerelease", 'semver("1.2.3-rc.1") == semver("1.2.3")', False),
    ("attribute-eq-semver", f'{GPU_ATTRS}.driverVersion == semver("580.126.9")', True),
    ("attribute-ne-semver", f'{GPU_ATTRS}.driverVersion == semver("580.126.10")', False),
    ("semver-normalize-v", 'semver("v1.2.3", true) == semver("1.2.3")', True),
    ("semver-normalize-short", 'semver("1.2", true) == semver("1.2.0")', True),
    ("semver-normalize-major", 'semver("v1", true) == semver("1.0.0")', True),
    ("semver-normalize-zeros", 'semver("01.002.0003", true) == semver("1.2.3")', True),
    ("isSemver-true", 'isSemver("1.2.3-alpha.1+b")', True),
    ("isSemver-false-short", 'isSemver("1.2")', False),
    ("isSemver-false-v", 'isSemver("v1.2.3")', False),
    ("isSemver-false-leading-zero", 'isSemver("01.2.3")', False),
    ("isSemver-normalize-true", 'isSemver("v1.2", true)', True),
    ("isSemver-normalize-false", 'isSemver("1.2-rc", true)', False),
    ("major", f"{GPU_ATTRS}.driverVersion.major() == 580", True),
    ("minor", f"{GPU_ATTRS}.driverVersion.minor() == 126", True),
    ("patch", f"{GPU_ATTRS}.driverVersion.patch() == 9", True),
    ("patch-false", f"{GPU_ATTRS}.driverVersion.patch() == 10", False),
    ("semver-compareTo-numeric", 'semver("1.10.0").compareTo(semver("1.9.0")) == 1', True),
    ("semver-compareTo-equal", 'semver("1.0.0+a").compareTo(semver("1.0.0+b")) == 0', True),
    ("semver-prerelease-lower", 'semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
    ("semver-prerelease-numeric", 'semver("1.0.0-rc.2").isLessThan(semver("1.0.0-rc.10"))', True),
    ("semver-prerelease-alpha-gt-num", 'semver("1.0.0-alpha").isGreaterThan(semver("1.0.0-1"))', True),
    ("semver-prerelease-longer", 'semver("1.0.0-a.b").isGreaterThan(semver("1.0.0-a"))', True),
    ("semver-isGreaterThan-false", f'{GPU_ATTRS}.driverVersion.isGreaterThan(semver("600.0.0"))', False),
    # ---- Kubernetes lists library ----
    ("isSorted-true", "[1, 2, 2, 3].isSorted()", True),
    ("isSorted-false", "[3, 1].isSorted()", False),
    ("isSorted-strings", '["a", "b"].isSorted()', True),
    ("isSorted-empty", "[].isSorted()", True),
    ("sum-int", "[1, 2, 3].sum() == 6", True),
    ("sum-double", "[1.5, 2.5].sum() == 4.0", True),
    ("sum-empty", "[].sum() == 0", True),
    ("sum-false", "[1, 2].sum() == 4", False),
    ("min", "[3, 1, 2].min() == 1", True),
    ("max", "[3, 1, 2].max() == 3", True),
    ("max-strings", '["b", "c", "a"].max() == "c"', True),
    ("min-mixed-numbers", "[2, 1.5].min() == 1.5", True),
    ("indexOf", "[1, 2, 3, 2].indexOf(2) == 1", True),
    ("indexOf-missing", "[1, 2].indexOf(5) == -1", True),
    ("indexOf-bool-is-not-int", "[1, true].indexOf(true) == 1", True),
    ("lastIndexOf", "[1, 2, 3, 2].lastIndexOf(2) == 3", True),
    ("string-indexOf-still-works", '"abcabc".indexOf("c") == 2', True),
    # ---- includes (scalar attributes: equality) ----
    ("includes-scalar-true", f'{GPU_ATTRS}.model.includes("H100")', True),
    ("includes-scalar-false", f'{GPU_ATTRS}.model.includes("A100")', False),
    ("includes-scalar-other-type", f'{GPU_ATTRS}.index.includes("3")', False),
    ("includes-list", "[1, 2].includes(2)", True),
    ("includes-list-false", "[1, 2].includes(5)", False),
    # ---- regex ----
    ("matches", f'{GPU_ATTRS}.model.matches("^H[0-9]+$")', True),
    ("matches-false", f'{GPU_ATTRS}.model.matches("^A")', False),
    ("find", '"abc 123 def 456".find("[0-9]+") == "123"', True),
    ("find-none", '"abc".find("[0-9]+") == ""', True),
    ("find-groups-whole-match", '"key=value".find("(k)(e)y=") == "key="', True),
    ("find-named-group", '"v1.2".find("v(?P<maj>[0-9]+)") == "v1"', True),
    ("find-class-with-paren", '"a(b".find("[(]b") == "(b"', True),
    ("find-posix-class", '"ab12".find("[[:digit:]]+") == "12"', True),
    ("findAll", '"a1b22c333".findAll("[0-9]+") == ["1", "22", "333"]', True),
    ("findAll-limit", '"a1b22c333".findAll("[0-9]+", 2) == ["1", "22"]', True),
    ("findAll-zero", '"a1b22c333".findAll("[0-9]+", 0) == []', True),
    ("findAll-none", '"abc".findAll("[0-9]") == []', True),
    # ---- strings extension (version 2) ----
    ("lowerAscii", f'{GPU_ATTRS}.model.lowerAscii() == "h100"', True),
    ("upperAscii", '"h100".upperAscii() == "H100"', True),
    ("split-join", '"a,b".split(",").join("-") == "a-b"', True),
    ("replace", '"a-b".replace("-", "+") == "a+b"', True),
    ("substring", f'{GPU_ATTRS}.model.substring(1) == "100"', True),
    ("charAt", '"abc".charAt(1) == "b"', True),
    ("trim", '" a ".trim() == "a"', True),
    ("format", '"%d GPUs".format([8]) == "8 GPUs"', True),
    ("quote", 'strings.quote("a") == "\\"a\\""', True),
    ("startsWith-false", f'{GPU_ATTRS}.model.startsWith("A")', False),
    # ---- bindings, optionals, sets, macros, two-variable comprehensions ----
    ("cel-bind", f'cel.bind(gpu, {GPU_ATTRS}, gpu.model == "H100" && gpu.index == 3)', True),
    ("optional-present", f"{GPU_ATTRS}.?index.orValue(0) == 3", True),
    ("optional-absent", f"{GPU_ATTRS}.?missing.orValue(7) == 7", True),
    ("optional-index", f'{GPU_ATTRS}[?"missing"].hasValue()', False),
    ("optional-of", "optional.of(1).value() == 1", True),
    ("sets-contains", "sets.contains([1, 2, 3], [2, 3])", True),
    ("sets-contains-false", "sets.contains([1, 2], [3])", False),
    ("sets-equivalent", "sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets-intersects", "sets.intersects([1, 2], [2, 5])", True),
    ("sets-intersects-false", "sets.intersects([1], [2])", False),
    ("exists", f'{GPU_ATTRS}.exists(k, k == "model")', True),
    ("all", "[1, 2].all(x, x > 0)", True),
    ("map-filter", "[1, 2, 3].map(x, x * 2).filter(x, x > 2) == [4, 6]", True),
    ("exists_one", "[1, 2].exists_one(x, x == 2)", True),
    ("two-var-all", "[10, 20].all(i, v, v == (i + 1) * 10)", True),
    ("two-var-exists", '{"a": 1}.exists(k, v, k == "a" && v == 2)', False),
    ("two-var-existsOne", "[1, 2, 2].existsOne(i, v, v == 1)", True),
    ("transformList", "[1, 2].transformList(i, v, v * 10 + i) == [10, 21]", True),
    ("ext-lists-sort-distinct", "[3, 1, 3].distinct().sort() == [1, 3]", True),
    ("ext-lists-range", "lists.range(3) == [0, 1, 2]", True),
    # ---- standard CEL on device fields ----
    ("heterogeneous-eq", f'{GPU_ATTRS}.index == "3"', False),
    ("int-vs-double-dyn", f"{GPU_ATTRS}.index == 3.0", True),
    ("int-vs-uint-dyn", f"{GPU_ATTRS}.index < 4u", True),
    ("bool-attribute", f"{GPU_ATTRS}.healthy", True),
    ("bool-attribute-negated", f"!{GPU_ATTRS}.healthy", False),
    ("in-domain", f'"model" in {GPU_ATTRS}', True),
    ("in-domain-false", f'"missing" in {GPU_ATTRS}', False),
]


@pytest.mark.parametrize(
    ("expression", "expected"), [c[1:] for c in TRUE_AND_FALSE], ids=[c[0] for c in TRUE_AND_FALSE]
)
def test_expression_value(match: Callable[[str], bool], expression: str, expected: bool) -> None:
    assert match(expression) is expected


RUNTIME_ERRORS: list[tuple[str, str, str]] = [
    ("quantity-invalid", 'quantity("10Mo") == quantity("1")', "not a valid quantity"),
    ("quantity-lowercase-suffix", 'quantity("1gi") == quantity("1")', "did you mean 1Gi"),
    ("asInteger-fraction", 'quantity("1500m").asInteger() == 1', "cannot convert value to integer: 1500m"),
    (
        "asInteger-overflow",
        'quantity("9999999999999999999999999999999999999G").asInteger() == 1',
        "cannot convert value to integer",
    ),
    ("semver-strict-short", 'semver("1.2") == semver("1.2.0")', "expected MAJOR.MINOR.PATCH"),
    ("semver-strict-v", 'semver("v1.2.3") == semver("1.2.3")', "semver(text, true)"),
    ("semver-short-prerelease", 'semver("1.2-rc", true) == semver("1.2.0")', "shortened version"),
    (
        "compare-quantity-semver",
        'quantity("1").compareTo(semver("1.0.0")) == 0',
        "no such overload: compareTo(kubernetes.Quantity, kubernetes.Semver)",
    ),
    ("compare-strings", '"a".isGreaterThan("b")', "no such overload: isGreaterThan(string, string)"),
    ("min-empty", "[].min() == 1", "min called on empty list"),
    ("max-mixed-types", '[1, "a"].max() == 1', "no such overload"),
    ("sum-overflow", "[9223372036854775807, 1].sum() == 0", "integer overflow"),
    ("includes-long-list", "lists.range(49).includes(1)", "includes() on a list of 49 values"),
    ("find-invalid-regex-at-runtime", f'{GPU_ATTRS}.model.find({GPU_ATTRS}.model + "[") == ""', "Illegal regex"),
    ("divide-by-zero", f"{GPU_ATTRS}.index / 0 == 1", "divide by zero"),
    ("method-on-wrong-dyn-type", f'{GPU_ATTRS}.index.startsWith("3")', "No matching overloads"),
]


@pytest.mark.parametrize(
    ("expression", "fragment"), [c[1:] for c in RUNTIME_ERRORS], ids=[c[0] for c in RUNTIME_ERRORS]
)
def test_runtime_error(match: Callable[[str], bool], expression: str, fragment: str) -> None:
    with pytest.raises(CelRuntimeError) as caught:
        match(expression)
    assert fragment in str(caught.value)
    assert caught.value.expression == expression

"""Compile errors: positions, hints, result types, limits, and what dratwin refuses to run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.cel.compiler import MAX_EXPRESSION_BYTES
from dratwin.errors import CelCompileError, CelRuntimeError

# (id, expression, message fragment, line, column, hint fragment)
ERRORS: list[tuple[str, str, str, int, int, str]] = [
    ("single-equals", 'device.driver = "gpu.example.com"', "Syntax error", 1, 15, "use == to compare"),
    ("and-keyword", 'device.driver == "a" and true', "Syntax error", 1, 22, "use && instead of and"),
    ("unclosed-bracket", 'device.driver == "a" && (device.attributes[', "Syntax error", 1, 44, "ends too early"),
    ("unclosed-string", 'device.driver == "a', "Syntax error", 1, 18, ""),
    (
        "attribute-typo",
        'device.attribute["d"].x == 1',
        "undeclared reference to 'device.attribute'",
        1,
        7,
        "did you mean device.attributes?",
    ),
    (
        "capacities-typo",
        'device.capacities["d"].x == quantity("1")',
        "undeclared reference to 'device.capacities'",
        1,
        7,
        "did you mean device.capacity?",
    ),
    (
        "unknown-field",
        "device.name == 'x'",
        "undeclared reference to 'device.name'",
        1,
        7,
        "device has only the fields device.driver",
    ),
    ("unquoted-value", "device.driver == gpu", "undeclared reference to 'gpu'", 1, 18, 'quote it: "gpu"'),
    ("device-alone", "device == null", "undeclared reference to 'device'", 1, 1, "device on its own is not supported"),
    (
        "function-typo",
        'device.driver.startswith("g")',
        "undeclared reference to 'startswith'",
        1,
        25,
        "did you mean startsWith?",
    ),
    (
        "second-line",
        'device.driver == "a" &&\n  device.attribute["d"].x',
        "device.attribute",
        2,
        9,
        "did you mean device.attributes?",
    ),
    ("driver-is-a-string", "device.driver + 1 == 2", "found no matching overload for '_+_'", 1, 15, ""),
    (
        "quantity-vs-string",
        'device.capacity["d"].memory == "80Gi"',
        "(kubernetes.Quantity, string)",
        1,
        29,
        'quantity("40Gi")',
    ),
    ("quantity-operator", 'device.capacity["d"].memory > quantity("1")', "'_>_'", 1, 29, "compareTo"),
    ("semver-operator", 'semver("1.0.0") < semver("2.0.0")', "'_<_'", 1, 17, "versions are compared with"),
    ("sign-as-method", 'quantity("1").sign() == 1', "undeclared reference to 'sign'", 1, 19, "write sign(x)"),
    (
        "literal-mixed-numbers",
        "device.driver.size() > 1.0",
        "'_>_' applied to '(int, double)'",
        1,
        22,
        "literals of different numeric types",
    ),
    (
        "url-library",
        'url("https://x").getHost() == "x"',
        "undeclared reference to 'url'",
        1,
        4,
        "URL library, which is not supported by dratwin",
    ),
    (
        "ip-library",
        'ip("10.0.0.1").family() == 4',
        "undeclared reference to 'ip'",
        1,
        3,
        "IP/CIDR library, which is not supported by dratwin",
    ),
    (
        "quantity-mul",
        'quantity("1").mul(2) == quantity("2")',
        "undeclared reference to 'mul'",
        1,
        18,
        "not supported by dratwin",
    ),
    ("quote-as-method", '"a".quote() == "a"', "undeclared reference to 'quote'", 1, 10, "strings.quote(s)"),
    # Not from cel-cpp: checks of dratwin's own.
    (
        "transformMap",
        '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}',
        "transformMap() is not supported by dratwin",
        1,
        10,
        "cel-expr-python",
    ),
    (
        "transformMapEntry",
        '{"a": 1}.transformMapEntry(k, v, {k: v}) == {"a": 1}',
        "transformMapEntry() is not supported by dratwin",
        1,
        10,
        "transformList",
    ),
    ("device-rebound", "[1].exists(device, device == 1)", "device cannot be rebound", 1, 12, "another variable name"),
    ("has-device-field", "has(device.attributes)", "has(device.attributes) is not supported", 1, 1, "always present"),
    ("bad-constant-regex", 'device.driver.matches("[a-")', "invalid regular expression in matches()", 1, 23, "RE2"),
    ("bad-constant-regex-find", 'device.driver.find("(") == ""', "invalid regular expression in find()", 1, 20, "RE2"),
    (
        "regex-lookahead",
        'device.driver.findAll("a(?=b)") == []',
        "invalid regular expression in findAll()",
        1,
        23,
        "no look-arounds",
    ),
    (
        "result-int",
        "device.driver.size()",
        "must evaluate to bool or the unknown type, not int",
        0,
        0,
        "a selector is a condition",
    ),
    ("result-quantity", 'device.capacity["d"].memory', "not kubernetes.Quantity", 0, 0, ""),
    ("result-map", 'device.attributes["d"]', "not map(string, dyn)", 0, 0, ""),
    ("result-optional", 'device.attributes["d"].?x', "not optional_type(dyn)", 0, 0, ""),
]


@pytest.mark.parametrize(
    ("expression", "message", "line", "column", "hint"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_compile_error(
    compiler: SelectorCompiler, expression: str, message: str, line: int, column: int, hint: str
) -> None:
    with pytest.raises(CelCompileError) as caught:
        compiler.compile(expression)
    error = caught.value
    assert message in error.message
    assert (error.line, error.column) == (line, column)
    assert hint in error.hint
    assert error.expression == expression
    assert "<<nil>>" not in str(error) and "(in container" not in str(error)
    assert "_ttributes" not in str(error) and "_apacity" not in str(error)


def test_dyn_results_compile_and_must_be_bool_at_runtime(
    compiler: SelectorCompiler, device: Callable[[], CelDevice]
) -> None:
    selector = compiler.compile('device.attributes["gpu.example.com"].healthy')  # dyn: accepted
    assert selector.matches(device()) is True
    wrong = compiler.compile('device.attributes["gpu.example.com"].model')
    with pytest.raises(CelRuntimeError, match="evaluated to a string, not a bool"):
        wrong.matches(device())


def test_length_limit_is_in_bytes(compiler: SelectorCompiler) -> None:
    fits = "true" + " " * (MAX_EXPRESSION_BYTES - 4)
    compiler.compile(fits)
    with pytest.raises(CelCompileError, match="10241 bytes long; the limit is 10240") as caught:
        compiler.compile(fits + " ")
    assert "several selectors" in caught.value.hint
    # Non-ASCII text counts in UTF-8 bytes, as Kubernetes measures it.
    with pytest.raises(CelCompileError, match="bytes long"):
        compiler.compile('"' + "é" * (MAX_EXPRESSION_BYTES // 2) + '" == ""')


def test_compile_is_cached_per_text_including_failures(compiler: SelectorCompiler) -> None:
    first = compiler.compile('device.driver == "a"')
    assert compiler.compile('device.driver == "a"') is first
    assert compiler.compile('device.driver == "a" ') is not first
    errors = []
    for _ in range(2):
        with pytest.raises(CelCompileError) as caught:
            compiler.compile("device.driver ==")
        errors.append(caught.value)
    assert errors[0] is not errors[1]  # a fresh exception each time, same content
    assert str(errors[0]) == str(errors[1])


def test_compile_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from dratwin.cel import compiler as compiler_module

    monkeypatch.setattr(compiler_module, "COMPILE_CACHE_SIZE", 3)
    compiler = SelectorCompiler()
    selectors = [compiler.compile(f"device.driver == '{i}'") for i in range(3)]
    compiler.compile("device.driver == '0'")  # touch 0: 1 is now the least recently used
    compiler.compile("device.driver == '3'")
    assert compiler.compile("device.driver == '0'") is selectors[0]
    assert compiler.compile("device.driver == '2'") is selectors[2]
    assert compiler.compile("device.driver == '1'") is not selectors[1]


def test_error_message_format(compiler: SelectorCompiler) -> None:
    with pytest.raises(CelCompileError) as caught:
        compiler.compile('device.attribute["d"].x == 1')
    assert str(caught.value) == (
        "CEL compile error at line 1, column 7: undeclared reference to 'device.attribute' "
        "(did you mean device.attributes?)"
    )


def test_cel_cpp_message_parsing_drops_the_nil_parsetree_entry() -> None:
    from dratwin.cel.diagnostics import parse_compile_error

    raw = (
        "INVALID_ARGUMENT: ERROR: <input>:-1:-1: <<nil>> parsetree\n"
        "ERROR: <input>:2:5: Syntax error: mismatched input '<EOF>' expecting {'[', '('}\n"
        " | a &&\n"
        " | ....^ [INVALID_ARGUMENT]"
    )
    failure = parse_compile_error("x &&\nab", raw)
    assert (failure.line, failure.column) == (2, 5)
    assert failure.message == "Syntax error: mismatched input '<EOF>' expecting {'[', '('}"
    assert "ends too early" in failure.hint

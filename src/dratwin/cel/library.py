"""Kubernetes' quantity and semver CEL libraries, implemented in Python over the message types.

Overloads follow ``k8s.io/apiserver/pkg/cel/library`` (quantity.go, semverlib.go). Two limits of
cel-expr-python shape the declarations:

- its runtime registry keys overloads by argument *kind*, and every message type is the same kind,
  so ``compareTo``/``isGreaterThan``/``isLessThan`` (shared by Quantity and Semver) are declared
  once on ``dyn`` and dispatch here. Mixing the two types is therefore a runtime error where
  Kubernetes reports it at compile time;
- a Python exception raised by an implementation becomes a CEL error value with the exception's
  text, which is how these functions report bad input (as the Go functions return errors).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from cel_expr_python import cel

from dratwin.cel import values
from dratwin.cel.semver import Semver, SemverError
from dratwin.cel.semver import is_valid as is_valid_semver
from dratwin.cel.semver import parse as parse_semver
from dratwin.cel.semver import parse_normalized as parse_semver_normalized
from dratwin.errors import QuantityError

T = cel.Type
QUANTITY = T(values.QUANTITY_TYPE)
SEMVER = T(values.SEMVER_TYPE)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def overload(
    name: str, result: cel.Type, params: Sequence[cel.Type], impl: Callable[..., Any], *, member: bool = False
) -> cel.Overload:
    return cel.Overload(name, result, list(params), is_member=member, impl=impl)


def function(name: str, *overloads: cel.Overload) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, list(overloads))


def no_such_overload(function_name: str, *args: object) -> TypeError:
    types = ", ".join(values.describe_type(a) for a in args)
    return TypeError(f"no such overload: {function_name}({types})")


# ---- quantity ------------------------------------------------------------------------------------


def _quantity_of(value: object, function_name: str, *args: object) -> values.Amount:
    if not isinstance(value, values.QuantityMessage):
        raise no_such_overload(function_name, *args)
    return values.quantity_value(value.canonical)


@functools.lru_cache(maxsize=4096)
def _quantity(text: str) -> Any:
    # Cached: selectors call quantity() on literals, and messages are never modified.
    try:
        return values.quantity_message(values.parse_quantity(text))
    except QuantityError as error:
        raise ValueError(f"quantity({text!r}): {error}") from None


def _is_quantity(text: str) -> bool:
    try:
        values.parse_quantity(text)
    except QuantityError:
        return False
    return True


def _sign(q: Any) -> int:
    v = _quantity_of(q, "sign", q)
    return (v > 0) - (v < 0)


def _fits_int64(v: values.Amount) -> bool:
    return v.denominator == 1 and INT64_MIN <= v.numerator <= INT64_MAX


def _is_integer(q: Any) -> bool:
    return _fits_int64(_quantity_of(q, "isInteger", q))


def _as_integer(q: Any) -> int:
    v = _quantity_of(q, "asInteger", q)
    if not _fits_int64(v):
        raise ValueError(
            f"cannot convert value to integer: {values.format_quantity(v)} is not a whole number in the int64 range"
        )
    return v.numerator


def _as_approximate_float(q: Any) -> float:
    v = _quantity_of(q, "asApproximateFloat", q)
    try:
        return float(v)
    except OverflowError:
        # Go's AsApproximateFloat64 saturates to infinity.
        return float("inf") if v > 0 else float("-inf")


def _arithmetic(name: str, sign: int) -> Callable[[Any, Any], Any]:
    def apply(q: Any, other: Any) -> Any:
        left = _quantity_of(q, name, q, other)
        if isinstance(other, values.QuantityMessage):
            right = values.quantity_value(other.canonical)
        elif isinstance(other, int) and not isinstance(other, bool):
            right = other
        else:
            raise no_such_overload(name, q, other)
        total = left + sign * right
        return values.quantity_message(total.numerator if total.denominator == 1 else total)

    return apply


# ---- semver --------------------------------------------------------------------------------------


def _semver_of(value: object, function_name: str, *args: object) -> Semver:
    if not isinstance(value, values.SemverMessage):
        raise no_such_overload(function_name, *args)
    return values.semver_value(value.canonical)


@functools.lru_cache(maxsize=4096)
def _semver(text: str, normalize: bool = False) -> Any:
    try:
        version = parse_semver_normalized(text) if normalize else parse_semver(text)
    except SemverError as error:
        hint = "" if normalize else " (semver(text, true) accepts a 'v' prefix, missing minor/patch and leading zeros)"
        raise ValueError(f"semver: {error}{hint}") from None
    return values.semver_message(version)


def _is_semver(text: str, normalize: bool = False) -> bool:
    return is_valid_semver(text, normalize=normalize)


def _semver_part(part: str) -> Callable[[Any], int]:
    def get(v: Any) -> int:
        value: int = getattr(_semver_of(v, part, v), part)
        if value > INT64_MAX:
            raise ValueError(f"{part} version {value} does not fit in an int")
        return value

    return get


# ---- shared by both types ------------------------------------------------------------------------


def _compare(name: str, a: object, b: object) -> int:
    if isinstance(a, values.QuantityMessage) and isinstance(b, values.QuantityMessage):
        x, y = values.quantity_value(a.canonical), values.quantity_value(b.canonical)
        return (x > y) - (x < y)
    if isinstance(a, values.SemverMessage) and isinstance(b, values.SemverMessage):
        return values.semver_value(a.canonical).compare(values.semver_value(b.canonical))
    raise no_such_overload(name, a, b)


def _compare_to(a: object, b: object) -> int:
    return _compare("compareTo", a, b)


def _is_greater_than(a: object, b: object) -> bool:
    return _compare("isGreaterThan", a, b) > 0


def _is_less_than(a: object, b: object) -> bool:
    return _compare("isLessThan", a, b) < 0


def extension() -> cel.CelExtension:
    """The quantity and semver functions as one cel-expr-python extension."""
    q, s, any_ = QUANTITY, SEMVER, T.DYN
    add, sub = _arithmetic("add", 1), _arithmetic("sub", -1)
    return cel.CelExtension(
        "dratwin.k8s.quantity_semver",
        [
            function("quantity", overload("string_to_quantity", q, [T.STRING], _quantity)),
            function("isQuantity", overload("is_quantity_string", T.BOOL, [T.STRING], _is_quantity)),
            # Kubernetes declares sign as a global function (sign(q)); q.sign() does not compile there.
            function("sign", overload("quantity_sign", T.INT, [q], _sign)),
            function("isInteger", overload("quantity_is_integer", T.BOOL, [q], _is_integer, member=True)),
            function("asInteger", overload("quantity_get_int", T.INT, [q], _as_integer, member=True)),
            function(
                "asApproximateFloat",
                overload("quantity_get_float", T.DOUBLE, [q], _as_approximate_float, member=True),
            ),
            function(
                "add",
                overload("quantity_add", q, [q, q], add, member=True),
                overload("quantity_add_int", q, [q, T.INT], add, member=True),
            ),
            function(
                "sub",
                overload("quantity_sub", q, [q, q], sub, member=True),
                overload("quantity_sub_int", q, [q, T.INT], sub, member=True),
            ),
            function(
                "semver",
                overload("string_to_semver", s, [T.STRING], _semver),
                overload("string_bool_to_semver", s, [T.STRING, T.BOOL], _semver),
            ),
            function(
                "isSemver",
                overload("is_semver_string", T.BOOL, [T.STRING], _is_semver),
                overload("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], _is_semver),
            ),
            *(
                function(part, overload(f"semver_{part}", T.INT, [s], _semver_part(part), member=True))
                for part in ("major", "minor", "patch")
            ),
            function("compareTo", overload("k8s_compare_to", T.INT, [any_, any_], _compare_to, member=True)),
            function(
                "isGreaterThan",
                overload("k8s_is_greater_than", T.BOOL, [any_, any_], _is_greater_than, member=True),
            ),
            function("isLessThan", overload("k8s_is_less_than", T.BOOL, [any_, any_], _is_less_than, member=True)),
        ],
    )

"""Kubernetes' CEL lists library (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
``lastIndexOf``) and ``includes`` (list-type attributes), in Python.

cel-expr-python has no type parameters, so the functions take ``list(dyn)`` and return ``dyn``;
element types are checked here, at runtime, with CEL's rules: numbers of different types compare
(cross-type numeric comparison is on in Kubernetes), anything else must be of one type. Equality
(``indexOf``, ``includes``) is CEL's heterogeneous equality: values of different types are unequal,
never an error, and ``true`` is not ``1`` (as it is in Python).
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel
from google.protobuf.message import Message

from dratwin.cel.library import INT64_MAX, INT64_MIN, function, no_such_overload, overload

T = cel.Type
# Spec §8: includes() fails on a list of more than 48 values (the API's limit for a list attribute).
MAX_INCLUDES_LIST = 48

_COMPARABLE = frozenset({"number", "string", "bytes", "bool", "timestamp", "duration"})


def kind(value: object) -> str:
    """A CEL type family: numbers (int, uint, double) form one family, as for comparisons."""
    t = type(value)
    if t is bool:
        return "bool"
    if t is int or t is float:
        return "number"
    if t is str:
        return "string"
    if t is bytes or t is bytearray:
        return "bytes"
    if t is list:
        return "list"
    if t is dict:
        return "map"
    if value is None:
        return "null"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    if isinstance(value, datetime.timedelta):
        return "duration"
    if isinstance(value, Message):
        return str(value.DESCRIPTOR.full_name)
    return t.__name__


def cel_equal(a: object, b: object) -> bool:
    """CEL equality: false (not an error) across types; lists and maps element by element."""
    ka = kind(a)
    if ka != kind(b):
        return False
    if ka == "list":
        assert isinstance(a, list) and isinstance(b, list)
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        assert isinstance(a, dict) and isinstance(b, dict)
        return a.keys() == b.keys() and all(cel_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _ordered(name: str, items: list[Any]) -> str:
    """The common kind of the items, which must be one comparable kind."""
    kinds = {kind(item) for item in items}
    if len(kinds) > 1 or not kinds <= _COMPARABLE:
        raise no_such_overload(name, *items[:2]) if len(items) > 1 else no_such_overload(name, *items)
    return next(iter(kinds), "")


def _is_sorted(items: list[Any]) -> bool:
    _ordered("isSorted", items)
    return all(not (b < a) for a, b in itertools.pairwise(items))


def _extreme(name: str, pick: Callable[[Any, Any], bool]) -> Callable[[list[Any]], Any]:
    def apply(items: list[Any]) -> Any:
        if not items:
            raise ValueError(f"{name} called on empty list")
        _ordered(name, items)
        best = items[0]
        for item in items[1:]:
            if pick(item, best):
                best = item
        return best

    return apply


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    types = {type(item) for item in items}
    if types == {int}:
        total = sum(items)
        if not INT64_MIN <= total <= INT64_MAX:
            raise ValueError("integer overflow in sum()")
        return total
    if types == {float}:
        return float(sum(items))
    if all(isinstance(item, datetime.timedelta) for item in items):
        return sum(items, datetime.timedelta(0))
    raise no_such_overload("sum", *items[:2])


def _index_of(items: list[Any], value: Any) -> int:
    return next((i for i, item in enumerate(items) if cel_equal(item, value)), -1)


def _last_index_of(items: list[Any], value: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if cel_equal(items[i], value):
            return i
    return -1


def includes(target: Any, value: Any) -> bool:
    """A list attribute includes a value when one element equals it; a scalar when it equals it."""
    if isinstance(target, list):
        if len(target) > MAX_INCLUDES_LIST:
            raise ValueError(f"includes() on a list of {len(target)} values (at most {MAX_INCLUDES_LIST})")
        return any(cel_equal(item, value) for item in target)
    return cel_equal(target, value)


def extension() -> cel.CelExtension:
    any_list = T.List(T.DYN)
    return cel.CelExtension(
        "dratwin.k8s.lists",
        [
            function("isSorted", overload("list_is_sorted", T.BOOL, [any_list], _is_sorted, member=True)),
            function("sum", overload("list_sum", T.DYN, [any_list], _sum, member=True)),
            function("min", overload("list_min", T.DYN, [any_list], _extreme("min", lambda a, b: a < b), member=True)),
            function("max", overload("list_max", T.DYN, [any_list], _extreme("max", lambda a, b: a > b), member=True)),
            function("indexOf", overload("list_index_of", T.INT, [any_list, T.DYN], _index_of, member=True)),
            function(
                "lastIndexOf", overload("list_last_index_of", T.INT, [any_list, T.DYN], _last_index_of, member=True)
            ),
            function("includes", overload("dyn_includes_dyn", T.BOOL, [T.DYN, T.DYN], includes, member=True)),
        ],
    )

"""Kubernetes' opaque CEL types, Quantity and Semver, as protobuf messages built at runtime.

cel-expr-python can only carry custom values as protobuf messages, so each type is a message with
one string field holding a canonical text: the exact value of a quantity (a ``Fraction`` written
as ``"85899345920"`` or ``"1/1000"``), or a version without build metadata. CEL's built-in ``==``
compares messages field by field, which then is exactly Kubernetes' value equality
(``quantity("1") == quantity("1000m")``, ``semver("1.0.0+a") == semver("1.0.0")``).

No ``.proto`` file or generated code: the descriptors are added to a private pool here.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from dratwin.api.quantity import Quantity
from dratwin.cel.semver import Semver, parse

# A quantity's exact value: an int when whole (cheap to hash and compare), else a Fraction.
Amount = int | Fraction

QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"

POOL = descriptor_pool.DescriptorPool()


def _register() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="dratwin_cel_types.proto", package="kubernetes", syntax="proto3")
    for name in ("Quantity", "Semver"):
        message = file.message_type.add(name=name)
        message.field.add(name="canonical", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    POOL.Add(file)


_register()
QuantityMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(QUANTITY_TYPE))
SemverMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(SEMVER_TYPE))


def format_quantity(value: Amount) -> str:
    """Kubernetes' canonical text of a quantity (``1500m``, ``80Gi`` stays ``85899345920``), for messages."""
    return str(Quantity(value))


@functools.lru_cache(maxsize=16384)
def quantity_message(value: Amount) -> Any:
    """The CEL value of a quantity. Cached: messages are never modified once built."""
    return QuantityMessage(canonical=str(value))


@functools.lru_cache(maxsize=16384)
def semver_message(version: Semver) -> Any:
    return SemverMessage(canonical=version.canonical)


_VALUES: dict[str, Amount] = {}


def quantity_value(canonical: str) -> Amount:
    """The value held by a quantity message (memoized: a plain dict is cheaper than lru_cache here)."""
    value = _VALUES.get(canonical)
    if value is None:
        if len(_VALUES) >= 16384:
            _VALUES.clear()
        value = _VALUES[canonical] = Fraction(canonical) if "/" in canonical else int(canonical)
    return value


@functools.lru_cache(maxsize=16384)
def semver_value(canonical: str) -> Semver:
    return parse(canonical)


_WHOLE = re.compile(r"([0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?")
_FACTOR: dict[str | None, int] = {
    None: 1,
    **{suffix: 1000 ** (i + 1) for i, suffix in enumerate(("k", "M", "G", "T", "P", "E"))},
    **{suffix: 1024 ** (i + 1) for i, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}


def parse_quantity(text: str | int | float) -> Amount:
    """A quantity as the API server parses it: values below the nano unit are rounded up (away from 0).

    Raises :class:`dratwin.errors.QuantityError`.
    """
    if type(text) is int:
        return text
    if type(text) is str and (whole := _WHOLE.fullmatch(text)):
        # The usual capacity forms ("81559Mi", "8", "2k") without the general parser's Fraction work.
        amount: int = int(whole[1]) * _FACTOR[whole[2]]
        return amount
    value = Quantity.parse(text).rounded_up_to_nano().value
    return value.numerator if value.denominator == 1 else value


def is_quantity(value: object) -> bool:
    return isinstance(value, QuantityMessage)


def is_semver(value: object) -> bool:
    return isinstance(value, SemverMessage)


def describe_type(value: object) -> str:
    """The CEL name of a value's type, for error messages."""
    if isinstance(value, QuantityMessage):
        return QUANTITY_TYPE
    if isinstance(value, SemverMessage):
        return SEMVER_TYPE
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "double", str: "string", list: "list", dict: "map", bytearray: "bytes"}.get(
        type(value), type(value).__name__
    )

"""Kubernetes resource quantities ("80Gi", "500m", "1e3") with exact arithmetic.

Values are exact fractions. Formatting follows apimachinery's canonical form: the format of the
first operand (binary SI, decimal SI or decimal exponent) is kept, values are rounded up to the
nano unit, and the largest suffix that keeps the mantissa an integer is chosen.
"""

from __future__ import annotations

import enum
import functools
import math
import re
from fractions import Fraction

from dratwin.errors import QuantityError


class QuantityFormat(enum.Enum):
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_BY_POWER = {power: suffix for suffix, power in _BINARY.items()}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|n|u|m|k|M|G|T|P|E|)$"
)
_NANO = Fraction(1, 10**9)


@functools.total_ordering
class Quantity:
    """An exact Kubernetes quantity. Immutable and hashable; equality is by value."""

    __slots__ = ("_text", "format", "value")

    value: Fraction
    format: QuantityFormat

    def __init__(self, value: Fraction | int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> None:
        self.value = Fraction(value)
        self.format = fmt
        self._text: str | None = None

    @classmethod
    def parse(cls, text: str | int | float) -> Quantity:
        """Parse a quantity as the API server does; raise QuantityError with a hint when it is not one."""
        return _parse_cached(text) if isinstance(text, str) else _parse_number(text)

    def __str__(self) -> str:
        if self._text is None:
            self._text = _format(self.value, self.format)
        return self._text

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value == other.value
        return NotImplemented

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, self.format)

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.format)

    def compare(self, other: Quantity) -> int:
        """-1, 0 or 1, like apimachinery's Cmp."""
        return (self.value > other.value) - (self.value < other.value)

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def as_integer(self) -> int:
        """The value as an int; QuantityError when it has a fractional part."""
        if self.value.denominator != 1:
            raise QuantityError(f"quantity {self} is not an integer")
        return self.value.numerator

    def as_float(self) -> float:
        return float(self.value)

    def rounded_up_to_nano(self) -> Quantity:
        return Quantity(_round_up_nano(self.value), self.format)


def parse_quantity(text: str | int | float) -> Quantity:
    """Shorthand for :meth:`Quantity.parse`."""
    return Quantity.parse(text)


def is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


@functools.lru_cache(maxsize=16384)
def _parse_cached(text: str) -> Quantity:
    match = _PATTERN.match(text.strip()) if text else None
    if match is None or text != text.strip():
        raise QuantityError(_explain_bad_quantity(text))
    sign = -1 if match["sign"] == "-" else 1
    number = Fraction(match["number"] if not match["number"].endswith(".") else match["number"][:-1])
    suffix = match["suffix"]
    # Precision below the nano unit is rounded up while parsing, as apimachinery does.
    if suffix in _BINARY:
        return Quantity(_round_up_nano(sign * number * 1024 ** _BINARY[suffix]), QuantityFormat.BINARY_SI)
    if len(suffix) > 1 and suffix[0] in ("e", "E"):
        value = sign * number * Fraction(10) ** int(suffix[1:])
        return Quantity(_round_up_nano(value), QuantityFormat.DECIMAL_EXPONENT)
    return Quantity(_round_up_nano(sign * number * Fraction(10) ** _DECIMAL[suffix]), QuantityFormat.DECIMAL_SI)


def _parse_number(value: int | float) -> Quantity:
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is a boolean, not a quantity")
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(f"{value!r} is not a finite quantity")
    if isinstance(value, float):
        return _parse_cached(repr(value).replace("e+", "e"))
    return Quantity(value, QuantityFormat.DECIMAL_SI)


def _explain_bad_quantity(text: str) -> str:
    hint = "write a number with an optional suffix such as 80Gi, 500m, 2k or 1e3"
    lowered = text.strip()
    for wrong, right in (("gi", "Gi"), ("mi", "Mi"), ("ki", "Ki"), ("GB", "G"), ("GiB", "Gi"), ("MiB", "Mi")):
        if lowered.endswith(wrong):
            hint = f"suffixes are case-sensitive: did you mean {lowered[: -len(wrong)]}{right}?"
            break
    return f"{text!r} is not a valid quantity: {hint}"


def _round_up_nano(value: Fraction) -> Fraction:
    nanos = value / _NANO
    if nanos.denominator == 1:
        return value
    # apimachinery rounds away from zero when it drops digits below the nano unit.
    whole = math.ceil(nanos) if nanos > 0 else math.floor(nanos)
    return whole * _NANO


def _format(value: Fraction, fmt: QuantityFormat) -> str:
    value = _round_up_nano(value)
    if value == 0:
        return "0"
    if fmt is QuantityFormat.BINARY_SI and value.denominator == 1 and abs(value) >= 1024:
        mantissa, power = value.numerator, 0
        while mantissa % 1024 == 0 and power < 6:
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_BY_POWER[power]}" if power else str(mantissa)
    mantissa = int(value / _NANO)
    exponent = -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"

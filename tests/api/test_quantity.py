"""Kubernetes quantities: parsing, canonical formatting (apimachinery's rules), arithmetic, bad input."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from dratwin.api.quantity import Quantity, QuantityFormat, is_quantity, parse_quantity
from dratwin.errors import QuantityError

CANONICAL: list[Any] = [
    # (written, canonical, exact value)
    ("1000", "1k", Fraction(1000)),
    ("1500", "1500", Fraction(1500)),
    ("1000M", "1G", Fraction(10**9)),
    ("0.5Gi", "512Mi", Fraction(2**29)),
    ("1024Mi", "1Gi", Fraction(2**30)),
    ("1536Mi", "1536Mi", Fraction(1536 * 2**20)),
    ("1000Ki", "1000Ki", Fraction(1024000)),
    ("0.5Ki", "512", Fraction(512)),
    ("1e3", "1e3", Fraction(1000)),
    ("1E3", "1e3", Fraction(1000)),
    ("12e-3", "12e-3", Fraction(12, 1000)),
    ("5e0", "5", Fraction(5)),
    ("0.1", "100m", Fraction(1, 10)),
    (".5", "500m", Fraction(1, 2)),
    ("2.", "2", Fraction(2)),
    ("1.0", "1", Fraction(1)),
    ("01", "1", Fraction(1)),
    ("+5", "5", Fraction(5)),
    ("-5Gi", "-5Gi", Fraction(-5 * 2**30)),
    ("0", "0", Fraction(0)),
    ("1n", "1n", Fraction(1, 10**9)),
    ("0.1n", "1n", Fraction(1, 10**9)),
    ("100000000000000000000", "100E", Fraction(10**20)),
    ("1E", "1E", Fraction(10**18)),
]


@pytest.mark.parametrize(("text", "canonical", "value"), CANONICAL)
def test_parse_and_canonical_form(text: str, canonical: str, value: Fraction) -> None:
    quantity = Quantity.parse(text)
    assert quantity.value == value
    assert str(quantity) == canonical
    assert Quantity.parse(canonical) == quantity  # the canonical form reads back as the same value


def test_formats() -> None:
    assert Quantity.parse("1Gi").format is QuantityFormat.BINARY_SI
    assert Quantity.parse("1e3").format is QuantityFormat.DECIMAL_EXPONENT
    assert Quantity.parse("1k").format is QuantityFormat.DECIMAL_SI


def test_numbers_from_yaml() -> None:
    assert str(Quantity.parse(4)) == "4"
    assert str(Quantity.parse(0.5)) == "500m"
    assert str(parse_quantity(1e3)) == "1k"


BAD = [
    ("10gi", "did you mean 10Gi?"),
    ("1GB", "did you mean 1G?"),
    ("80GiB", "did you mean 80Gi?"),
    ("512mi", "did you mean 512Mi?"),
    ("abc", "such as 80Gi"),
    ("", "such as 80Gi"),
    (" 1", "such as 80Gi"),
    ("1 Gi", "such as 80Gi"),
    ("1.2.3", "such as 80Gi"),
    ("Gi", "such as 80Gi"),
    ("1e", "such as 80Gi"),
    ("--1", "such as 80Gi"),
]


@pytest.mark.parametrize(("text", "hint"), BAD, ids=[repr(b[0]) for b in BAD])
def test_bad_quantities_explain_themselves(text: str, hint: str) -> None:
    with pytest.raises(QuantityError, match="is not a valid quantity") as info:
        Quantity.parse(text)
    assert hint in str(info.value)
    assert not is_quantity(text)


@pytest.mark.parametrize("value", [True, float("inf"), float("nan")])
def test_bad_numbers(value: float) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(value)


def test_arithmetic_keeps_the_format_of_the_first_operand() -> None:
    assert str(Quantity.parse("1Gi") + Quantity.parse("512Mi")) == "1536Mi"
    assert str(Quantity.parse("1") + Quantity.parse("500m")) == "1500m"
    assert str(Quantity.parse("1k") - Quantity.parse("1")) == "999"
    assert str(Quantity.parse("1Gi") + Quantity.parse("1")) == "1073741825"
    assert str(-Quantity.parse("2Gi")) == "-2Gi"


def test_comparison_and_hashing_are_by_value() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse("1024Mi")
    assert Quantity.parse("1") < Quantity.parse("1001m")
    assert Quantity.parse("1k").compare(Quantity.parse("1e3")) == 0
    assert len({Quantity.parse("1k"), Quantity.parse("1000"), Quantity.parse("1e3")}) == 1
    assert Quantity.parse("-1").sign() == -1


def test_integers() -> None:
    assert Quantity.parse("3k").as_integer() == 3000
    assert not Quantity.parse("1.5").is_integer()
    with pytest.raises(QuantityError, match="not an integer"):
        Quantity.parse("1.5").as_integer()
    assert str(Quantity.parse("1.0000000001").rounded_up_to_nano()) == "1000000001n"

"""Consumable capacity: how much of each capacity a request takes from a device, and whether it fits.

Rules of the 1.36 allocator: a capacity the request does not name is taken whole (or its policy
default); a named amount is rounded up to the policy (``validValues``: the next allowed value;
``validRange``: at least ``min``, then up to ``min + k*step``), and an amount the policy does not
allow makes the device ineligible. Step arithmetic uses integer values, as upstream does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from dratwin.api.quantity import Quantity
from dratwin.api.resource import CapacityRequestPolicy, DeviceCapacity

Amounts = dict[str, Fraction]


def _value(text: str | int | float) -> Fraction:
    return Quantity.parse(text).value


def _int_value(text: str | int | float) -> int:
    # apimachinery's Quantity.Value(): rounded up to an integer.
    return math.ceil(_value(text))


def consumed_amount(requested: Fraction | None, capacity: DeviceCapacity) -> tuple[Fraction, bool]:
    """The amount taken from one capacity, and whether it is the policy default itself."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return _value(policy.default), True
        return _value(capacity.value), False
    if policy is None:
        return requested, False
    if policy.valid_values is not None:
        allowed = sorted(_value(v) for v in policy.valid_values)
        return next((v for v in allowed if v >= requested), requested), False
    if policy.valid_range is not None:
        return _round_up_range(requested, policy), False
    return requested, False


def _round_up_range(requested: Fraction, policy: CapacityRequestPolicy) -> Fraction:
    valid = policy.valid_range
    assert valid is not None
    if valid.min is not None and requested < _value(valid.min):
        return _value(valid.min)
    if valid.step is not None:
        minimum = _int_value(valid.min) if valid.min is not None else 0
        step = _int_value(valid.step)
        if step > 0:
            steps = math.ceil((requested - minimum) / step)
            return Fraction(minimum + steps * step)
    return requested


def violates_policy(amount: Fraction, is_default: bool, policy: CapacityRequestPolicy | None) -> bool:
    # Upstream compares with the default structurally; equal values are taken as equal here.
    if policy is None or is_default or (policy.default is not None and amount == _value(policy.default)):
        return False
    if policy.valid_values is not None:
        return all(amount != _value(v) for v in policy.valid_values)
    valid = policy.valid_range
    if valid is None:
        return False
    if valid.min is not None and amount < _value(valid.min):
        return True
    if valid.max is not None and amount > _value(valid.max):
        return True
    if valid.step is not None:
        minimum = _int_value(valid.min) if valid.min is not None else 0
        step = _int_value(valid.step)
        return step > 0 and (math.ceil(amount) - minimum) % step != 0
    return False


def request_fits(
    requests: Mapping[str, Fraction] | None,
    capacities: Mapping[str, DeviceCapacity],
    in_use: Mapping[str, Fraction] | None,
    allocating: Mapping[str, Fraction] | None,
) -> bool | None:
    """True if the share fits next to what is used and being allocated; False if not;
    None when the request names a capacity the device does not have (device ineligible)."""
    if requests and any(name not in capacities for name in requests):
        return None
    for name, capacity in capacities.items():
        amount, is_default = consumed_amount(requests.get(name) if requests else None, capacity)
        if violates_policy(amount, is_default, capacity.request_policy):
            return False
        total = amount + (in_use or {}).get(name, Fraction(0)) + (allocating or {}).get(name, Fraction(0))
        if total > _value(capacity.value):
            return False
    return True


def consumed_share(requests: Mapping[str, Fraction] | None, capacities: Mapping[str, DeviceCapacity]) -> Amounts:
    """Every capacity of the device with the amount this share takes."""
    return {
        name: consumed_amount(requests.get(name) if requests else None, capacity)[0]
        for name, capacity in capacities.items()
    }


def format_amount(amount: Fraction) -> str:
    return str(Quantity(amount))

"""The scalar notations of a scenario file: durations, rates, times of day, sizes and bandwidths.

Each parser returns the value in SI base units (seconds, events per second, bytes, bytes per second) or
raises :class:`NotationError` with a message that says what was expected, so that validation can report it
at the field's line with a hint.

- durations are Go's ``time.ParseDuration`` syntax (``90s``, ``1h30m``, ``1.5h``, ``500ms``) plus ``d`` for
  24 hours (``7d``), as ``kubectl`` and Prometheus users write long windows; a bare number is refused (Go
  refuses it too, except 0), so that ``600`` is never silently seconds or minutes;
- rates are a count per unit of time: ``12/h``, ``0.5/min``, ``3/s``, ``100/d`` (``/m`` is minutes; ``/hour``,
  ``/minute``, ``/second`` and ``/day`` are read too);
- a time of day is ``HH:MM`` or ``HH:MM:SS`` on a 24-hour clock (seconds after midnight);
- sizes are Kubernetes quantities (``10Gi``, ``500M``) read as bytes; bandwidths are a size per second
  (``200Mi/s``, ``1.25G/s``).
"""

from __future__ import annotations

import math
import re

from dratwin.api.quantity import Quantity
from dratwin.errors import QuantityError

SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
RATE_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0, "h": 3600.0,
              "hour": 3600.0, "d": 86400.0, "day": 86400.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)")
_RATE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*/\s*([a-z]+)\s*$")
_TIME_OF_DAY = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")

DURATION_HINT = "write a number with a unit: 90s, 10m, 2h, 1h30m or 7d"
RATE_HINT = "write a count per unit of time: 12/h, 0.5/min, 3/s or 100/d"
TIME_OF_DAY_HINT = 'write a 24-hour time of day in quotes: "14:00"'
SIZE_HINT = "write a Kubernetes quantity of bytes: 10Gi, 500Mi or 80G"
BANDWIDTH_HINT = "write bytes per second: 200Mi/s or 1.25G/s"


class NotationError(ValueError):
    """A value that does not read in the notation its field takes; ``hint`` says how to write it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_duration(value: object) -> float:
    """Seconds of a duration such as ``90s``, ``1h30m`` or ``7d``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise NotationError("must be a duration", DURATION_HINT)
    if not isinstance(value, str):
        if value == 0:
            return 0.0
        raise NotationError("a duration needs a unit", f'did you mean "{_number(value)}s"? {DURATION_HINT}')
    text = value.strip()
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    total, position = 0.0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != position:
            break
        total += float(match[1]) * SECONDS[match[2]]
        position = match.end()
    if not body or position != len(body):
        hint = DURATION_HINT
        if re.fullmatch(r"\d+(?:\.\d*)?", body):
            hint = f'did you mean "{body}s"? {DURATION_HINT}'
        raise NotationError("must be a duration", hint)
    if not math.isfinite(total):
        raise NotationError("is too long", DURATION_HINT)
    return sign * total


def parse_rate(value: object) -> float:
    """Events per second of a rate such as ``12/h``."""
    match = _RATE.match(value) if isinstance(value, str) else None
    if match is None:
        hint = RATE_HINT
        if isinstance(value, int | float) and not isinstance(value, bool):
            hint = f'did you mean "{_number(value)}/h"? {RATE_HINT}'
        raise NotationError("must be a rate", hint)
    unit = match[2]
    if unit not in RATE_UNITS:
        raise NotationError(f"unknown time unit {unit!r} in a rate", RATE_HINT)
    return float(match[1]) / RATE_UNITS[unit]


def parse_time_of_day(value: object) -> float:
    """Seconds after midnight of ``HH:MM`` or ``HH:MM:SS``."""
    match = _TIME_OF_DAY.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise NotationError("must be a time of day", TIME_OF_DAY_HINT)
    hours, minutes, seconds = int(match[1]), int(match[2]), int(match[3] or 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        raise NotationError("is not a time on a 24-hour clock", TIME_OF_DAY_HINT)
    return float(hours * 3600 + minutes * 60 + seconds)


def parse_size(value: object) -> int:
    """Bytes of a quantity such as ``10Gi``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise NotationError("must be a size", SIZE_HINT)
    try:
        amount = Quantity.parse(value)
    except (QuantityError, ValueError):
        raise NotationError("must be a size", SIZE_HINT) from None
    if amount.sign() < 0:
        raise NotationError("must not be negative", SIZE_HINT)
    return math.ceil(amount.value)


def parse_bandwidth(value: object) -> float:
    """Bytes per second of ``200Mi/s``."""
    if not isinstance(value, str) or not value.strip().endswith("/s"):
        raise NotationError("must be a bandwidth", BANDWIDTH_HINT)
    try:
        return float(parse_size(value.strip()[:-2].strip()))
    except NotationError:
        raise NotationError("must be a bandwidth", BANDWIDTH_HINT) from None


def _number(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)

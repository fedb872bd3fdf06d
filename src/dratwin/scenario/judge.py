"""Reading the notations of a decoded scenario at their field paths, reporting what does not read."""

from __future__ import annotations

from collections.abc import Callable

from dratwin.api.loader import FieldPath
from dratwin.api.validation_base import Reporter
from dratwin.scenario.quantities import (
    NotationError,
    parse_bandwidth,
    parse_duration,
    parse_rate,
    parse_size,
    parse_time_of_day,
)


class Judge:
    """Parses values at field paths; a value that does not parse is reported and read as None."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    @property
    def failed(self) -> bool:
        return any(p.is_error for p in self.reporter.sink)

    def _read(self, parse: Callable[[object], float], path: FieldPath, value: object) -> float | None:
        try:
            return parse(value)
        except NotationError as error:
            self.reporter.invalid(path, value, error.message, error.hint)
            return None

    def duration(self, path: FieldPath, value: object, *, positive: bool = False) -> float | None:
        seconds = self._read(parse_duration, path, value)
        if seconds is not None and (seconds < 0 or (positive and seconds == 0)):
            self.reporter.invalid(path, value, "must be positive" if positive else "must not be negative")
            return None
        return seconds

    def rate(self, path: FieldPath, value: object) -> float | None:
        per_second = self._read(parse_rate, path, value)
        if per_second is not None and per_second <= 0:
            self.reporter.invalid(path, value, "must be more than 0", "a workload that never arrives: remove it")
            return None
        return per_second

    def time_of_day(self, path: FieldPath, value: object) -> float | None:
        return self._read(parse_time_of_day, path, value)

    def size(self, path: FieldPath, value: object) -> int | None:
        found = self._read(parse_size, path, value)
        return None if found is None else int(found)

    def bandwidth(self, path: FieldPath, value: object) -> float | None:
        found = self._read(parse_bandwidth, path, value)
        if found is not None and found <= 0:
            self.reporter.invalid(path, value, "must be more than 0")
            return None
        return found

    def number(self, path: FieldPath, value: float, low: float, high: float | None = None,
               *, low_open: bool = False, hint: str = "") -> float | None:
        """``value`` within [low, high] (``(low, high]`` with ``low_open``)."""
        below = value <= low if low_open else value < low
        if below or (high is not None and value > high):
            upper = f" and at most {high:g}" if high is not None else ""
            self.reporter.invalid(path, value, f"must be {'more than' if low_open else 'at least'} {low:g}{upper}",
                                  hint)
            return None
        return value

    def invalid(self, path: FieldPath, value: object, message: str, hint: str = "") -> None:
        self.reporter.invalid(path, value, message, hint)

    def required(self, path: FieldPath, message: str, hint: str = "") -> None:
        self.reporter.required(path, message, hint)

    def forbidden(self, path: FieldPath, message: str, hint: str = "") -> None:
        self.reporter.forbidden(path, message, hint)

    def duplicate(self, path: FieldPath, value: object, message: str, hint: str = "") -> None:
        self.reporter.duplicate(path, value, message, hint)

    def unsupported(self, path: FieldPath, value: str, supported: list[str], hint: str = "") -> None:
        self.reporter.unsupported(path, value, supported, hint)

    def not_found(self, path: FieldPath, value: object, message: str, hint: str = "") -> None:
        self.reporter.not_found(path, value, message, hint)

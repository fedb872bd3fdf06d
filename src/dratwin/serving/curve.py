"""A piecewise-linear request-rate curve: the rate at a time, and the requests over an interval."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from dratwin.errors import InputError
from dratwin.scenario.model import RatePoint


class ServingSpecError(InputError):
    """A service the load model cannot follow; the message names the service and the field."""


class RateCurveError(ServingSpecError):
    """A rate curve the model cannot follow (no points, times out of order, a negative rate)."""


@dataclass(frozen=True)
class RateCurve:
    """Requests per second through time: linear between points, held flat before the first and after the
    last (a scenario states the load it knows; the twin does not extrapolate a trend)."""

    times: tuple[float, ...]
    rates: tuple[float, ...]

    @classmethod
    def from_points(cls, points: Iterable[RatePoint], where: str = "rate") -> RateCurve:
        items = list(points)
        if not items:
            raise RateCurveError(f"{where}: a request-rate curve needs at least one point")
        for i, point in enumerate(items):
            if point.requests_per_second < 0:
                raise RateCurveError(f"{where}[{i}].requests_per_second: must not be negative")
            if i and point.at_seconds <= items[i - 1].at_seconds:
                raise RateCurveError(f"{where}[{i}].at_seconds: points must be in increasing time order")
        return cls(tuple(p.at_seconds for p in items), tuple(p.requests_per_second for p in items))

    def rate_at(self, t: float) -> float:
        times, rates = self.times, self.rates
        if t <= times[0]:
            return rates[0]
        if t >= times[-1]:
            return rates[-1]
        i = bisect.bisect_right(times, t)
        t0, t1, r0, r1 = times[i - 1], times[i], rates[i - 1], rates[i]
        return r0 + (r1 - r0) * (t - t0) / (t1 - t0)

    def breakpoints(self, start: float, end: float) -> list[float]:
        """The curve's points strictly inside (start, end): where its slope changes."""
        times = self.times
        return list(times[bisect.bisect_right(times, start) : bisect.bisect_left(times, end)])

    def requests(self, start: float, end: float) -> float:
        """The requests that arrive in [start, end] (exact: the curve is linear between breakpoints)."""
        edges = [start, *self.breakpoints(start, end), end]
        return sum((b - a) * (self.rate_at(a) + self.rate_at(b)) / 2 for a, b in itertools.pairwise(edges))

"""The request-rate curve: linear between points, flat outside them, exact request counts."""

from __future__ import annotations

import pytest

from dratwin.scenario.model import RatePoint
from dratwin.serving import RateCurve, RateCurveError

CURVE = RateCurve.from_points([RatePoint(100, 10), RatePoint(200, 30), RatePoint(300, 0)])

RATES = [
    ("before-first-point-held", 0, 10),
    ("on-a-point", 200, 30),
    ("between-points-linear", 150, 20),
    ("falling-segment", 250, 15),
    ("after-last-point-held", 1000, 0),
]


@pytest.mark.parametrize(("t", "rate"), [c[1:] for c in RATES], ids=[c[0] for c in RATES])
def test_rate_at(t: float, rate: float) -> None:
    assert CURVE.rate_at(t) == pytest.approx(rate)


REQUESTS = [
    ("flat-head", 0, 100, 1000),
    ("across-the-peak", 150, 250, 50 * (20 + 30) / 2 + 50 * (30 + 15) / 2),  # trapezoids on each side of 200
    ("whole-curve", 0, 400, 1000 + 2000 + 1500 + 0),
]


@pytest.mark.parametrize(("start", "end", "count"), [c[1:] for c in REQUESTS], ids=[c[0] for c in REQUESTS])
def test_requests_are_exact(start: float, end: float, count: float) -> None:
    assert CURVE.requests(start, end) == pytest.approx(count)


BAD = [
    ("no-points", [], "at least one point"),
    ("out-of-order", [RatePoint(10, 1), RatePoint(5, 1)], "rate[1].at_seconds"),
    ("negative", [RatePoint(0, -1)], "rate[0].requests_per_second"),
]


@pytest.mark.parametrize(("points", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_curves_say_where(points: list[RatePoint], message: str) -> None:
    with pytest.raises(RateCurveError, match=message.replace("[", r"\[").replace("]", r"\]")):
        RateCurve.from_points(points)

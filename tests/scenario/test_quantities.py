"""The scalar notations of scenario files: durations, rates, times of day, sizes, bandwidths."""

from __future__ import annotations

import pytest

from dratwin.scenario.quantities import (
    NotationError,
    parse_bandwidth,
    parse_duration,
    parse_rate,
    parse_size,
    parse_time_of_day,
)

DURATIONS = [
    ("seconds", "90s", 90.0),
    ("minutes", "10m", 600.0),
    ("hours", "2h", 7200.0),
    ("days", "7d", 7 * 86400.0),
    ("compound", "1h30m", 5400.0),
    ("fraction", "1.5h", 5400.0),
    ("milliseconds", "500ms", 0.5),
    ("zero without unit", "0", 0.0),
    ("number zero", 0, 0.0),
]


@pytest.mark.parametrize(("text", "seconds"), [c[1:] for c in DURATIONS], ids=[c[0] for c in DURATIONS])
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


BAD_DURATIONS = [
    ("no unit", "30", 'did you mean "30s"?'),
    ("number without unit", 600, 'did you mean "600s"?'),
    ("word", "2days", "90s, 10m"),
    ("unknown unit", "3w", "90s, 10m"),
    ("empty", "", "90s, 10m"),
    ("boolean", True, "90s, 10m"),
]


@pytest.mark.parametrize(("text", "hint"), [c[1:] for c in BAD_DURATIONS], ids=[c[0] for c in BAD_DURATIONS])
def test_bad_durations(text: object, hint: str) -> None:
    with pytest.raises(NotationError) as raised:
        parse_duration(text)
    assert hint in raised.value.hint


RATES = [("per hour", "12/h", 12 / 3600), ("per minute", "0.5/min", 0.5 / 60), ("per m", "6/m", 0.1),
         ("per second", "3/s", 3.0), ("per day", "100/d", 100 / 86400), ("spaces", "12 / h", 12 / 3600),
         ("word", "12/hour", 12 / 3600)]


@pytest.mark.parametrize(("text", "per_second"), [c[1:] for c in RATES], ids=[c[0] for c in RATES])
def test_rates(text: str, per_second: float) -> None:
    assert parse_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize(("text", "hint"), [("12", 'did you mean "12/h"?'), ("12 per hour", "12/h, 0.5/min"),
                                            ("12/week", "12/h"), ("/h", "12/h")],
                         ids=["number", "words", "unknown unit", "no count"])
def test_bad_rates(text: object, hint: str) -> None:
    with pytest.raises(NotationError) as raised:
        parse_rate(12 if text == "12" else text)
    assert hint in raised.value.hint


@pytest.mark.parametrize(("text", "seconds"), [("14:00", 50400.0), ("0:30", 1800.0), ("23:59:59", 86399.0)])
def test_times_of_day(text: str, seconds: float) -> None:
    assert parse_time_of_day(text) == seconds


@pytest.mark.parametrize("text", ["25:00", "14:60", "14h", 840, "noon"])
def test_bad_times_of_day(text: object) -> None:
    with pytest.raises(NotationError) as raised:
        parse_time_of_day(text)
    assert '"14:00"' in raised.value.hint


@pytest.mark.parametrize(("text", "size"), [("10Gi", 10 * 2**30), ("500M", 500_000_000), (1024, 1024)])
def test_sizes(text: object, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "bandwidth"), [("200Mi/s", 200 * 2**20), ("1.25G/s", 1.25e9)])
def test_bandwidths(text: str, bandwidth: float) -> None:
    assert parse_bandwidth(text) == pytest.approx(bandwidth)


@pytest.mark.parametrize(("parse", "text"), [(parse_size, "ten gigs"), (parse_size, "-1Gi"),
                                             (parse_bandwidth, "200Mi"), (parse_bandwidth, "fast/s")],
                         ids=["size words", "negative size", "bandwidth without /s", "bandwidth words"])
def test_bad_sizes_and_bandwidths(parse: object, text: str) -> None:
    with pytest.raises(NotationError):
        parse(text)  # type: ignore[operator]

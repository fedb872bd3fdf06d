"""Percentiles, empirical CDFs and time bins behind the latency table and the heatmap."""

from __future__ import annotations

import math

import pytest

from dratwin.report.stats import bin_columns, ecdf, percentile, thin

PERCENTILE_CASES = {
    "median of an odd count": ([3.0, 1.0, 2.0], 50, 2.0),
    "median of an even count interpolates": ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
    "p95 of 1..100": ([float(i) for i in range(1, 101)], 95, 95.05),
    "p99 of 1..100": ([float(i) for i in range(1, 101)], 99, 99.01),
    "p100 is the maximum": ([5.0, 9.0], 100, 9.0),
    "one value": ([7.0], 99, 7.0),
}


@pytest.mark.parametrize(("values", "p", "expected"), PERCENTILE_CASES.values(), ids=PERCENTILE_CASES.keys())
def test_percentile_interpolates_between_closest_ranks(values: list[float], p: float, expected: float) -> None:
    assert percentile(values, p) == pytest.approx(expected)


def test_percentile_of_nothing_is_not_a_number() -> None:
    assert math.isnan(percentile([], 50))


def test_ecdf_keeps_small_samples_whole_and_thins_large_ones_to_the_limit() -> None:
    assert ecdf([2.0, 1.0]) == ([1.0, 2.0], [0.5, 1.0])
    xs, ys = ecdf([float(i) for i in range(10_000)], points=50)
    assert len(xs) == 50
    assert (xs[0], xs[-1], ys[-1]) == (0.0, 9999.0, 1.0)
    assert xs == sorted(xs)


def test_bin_columns_averages_into_equal_bins_and_leaves_gaps_empty() -> None:
    times = [float(t) for t in range(8)]
    row: list[float | None] = [1.0, 3.0, None, None, 5.0, 7.0, 2.0, 2.0]
    centres, values = bin_columns(times, row, 4)
    assert values == [2.0, None, 6.0, 2.0]
    assert len(centres) == 4
    assert bin_columns(times[:3], row[:3], 4) == (times[:3], row[:3])


def test_thin_keeps_short_series_whole() -> None:
    assert thin([0.0, 1.0], [5.0, None], 10) == ([0.0, 1.0], [5.0, None])


def test_thin_caps_the_points_and_keeps_every_peak_and_dip() -> None:
    times = [float(t) for t in range(100_000)]
    values: list[float | None] = [0.0] * 100_000
    values[31_337] = 250.0  # one short peak of the queue
    values[77_777] = -3.0
    xs, ys = thin(times, values, 400)
    assert len(xs) <= 400
    assert (xs[0], xs[-1]) == (0.0, 99_999.0)
    assert xs == sorted(xs)
    assert (31_337.0, 250.0) in zip(xs, ys, strict=True)
    assert (77_777.0, -3.0) in zip(xs, ys, strict=True)

"""Arrival processes and run-time distributions: their rates, peaks and moments, and their seeding."""

from __future__ import annotations

import itertools
import math
import os
import statistics
import subprocess
import sys

import pytest

from dratwin.scenario.sampling import (
    DAY,
    DiurnalRate,
    Exponential,
    Fixed,
    LogNormal,
    Uniform,
    diurnal_times,
    first,
    poisson_times,
    stream,
)

HOUR = 3600.0


@pytest.mark.parametrize(("rate_per_hour", "hours"), [(12.0, 1000.0), (0.5, 20000.0), (3600.0, 10.0)],
                         ids=["12/h", "0.5/h", "1/s"])
def test_poisson_mean_rate(rate_per_hour: float, hours: float) -> None:
    times = list(poisson_times(stream(1, "w", "arrival"), rate_per_hour / HOUR, hours * HOUR))
    expected = rate_per_hour * hours
    assert abs(len(times) - expected) < 4 * math.sqrt(expected)  # four standard deviations of a Poisson count
    assert times == sorted(times) and times[0] > 0 and times[-1] < hours * HOUR


def test_poisson_gaps_are_exponential() -> None:
    times = list(poisson_times(stream(2, "w", "arrival"), 1.0, 20000.0))
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert statistics.mean(gaps) == pytest.approx(1.0, rel=0.03)
    assert statistics.stdev(gaps) == pytest.approx(1.0, rel=0.05)  # an exponential's spread equals its mean


@pytest.mark.parametrize(("peak_hour", "amplitude"), [(14, 0.5), (3, 0.9), (20, 0.3)])
def test_diurnal_peak_and_mean(peak_hour: int, amplitude: float) -> None:
    rate = DiurnalRate(mean=60.0 / HOUR, peak_seconds=peak_hour * HOUR, amplitude=amplitude)
    days = 60
    times = list(diurnal_times(stream(3, "w", "arrival"), rate, days * DAY))
    expected = 60.0 * 24 * days
    assert abs(len(times) - expected) < 4 * math.sqrt(expected)
    by_hour = [0] * 24
    for time in times:
        by_hour[int(time % DAY // HOUR)] += 1
    busiest = max(range(24), key=lambda h: by_hour[h])
    assert min((busiest - peak_hour) % 24, (peak_hour - busiest) % 24) <= 1
    quietest = min(range(24), key=lambda h: by_hour[h])
    assert min((quietest - peak_hour - 12) % 24, (peak_hour + 12 - quietest) % 24) <= 1
    ratio = by_hour[peak_hour] / by_hour[(peak_hour + 12) % 24]
    assert ratio == pytest.approx((1 + amplitude) / (1 - amplitude), rel=0.25)


def test_diurnal_without_amplitude_is_poisson() -> None:
    flat = DiurnalRate(10.0 / HOUR, 0.0, 0.0)
    assert len(list(diurnal_times(stream(4, "w", "arrival"), flat, 100 * HOUR))) == pytest.approx(1000, abs=130)


def test_count_limits_arrivals() -> None:
    assert len(first(poisson_times(stream(5, "w", "arrival"), 1.0, 1000.0), 7)) == 7
    assert first(iter([1.0, 2.0]), None) == [1.0, 2.0]


DISTRIBUTIONS = [
    ("fixed", Fixed(600.0), lambda xs: set(xs) == {600.0}),
    ("exponential mean", Exponential(1800.0), lambda xs: statistics.mean(xs) == pytest.approx(1800.0, rel=0.03)),
    ("lognormal median", LogNormal(1200.0, 0.8), lambda xs: statistics.median(xs) == pytest.approx(1200.0, rel=0.03)),
    ("lognormal spread", LogNormal(1200.0, 0.8),
     lambda xs: statistics.stdev(math.log(x) for x in xs) == pytest.approx(0.8, rel=0.03)),
    ("uniform bounds", Uniform(60.0, 120.0), lambda xs: 60.0 <= min(xs) < 61.0 and 119.0 < max(xs) <= 120.0
     and statistics.mean(xs) == pytest.approx(90.0, rel=0.01)),
]


@pytest.mark.parametrize(("distribution", "holds"), [c[1:] for c in DISTRIBUTIONS], ids=[c[0] for c in DISTRIBUTIONS])
def test_run_time_distributions(distribution: Fixed | Exponential | LogNormal | Uniform, holds: object) -> None:
    rng = stream(6, "w", "runFor")
    samples = [distribution.sample(rng) for _ in range(20000)]
    assert holds(samples)  # type: ignore[operator]


def test_streams_are_seeded_by_seed_workload_and_purpose() -> None:
    def draws(seed: int, workload: str, purpose: str) -> list[float]:
        rng = stream(seed, workload, purpose)
        return [rng.random() for _ in range(3)]

    assert draws(1, "train", "arrival") == draws(1, "train", "arrival")
    others = [draws(2, "train", "arrival"), draws(1, "serve", "arrival"), draws(1, "train", "runFor")]
    assert all(other != draws(1, "train", "arrival") for other in others)


def test_streams_do_not_depend_on_the_process() -> None:
    """Another interpreter, with another string-hash seed, draws the same numbers (SHA-256, not hash())."""
    code = "from dratwin.scenario.sampling import stream; print(repr(stream(1, 'train', 'arrival').random()))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert float(out) == stream(1, "train", "arrival").random()

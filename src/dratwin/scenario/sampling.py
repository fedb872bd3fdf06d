"""Seeded sampling of arrival times and run times.

Every workload draws from its own streams, seeded from the run's seed, the workload's name and what is
drawn (``arrival`` or ``runFor``) through SHA-256 (Python's ``hash`` of a string changes between
processes). So adding, removing or reordering a workload leaves the other workloads' samples as they were,
changing a workload's run-time distribution leaves its arrival times as they were, and every variant of a
scenario sees the same arrivals for the same seed (common random numbers: the variants differ only by what
they override). The generator is the standard library's ``random.Random`` (Mersenne Twister), whose
sequence for a seed is stable across Python versions for the methods used here.

Arrival processes (times in seconds from the start, t = 0 at midnight):

- ``at``: ``count`` arrivals (default 1) at one time;
- ``poisson``: a homogeneous Poisson process, exponential gaps of mean 1/rate;
- ``diurnal``: a non-homogeneous Poisson process of rate mean x (1 + amplitude x cos(2π (t - peak) / 24 h)),
  sampled by thinning (Lewis and Shedler): candidates at the peak rate, each kept with probability
  rate(t) / peak rate; the mean rate over a day is ``mean``, the highest at ``peak``;
- a trace: the trace's own times (no sampling).

Both processes stop at ``until`` (or the scenario's duration) and after ``count`` arrivals.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

DAY = 86400.0


def stream(seed: int, workload: str, purpose: str) -> random.Random:
    """The generator of one workload's ``purpose`` (``arrival``, ``runFor``) for a run's seed."""
    digest = hashlib.sha256(f"{seed}\x00{workload}\x00{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class DiurnalRate:
    """mean x (1 + amplitude x cos(2π (t - peak) / day)), in events per second."""

    mean: float
    peak_seconds: float
    amplitude: float

    def at(self, seconds: float) -> float:
        return self.mean * (1.0 + self.amplitude * math.cos(2.0 * math.pi * (seconds - self.peak_seconds) / DAY))

    @property
    def highest(self) -> float:
        return self.mean * (1.0 + self.amplitude)


def poisson_times(rng: random.Random, rate: float, until: float) -> Iterator[float]:
    """Arrival times of a Poisson process of ``rate`` per second in [0, until)."""
    if rate <= 0:
        return
    now = rng.expovariate(rate)
    while now < until:
        yield now
        now += rng.expovariate(rate)


def diurnal_times(rng: random.Random, rate: DiurnalRate, until: float) -> Iterator[float]:
    """Arrival times of the daily-cycle process in [0, until), by thinning a Poisson process at the peak rate."""
    highest = rate.highest
    for candidate in poisson_times(rng, highest, until):
        if rng.random() * highest < rate.at(candidate):
            yield candidate


def first(times: Iterator[float], count: int | None) -> list[float]:
    """At most ``count`` of ``times`` (all when None)."""
    out: list[float] = []
    for time in times:
        if count is not None and len(out) >= count:
            break
        out.append(time)
    return out


# ---- run times -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fixed:
    seconds: float

    def sample(self, rng: random.Random) -> float:
        return self.seconds


@dataclass(frozen=True)
class Exponential:
    mean: float

    def sample(self, rng: random.Random) -> float:
        return rng.expovariate(1.0 / self.mean)


@dataclass(frozen=True)
class LogNormal:
    """The median is e^mu: half the runs are shorter; sigma is the spread of the logarithm."""

    median: float
    sigma: float

    def sample(self, rng: random.Random) -> float:
        return rng.lognormvariate(math.log(self.median), self.sigma)


@dataclass(frozen=True)
class Uniform:
    low: float
    high: float

    def sample(self, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)


RunTime = Fixed | Exponential | LogNormal | Uniform

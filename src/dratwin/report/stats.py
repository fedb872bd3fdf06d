"""Small statistics for the report: percentiles, an empirical CDF and time binning. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

PERCENTILES = (50, 95, 99)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile with linear interpolation between closest ranks (numpy's default); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ecdf(values: Sequence[float], points: int = 200) -> tuple[list[float], list[float]]:
    """At most ``points`` (value, fraction of samples ≤ value) pairs, evenly spaced in rank."""
    if not values:
        return [], []
    ordered = sorted(values)
    count = len(ordered)
    if count <= points:
        ranks = list(range(count))
    else:
        ranks = sorted({round(i * (count - 1) / (points - 1)) for i in range(points)})
    return [ordered[r] for r in ranks], [(r + 1) / count for r in ranks]


def bin_columns(
    times: Sequence[float], row: Sequence[float | None], bins: int
) -> tuple[list[float], list[float | None]]:
    """Average a row sampled at ``times`` into at most ``bins`` equal time bins (bin centres returned).

    A bin with no sample, or only gaps, stays ``None``.
    """
    if len(times) <= bins:
        return list(times), list(row)
    start, end = times[0], times[-1]
    width = (end - start) / bins or 1.0
    sums = [0.0] * bins
    counts = [0] * bins
    for time, value in zip(times, row, strict=True):
        if value is None:
            continue
        index = min(int((time - start) / width), bins - 1)
        sums[index] += value
        counts[index] += 1
    centres = [start + (i + 0.5) * width for i in range(bins)]
    return centres, [s / c if c else None for s, c in zip(sums, counts, strict=True)]


def thin(
    times: Sequence[float], values: Sequence[float | None], max_points: int
) -> tuple[list[float], list[float | None]]:
    """At most about ``max_points`` points that keep the shape: per equal time bucket, its first, lowest,
    highest and last point, in time order (so a peak of the queue or a dip of the fleet is never lost).
    """
    if len(times) <= max_points:
        return list(times), list(values)
    buckets = max(1, max_points // 4)
    start, end = times[0], times[-1]
    width = (end - start) / buckets or 1.0
    chosen: set[int] = set()
    members: list[list[int]] = [[] for _ in range(buckets)]
    for index, time in enumerate(times):
        members[min(int((time - start) / width), buckets - 1)].append(index)
    for indices in members:
        if not indices:
            continue
        chosen.update((indices[0], indices[-1]))
        present: list[tuple[float, int]] = []
        for index in indices:
            value = values[index]
            if value is not None:
                present.append((value, index))
        if present:
            chosen.update((min(present)[1], max(present)[1]))
    ordered = sorted(chosen)
    return [times[i] for i in ordered], [values[i] for i in ordered]

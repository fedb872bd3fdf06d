"""Benchmarks run by ``dratwin bench`` / ``make bench``: each returns figures to print and record."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchResult:
    """One measured figure: the median of several runs, with its target when the issue names one."""

    name: str
    value: float
    unit: str
    target: float | None = None
    detail: str = ""

    @property
    def meets_target(self) -> bool | None:
        return None if self.target is None else self.value <= self.target

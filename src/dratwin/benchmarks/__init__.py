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
    higher_is_better: bool = False  # throughputs (pods/s): the target is a floor, not a ceiling

    @property
    def meets_target(self) -> bool | None:
        if self.target is None:
            return None
        return self.value >= self.target if self.higher_is_better else self.value <= self.target

    @property
    def target_text(self) -> str:
        return "-" if self.target is None else f"{'>=' if self.higher_is_better else '<='} {self.target:g}"

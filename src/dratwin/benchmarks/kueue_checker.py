"""The figures Kueue's performance checker reads, from a run's Workload history and ClusterQueue usage.

Kueue's runner records (``test/performance/scheduler/runner/recorder`` at ``ff69552``):

- per Workload, its class and its time to admission: each time it turns Admitted, the time from its
  creation to that admission (so a Workload evicted and admitted again keeps the **last** one); a Workload
  never admitted counts with 0 in its class's mean (``AverageTimeToAdmissionMs`` = total / count);
- per ClusterQueue, its admitted ``cpu`` usage as a step function from its first event to its last,
  integrated (mCPU × ms); per ClusterQueue class, ``usage`` = the class's integral / (the class's summed
  nominal quota × the span from its first event to its last), in percent (borrowing can take it past 100).

The checker (``checker_test.go``) passes a run when the wall time is at most ``maxWallMs``, each class's
mean time to admission at most its threshold and each ClusterQueue class's usage at least its minimum.
Kueue stamps times in whole seconds (``creationTimestamp``, ``lastTransitionTime``); the twin's times are
exact, which moves a class's mean by under a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass
class WorkloadRecord:
    """One Workload's history: its class, creation, its last admission (None: never), finish, evictions."""

    class_name: str
    created: float
    admitted: float | None = None
    finished: float | None = None
    evictions: int = 0

    @property
    def time_to_admission(self) -> float:
        return self.admitted - self.created if self.admitted is not None else 0.0


@dataclass
class UsageIntegral:
    """One ClusterQueue's admitted usage of its first flavor's first resource, integrated over time."""

    class_name: str
    nominal: float
    first: float
    last: float = 0.0
    current: float = 0.0
    integral: float = 0.0  # resource × seconds
    peak: float = 0.0

    def __post_init__(self) -> None:
        self.last = self.first

    def record(self, now: float, usage: float) -> None:
        """The ClusterQueue's usage became ``usage`` at ``now`` (times never go back)."""
        self.integral += self.current * (now - self.last)
        self.current, self.last = usage, now
        self.peak = max(self.peak, usage)


@dataclass(frozen=True)
class ClassAdmission:
    count: int
    not_admitted: int
    mean_seconds: float  # Kueue's AverageTimeToAdmissionMs, in seconds
    evictions: int


@dataclass(frozen=True)
class Figures:
    admission: Mapping[str, ClassAdmission]
    usage_pct: Mapping[str, float]  # per ClusterQueue class
    span_seconds: float = 0.0  # first to last recorded event


@dataclass(frozen=True)
class Verdict:
    """Each checker test beside the published mean it is derived from."""

    lines: list[tuple[str, float, float, bool]] = field(default_factory=list)  # (figure, twin, Kueue, within)


def figures(workloads: Iterable[WorkloadRecord], usage: Iterable[UsageIntegral]) -> Figures:
    totals: dict[str, list[float]] = {}
    missing: dict[str, int] = {}
    evictions: dict[str, int] = {}
    for record in workloads:
        totals.setdefault(record.class_name, []).append(record.time_to_admission)
        missing[record.class_name] = missing.get(record.class_name, 0) + (record.admitted is None)
        evictions[record.class_name] = evictions.get(record.class_name, 0) + record.evictions
    admission = {name: ClassAdmission(len(times), missing[name], sum(times) / len(times), evictions[name])
                 for name, times in sorted(totals.items())}
    groups: dict[str, list[UsageIntegral]] = {}
    for queue in usage:
        groups.setdefault(queue.class_name, []).append(queue)
    usage_pct: dict[str, float] = {}
    span = 0.0
    for name, queues in sorted(groups.items()):
        elapsed = max(q.last for q in queues) - min(q.first for q in queues)
        nominal = sum(q.nominal for q in queues)
        span = max(span, elapsed)
        usage_pct[name] = 100 * sum(q.integral for q in queues) / (nominal * elapsed) if nominal and elapsed else 0.0
    return Figures(admission, usage_pct, span)


def check(found: Figures, published_admission_ms: Mapping[str, float], published_usage_pct: float,
          usage_class: str = "cq") -> Verdict:
    """The rangespec tests, with thresholds derived from the published means as Kueue derives them: a
    class's mean time to admission within mean × 1.2, usage at least mean − 7 points."""
    verdict = Verdict()
    for name, mean_ms in sorted(published_admission_ms.items()):
        twin = found.admission[name].mean_seconds if name in found.admission else float("nan")
        verdict.lines.append((f"time to admission {name} (s)", twin, mean_ms / 1000, twin <= 1.2 * mean_ms / 1000))
    usage = found.usage_pct.get(usage_class, 0.0)
    verdict.lines.append((f"{usage_class} usage (%)", usage, published_usage_pct, usage >= published_usage_pct - 7))
    return verdict

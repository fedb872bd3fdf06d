"""What Karpenter's disruption controller reads of a NodePool: its consolidation policy, ``consolidateAfter``
and disruption budgets (``pkg/apis/v1/nodepool.go`` ``GetAllowedDisruptionsByReason``), with robfig/cron's
standard schedule parser (budget schedules are UTC) and Go durations.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

UNBOUNDED = 2**31 - 1  # math.MaxInt32: no active budget limits the reason
DEFAULT_BUDGETS: list[dict[str, Any]] = [{"nodes": "10%"}]  # the CRD's default when spec.disruption.budgets is absent
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"


# ---- NodePool policy ---------------------------------------------------------------------------------


class BudgetError(ValueError):
    """A budget Karpenter cannot evaluate (bad nodes value, cron or duration): it fails closed."""


@dataclass(frozen=True)
class Budget:
    nodes: str
    reasons: tuple[str, ...]  # empty: every reason
    schedule: str | None = None
    duration: timedelta | None = None

    def applies_to(self, reason: str) -> bool:
        return not self.reasons or reason in self.reasons

    def active(self, now: datetime | None) -> bool:
        if self.schedule is None and self.duration is None:
            return True
        if self.schedule is None or self.duration is None:
            raise BudgetError("a budget needs both schedule and duration, or neither")
        cron = Cron.parse(self.schedule)
        if now is None:
            return True  # no clock: a scheduled budget is taken as active, the restrictive reading
        return cron.active(now, self.duration)

    def allowed(self, num_nodes: int, now: datetime | None) -> int:
        """``Budget.GetAllowedDisruptions``: unbounded while inactive, else the count or the percentage
        of the NodePool's nodes, rounded up."""
        if not self.active(now):
            return UNBOUNDED
        match = re.fullmatch(r"(100|[0-9]{1,2})%|([0-9]+)", self.nodes.strip())
        if match is None:
            raise BudgetError(f"budget nodes {self.nodes!r} is neither a count nor a percentage")
        if match.group(2) is not None:
            return int(match.group(2))
        return math.ceil(int(match.group(1)) * num_nodes / 100)

    def describe(self) -> str:
        text = f'nodes: "{self.nodes}"'
        if self.reasons:
            text += f" for {', '.join(self.reasons)}"
        if self.schedule is not None:
            text += f' (schedule "{self.schedule}" for {show_duration(self.duration)})'
        return text


@dataclass
class NodePoolPolicy:
    """What the disruption controller reads of a NodePool."""

    name: str
    policy: str = WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after: timedelta | None = timedelta(0)  # None: Never (consolidation disabled)
    budgets: list[Budget] = field(default_factory=list)
    budget_problem: str = ""
    static: bool = False

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> NodePoolPolicy:
        name = str((raw.get("metadata") or {}).get("name", ""))
        spec = raw.get("spec") or {}
        disruption = spec.get("disruption") or {}
        found = cls(name, str(disruption.get("consolidationPolicy") or WHEN_EMPTY_OR_UNDERUTILIZED))
        found.static = spec.get("replicas") is not None
        after = disruption.get("consolidateAfter", "0s")
        try:
            found.consolidate_after = None if after is None or str(after) == "Never" else go_duration(str(after))
        except ValueError:
            found.consolidate_after = None  # the API server refuses it; nothing consolidates
        budgets = disruption.get("budgets", DEFAULT_BUDGETS)
        for budget in budgets or []:
            try:
                duration = budget.get("duration")
                found.budgets.append(
                    Budget(
                        str(budget.get("nodes", "10%")),
                        tuple(str(r) for r in budget.get("reasons") or ()),
                        str(budget["schedule"]) if budget.get("schedule") is not None else None,
                        go_duration(str(duration)) if duration is not None else None,
                    )
                )
            except (ValueError, AttributeError) as problem:
                found.budget_problem = f"budget {budget!r} cannot be read: {problem}"
        return found

    def allowed(self, reason: str, num_nodes: int, now: datetime | None) -> tuple[int, str]:
        """``NodePool.MustGetAllowedDisruptions``: the smallest value of the budgets for ``reason``, and the
        budget that sets it; 0 when any budget cannot be evaluated."""
        if self.budget_problem:
            return 0, self.budget_problem
        allowed, limiting = UNBOUNDED, ""
        for budget in self.budgets:
            try:
                value = budget.allowed(num_nodes, now)
            except BudgetError as problem:
                return 0, f"budget {budget.describe()} cannot be evaluated ({problem})"
            if budget.applies_to(reason) and value < allowed:
                allowed, limiting = value, f"budget {budget.describe()}"
        return allowed, limiting


# ---- cron (robfig/cron's standard parser, as Karpenter evaluates budget schedules, in UTC) -----------

_MONTHS = {
    m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
}
_WEEKDAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True)
class Cron:
    """A 5-field schedule (minute hour day-of-month month day-of-week) or one of the ``@`` descriptors.

    Supported: ``*``, ``?``, values, ``a-b`` ranges, ``/step``, comma lists, month and weekday names. As in
    robfig/cron, when both day fields are restricted a day matching either is a hit; ``@every``, time zones
    and seconds are not accepted (Karpenter's validation refuses them too)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_star: bool
    weekdays_star: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        spec = _DESCRIPTORS.get(text.strip().lower(), text.strip())
        fields = spec.split()
        if len(fields) != 5:
            raise BudgetError(f"cron {text!r}: expected 5 fields (minute hour day month weekday), got {len(fields)}")
        minutes, _ = _cron_field(fields[0], 0, 59, {})
        hours, _ = _cron_field(fields[1], 0, 23, {})
        days, days_star = _cron_field(fields[2], 1, 31, {})
        months, _ = _cron_field(fields[3], 1, 12, _MONTHS)
        weekdays, weekdays_star = _cron_field(fields[4], 0, 6, _WEEKDAYS)
        return cls(minutes, hours, days, months, weekdays, days_star, weekdays_star)

    def day_matches(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays  # Sunday is 0
        if self.days_star or self.weekdays_star:
            return in_month and in_week
        return in_month or in_week

    def active(self, now: datetime, duration: timedelta) -> bool:
        """``Budget.IsActive``: the next hit after ``now - duration`` is not after ``now``, i.e. a hit lies in
        (now - duration, now] (hits are whole minutes; the check point is truncated to the second)."""
        now = utc(now)
        since = (now - duration).replace(microsecond=0)
        day = now.date()
        while day >= since.date():
            if self.day_matches(day):
                for hour in sorted(self.hours, reverse=True):
                    for minute in sorted(self.minutes, reverse=True):
                        hit = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
                        if hit <= now:
                            return hit > since  # the latest hit up to now
            day -= timedelta(days=1)
        return False


def _cron_field(text: str, low: int, high: int, names: Mapping[str, int]) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in text.split(","):
        range_step = part.split("/")
        if len(range_step) > 2:
            raise BudgetError(f"cron field {text!r}: too many slashes")
        bounds = range_step[0].split("-")
        part_star = bounds[0] in ("*", "?")
        if part_star:
            start, end = low, high
        elif len(bounds) in (1, 2):
            start = _cron_value(bounds[0], names, text)
            end = _cron_value(bounds[1], names, text) if len(bounds) == 2 else start
        else:
            raise BudgetError(f"cron field {text!r}: too many hyphens")
        step = 1
        if len(range_step) == 2:
            step = _cron_value(range_step[1], {}, text)
            if len(bounds) == 1:
                end = high  # "N/step" means N-max/step
            if step > 1:
                part_star = False
        if start < low or end > high or start > end or step == 0:
            raise BudgetError(f"cron field {text!r}: out of range {low}-{high}")
        values.update(range(start, end + 1, step))
        star = star or part_star
    return frozenset(values), star


def _cron_value(text: str, names: Mapping[str, int], field_text: str) -> int:
    named = names.get(text.lower())
    if named is not None:
        return named
    if not text.isdigit():
        raise BudgetError(f"cron field {field_text!r}: {text!r} is not a number")
    return int(text)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> timedelta:
    """A Go duration string (``30s``, ``1h30m``, ``720h``); ValueError when it is not one."""
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return timedelta(0)
    if not body or _DURATION_PART.sub("", body):
        raise ValueError(f"{text!r} is not a duration (such as 30s, 10m or 1h30m)")
    seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(body))
    return timedelta(seconds=sign * seconds)


def show_duration(duration: timedelta | None) -> str:
    if duration is None:
        return "-"
    seconds = int(duration.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{seconds}s" if seconds else "")
    return text or "0s"


def utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

"""The search effort budget: kube-scheduler's DRASchedulerFilterTimeout, made deterministic.

kube-scheduler gives one Filter call, and so one ``Allocate`` for one node, ``filterTimeout`` (10 s by
default; DRASchedulerFilterTimeout, beta and on since 1.34). Upstream's allocator checks the deadline at
every search step and gives up with ``filter operation aborted: context deadline exceeded``; the
scheduler then reports the node as ``timed out trying to allocate devices``.

A wall-clock deadline would make dratwin's answers depend on the machine and on how fast Python is
compared with Go. Instead the search counts its work the way upstream's costs it and stops when
that work adds up to ``filterTimeout`` of upstream's search. dratwin's search makes the same steps
as upstream's (``numAllocateOneInvocations``, equal step for step), looks at the same devices and
compares the same counters, so three counts describe the work of both:

- ``steps``: calls of the recursive search (``allocateOne``);
- ``visits``: devices looked at by the search loops (in use, selector cache, capacity checks);
- ``counter_checks``: counters compared when a device that consumes counters is taken (upstream
  compares every counter of the pool, with Kubernetes quantities).

Their costs in upstream's allocator were fitted to its running time (v0.36.2, Go 1.26, one goroutine)
on searches from a few milliseconds to the 10 s timeout; bench/RESULTS.md ("allocator effort budget")
has the measurements and how the estimate compares with each.
"""

from __future__ import annotations

from dataclasses import dataclass

FILTER_TIMEOUT_S = 10.0  # kube-scheduler DynamicResourcesArgs.filterTimeout default

# Upstream's cost of each unit of work, in nanoseconds (see the module docstring).
STEP_NS = 228
VISIT_NS = 162
COUNTER_CHECK_NS = 624

CHECK_EVERY = 256  # steps between two looks at the budget (the search stops at most this much later)


def upstream_ns(steps: int, visits: int, counter_checks: int) -> int:
    """The estimated running time of upstream's search for this much work, in nanoseconds."""
    return steps * STEP_NS + visits * VISIT_NS + counter_checks * COUNTER_CHECK_NS


@dataclass(frozen=True)
class EffortBudget:
    """``seconds`` of upstream's search per ``allocate`` call; 0 means no bound."""

    seconds: float = FILTER_TIMEOUT_S

    @property
    def unlimited(self) -> bool:
        return self.seconds <= 0

    @property
    def nanoseconds(self) -> int:
        return int(self.seconds * 1e9)


DEFAULT_BUDGET = EffortBudget()
UNLIMITED = EffortBudget(0.0)

"""The allocator's own errors: a "no" for one node only, and a search that ran out of effort."""

from __future__ import annotations

from dratwin.allocator.effort import EffortBudget
from dratwin.errors import AllocationError

TIMEOUT_MESSAGE = "timed out trying to allocate devices"  # kube-scheduler's status for the node


class NodeAllocationError(AllocationError):
    """No solution on this node and an invalid pool was seen: unschedulable here only."""


class AllocationTimeout(NodeAllocationError):
    """The search used up its effort budget, as upstream's runs into kube-scheduler's filter timeout.

    The message is the scheduler's, so pods read as on a real cluster; ``detail`` says what the budget
    stands for."""

    def __init__(self, budget: EffortBudget, steps: int) -> None:
        self.budget = budget
        self.steps = steps
        super().__init__(TIMEOUT_MESSAGE)

    @property
    def detail(self) -> str:
        return (
            f"the search stopped after {self.steps:,} steps, the work upstream's allocator does in "
            f"kube-scheduler's filterTimeout of {self.budget.seconds:g} s (DRASchedulerFilterTimeout), where it "
            "returns \"filter operation aborted: context deadline exceeded\"; fewer claims per pod, fewer "
            "devices per request, or selectors and constraints that rule devices out early shorten the search"
        )

"""What the scheduling cycle asks of preemption: the targets of a preemptor, the flavor assigner's oracle,
and what a preemptor without candidates holds (``preemption.go`` GetTargets, ``preemption_oracle.go``,
``scheduler.go`` quotaResourcesToReserve at Kueue ``ff69552``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dratwin.api.kueue import ClusterQueue, Workload
from dratwin.kueue.flavors import NO_CANDIDATES, PREEMPT, RECLAIM, Assignment
from dratwin.kueue.preemption.classical import classical_targets
from dratwin.kueue.preemption.common import AdmittedWorkload, Preemptor, State, Target, as_targets, needs_preemption
from dratwin.kueue.preemption.fair import fair_targets
from dratwin.kueue.quota import FlavorResource, QuotaTree, cq_key


def chosen_targets(state: State, preemptor: Preemptor, frs: frozenset[FlavorResource],
                   requests: Mapping[FlavorResource, int]) -> list[tuple[AdmittedWorkload, str]]:
    """``getTargets``: fair-sharing preemption when fair sharing is on, else classical."""
    if state.fair_sharing is not None:
        return fair_targets(state, preemptor, frs, requests, state.fair_sharing)
    return classical_targets(state, preemptor, frs, requests)


def targets(state: State, preemptor: Preemptor, assignment: Assignment) -> list[Target]:
    """``GetTargets``: the Workloads to evict so that ``assignment`` fits (empty: preemption cannot help)."""
    return as_targets(state, preemptor, chosen_targets(state, preemptor, needs_preemption(assignment),
                                                       assignment.usage))


@dataclass(frozen=True)
class Oracle:
    """``PreemptionOracle.SimulatePreemption`` for one preemptor: could preempting make room for ``amount``
    of ``fr``, and how high would the ClusterQueue borrow after it."""

    state: State
    preemptor: Preemptor
    # what chosen_targets found for each question, while ``state`` is as it was (each simulation restores it):
    # the cycle asks again for the assignment's targets right after the flavors are chosen
    _found: dict[tuple[frozenset[FlavorResource], tuple[tuple[FlavorResource, int], ...]],
                 list[tuple[AdmittedWorkload, str]]] = field(default_factory=dict, compare=False, repr=False)

    def chosen(self, frs: frozenset[FlavorResource],
               requests: Mapping[FlavorResource, int]) -> list[tuple[AdmittedWorkload, str]]:
        question = frs, tuple(sorted(requests.items()))
        found = self._found.get(question)
        if found is None:
            found = self._found[question] = chosen_targets(self.state, self.preemptor, frs, requests)
        return found

    def targets(self, assignment: Assignment) -> list[Target]:
        """:func:`targets`, for this preemptor over the state it was asked about."""
        return as_targets(self.state, self.preemptor, self.chosen(needs_preemption(assignment), assignment.usage))

    def simulate(self, cq: ClusterQueue, workload: Workload, fr: FlavorResource, amount: int) -> tuple[int, int]:
        key = cq_key(cq.metadata.name)
        chosen = self.chosen(frozenset([fr]), {fr: amount})
        if not chosen:
            return NO_CANDIDATES, self.state.tree.borrowing_height(key, fr, amount)[0]
        for victim, _ in chosen:
            self.state.remove(victim)
        try:
            height = self.state.tree.borrowing_height(key, fr, amount)[0]
        finally:
            for victim, _ in chosen:
                self.state.add(victim)
        if any(victim.cluster_queue == cq.metadata.name for victim, _ in chosen):
            return PREEMPT, height
        return RECLAIM, height


def reserved_while_waiting(tree: QuotaTree, cq: str, assignment: Assignment) -> dict[FlavorResource, int]:
    """``quotaResourcesToReserve``: what a preemptor with no candidates holds for the rest of the cycle when
    its ClusterQueue cannot always reclaim (so that lower-priority work of others does not take it): up to
    nominal + borrowingLimit when it borrows, else up to its unused nominal quota (never below 0)."""
    key = cq_key(cq)
    usage = tree.nodes[key].usage
    out: dict[FlavorResource, int] = {}
    for fr, amount in assignment.usage.items():
        quota = tree.quota(key, fr)
        if assignment.borrows > 0:
            out[fr] = amount if quota.borrowing_limit is None else max(0, min(
                amount, quota.nominal + quota.borrowing_limit - usage.get(fr, 0)))
        else:
            out[fr] = max(0, min(amount, quota.nominal - usage.get(fr, 0)))
    return out

"""Kueue's preemption, pure: which admitted Workloads to evict so that a pending one fits.

The twin of ``pkg/scheduler/preemption`` at Kueue ``ff69552`` (``preemption.go``, ``classical/`` candidate
iterator and hierarchical reclaim, ``common/`` ordering and policies, ``fairsharing/``,
``preemption_oracle.go``); concepts: ``site/content/en/docs/concepts/preemption.md``. Modules:
:mod:`.common` (values, policies, the minimal set, messages), :mod:`.classical`, :mod:`.fair` (with fair
sharing on), :mod:`.oracle` (what the scheduling cycle and the flavor assigner ask).

Classical preemption:

- **Candidates** (:func:`.classical.candidates`): admitted Workloads that use a flavor-resource the preemptor needs
  preemption in. From the preemptor's own ClusterQueue per ``withinClusterQueue`` (``LowerPriority``,
  ``LowerOrNewerEqualPriority``); from the other ClusterQueues of the cohort tree per
  ``reclaimWithinCohort`` (``LowerPriority``, ``Any``), only from ClusterQueues (and Cohorts on the way)
  above their nominal quota in those flavor-resources. A candidate of another ClusterQueue is a
  *hierarchical reclaim* when the preemptor's side of the tree owns the quota it uses (any priority the
  policy allows), else it is preemptible only if the preemptor ends within nominal quota
  (``InCohortReclamation``), unless ``borrowWithinCohort: LowerPriority`` lets a lower-priority one go
  while the preemptor borrows (``InCohortReclaimWhileBorrowing``; ``maxPriorityThreshold`` caps the
  candidates' priority).
- **Order** (``CandidatesOrdering``): Workloads already evicted first, then other ClusterQueues' before the
  preemptor's own, lower priority first, the most recently reserved first, then the uid. The groups
  (hierarchical, other ClusterQueues, own) are each sorted so, evicted ones of all groups first.
- **Targets** (:func:`.oracle.targets`): greedily remove candidates (skipping those a removal made invalid) until the
  preemptor fits, trying "may borrow" and "may not borrow" in Kueue's order, then give back, in reverse,
  every target the preemptor fits without.
- **Oracle** (:class:`.oracle.Oracle`): what the flavor assigner asks per flavor-resource: could preemption make
  room (``Preempt`` when a target is in the same ClusterQueue, ``Reclaim`` when all are elsewhere), and the
  borrowing height after it.

With fair sharing on (``State.fair_sharing``: the configured strategies), :mod:`.fair` chooses the targets
instead, by the dominant resource shares. The quota tree is changed during a simulation and restored before
returning, as Kueue does with its snapshot.
"""

from dratwin.kueue.preemption.classical import candidates, classical_targets
from dratwin.kueue.preemption.common import (
    EVICTED_BY_PREEMPTION,
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    AdmittedWorkload,
    Preemptor,
    State,
    Target,
    Workloads,
    can_always_reclaim,
    ordering_key,
    preemption_message,
    queue_path,
    satisfies_policy,
)
from dratwin.kueue.preemption.fair import fair_candidates, fair_targets
from dratwin.kueue.preemption.oracle import Oracle, chosen_targets, reserved_while_waiting, targets

__all__ = [
    "EVICTED_BY_PREEMPTION", "IN_CLUSTER_QUEUE", "IN_COHORT_FAIR_SHARING", "IN_COHORT_RECLAIM_WHILE_BORROWING",
    "IN_COHORT_RECLAMATION", "AdmittedWorkload", "Oracle", "Preemptor", "State", "Target", "Workloads",
    "can_always_reclaim", "candidates", "chosen_targets", "classical_targets", "fair_candidates", "fair_targets",
    "ordering_key", "preemption_message", "queue_path", "reserved_while_waiting", "satisfies_policy", "targets",
]

"""Karpenter's consolidation over the twin: which nodes it would delete or replace now, and why the rest stay.

Pure (no I/O): the input cluster is never changed; every simulation runs on a copy of its books.

The disruption controller of kubernetes-sigs/karpenter (core v1.14, ``pkg/controllers/disruption``) runs
its methods in order and acts on the first that finds something: Emptiness, (Drift, not modelled here),
multi-node consolidation, single-node consolidation. A command marks its nodes for deletion; the next pass
runs while they are still in flight, so they count against the NodePools' disruption budgets. The plan
here repeats passes until none finds anything. Each pass sees the cluster as the earlier commands leave
it (their nodes gone, their pods where Karpenter's simulation put them, which counts as a pod event on
those nodes), while their nodes still count against the budgets, as in flight.

* **Candidates** (``NewCandidate``, ``StateNode.ValidateNodeDisruptable``, ``ValidatePodsDisruptable``):
  nodes with the ``karpenter.sh/nodepool`` label whose NodePool is known, initialized, not being deleted,
  without ``karpenter.sh/do-not-disrupt: "true"`` on the node or an active one on a running pod
  (``"true"``, or a duration not yet elapsed since the pod started). Static NodePools (``spec.replicas``)
  and ``consolidateAfter: Never`` are left alone; a node is consolidatable once ``consolidateAfter`` has
  passed since its last pod event. Its price is its instance type's offering in its zone and capacity type.
* **Emptiness** (``emptiness.go``): every empty candidate (no reschedulable pod, i.e. none but DaemonSet,
  mirror or finished pods; strictly, none with a positive eviction cost) is deleted in one command,
  budgets permitting; it runs for every consolidation policy.
* **Consolidation** (``consolidation.go`` ``computeConsolidation``, ``helpers.go`` ``SimulateScheduling``):
  the candidates' pods (with the provisionable pending pods of the cluster) are simulated, largest first:
  first fit on the other nodes (initialized ones first, by name; the twin's scheduler filters and the DRA
  allocator, with the devices of claims used only by the leaving pods freed), else on new NodeClaims
  (the provisioning :class:`~dratwin.provisioner.solver.Solver`). A pod that fits nowhere keeps the nodes;
  no new NodeClaim is a delete; one is a replace if some instance type that fits is strictly cheaper
  (worst launch price) than the candidates together; two or more is no action. All-spot candidates are
  only replaced spot-to-spot behind the ``SpotToSpotConsolidation`` gate (off by default; with it, single
  nodes need 15 cheaper types and launch the 15 cheapest).
* **Multi-node** (``multinodeconsolidation.go``): candidates ordered by savings ratio (price per unit of
  disruption, highest first), cut to what the budgets allow, at most 100; a binary search for the longest
  prefix (of at least two) that consolidates, a replacement of the same instance type as one of them only
  if cheaper than that node (``filterOutSameInstanceType``).
* **Single-node** (``singlenodeconsolidation.go``): the same order, interleaved by NodePool; the first
  candidate that consolidates.
* **Budgets** (``pkg/apis/v1/nodepool.go`` ``GetAllowedDisruptionsByReason``, ``helpers.go``
  ``BuildDisruptionBudgetMapping``): per NodePool and reason (Empty for emptiness, Underutilized for
  consolidation) the minimum over the budgets that name the reason (or none), each a count or a
  percentage of the NodePool's initialized nodes rounded up, active always or for ``duration`` after each
  hit of its 5-field cron ``schedule`` (UTC); minus the nodes NotReady or being deleted. A budget that
  cannot be read blocks all disruption of its NodePool (Karpenter fails closed).

Left out: Drift and Expiration, the Balanced policy's scoring (treated as WhenEmptyOrUnderutilized), PDBs
(the twin has none), the 15 s re-validation of commands, pods on nodes that are already being deleted,
topology spread and pod (anti-)affinity (the twin's scheduler has no such filters), the DaemonSet overhead
of a replacement (the solver's), and later passes using a replacement that is still launching.
"""

from dratwin.provisioner.consolidation.model import (
    CAPACITY_ORDER,
    DELETE,
    DISRUPTED_TAINT,
    DO_NOT_DISRUPT,
    DRIFT,
    DRIFTED,
    EMPTINESS,
    EMPTY,
    INITIALIZED_LABEL,
    MAX_MULTI_NODE_CANDIDATES,
    MULTI_NODE,
    POD_DELETION_COST,
    REPLACE,
    SINGLE_NODE,
    SPOT_TO_SPOT_MIN_TYPES,
    UNDERUTILIZED,
    Action,
    ConsolidationPlan,
    DriftedNode,
    NodeCost,
    Replacement,
)
from dratwin.provisioner.consolidation.plan import consolidate
from dratwin.provisioner.consolidation.pricing import node_price

__all__ = [
    "CAPACITY_ORDER", "DELETE", "DISRUPTED_TAINT", "DO_NOT_DISRUPT", "DRIFT", "DRIFTED", "EMPTINESS", "EMPTY",
    "INITIALIZED_LABEL", "MAX_MULTI_NODE_CANDIDATES", "MULTI_NODE", "POD_DELETION_COST", "REPLACE", "SINGLE_NODE",
    "SPOT_TO_SPOT_MIN_TYPES", "UNDERUTILIZED", "Action", "ConsolidationPlan", "DriftedNode", "NodeCost", "Replacement",
    "consolidate", "node_price",
]

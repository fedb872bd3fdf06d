"""kube-scheduler's default profile as the twin runs it, and the options a run chooses for it.

Every component that schedules (``dratwin schedule`` and ``explain``, the simulation's scheduling controller,
Karpenter's consolidation) builds its profile here, so that they decide placement the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClusterState
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources
from dratwin.scheduler.plugins.node_affinity import NodeAffinity
from dratwin.scheduler.plugins.node_name import NodeName
from dratwin.scheduler.plugins.node_resources import (
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
    ScoringStrategy,
)
from dratwin.scheduler.plugins.node_unschedulable import NodeUnschedulable
from dratwin.scheduler.plugins.taint_toleration import TaintToleration
from dratwin.scheduler.scheduler import Profile


@dataclass(frozen=True)
class Options:
    seed: int = 0
    scoring: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED
    percentage_of_nodes_to_score: int = 0




def default_profile(cluster: ClusterState, options: Options, compiler: SelectorCompiler | None = None) -> Profile:
    """kube-scheduler's default profile, reduced to the plugins that matter here, in upstream order."""
    dra = DynamicResources(cluster, compiler)
    fit = NodeResourcesFit(options.scoring, dra_extended_resources=frozenset(dra.extended_classes))
    affinity = NodeAffinity()
    taints = TaintToleration()
    return Profile(
        pre_filters=[affinity, dra],
        filters=[NodeUnschedulable(), NodeName(), taints, affinity, fit, dra],
        scores=[taints, affinity, fit, NodeResourcesBalancedAllocation(), dra],
        dra=dra,
        percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
    )

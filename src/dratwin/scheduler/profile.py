"""kube-scheduler's default profile as the twin runs it, and the options a run chooses for it.

Every component that schedules (``dratwin schedule`` and ``explain``, the simulation's scheduling controller,
Karpenter's consolidation) builds its profile here, so that they decide placement the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClusterState
from dratwin.scheduler.framework import ScorePlugin
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
    # An opt-in placement policy of the FGD paper (a key of dratwin.gpushare.names.PAPER_NAMES): it
    # replaces every score plugin (see dratwin.scheduler.scoring); None: upstream's scoring.
    policy: str | None = None


def default_profile(cluster: ClusterState, options: Options, compiler: SelectorCompiler | None = None) -> Profile:
    """kube-scheduler's default profile, reduced to the plugins that matter here, in upstream order.

    With an opt-in policy (``options.policy``) the policy is the only score plugin, as the FGD paper's
    simulator configures kube-scheduler; FGD measures fragmentation against the pods the cluster holds
    (bound and pending) when the profile is built."""
    dra = DynamicResources(cluster, compiler)
    fit = NodeResourcesFit(options.scoring, dra_extended_resources=frozenset(dra.extended_classes))
    affinity = NodeAffinity()
    taints = TaintToleration()
    scores: list[ScorePlugin] = [taints, affinity, fit, NodeResourcesBalancedAllocation(), dra]
    if options.policy is not None:
        from dratwin.scheduler.plugins.gpu_share_scores import GpuShareScore  # numpy: only for an opt-in policy

        scores = [GpuShareScore(options.policy, cluster)]
    return Profile(
        pre_filters=[affinity, dra],
        filters=[NodeUnschedulable(), NodeName(), taints, affinity, fit, dra],
        scores=scores,
        dra=dra,
        percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
    )

"""GPU fragmentation as the FGD paper defines it: the measure lives in :mod:`dratwin.gpushare.fragmentation`
(below the scheduler and the simulation, which use it too); this module names it for trace readers."""

from dratwin.gpushare.fragmentation import (
    MILLI,
    POPULARITY_THRESHOLD_PCT,
    FragmentationModel,
    TargetWorkload,
    TaskClass,
    cluster_fragmentation,
    node_fragmentation,
    target_workload,
)

__all__ = [
    "MILLI",
    "POPULARITY_THRESHOLD_PCT",
    "FragmentationModel",
    "TargetWorkload",
    "TaskClass",
    "cluster_fragmentation",
    "node_fragmentation",
    "target_workload",
]

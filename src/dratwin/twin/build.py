"""Loading a cluster, for the one-shot pipelines: :mod:`dratwin.cluster.load` (the control plane's load step)."""

from __future__ import annotations

from dratwin.cluster.load import (
    LoadedCluster,
    PendingReason,
    add_created_pods,
    add_pods,
    imex_daemons,
    load_cluster,
    unmodelled_constraints,
)

__all__ = [
    "LoadedCluster",
    "PendingReason",
    "add_created_pods",
    "add_pods",
    "imex_daemons",
    "load_cluster",
    "unmodelled_constraints",
]

"""GPU sharing as the FGD paper models it: per-GPU shares of nodes, the paper's fragmentation measure and
its six placement policies.

Pure cores below both the trace replay (:mod:`dratwin.trace`) and the scheduler's opt-in score plugins
(:mod:`dratwin.scheduler.plugins.gpu_share_scores`): no I/O, and no import of either.

- :mod:`dratwin.gpushare.fragmentation`: task classes, the target workload and the fragmentation of a
  node or a cluster (:func:`~dratwin.gpushare.fragmentation.node_fragmentation`,
  :func:`~dratwin.gpushare.fragmentation.cluster_fragmentation`);
- :mod:`dratwin.gpushare.cluster`: the free CPU, memory and share of every GPU of a set of nodes;
- :mod:`dratwin.gpushare.policies`: Random, DotProd, GpuClustering, GpuPacking, BestFit and FGD.
"""

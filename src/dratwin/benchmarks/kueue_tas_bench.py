"""``dratwin bench kueue-tas``: Kueue's ``tas`` performance shape on the product path, in simulated time.

The shape (:data:`dratwin.benchmarks.kueue_shapes.TAS`, Kueue's ``test/performance/scheduler/configs/tas``
at ``ff69552``): 640 nodes in one block of 10 racks, a Topology block / rack / hostname and the TAS flavor
``tas-flavor``; the baseline's cohorts and ClusterQueues, with 15,000 Workloads of 2-, 4- and 8-pod gangs
asking for a rack (required, preferred, or a required slice for "balanced"). It runs through the same
controller runner as the other shapes (:func:`dratwin.benchmarks.kueue_bench.run_shape`): the nodes are
loaded into the simulated cluster, the simulation's Kueue controller keeps the TAS cache from them
(:mod:`dratwin.sim.kueue_tas`) and every admission carries a topology assignment. The figures are the
checker's (time to admission per class, ClusterQueue usage) beside Kueue's published means, with wall and
CPU time; the target is < 30 s of wall time.

``scale`` (below 1) runs a copy of the shape with each Workload set cut to that fraction
(:func:`~dratwin.benchmarks.kueue_shapes.scaled`): the same cluster, classes and intervals, fewer Workloads.
"""

from __future__ import annotations

from dratwin.benchmarks import BenchResult
from dratwin.benchmarks.kueue_bench import results, run_shape
from dratwin.benchmarks.kueue_shapes import TAS, scaled

COHORTS, QUEUES_PER_COHORT = 5, 6  # the shape's own: only the Workload sets are cut


def run(scale: float = 1.0) -> list[BenchResult]:
    shape = TAS if scale >= 1.0 else scaled(TAS, COHORTS, QUEUES_PER_COHORT, scale)
    return results(shape, run_shape(shape))

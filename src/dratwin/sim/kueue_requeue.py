"""Kueue's requeue of the inadmissible Workloads when quota is freed: per cohort tree, in a batch.

When a Workload holding quota finishes or is evicted, Kueue's workload controller calls the queue manager's
``QueueAssociatedInadmissibleWorkloadsAfter`` (``pkg/controller/core/workload_controller.go``,
``pkg/cache/queue/manager.go`` at ``ff69552``): the inadmissible Workloads of every ClusterQueue in the freed
one's cohort tree go back to their queues after ``requeueBatchPeriod``
(:data:`~dratwin.kueue.equivalence.REQUEUE_BATCH_SECONDS`), requests made meanwhile joining the one already
due. The evicted Workload itself is requeued at once by its caller. The heads still in the queues
(StrictFIFO's, a waiting preemptor) are tried at once: Kueue's scheduler loops while there are heads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dratwin.kueue.equivalence import REQUEUE_BATCH_SECONDS, EquivalentQueues
from dratwin.kueue.quota import QuotaTree, cq_key
from dratwin.sim.engine import CONTROLLER, Engine


@dataclass
class CohortRequeue:
    engine: Engine
    queues: EquivalentQueues
    tree: QuotaTree
    cluster_queues: Iterable[str]
    kick: Callable[[], None]  # a scheduling cycle, now
    batch_seconds: float = REQUEUE_BATCH_SECONDS  # 0: no wait (a one-shot pass shows the queues settled)
    _trees: dict[str, list[str]] = field(default_factory=dict)  # root of a cohort tree -> its ClusterQueues
    _due: set[str] = field(default_factory=set)  # roots whose batched requeue is scheduled

    def __post_init__(self) -> None:
        for name in self.cluster_queues:
            self._trees.setdefault(self.tree.root(cq_key(name)), []).append(name)

    def quota_freed(self, cluster_queue: str) -> None:
        """Quota was freed in ``cluster_queue``: its tree's inadmissible Workloads are requeued in the batch."""
        self.kick()
        root = self.tree.root(cq_key(cluster_queue))
        if root in self._due:
            return
        self._due.add(root)
        self.engine.at(self.engine.now() + self.batch_seconds, CONTROLLER, lambda: self._requeue(root))

    def _requeue(self, root: str) -> None:
        self._due.discard(root)
        self.queues.requeue_cluster_queues(self._trees.get(root, ()))
        self.kick()

"""Scheduling equivalence: Workloads of one shape in a ClusterQueue are set aside together.

Kueue's ``SchedulingEquivalenceHashing`` (beta, on by default since v0.18; ``pkg/workload/workload.go``
computeSchedulingHash, ``pkg/cache/queue/cluster_queue.go`` requeueIfNotPresent / handleInadmissibleHash /
PushOrUpdate, ``inadmissible_workloads.go`` queueInadmissibleWorkloads, at ``ff69552``):

- a Workload's hash covers its effective priority and, per PodSet, its name, pod spec, count, minCount,
  total requests and topology request;
- under ``BestEffortFIFO``, when a head is set aside because it does not fit (NoFit, or preemption found no
  candidates), every pending Workload of the same ClusterQueue with the same hash is set aside with it,
  and a Workload of that hash arriving later goes straight to the inadmissible ones; ``StrictFIFO`` keeps
  its order and does neither;
- requeueing a ClusterQueue's inadmissible Workloads (quota freed in its cohort tree) forgets the hashes.

Kueue requeues the inadmissible Workloads of a whole cohort tree when quota is freed in it, batched: the
request waits :data:`REQUEUE_BATCH_SECONDS` (``requeueBatchPeriod``) and requests made meanwhile join it.
The caller owns the clock: :meth:`EquivalentQueues.requeue_cluster_queues` is what it runs when the batch
is due.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import msgspec

from dratwin.kueue.cycle import ORDER, CycleResult, Entry, Queues
from dratwin.kueue.usage import Inadmissible

REQUEUE_BATCH_SECONDS = 1.0
BEST_EFFORT_FIFO = "BestEffortFIFO"

SchedulingHash = tuple[object, ...]


def scheduling_hash(entry: Entry) -> SchedulingHash:
    """What makes two Workloads equivalent for the scheduler (computeSchedulingHash's fields)."""
    usage = entry.usage
    requests: tuple[object, ...] = ()
    if not isinstance(usage, Inadmissible):
        requests = tuple((p.name, p.count, tuple(sorted(p.total.items()))) for p in usage.pod_sets)
    pod_sets = tuple((p.name, p.count, p.min_count, msgspec.json.encode(p.template.spec),
                      msgspec.json.encode(p.topology_request)) for p in entry.workload.spec.pod_sets)
    return entry.priority, pod_sets, requests


@dataclass
class EquivalentQueues(Queues):
    """:class:`Queues` with Kueue's equivalence hashing and cohort-scoped requeueing."""

    set_aside_hashes: dict[str, set[int]] = field(default_factory=dict)  # ClusterQueue → numbered hashes
    # id(entry) → (the entry, kept so that its id is not reused while it is known; its hash's number)
    hashes: dict[int, tuple[Entry, int]] = field(default_factory=dict)
    # each distinct hash numbered once: a nested tuple's hash is computed anew at every set lookup
    numbers: dict[SchedulingHash, int] = field(default_factory=dict)

    def _hash(self, entry: Entry) -> int:
        found = self.hashes.get(id(entry))
        if found is None:
            full = scheduling_hash(entry)
            found = self.hashes[id(entry)] = (entry, self.numbers.setdefault(full, len(self.numbers)))
        return found[1]

    def push(self, entry: Entry) -> None:
        hashes = self.set_aside_hashes.get(entry.cluster_queue)
        if hashes and self._best_effort(entry.cluster_queue) and self._hash(entry) in hashes:
            self.inadmissible.setdefault(entry.cluster_queue, []).append(entry)
            return
        super().push(entry)

    def forget(self, entry: Entry) -> None:
        """The Workload left the queues for good (admitted and later finished, or deleted)."""
        self.hashes.pop(id(entry), None)

    def settle(self, result: CycleResult) -> None:
        super().settle(result)
        for pending in result.pending:
            cq = pending.entry.cluster_queue
            if pending.retry_now or not self._best_effort(cq) or cq not in self.strategies:
                continue
            self.set_aside_hashes.setdefault(cq, set()).add(self._hash(pending.entry))

    def heads(self) -> list[Entry]:
        """The heads, past the Workloads whose hash was set aside: those join the inadmissible ones here,
        when they reach the front (the same order and outcome as moving them all at once, without a
        pass over the whole queue at each set-aside head)."""
        heads = []
        known = self.hashes
        for name, queue in sorted(self.pending.items()):
            aside = self.set_aside_hashes.get(name)
            if aside:
                front, size = 0, len(queue)
                while front < size:
                    found = known.get(id(queue[front]))
                    if (found[1] if found is not None else self._hash(queue[front])) not in aside:
                        break
                    front += 1
                if front:
                    self.inadmissible.setdefault(name, []).extend(queue[:front])
                    del queue[:front]
            if queue:
                heads.append(self._head(name, queue))  # the base rule: a waiting preemptor stays the head
        return heads

    def requeue_inadmissible(self) -> None:
        self.requeue_cluster_queues(list(self.strategies))

    def requeue_cluster_queues(self, names: Iterable[str]) -> None:
        """queueInadmissibleWorkloads for each of ``names``: back to the queue, the hashes forgotten."""
        for name in names:
            self.set_aside_hashes.pop(name, None)
            entries = self.inadmissible.pop(name, [])
            if entries:
                queue = self.pending.setdefault(name, [])
                queue += entries
                queue.sort(key=ORDER)  # stable: as if pushed one by one

    def _best_effort(self, cq: str) -> bool:
        return self.strategies.get(cq, BEST_EFFORT_FIFO) == BEST_EFFORT_FIFO

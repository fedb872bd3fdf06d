"""The scheduling loop: pop the next pod, run one scheduling cycle, bind it or record why not.

One cycle follows kube-scheduler: PreFilter; Filter on nodes taken round-robin from where the last
cycle stopped, until enough feasible nodes are found (percentageOfNodesToScore); PostFilter
(preemption) when none is; Score and pick the best node (ties broken by the seeded random source);
Reserve and bind. The first filter that says no decides a node's reason, as upstream's filter loop
stops at the first failure. Policy lives in the plugins; this module only sequences them.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

import msgspec

from dratwin.api.core import Pod
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.cluster.state import ClusterState
from dratwin.scheduler.framework import (
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    ScorePlugin,
    Status,
)
from dratwin.scheduler.node_selection import num_feasible_nodes_to_find, pick_tied
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources, ExtendedRequest
from dratwin.scheduler.preemption import (
    counted_fit_error_message,
    fit_error_message,
    no_victims_message,
    preempt_or_explain,
)

SHAPE_KEY = "PodShape"
_UNSCORED = -1  # a slot's row of raw scores before the node is scored


@dataclass(slots=True)
class _ShapeTable:
    """One pod shape's filter outcomes (and raw scores, once scored), one slot per node position.

    A slot is valid until its node changes (the cluster's node journal names it) or the cluster-wide DRA
    version moves on: outcomes are pure functions of those. The feasible positions are kept sorted, so a
    cycle takes the feasible nodes among the valid slots by bisection, and only the out-of-date slots are
    filtered again, one by one: a retry costs what changed since the shape was last evaluated, not a pass
    over every node."""

    dra_global: int
    seen: int  # how many journal entries are taken into account
    stale: set[int]  # positions whose outcome is out of date (or was never computed)
    ok: list[bool]
    feasible: list[int]  # the positions whose (possibly out-of-date) outcome is ok, ascending
    statuses: list[Status | None]
    rows: list[int]  # the number of each node's row of raw scores (Scheduler._row_id), once scored
    # How many slots hold each list of reasons, and how many an Unschedulable status: a failed cycle's
    # message and preemption summary without a pass over thousands of nodes.
    reason_lists: Counter[tuple[str, ...]]
    unschedulable: int = 0
    # Whether a failed cycle's diagnosis holds ``statuses`` as it was: the next store copies it first, so a
    # failed cycle costs no copy of thousands of slots, and a retry with no node changed none at all.
    lent: bool = False
    # The last failed cycle of this shape, with the cluster's stamp (``Scheduler._stamp``) it met. While the
    # stamp has not moved on, nothing the filters or the dry run read has changed: a pod of this shape fails
    # again with the same diagnosis, and the round-robin start does not move (a failed cycle walks every node).
    failure: tuple[tuple[int, int], str, Diagnosis] | None = None

    @classmethod
    def empty(cls, count: int, dra_global: int, seen: int) -> _ShapeTable:
        return cls(dra_global, seen, set(range(count)), [False] * count, [], [None] * count,
                   [_UNSCORED] * count, Counter())

    def out_of_date(self, journal: list[NodeInfo], positions: dict[int, int], dra_global: int, start: int,
                    count: int) -> list[int]:
        """The positions to filter again, in the order a cycle starting at ``start`` walks them."""
        if dra_global != self.dra_global:
            self.dra_global = dra_global
            self.stale = set(range(count))
        elif len(journal) > self.seen:
            changed = (positions.get(id(node)) for node in journal[self.seen :])
            self.stale.update(p for p in changed if p is not None)
        self.seen = len(journal)
        ordered = sorted(self.stale)
        cut = bisect_left(ordered, start)
        return ordered[cut:] + ordered[:cut]

    def feasible_between(self, low: int, high: int, limit: int) -> list[int]:
        """At most ``limit`` feasible positions in ``[low, high)``, ascending."""
        feasible = self.feasible
        first = bisect_left(feasible, low)
        return feasible[first:min(bisect_left(feasible, high, first), first + limit)]

    def lend_statuses(self) -> list[Status | None]:
        """The statuses as they are now, for a diagnosis to read later (copied on the next store)."""
        self.lent = True
        return self.statuses

    def store(self, position: int, status: Status) -> None:
        self.stale.discard(position)
        if self.lent:
            self.statuses, self.lent = self.statuses.copy(), False
        old = self.statuses[position]
        if old is not None:
            self.reason_lists[old.reasons] -= 1
            self.unschedulable -= old.code is Code.UNSCHEDULABLE
        self.reason_lists[status.reasons] += 1
        self.unschedulable += status.code is Code.UNSCHEDULABLE
        if status.ok != self.ok[position]:
            if status.ok:
                insort(self.feasible, position)
            else:
                del self.feasible[bisect_left(self.feasible, position)]
        self.ok[position] = status.ok
        self.statuses[position] = status
        self.rows[position] = _UNSCORED


@dataclass
class Profile:
    """The plugins of one scheduler profile, in the order each extension point runs them."""

    pre_filters: list[PreFilterPlugin]
    filters: list[FilterPlugin]
    scores: list[ScorePlugin]
    dra: DynamicResources
    percentage_of_nodes_to_score: int = 0


@dataclass
class Diagnosis:
    """Why a pod did not fit: the PreFilter "no", or each rejected node's status."""

    num_nodes: int
    pre_filter: Status | None = None
    post_filter: str = ""
    # The statuses of ``nodes`` counted by list of reasons, and the Unschedulable ones (when known).
    reason_lists: Counter[tuple[str, ...]] | None = None
    unschedulable_nodes: int = 0
    # The rejected nodes' names and statuses in walk order, made into ``nodes`` only when read: a failed
    # cycle's message needs only the counts, and thousands of nodes make the dict cost more than the cycle.
    walk: tuple[int, list[str], list[Status | None]] | None = None  # the walk's start, names, statuses
    _nodes: dict[str, Status] | None = None

    @property
    def nodes(self) -> dict[str, Status]:
        if self._nodes is None:
            self._nodes = {}
            if self.walk is not None:
                start, names, statuses = self.walk
                in_order = zip(names[start:] + names[:start], statuses[start:] + statuses[:start], strict=True)
                self._nodes.update((n, s) for n, s in in_order if s is not None)
                self.walk = None
        return self._nodes

    def message(self) -> str:
        """kube-scheduler's FailedScheduling text: ``0/N nodes are available: ...``."""
        pre_filter = "; ".join(self.pre_filter.reasons) if self.pre_filter is not None else ""
        if self.reason_lists is not None and self.pre_filter is None:
            return counted_fit_error_message(self.num_nodes, self.reason_lists, post_filter_msg=self.post_filter)
        return fit_error_message(
            self.num_nodes, self.nodes, pre_filter_msg=pre_filter, post_filter_msg=self.post_filter
        )


@dataclass
class Attempt:
    """The result of scheduling one pod."""

    pod: str
    node: str | None = None
    message: str = ""
    diagnosis: Diagnosis | None = None
    allocations: dict[str, AllocationResult] = field(default_factory=dict)
    victims: list[str] = field(default_factory=list)
    nominated_node: str = ""
    error: str = ""

    @property
    def scheduled(self) -> bool:
        return self.node is not None


class Scheduler:
    """Schedules the pending pods of a ClusterState with one profile; see the module docstring."""

    def __init__(self, cluster: ClusterState, profile: Profile, rng: random.Random, binder: Binder) -> None:
        self.cluster = cluster
        self.profile = profile
        self.rng = rng
        self.binder = binder
        self.next_start_node = 0
        self.node_order = _zone_round_robin(list(cluster.nodes.values()))
        # Filter statuses and raw scores per pod shape and node position, valid until the node changes (the
        # cluster's node journal says which did) or the cluster-wide DRA version moves on: they are pure
        # functions of those, and the pods of one template share a shape.
        self._tables: dict[Any, _ShapeTable] = {}
        self._journal = cluster.node_journal
        assert all(n.journal is self._journal for n in self.node_order), "a node outside the cluster's journal"
        self._position_of = {id(n): i for i, n in enumerate(self.node_order)}
        self._names = [n.name for n in self.node_order]
        # Each distinct row of raw scores (one per score plugin) gets a number: a shape's table keeps the
        # number per node, and a cycle scores its distinct rows, not its hundreds of nodes.
        self._rows: dict[tuple[int, ...], int] = {}
        self._row_values: list[tuple[int, ...]] = []
        self._spec_keys: dict[str, bytes] = {}
        # Each pending pod's shape as its last cycle found it, with the pod object it read (``known_failure``).
        self._shape_of: dict[str, tuple[Pod, Any]] = {}
        # One object per distinct shape: the pods of a template encode equal specs, and a look-up by an equal
        # shape compares their bytes, by the same one only its identity (a month's retries look up millions).
        self._shapes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        # The lowest priority of a pod on each node, how many nodes have each, and the journal length seen.
        self._node_lowest: list[int | None] | None = None
        self._lowest_counts: Counter[int] = Counter()
        self._lowest_seen = -1

    def run(self, pods: Sequence[PodInfo], until: str | None = None) -> list[Attempt]:
        """Schedule ``pods`` in queue order (priority, then creation order); a preemptor is retried once
        its victims are gone. Returns the final attempt of every pod that was tried. With ``until``, stop
        right after that pod's last attempt, so that the state is the one it met."""
        queue = [(-p.priority, p.order, p.key) for p in pods]
        heapq.heapify(queue)
        infos = {p.key: p for p in pods}
        final: dict[str, Attempt] = {}
        retried: set[str] = set()
        while queue:
            _, _, key = heapq.heappop(queue)
            attempt = self.schedule_one(infos[key])
            final[key] = attempt
            if attempt.victims and key not in retried:
                retried.add(key)
                heapq.heappush(queue, (-infos[key].priority, infos[key].order, key))
            elif key == until:
                break
        return [final[p.key] for p in pods if p.key in final]

    def schedule_one(self, pod: PodInfo) -> Attempt:
        state = CycleState()
        nodes = self.node_order
        diagnosis = Diagnosis(len(nodes))
        for plugin in self.profile.pre_filters:
            status = plugin.pre_filter(state, pod, nodes)
            if status.code is Code.ERROR:
                return Attempt(pod.key, error=status.reasons[0], message=status.reasons[0])
            if not status.ok:
                diagnosis.pre_filter = status.with_plugin(plugin.name)
                return self._post_filter(state, pod, diagnosis)  # PostFilter runs after any fit error
        shape = state[SHAPE_KEY] = self._shape(state, pod)
        self._shape_of[pod.key] = (pod.pod, shape)
        known = self._tables.get(shape)
        if known is not None and known.failure is not None and known.failure[0] == self._stamp():
            _, message, last = known.failure
            return Attempt(pod.key, message=message, diagnosis=last)
        feasible, failure = self._find_feasible(state, pod, nodes, diagnosis)
        if failure is not None:
            return Attempt(pod.key, error=failure.reasons[0], message=failure.reasons[0])
        if not feasible:
            attempt = self._post_filter(state, pod, diagnosis)
            table = self._tables.get(shape)  # none without nodes
            if table is not None and not attempt.victims:  # evictions changed the cluster: nothing to reuse
                table.failure = (self._stamp(), attempt.message, diagnosis)
            return attempt
        chosen = nodes[feasible[0]].name if len(feasible) == 1 else self._select(state, pod, feasible)
        dra = self.profile.dra
        dra.filter(state, pod, self.cluster.nodes[chosen])  # its outcome for the chosen node (cached: cheap)
        allocations = dra.reserve(state, pod, chosen)
        special = dra.extended_claim(state, chosen)
        if special is not None:
            self.binder.create_extended_claim(pod, special, dra.extended_requests(state))
        self.binder.bind(pod, chosen, allocations, dra.claims_to_reserve(state, chosen))
        self._spec_keys.pop(pod.key, None)  # a bound pod is not scheduled again: its key would only be kept
        self._shape_of.pop(pod.key, None)
        dra.forget(pod.key)
        return Attempt(pod.key, node=chosen, allocations=allocations)

    def known_failure(self, pod: PodInfo) -> Attempt | None:
        """The attempt ``schedule_one`` would return for a pod that fails as its shape last failed, found
        without running the cycle; None when that is not certain. It is certain when the pod object and
        the claims its PreFilter read are the ones its last cycle met (the PreFilters are pure functions
        of them, so the shape is the same) and that shape's failed cycle has the cluster's current stamp."""
        failure = self.certain_failure(pod)
        if failure is None:
            return None
        _, message, last = failure
        return Attempt(pod.key, message=message, diagnosis=last)

    def certain_failure(self, pod: PodInfo) -> tuple[tuple[int, int], str, Diagnosis] | None:
        """The stamped failed cycle (stamp, message, diagnosis) the pod would meet again (``known_failure``),
        without an Attempt made for it: a caller that needs only the message reads it from here."""
        failures = self.leading_certain_failures([pod])
        return failures[0] if failures else None

    def shape_seen(self, pod: PodInfo) -> Any | None:
        """The shape the pod's last cycle found for it, while the pod object is the one that cycle met: the key
        of the verdict its retries take (``failure_stands``); None for a pod not seen as it is."""
        seen = self._shape_of.get(pod.key)
        return seen[1] if seen is not None and seen[0] is pod.pod else None

    def failure_stands(self, shape: Any, message: str) -> bool:
        """The shape's failed cycle has the cluster's current stamp and says ``message``: a pod of that shape
        whose PreFilters would read what they last read fails the same way (``leading_certain_failures``)."""
        known = self._tables.get(shape)
        failure = known.failure if known is not None else None
        return failure is not None and failure[0] == self._stamp() and failure[1] == message

    def leading_certain_failures(self, pods: Sequence[PodInfo]) -> list[tuple[tuple[int, int], str, Diagnosis]]:
        """``certain_failure`` for pods tried one after another while the cluster does not change (their
        cycles would fail and change nothing): the failures of the leading pods whose failure is certain, up
        to the first that is not. The stamp is read once and each shape's verdict once."""
        stamp, shape_of, tables = self._stamp(), self._shape_of, self._tables
        verdicts: dict[int, tuple[tuple[int, int], str, Diagnosis] | None] = {}
        failures: list[tuple[tuple[int, int], str, Diagnosis]] = []
        for pod in pods:
            seen = shape_of.get(pod.key)
            if seen is None or seen[0] is not pod.pod:
                break
            shape = seen[1]
            if id(shape) in verdicts:  # shapes are one object each (``_shape``): an int's look-up, no bytes
                failure = verdicts[id(shape)]
            else:
                known = tables.get(shape)
                failure = known.failure if known is not None else None
                failure = verdicts[id(shape)] = failure if failure is not None and failure[0] == stamp else None
            if failure is None:
                break
            failures.append(failure)
        if failures:
            del failures[self.profile.dra.pre_filters_unchanged(pods[: len(failures)]) :]
        return failures

    def _stamp(self) -> tuple[int, int]:
        """Where the cluster stands for the filters: every change of a node (pods, devices, taints) adds a
        journal entry, and devices not bound to a node move the global DRA version."""
        return len(self._journal), self.cluster.dra_global_version

    # ---- phases ------------------------------------------------------------------------------------

    def _find_feasible(
        self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis
    ) -> tuple[list[int], Status | None]:
        """Filter nodes from where the last cycle stopped until enough are feasible; their positions.

        Only the nodes whose cached outcome for this pod shape is out of date are filtered again, when the
        walk reaches them (so an error or a cost is met exactly where upstream's loop would meet it); the
        runs of valid outcomes between them are taken in C. The rejected nodes' statuses go into
        ``diagnosis`` only when no node is feasible: otherwise nothing reads them."""
        count = len(nodes)
        if not count:
            return [], None
        wanted = num_feasible_nodes_to_find(count, self.profile.percentage_of_nodes_to_score)
        table = self._tables.get(state[SHAPE_KEY])
        if table is None:
            dra_global = self.cluster.dra_global_version
            table = self._tables[state[SHAPE_KEY]] = _ShapeTable.empty(count, dra_global, len(self._journal))
        start = self.next_start_node
        feasible: list[int] = []
        checked, done = count, 0
        stale = table.out_of_date(self._journal, self._position_of, self.cluster.dra_global_version, start, count)
        for position in [*stale, None]:
            end = count if position is None else (position - start) % count
            feasible += _feasible_in_walk(table, start, count, done, end, wanted - len(feasible))
            if len(feasible) >= wanted:
                checked = (feasible[-1] - start) % count + 1
                break
            if position is None:
                break
            node = nodes[position]
            status = self._run_filters(state, pod, node)
            if status.code is Code.ERROR:
                return [], status
            table.store(position, status)
            done = end + 1
            if status.ok:
                feasible.append(position)
                if len(feasible) >= wanted:
                    checked = done
                    break
        self.next_start_node = (start + checked) % count
        if not feasible:
            # In walk order (from ``start``), as upstream records them; slots never filtered (None) are
            # left out, and the counts count only the filtered ones. The statuses as they are now: the
            # table changes with later cycles.
            diagnosis.walk = (start, self._names, table.lend_statuses())
            diagnosis.reason_lists, diagnosis.unschedulable_nodes = +table.reason_lists, table.unschedulable
        return feasible, None

    def _shape(self, state: CycleState, pod: PodInfo) -> tuple[Any, ...]:
        """What the filters and scores read of a pod: its spec and the specs of its claims."""
        spec = self._spec_keys.get(pod.key)
        if spec is None:
            spec = msgspec.json.encode(pod.pod.spec)
            self._spec_keys[pod.key] = spec
        shape = (spec, self.profile.dra.shape(state))
        return self._shapes.setdefault(shape, shape)

    def _run_filters(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        for plugin in self.profile.filters:
            status = plugin.filter(state, pod, node)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return Status()

    def _select(self, state: CycleState, pod: PodInfo, feasible: list[int]) -> str:
        """Score, normalize and pick as kube-scheduler does, computed once per distinct row of raw scores:
        normalizing reads only the values (and their highest), so nodes with equal raw scores get equal
        totals, and hundreds of nodes usually share two or three rows."""
        nodes = self.node_order
        table = self._tables[state[SHAPE_KEY]]
        ids = list(map(table.rows.__getitem__, feasible))
        i = -1
        while _UNSCORED in ids:  # usually one: the node the last pod went to (found by C searches, not a loop)
            i = ids.index(_UNSCORED, i + 1)
            position = feasible[i]
            node = nodes[position]
            self.profile.dra.filter(state, pod, node)  # the DRA score reads this outcome
            ids[i] = table.rows[position] = self._row_id(tuple(p.score(state, pod, node) for p in self.profile.scores))
        distinct = sorted(set(ids))
        if len(distinct) == 1:
            return nodes[feasible[pick_tied(len(feasible), self.rng)]].name  # every node scores the same
        totals = dict.fromkeys(distinct, 0)
        for column_index, plugin in enumerate(self.profile.scores):
            column = {row: self._row_values[row][column_index] for row in distinct}
            values = list(column.values())
            if values.count(values[0]) == len(values):
                continue  # equal raw scores normalize to equal scores: they cannot change the choice
            if getattr(plugin, "normalizes", True):
                labelled = {str(row): value for row, value in column.items()}
                plugin.normalize(state, pod, labelled)
                column = {row: labelled[str(row)] for row in distinct}
            for row in distinct:
                totals[row] += column[row] * plugin.weight
        best = max(totals.values())
        winners = {row for row, total in totals.items() if total == best}
        tied = list(compress(feasible, map(winners.__contains__, ids)))
        return nodes[tied[pick_tied(len(tied), self.rng)]].name

    def _row_id(self, scores: tuple[int, ...]) -> int:
        row = self._rows.get(scores)
        if row is None:
            row = self._rows[scores] = len(self._row_values)
            self._row_values.append(scores)
        return row

    def _post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> Attempt:
        nodes = self.node_order

        def fits(p: PodInfo, n: NodeInfo) -> Status:
            return self._run_filters(state, p, n)

        if diagnosis.reason_lists is not None and not self._holds_lower_priority(pod.priority) and \
                pod.pod.spec.preemption_policy != "Never":
            # No pod anywhere could be a victim: the dry run's answer, from the counts.
            result, preemption = None, no_victims_message(len(nodes), diagnosis.unschedulable_nodes)
        else:
            # After a PreFilter "no", every node carries that unresolvable status.
            statuses = (
                diagnosis.nodes
                if diagnosis.pre_filter is None
                else dict.fromkeys((n.name for n in nodes), diagnosis.pre_filter)
            )
            result, preemption = preempt_or_explain(pod, nodes, statuses, fits)
        if result is None:
            # Every PostFilter plugin that says no adds its reason: DynamicResources first, then preemption,
            # except that a pod that may not preempt ends the chain with preemption's unresolvable answer.
            if pod.pod.spec.preemption_policy == "Never":
                diagnosis.post_filter = preemption
            else:
                reasons = [self.profile.dra.post_filter_message(state), preemption]
                diagnosis.post_filter = ", ".join(r for r in reasons if r)
            return self._unschedulable(pod, diagnosis)
        victims = [v.key for v in result.victims]
        self.binder.evict(result.victims, preemptor=pod)
        attempt = self._unschedulable(pod, diagnosis)
        attempt.victims = victims
        attempt.nominated_node = result.node_name
        return attempt

    def _holds_lower_priority(self, priority: int) -> bool:
        """Whether some pod on a node has a priority below ``priority`` (the lowest found again only after
        a node changed)."""
        journal = self._journal
        if self._lowest_seen != len(journal):
            if self._node_lowest is None:
                self._node_lowest = [min((p.priority for p in n.pods), default=None) for n in self.node_order]
                self._lowest_counts = Counter(v for v in self._node_lowest if v is not None)
            else:  # only the nodes that changed since
                changed = {self._position_of.get(id(node)) for node in journal[self._lowest_seen:]}
                for position in changed:
                    if position is None:
                        continue
                    before = self._node_lowest[position]
                    after = min((p.priority for p in self.node_order[position].pods), default=None)
                    if before is not None:
                        self._lowest_counts[before] -= 1
                        if not self._lowest_counts[before]:
                            del self._lowest_counts[before]
                    if after is not None:
                        self._lowest_counts[after] += 1
                    self._node_lowest[position] = after
            self._lowest_seen = len(journal)
        return any(value < priority for value in self._lowest_counts)

    def _unschedulable(self, pod: PodInfo, diagnosis: Diagnosis) -> Attempt:
        return Attempt(pod.key, message=diagnosis.message(), diagnosis=diagnosis)


class Binder:
    """Applies decisions to the cluster state: what kube-scheduler's Bind and the DRA PreBind write."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster

    def bind(self, pod: PodInfo, node: str, allocations: dict[str, AllocationResult], claims: list[str]) -> None:
        raise NotImplementedError

    def evict(self, victims: Sequence[PodInfo], preemptor: PodInfo) -> None:
        raise NotImplementedError

    def create_extended_claim(self, pod: PodInfo, claim: ResourceClaim, requests: Sequence[ExtendedRequest]) -> None:
        raise NotImplementedError


def _feasible_in_walk(table: _ShapeTable, start: int, count: int, low: int, high: int, limit: int) -> list[int]:
    """At most ``limit`` feasible positions among walk steps ``[low, high)`` of a walk from ``start``, in walk
    order: the walk wraps around past the last position."""
    if limit <= 0 or low >= high:
        return []
    first, last = start + low, start + high
    if last <= count:
        return table.feasible_between(first, last, limit)
    if first >= count:
        return table.feasible_between(first - count, last - count, limit)
    taken = table.feasible_between(first, count, limit)
    if len(taken) < limit:
        taken += table.feasible_between(0, last - count, limit - len(taken))
    return taken


def _zone_round_robin(nodes: list[NodeInfo]) -> list[NodeInfo]:
    """kube-scheduler's node tree order: one node from each zone in turn."""
    zones: dict[str, list[NodeInfo]] = {}
    for node in nodes:
        labels = node.node.metadata.labels
        zone = (
            labels.get("topology.kubernetes.io/region", "") + ":\x00:" + labels.get("topology.kubernetes.io/zone", "")
        )
        zones.setdefault(zone, []).append(node)
    ordered: list[NodeInfo] = []
    lists = list(zones.values())
    for index in range(max((len(z) for z in lists), default=0)):
        ordered.extend(z[index] for z in lists if index < len(z))
    return ordered

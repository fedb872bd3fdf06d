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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

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
from dratwin.scheduler.node_selection import num_feasible_nodes_to_find, select_host
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources, ExtendedRequest
from dratwin.scheduler.preemption import find_preemption, fit_error_message, preemption_message

SHAPE_KEY = "PodShape"


@dataclass(slots=True)
class _Entry:
    """One node's cached filter status (and raw scores, once scored) for one pod shape."""

    generation: int
    dra_global: int
    ok: bool
    status: Status
    scores: tuple[int, ...] | None = None


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
    nodes: dict[str, Status] = field(default_factory=dict)
    post_filter: str = ""

    def message(self) -> str:
        """kube-scheduler's FailedScheduling text: ``0/N nodes are available: ...``."""
        pre_filter = "; ".join(self.pre_filter.reasons) if self.pre_filter is not None else ""
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
        # Filter statuses and raw scores per pod shape and node position, valid while the node's
        # generation and the cluster-wide DRA version stay the same: they are pure functions of those,
        # and the pods of one template share a shape.
        self._entries: dict[Any, list[_Entry | None]] = {}
        self._spec_keys: dict[str, bytes] = {}

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
        state[SHAPE_KEY] = self._shape(state, pod)
        feasible, failure = self._find_feasible(state, pod, nodes, diagnosis)
        if failure is not None:
            return Attempt(pod.key, error=failure.reasons[0], message=failure.reasons[0])
        if not feasible:
            return self._post_filter(state, pod, diagnosis)
        chosen = nodes[feasible[0]].name if len(feasible) == 1 else self._select(state, pod, feasible)
        dra = self.profile.dra
        dra.filter(state, pod, self.cluster.nodes[chosen])  # its outcome for the chosen node (cached: cheap)
        allocations = dra.reserve(state, pod, chosen)
        special = dra.extended_claim(state, chosen)
        if special is not None:
            self.binder.create_extended_claim(pod, special, dra.extended_requests(state))
        self.binder.bind(pod, chosen, allocations, dra.claims_to_reserve(state, chosen))
        return Attempt(pod.key, node=chosen, allocations=allocations)

    # ---- phases ------------------------------------------------------------------------------------

    def _find_feasible(
        self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis
    ) -> tuple[list[int], Status | None]:
        """Filter nodes from where the last cycle stopped until enough are feasible; their positions.

        This loop runs for hundreds of nodes per pod, so it is written for speed: a node's status is
        cached per pod shape and reused while the node's generation (bumped by pods and by its devices
        changing hands) and the cluster-wide DRA version stay the same."""
        wanted = num_feasible_nodes_to_find(len(nodes), self.profile.percentage_of_nodes_to_score)
        feasible: list[int] = []
        count = len(nodes)
        entries = self._entries.get(state[SHAPE_KEY])
        if entries is None:
            entries = self._entries[state[SHAPE_KEY]] = [None] * count
        dra_global = self.cluster.dra_global_version
        start, checked = self.next_start_node, 0
        for offset in range(count):
            if len(feasible) >= wanted:
                break
            index = (start + offset) % count
            node = nodes[index]
            checked += 1
            entry = entries[index]
            if entry is None or entry.generation != node.generation or entry.dra_global != dra_global:
                status = self._run_filters(state, pod, node)
                if status.code is Code.ERROR:
                    return [], status
                entry = entries[index] = _Entry(node.generation, dra_global, status.ok, status)
            if entry.ok:
                feasible.append(index)
            else:
                diagnosis.nodes[node.name] = entry.status
        if count:
            self.next_start_node = (start + checked) % count
        return feasible, None

    def _shape(self, state: CycleState, pod: PodInfo) -> tuple[Any, ...]:
        """What the filters and scores read of a pod: its spec and the specs of its claims."""
        spec = self._spec_keys.get(pod.key)
        if spec is None:
            spec = msgspec.json.encode(pod.pod.spec)
            self._spec_keys[pod.key] = spec
        return (spec, self.profile.dra.shape(state))

    def _run_filters(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        for plugin in self.profile.filters:
            status = plugin.filter(state, pod, node)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return Status()

    def _select(self, state: CycleState, pod: PodInfo, feasible: list[int]) -> str:
        nodes = self.node_order
        entries = self._entries[state[SHAPE_KEY]]
        raw = []
        for index in feasible:
            entry = entries[index]
            assert entry is not None
            if entry.scores is None:
                self.profile.dra.filter(state, pod, nodes[index])  # the DRA score reads this outcome
                entry.scores = tuple(plugin.score(state, pod, nodes[index]) for plugin in self.profile.scores)
            raw.append(entry.scores)
        totals = [0] * len(feasible)
        for column_index, plugin in enumerate(self.profile.scores):
            column = [scores[column_index] for scores in raw]
            if min(column) == max(column):
                continue  # equal raw scores normalize to equal scores: they cannot change the choice
            if getattr(plugin, "normalizes", True):
                named = {nodes[index].name: column[i] for i, index in enumerate(feasible)}
                plugin.normalize(state, pod, named)
                column = [named[nodes[index].name] for index in feasible]
            weight = plugin.weight
            totals = [total + value * weight for total, value in zip(totals, column, strict=True)]
        return select_host([(nodes[index].name, totals[i]) for i, index in enumerate(feasible)], self.rng)

    def _post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> Attempt:
        nodes = self.node_order
        # After a PreFilter "no", every node carries that unresolvable status.
        statuses = (
            diagnosis.nodes
            if diagnosis.pre_filter is None
            else dict.fromkeys((n.name for n in nodes), diagnosis.pre_filter)
        )

        def fits(p: PodInfo, n: NodeInfo) -> Status:
            return self._run_filters(state, p, n)

        result = find_preemption(pod, nodes, statuses, fits)
        if result is None:
            # Every PostFilter plugin that says no adds its reason: DynamicResources first, then preemption,
            # except that a pod that may not preempt ends the chain with preemption's unresolvable answer.
            preemption = preemption_message(pod, nodes, statuses, fits)
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

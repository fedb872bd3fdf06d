"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be?

Filter (upstream ``fitsRequest``): the pod count against allocatable ``pods``, then cpu, memory,
ephemeral-storage and every scalar resource the pod requests, each against ``allocatable - requested``
on the node. Every shortfall is reported, in that order (scalar resources by name). The status is
Unschedulable, so preemption may help, unless the pod asks for more of some resource than the whole
node offers: then it is UnschedulableAndUnresolvable (upstream since 1.34), because no eviction can
make room. A resource the node does not list at all is simply 0 there.

With the DRA extended-resource feature, an extended resource backed by a DeviceClass is checked by the
DRA plugin instead of here when the node does not advertise it; pass those names as
``dra_extended_resources``.

Score (upstream ``resourceAllocationScorer``): LeastAllocated (default) or MostAllocated over the
configured resources (cpu and memory, weight 1 each), using the *non-zero* requests for cpu and memory
(:func:`~dratwin.scheduler.resources.pod_requests_for_scoring`), so that pods without requests still
spread. Scores are already 0..100; ``normalize`` leaves them alone.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dratwin.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    Resources,
    Status,
    unresolvable,
    unschedulable,
)
from dratwin.scheduler.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource_name,
    is_scalar_resource_name,
    pod_requests_for_scoring,
)

ERR_REASON_TOO_MANY_PODS = "Too many pods"

_PRE_SCORE_KEY = "PreScoreNodeResourcesFit"


class ScoringStrategy(enum.Enum):
    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"


DEFAULT_SCORING_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


@dataclass(frozen=True)
class InsufficientResource:
    """One shortfall: the pod asked for ``requested``, the node has ``used`` of ``capacity`` booked."""

    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool  # the request exceeds the whole node: no eviction can help


def fits_request(
    requests: Resources,
    node: NodeInfo,
    ignored_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
    dra_extended_resources: Collection[str] = (),
) -> list[InsufficientResource]:
    """Every resource the node is short of for these pod requests (empty: it fits)."""
    short: list[InsufficientResource] = []
    allowed_pods = node.allocatable.get(PODS, 0)
    if len(node.pods) + 1 > allowed_pods:
        short.append(InsufficientResource(PODS, ERR_REASON_TOO_MANY_PODS, 1, len(node.pods), allowed_pods, False))
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        _check(short, name, requests.get(name, 0), node)
    for name in sorted(requests):
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or not is_scalar_resource_name(name):
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or name.split("/", 1)[0] in ignored_resource_groups
        ):
            continue
        if name in dra_extended_resources and node.allocatable.get(name, 0) <= 0:
            continue  # the DRA plugin checks it against devices
        _check(short, name, requests[name], node)
    return short


def _check(short: list[InsufficientResource], name: str, wanted: int, node: NodeInfo) -> None:
    if wanted <= 0:
        return
    capacity = node.allocatable.get(name, 0)
    used = node.requested.get(name, 0)
    if wanted > capacity - used:
        short.append(InsufficientResource(name, insufficient_reason(name), wanted, used, capacity, wanted > capacity))


def least_requested_score(requested: int, capacity: int) -> int:
    """Free share in 0..100: ``(capacity - requested) * 100 // capacity``; 0 when over capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """Used share in 0..100; a request above capacity (possible with the non-zero defaults) counts as full."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


class NodeResourcesFit:
    """Filter on requests vs. allocatable; score LeastAllocated or MostAllocated (weight 1)."""

    name = "NodeResourcesFit"
    normalizes = False  # its scores are 0..100 already

    def __init__(
        self,
        strategy: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED,
        resources: Sequence[tuple[str, int]] = DEFAULT_SCORING_RESOURCES,
        weight: int = 1,
        ignored_resources: Collection[str] = frozenset(),
        ignored_resource_groups: Collection[str] = frozenset(),
        dra_extended_resources: Collection[str] = frozenset(),
    ) -> None:
        if not resources or any(w <= 0 for _, w in resources):
            raise ValueError(f"NodeResourcesFit: scoring resources need positive weights, got {list(resources)}")
        self.strategy = strategy
        self.resources = tuple(resources)
        self.weight = weight
        self.ignored_resources = frozenset(ignored_resources)
        self.ignored_resource_groups = frozenset(ignored_resource_groups)
        self.dra_extended_resources = frozenset(dra_extended_resources)
        self._resource_score = (
            least_requested_score if strategy is ScoringStrategy.LEAST_ALLOCATED else most_requested_score
        )

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        short = fits_request(
            pod.requests, node, self.ignored_resources, self.ignored_resource_groups, self.dra_extended_resources
        )
        if not short:
            return SUCCESS
        reasons = [s.reason for s in short]
        if any(s.unresolvable for s in short):
            return unresolvable(*reasons, details=tuple(short))
        return unschedulable(*reasons, details=tuple(short))

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        requests = pod.scoring_requests or state.get(_PRE_SCORE_KEY)
        if requests is None:
            requests = pod_requests_for_scoring(pod.pod)
            state[_PRE_SCORE_KEY] = requests
        node_score = 0
        weight_sum = 0
        for name, weight in self.resources:
            capacity, requested = self._allocatable_and_requested(state, node, name, requests.get(name, 0))
            if capacity == 0:
                continue  # not offered by the node (or not requested, for scalar resources)
            node_score += self._resource_score(requested, capacity) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        """Scores are 0..100 already (upstream has no ScoreExtensions for this plugin)."""

    def _allocatable_and_requested(self, state: CycleState, node: NodeInfo, name: str, wanted: int) -> tuple[int, int]:
        if wanted == 0 and is_scalar_resource_name(name):
            return 0, 0  # a scalar resource the pod does not request does not affect its score
        if name in (CPU, MEMORY):
            return node.allocatable.get(name, 0), node.non_zero_requested.get(name, 0) + wanted
        if name == EPHEMERAL_STORAGE or (is_scalar_resource_name(name) and name in node.allocatable):
            return node.allocatable.get(name, 0), node.requested.get(name, 0) + wanted
        return 0, 0


__all__ = [
    "DEFAULT_SCORING_RESOURCES",
    "ERR_REASON_TOO_MANY_PODS",
    "InsufficientResource",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "ScoringStrategy",
    "fits_request",
    "insufficient_reason",
    "least_requested_score",
    "most_requested_score",
]


class NodeResourcesBalancedAllocation:
    """Score: prefer nodes whose cpu and memory would be used in similar proportions (weight 1).

    Upstream's ``balancedResourceScorer`` over the pod's actual requests (not the non-zero defaults):
    each resource's fraction of allocatable after placing the pod, capped at 1; the score is
    ``(1 - standard deviation of the fractions) * 100``.
    """

    name = "NodeResourcesBalancedAllocation"
    normalizes = False  # 0..100 already

    def __init__(self, resources: Sequence[str] = (CPU, MEMORY), weight: int = 1) -> None:
        self.resources = tuple(resources)
        self.weight = weight

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        fractions = []
        for name in self.resources:
            capacity = node.allocatable.get(name, 0)
            if capacity <= 0:
                continue
            requested = node.requested.get(name, 0) + pod.requests.get(name, 0)
            fractions.append(min(requested / capacity, 1.0))
        if len(fractions) < 2:
            return MAX_NODE_SCORE
        if len(fractions) == 2:
            deviation = abs(fractions[0] - fractions[1]) / 2
        else:
            mean = sum(fractions) / len(fractions)
            deviation = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        return int((1 - deviation) * MAX_NODE_SCORE)

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        """Scores are 0..100 already."""

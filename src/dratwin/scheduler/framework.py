"""The scheduling framework: statuses, per-node state, the per-cycle state and the plugin protocols.

Mirrors kube-scheduler's framework: a plugin answers a Filter with a ``Status`` (success, or a "no"
with its reasons as data), a Score with an integer, and the framework stamps the plugin name on
every status so that explanations can say which plugin said no.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dratwin.api.core import Node, Pod

MAX_NODE_SCORE = 100


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2  # preemption might help
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3  # preemption cannot help
    SKIP = 4


_SUCCESS, _SKIP = Code.SUCCESS, Code.SKIP


@dataclass(frozen=True, slots=True)
class Status:
    """The answer of one plugin; ``reasons`` are short phrases as kube-scheduler prints them."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    details: Any = None  # plugin-specific data for explanations (e.g. the DRA explanation)

    @property
    def ok(self) -> bool:
        code = self.code  # read for every node of every cycle: module constants, no enum look-ups
        return code is _SUCCESS or code is _SKIP

    @property
    def unresolvable(self) -> bool:
        return self.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin, self.details)


SUCCESS = Status()


def unschedulable(*reasons: str, details: Any = None) -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(reasons), details=details)


def unresolvable(*reasons: str, details: Any = None) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), details=details)


def error(reason: str) -> Status:
    return Status(Code.ERROR, (reason,))


Resources = dict[str, int]
"""Resource amounts as integers: ``cpu`` in millicores, ``memory`` and ``ephemeral-storage`` in bytes,
``pods`` and extended resources (``nvidia.com/gpu``) in units."""


@dataclass(slots=True)
class PodInfo:
    """A pod with what the scheduler derives from it once: its key, priority and resource requests."""

    pod: Pod
    key: str  # namespace/name
    priority: int
    requests: Resources  # effective requests (max of init containers and the sum of containers, plus overhead)
    order: int = 0  # queue order among equal priorities (creation order)
    scoring_requests: Resources = field(default_factory=dict)  # cpu/memory with the non-zero defaults


@dataclass(slots=True)
class NodeInfo:
    """A node and what is bound or assumed on it. ``generation`` changes whenever anything on it does."""

    node: Node
    allocatable: Resources
    requested: Resources = field(default_factory=dict)
    pods: list[PodInfo] = field(default_factory=list)
    generation: int = 0  # moved on by changed() only
    non_zero_requested: Resources = field(default_factory=dict)  # what the resource scores count
    name: str = field(init=False)
    # Where changed() records the node: the journal of the cluster state that holds it, if any.
    journal: list[NodeInfo] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.name = self.node.metadata.name  # read in every filter loop: an attribute, not a property

    def changed(self) -> None:
        """Something booked on the node, or a device it can use, changed hands: a new generation, and an
        entry in the cluster's journal, so that the scheduler finds the nodes whose cached outcomes are out
        of date without comparing every node's generation in every cycle."""
        self.generation += 1
        if self.journal is not None:
            self.journal.append(self)


class CycleState(dict[str, Any]):
    """Per-pod scratch shared by the plugins during one scheduling cycle."""


class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Once per cycle, before any Filter. A "no" here rejects the pod on every node."""
        ...


class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Can the pod run on this node? Must not change anything."""
        ...


class ScorePlugin(Protocol):
    name: str
    weight: int

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """A raw score for a feasible node; ``normalize`` maps raw scores to 0..MAX_NODE_SCORE."""
        ...

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        """Rewrite ``scores`` (label -> raw score) in place to 0..MAX_NODE_SCORE, from the values alone (as
        upstream's normalizers do): a label names one node, or all the nodes of a cycle with the same raw
        scores, which the scheduler scores once."""
        ...

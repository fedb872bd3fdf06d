"""NodeAffinity: ``spec.nodeSelector`` and required node affinity filter nodes; preferred node affinity
scores them.

Term matching reuses the allocator's :func:`~dratwin.allocator.nodes.selector_matches` one term at a
time, so that a term upstream cannot parse (an unknown operator, a ``matchFields`` key other than
``metadata.name``) fails alone and the other terms still count, as with upstream's
``LazyErrorNodeSelector``; parse errors are not reported, as the upstream Filter ignores them.
``nodeSelector`` (label equality, ANDed) and the required terms (ORed) must both match.

PreFilter mirrors upstream's ``PreFilterResult``: when every required term names nodes with
``matchFields: metadata.name In [...]``, the successful status carries ``details`` = a ``frozenset``
of those node names, and the framework need only filter those; terms whose names cannot intersect
give "pod affinity terms conflict".

The scheduler profile's ``addedAffinity`` (NodeAffinityArgs) is supported through the constructor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dratwin.allocator.nodes import selector_matches
from dratwin.api import core
from dratwin.errors import AllocationError
from dratwin.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    Status,
    unresolvable,
)
from dratwin.scheduler.node_selection import default_normalize_score

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_OBJECT_NAME_FIELD = "metadata.name"


def _is_empty(term: core.NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


def term_matches(node: core.Node, term: core.NodeSelectorTerm) -> bool:
    """One node selector term; an empty or unparsable term matches nothing."""
    if _is_empty(term):
        return False
    try:
        return selector_matches(node, core.NodeSelector(node_selector_terms=[term]))
    except AllocationError:
        return False


def node_selector_matches(node: core.Node, selector: core.NodeSelector) -> bool:
    """Terms are ORed; a selector without terms matches nothing."""
    return any(term_matches(node, term) for term in selector.node_selector_terms)


def required_node_affinity(pod: core.Pod) -> core.NodeSelector | None:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required_during_scheduling_ignored_during_execution


def preferred_node_affinity(pod: core.Pod) -> list[core.PreferredSchedulingTerm]:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return []
    return affinity.node_affinity.preferred_during_scheduling_ignored_during_execution


def required_affinity_matches(pod: core.Pod, node: core.Node) -> bool:
    """``nodeSelector`` and required node affinity together (upstream ``RequiredNodeAffinity.Match``)."""
    labels = node.metadata.labels
    for key, value in pod.spec.node_selector.items():
        if key not in labels or labels[key] != value:
            return False
    required = required_node_affinity(pod)
    return required is None or node_selector_matches(node, required)


def preferred_score(node: core.Node, terms: Iterable[core.PreferredSchedulingTerm]) -> int:
    """The sum of the weights of the matching terms; weight-0 and empty terms are ignored."""
    return sum(
        term.weight
        for term in terms
        if term.weight != 0 and not _is_empty(term.preference) and term_matches(node, term.preference)
    )


class NodeAffinity:
    """PreFilter + Filter on required affinity, Score on preferred affinity (weight 2 by default)."""

    name = "NodeAffinity"

    def __init__(self, weight: int = 2, added_affinity: core.NodeAffinity | None = None) -> None:
        self.weight = weight
        added = added_affinity or core.NodeAffinity()
        self._added_required = added.required_during_scheduling_ignored_during_execution
        self._added_preferred: Sequence[core.PreferredSchedulingTerm] = list(
            added.preferred_during_scheduling_ignored_during_execution
        )

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        required = required_node_affinity(pod.pod)
        if required is None and self._added_required is None and not pod.pod.spec.node_selector:
            return Status(Code.SKIP)  # nothing to check: the framework may skip Filter for this pod
        if required is None or not required.node_selector_terms:
            return SUCCESS
        names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for requirement in term.match_fields:
                if requirement.key == _OBJECT_NAME_FIELD and requirement.operator == "In":
                    # Requirements of one term are ANDed: intersect.
                    values = set(requirement.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return SUCCESS  # this term may match any node, and terms are ORed
            names = term_names if names is None else names | term_names
        if not names:
            return unresolvable(ERR_REASON_CONFLICT)
        return Status(Code.SUCCESS, details=frozenset(names))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if self._added_required is not None and not node_selector_matches(node.node, self._added_required):
            return unresolvable(ERR_REASON_ENFORCED)
        if not required_affinity_matches(pod.pod, node.node):
            # Labels do not change by evicting pods: preemption cannot help here.
            return unresolvable(ERR_REASON_POD)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return preferred_score(node.node, self._added_preferred) + preferred_score(
            node.node, preferred_node_affinity(pod.pod)
        )

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        default_normalize_score(scores, MAX_NODE_SCORE, reverse=False)


__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "node_selector_matches",
    "preferred_node_affinity",
    "preferred_score",
    "required_affinity_matches",
    "required_node_affinity",
    "term_matches",
]

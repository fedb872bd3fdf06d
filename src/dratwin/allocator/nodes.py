"""Node selection: does a slice's or device's nodeName / allNodes / nodeSelector include a node?

Standard node-affinity semantics: terms are ORed, requirements inside a term are ANDed;
``matchFields`` supports only ``metadata.name``.
"""

from __future__ import annotations

from dratwin.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dratwin.errors import AllocationError

_LABEL_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}


def node_matches(node: Node, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None) -> bool:
    """True when the node is selected; False when nothing is set (an unknown future selection)."""
    if node_name:
        return node.metadata.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector_matches(node, selector)
    return False


def selector_matches(node: Node, selector: NodeSelector) -> bool:
    """Evaluate a v1 NodeSelector; AllocationError when a requirement cannot be parsed."""
    return any(_term_matches(node, term) for term in selector.node_selector_terms)


def _term_matches(node: Node, term: NodeSelectorTerm) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False  # An empty term selects nothing, as in node affinity.
    labels = node.metadata.labels
    for requirement in term.match_expressions:
        if not _requirement_matches(requirement, labels):
            return False
    for requirement in term.match_fields:
        if requirement.key != "metadata.name":
            raise AllocationError(
                f"node selector: matchFields key {requirement.key!r} is not supported (only metadata.name)"
            )
        if not _requirement_matches(requirement, {"metadata.name": node.metadata.name}):
            return False
    return True


def _requirement_matches(requirement: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    operator, key, values = requirement.operator, requirement.key, requirement.values
    if operator not in _LABEL_OPERATORS:
        raise AllocationError(f"node selector: {operator!r} is not a valid operator for key {key!r}")
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if len(values) != 1:
        raise AllocationError(f"node selector: {operator} for key {key!r} needs exactly one value")
    try:
        bound = int(values[0])
    except ValueError as error:
        raise AllocationError(f"node selector: {operator} for key {key!r} needs an integer value") from error
    try:
        actual = int(labels[key])
    except (KeyError, ValueError):
        return False  # A missing or non-numeric label simply does not match.
    return actual > bound if operator == "Gt" else actual < bound

"""NodeUnschedulable: cordoned nodes take no pods unless the pod tolerates the unschedulable taint."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.builders import Wire, toleration
from tests.builders.scheduler import STANDARD, info, make_node, make_pod, node_info

from dratwin.scheduler.framework import SUCCESS, CycleState, Status, unresolvable
from dratwin.scheduler.plugins.node_unschedulable import NodeUnschedulable

CORDONED = unresolvable("node(s) were unschedulable")


@dataclass
class CordonCase:
    name: str
    unschedulable: bool
    tolerations: list[Wire]
    expect: Status


CORDON_CASES = [
    CordonCase("schedulable", False, [], SUCCESS),
    CordonCase("cordoned", True, [], CORDONED),
    CordonCase(
        "tolerates-unschedulable-taint",
        True,
        [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")],
        SUCCESS,
    ),
    CordonCase("tolerates-everything", True, [toleration(operator="Exists")], SUCCESS),
    CordonCase("toleration-any-effect", True, [toleration("node.kubernetes.io/unschedulable", "Exists")], SUCCESS),
    CordonCase(
        "toleration-wrong-effect",
        True,
        [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")],
        CORDONED,
    ),
    CordonCase("toleration-other-key", True, [toleration("other", "Exists")], CORDONED),
    CordonCase(
        "equal-with-empty-value",
        True,
        [toleration("node.kubernetes.io/unschedulable", effect="NoSchedule")],
        SUCCESS,
    ),
]


@pytest.mark.parametrize("case", CORDON_CASES, ids=lambda c: c.name)
def test_node_unschedulable(case: CordonCase) -> None:
    pod = info(make_pod("p", tolerations=case.tolerations))
    node = node_info(make_node("n1", STANDARD, unschedulable=case.unschedulable))
    assert NodeUnschedulable().filter(CycleState(), pod, node) == case.expect


def test_cordoned_node_without_the_taint_is_still_rejected() -> None:
    # The check reads spec.unschedulable, not the taint list.
    node = node_info(make_node("n1", STANDARD, unschedulable=True, taints=[]))
    assert NodeUnschedulable().filter(CycleState(), info(make_pod("p")), node) == CORDONED

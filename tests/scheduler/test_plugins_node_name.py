"""NodeName: a pod that names a node fits only that node."""

from __future__ import annotations

import pytest
from tests.builders.scheduler import STANDARD, info, make_node, make_pod, node_info

from dratwin.scheduler.framework import SUCCESS, CycleState, Status, unresolvable
from dratwin.scheduler.plugins.node_name import NodeName

WRONG_NAME = unresolvable("node(s) didn't match the requested node name")


@pytest.mark.parametrize(
    ("wanted", "expect"),
    [("", SUCCESS), ("n1", SUCCESS), ("n2", WRONG_NAME)],
    ids=["unset", "same-node", "other-node"],
)
def test_node_name(wanted: str, expect: Status) -> None:
    pod = info(make_pod("p", nodeName=wanted))
    assert NodeName().filter(CycleState(), pod, node_info(make_node("n1", STANDARD))) == expect

"""NodeName: a pod that names a node in ``spec.nodeName`` fits only that node.

No eviction can change a node's name, so the "no" is UnschedulableAndUnresolvable and preemption
skips such nodes.
"""

from __future__ import annotations

from dratwin.scheduler.framework import SUCCESS, CycleState, NodeInfo, PodInfo, Status, unresolvable

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = "NodeName"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        wanted = pod.pod.spec.node_name
        if not wanted or wanted == node.name:
            return SUCCESS
        return unresolvable(ERR_REASON)


__all__ = ["ERR_REASON", "NodeName"]

"""NodeUnschedulable: cordoned nodes (``spec.unschedulable: true``) take no new pods, unless the pod
tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint that the node lifecycle
controller puts on such nodes (DaemonSet pods do).

The check is on the field, not on the taint: a cordoned node without the taint is still rejected,
and the taint itself is TaintToleration's business.
"""

from __future__ import annotations

from dratwin.api.core import Taint
from dratwin.scheduler.framework import SUCCESS, CycleState, NodeInfo, PodInfo, Status, unresolvable
from dratwin.scheduler.plugins.taint_toleration import NO_SCHEDULE, tolerations_tolerate_taint

ERR_REASON = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


class NodeUnschedulable:
    name = "NodeUnschedulable"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable:
            return SUCCESS
        if tolerations_tolerate_taint(pod.pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return SUCCESS
        # Uncordoning is an operator's act; evicting pods cannot help.
        return unresolvable(ERR_REASON)


__all__ = ["ERR_REASON", "TAINT_NODE_UNSCHEDULABLE", "NodeUnschedulable"]

"""TaintToleration: a pod may only land where it tolerates the NoSchedule and NoExecute taints, and
prefers nodes with fewer PreferNoSchedule taints it does not tolerate.

The toleration matching here is upstream's ``Toleration.ToleratesTaint`` (component-helpers
``scheduling/corev1``); NodeUnschedulable reuses it. Since Kubernetes 1.35 the Filter reason no longer
names the taint (taint keys and values may be sensitive), so the untolerated taint travels in
``Status.details`` for explanations instead. The alpha comparison operators (``Lt``/``Gt``) are not
modelled: a toleration with another operator tolerates nothing, as with the feature gate off.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from dratwin.api.core import Taint, Toleration
from dratwin.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    Status,
    unresolvable,
)
from dratwin.scheduler.node_selection import default_normalize_score

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_DO_NOT_SCHEDULE = (NO_SCHEDULE, NO_EXECUTE)
_PRE_SCORE_KEY = "PreScoreTaintToleration"


def toleration_tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """An empty effect or key in the toleration matches any; ``Exists`` ignores the value, an empty
    operator means ``Equal``."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(toleration_tolerates_taint(t, taint) for t in tolerations)


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Sequence[Toleration], effects: Collection[str] = _DO_NOT_SCHEDULE
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates, in the node's order."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


class TaintToleration:
    """Filter on NoSchedule/NoExecute taints; score by untolerated PreferNoSchedule taints (fewer is
    better, so ``normalize`` reverses). Weight 3 in the default profile."""

    name = "TaintToleration"

    def __init__(self, weight: int = 3) -> None:
        self.weight = weight

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        taint = find_untolerated_taint(node.node.spec.taints, pod.pod.spec.tolerations)
        if taint is None:
            return SUCCESS
        # UnschedulableAndUnresolvable: evicting pods does not remove a taint.
        return unresolvable(ERR_REASON_UNTOLERATED, details=taint)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        tolerations = state.get(_PRE_SCORE_KEY)
        if tolerations is None:
            # Only tolerations that can match a PreferNoSchedule taint matter (upstream PreScore).
            tolerations = [t for t in pod.pod.spec.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
            state[_PRE_SCORE_KEY] = tolerations
        return sum(
            1
            for taint in node.node.spec.taints
            if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint)
        )

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        default_normalize_score(scores, MAX_NODE_SCORE, reverse=True)


__all__ = [
    "ERR_REASON_UNTOLERATED",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "TaintToleration",
    "find_untolerated_taint",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]

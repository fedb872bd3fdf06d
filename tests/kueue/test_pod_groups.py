"""A pod Workload's life once its pods exist (kueue/pod_groups.py): when it is finished, which pods of a group
are excess, and WaitingForReplacementPods. Kueue ff69552 pkg/controller/jobs/pod/pod_controller.go (Finished,
FindMatchingWorkloads, sortActivePods, waitingForReplacementPodsCondition) and site tasks/run/plain_pods.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from dratwin.kueue.pod_groups import (
    NO_REPLACEMENT_MESSAGE,
    PODS_FAILED,
    PODS_FAILED_MESSAGE,
    PODS_READY,
    RETRIABLE_IN_GROUP_ANNOTATION,
    Finished,
    GroupPod,
    cleanup,
    excess_pods,
    finished,
    replacement_condition,
)
from dratwin.kueue.pods import ADMISSION_GATE, MANAGED_FINALIZER, ROLE_HASH_ANNOTATION, SERVING_ANNOTATION

Raw = dict[str, Any]


def a_pod(name: str, phase: str = "", *, role: str = "r1", retriable: bool = True, serving: bool = False,
          gated: bool = False, finalizer: bool = True) -> Raw:
    annotations = {ROLE_HASH_ANNOTATION: role, **({RETRIABLE_IN_GROUP_ANNOTATION: "false"} if not retriable else {}),
                   **({SERVING_ANNOTATION: "true"} if serving else {})}
    return {"metadata": {"name": name, "namespace": "team", "annotations": annotations,
                         "finalizers": [MANAGED_FINALIZER] if finalizer else []},
            "spec": {"schedulingGates": [{"name": ADMISSION_GATE}] if gated else []},
            "status": {"phase": phase} if phase else {}}


@dataclass(frozen=True)
class FinishedCase:
    name: str
    pods: list[Raw]
    total: int | None
    expected: Finished | None


FINISHED = [
    FinishedCase("single-running", [a_pod("p", "Running")], None, None),
    FinishedCase("single-succeeded", [a_pod("p", "Succeeded")], None, Finished(True, "")),
    FinishedCase("single-failed", [a_pod("p", "Failed")], None, Finished(False, "")),
    FinishedCase("single-gone", [], None, Finished(False, "The pod was deleted")),
    # a group: finished when total-count pods succeeded
    FinishedCase("group-all-succeeded", [a_pod("a", "Succeeded"), a_pod("b", "Succeeded")], 2,
                 Finished(True, "Pods succeeded: 2/2.")),
    FinishedCase("group-one-running", [a_pod("a", "Succeeded"), a_pod("b", "Running")], 2, None),
    # a failed pod of a (retriable) group waits for its replacement
    FinishedCase("group-one-failed", [a_pod("a", "Succeeded"), a_pod("b", "Failed")], 2, None),
    # retriable-in-group "false" on any pod: nothing active ends the group, reported as succeeded (upstream's
    # Finished leaves success true for a group)
    FinishedCase("unretriable-group-failed", [a_pod("a", "Succeeded"), a_pod("b", "Failed", retriable=False)], 2,
                 Finished(True, "Pods succeeded: 1/2.")),
    FinishedCase("unretriable-group-still-running", [a_pod("a", "Running"), a_pod("b", "Failed", retriable=False)],
                 2, None),
    # a serving group (a StatefulSet's) never finishes, not even when its pods succeed
    FinishedCase("serving-group", [a_pod("a", "Succeeded", serving=True), a_pod("b", "Succeeded", serving=True)],
                 2, None),
    FinishedCase("group-gone", [], 2, Finished(False, "The pods of the group were deleted")),
]


@pytest.mark.parametrize("case", FINISHED, ids=lambda c: c.name)
def test_finished(case: FinishedCase) -> None:
    assert finished(case.pods, case.total) == case.expected


def _group(*pods: tuple[str, Raw, float]) -> list[GroupPod]:
    return [GroupPod(f"team/{name}", raw, created) for name, raw, created in pods]


def test_excess_pods_are_the_newest_gated_ones_without_a_finalizer_first() -> None:
    """sortActivePods keeps pods with Kueue's finalizer, then pods not gated, then older pods."""
    pods = _group(("old-gated", a_pod("old-gated", gated=True), 1.0), ("running", a_pod("running", "Running"), 5.0),
                  ("new-gated", a_pod("new-gated", gated=True), 3.0),
                  ("no-finalizer", a_pod("no-finalizer", "Running", finalizer=False), 0.0),
                  ("failed", a_pod("failed", "Failed"), 0.5))
    assert excess_pods(pods, 2) == ("team/new-gated", "team/no-finalizer")  # the failed pod is not active
    assert excess_pods(pods, 4) == ()


def test_cleanup_counts_per_role() -> None:
    pods = _group(("a1", a_pod("a1", "Running", role="a"), 0.0), ("a2", a_pod("a2", "Running", role="a"), 1.0),
                  ("a3", a_pod("a3", gated=True, role="a"), 2.0), ("b1", a_pod("b1", "Failed", role="b"), 0.0))
    found = cleanup(pods, [("a", 2), ("b", 2)])
    assert found.excess == ("team/a3",)
    assert found.absent == 2  # role b has no active pod of its two


@pytest.mark.parametrize(("absent", "current", "evicted", "expected"), [
    (1, None, None, ("True", PODS_FAILED, PODS_FAILED_MESSAGE)),
    (1, None, {"status": "True", "reason": "Preempted", "message": "Preempted to accommodate"},
     ("True", "Preempted", "Preempted to accommodate")),
    (1, {"status": "True", "reason": PODS_FAILED, "message": PODS_FAILED_MESSAGE}, None, None),  # unchanged
    (0, {"status": "True", "reason": PODS_FAILED, "message": PODS_FAILED_MESSAGE}, None,
     ("False", PODS_READY, NO_REPLACEMENT_MESSAGE)),
    (0, None, None, None),  # never waited: no condition
    (0, {"status": "False", "reason": PODS_READY, "message": NO_REPLACEMENT_MESSAGE}, None, None),
], ids=["pods-failed", "from-eviction", "already-waiting", "replaced", "never-waited", "already-replaced"])
def test_replacement_condition(absent: int, current: dict[str, str] | None, evicted: dict[str, str] | None,
                               expected: tuple[str, str, str] | None) -> None:
    assert replacement_condition(absent, current, evicted) == expected

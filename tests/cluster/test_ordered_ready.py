"""Which pods of an OrderedReady StatefulSet exist at the moment the twin looks: each ordinal waits for the
one before it to be Running and Ready."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from dratwin.cluster.ordered_ready import created_now, is_running_and_ready, waiting_notes

Raw = dict[str, Any]


def sts_pod(ordinal: int, phase: str = "Pending", ready: str | None = None) -> Raw:
    status: Raw = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready}]
    return {
        "metadata": {"name": f"db-{ordinal}", "namespace": "ml",
                     "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": True}]},
        "status": status,
    }


CHAIN = {"ml/db-1": "ml/db-0", "ml/db-2": "ml/db-1"}


@dataclass(frozen=True)
class OrderCase:
    name: str
    pods: list[Raw]
    ordered_after: dict[str, str]
    created: list[str]
    waiting: dict[str, str] = field(default_factory=dict)


CASES = [
    OrderCase("new-set-only-the-first-exists", [sts_pod(i) for i in range(3)], CHAIN, ["db-0"],
              {"ml/db-1": "ml/db-0", "ml/db-2": "ml/db-1"}),
    OrderCase("parallel-has-no-order", [sts_pod(i) for i in range(3)], {}, ["db-0", "db-1", "db-2"]),
    OrderCase("ready-first-lets-the-second-in",
              [sts_pod(0, "Running", "True"), sts_pod(1), sts_pod(2)], CHAIN, ["db-0", "db-1"], {"ml/db-2": "ml/db-1"}),
    OrderCase("running-but-not-ready-holds-the-rest",
              [sts_pod(0, "Running", "False"), sts_pod(1), sts_pod(2)], CHAIN, ["db-0"],
              {"ml/db-1": "ml/db-0", "ml/db-2": "ml/db-1"}),
    OrderCase("all-ready", [sts_pod(i, "Running", "True") for i in range(3)], CHAIN, ["db-0", "db-1", "db-2"]),
    OrderCase("a-ready-pod-after-a-missing-one-still-waits",
              [sts_pod(0), sts_pod(1), sts_pod(2, "Running", "True")], CHAIN, ["db-0"],
              {"ml/db-1": "ml/db-0", "ml/db-2": "ml/db-1"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_created_now(case: OrderCase) -> None:
    result = created_now(case.pods, case.ordered_after)
    assert [p["metadata"]["name"] for p in result.pods] == case.created
    assert result.waiting == case.waiting


@pytest.mark.parametrize(("status", "ready"), [
    ({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}, True),
    ({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}, False),
    ({"phase": "Pending", "conditions": [{"type": "Ready", "status": "True"}]}, False),
    ({}, False),
], ids=["running-ready", "running-no-ready-condition", "pending", "no-status"])
def test_running_and_ready(status: Raw, ready: bool) -> None:
    assert is_running_and_ready({"status": status}) is ready


def test_one_note_per_stateful_set_names_the_waiting_pods_and_the_first_they_wait_for() -> None:
    pods = [sts_pod(i) for i in range(3)]
    [note] = waiting_notes(pods, created_now(pods, CHAIN).waiting)
    assert note.startswith("StatefulSet ml/db: db-1, db-2 not created yet: ")
    assert "and db-0 is not" in note
    assert "podManagementPolicy: Parallel" in note

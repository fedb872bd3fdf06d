"""What consolidation passes reuse from each other: a remembered solver answer is given only for pods of the
same shapes and the same usage of limited resources, with the asking pods in it; a drift only for the same node
object."""

from __future__ import annotations

from typing import Any

import pytest

from dratwin.api.codec import decode_as
from dratwin.api.core import Node, Pod
from dratwin.provisioner.drift import Drift
from dratwin.provisioner.memo import ConsolidationMemo
from dratwin.provisioner.solver import Plan, PlannedClaim, PodToPlace, Pool, Unplaced
from dratwin.scheduler.resources import make_pod_info


def _pod(name: str, cpu: str, order: int) -> PodToPlace:
    container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    raw: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
                           "spec": {"containers": [container]}}
    return PodToPlace(make_pod_info(decode_as(raw, Pod, f"pod/{name}"), order), [], [])


class _CountingSolver:
    """Puts the first pod it is given on a NodeClaim and leaves the rest unplaced."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, pods: list[PodToPlace]) -> Plan:
        self.calls += 1
        return Plan([PlannedClaim("gpu-1", POOL, [], [pods[0]])], [Unplaced(p.info.key, {}) for p in pods[1:]])


POOL = Pool("gpu", 10, [], limits={"cpu": 100})


@pytest.mark.parametrize(
    ("name", "second", "used", "reused"),
    [
        ("same shapes, other pods", [("c", "4", 5), ("d", "1", 6)], 0, True),
        ("same shapes given in another order", [("d", "1", 6), ("c", "4", 5)], 0, True),
        ("another shape", [("c", "4", 5), ("d", "2", 6)], 0, False),
        ("more of a limited resource used", [("c", "4", 5), ("d", "1", 6)], 8, False),
    ],
)
def test_a_solver_answer_is_reused_only_for_the_same_question(
    name: str, second: list[tuple[str, str, int]], used: int, reused: bool
) -> None:
    memo, solver = ConsolidationMemo(), _CountingSolver()
    pool = Pool("gpu", 10, [], limits={"cpu": 100}, used={"cpu": 0})
    memo.solve([pool], [_pod("a", "4", 1), _pod("b", "1", 2)], solver)
    pool.used["cpu"] = used
    plan = memo.solve([pool], [_pod(n, cpu, order) for n, cpu, order in second], solver)
    assert solver.calls == (1 if reused else 2)
    # whichever way it was found, the answer names the pods that asked, the largest first
    assert [p.info.key for p in plan.claims[0].pods] == ["ml/c"]
    assert [u.pod for u in plan.unplaced] == ["ml/d"]


def test_a_drift_is_remembered_for_the_node_object_it_was_found_for() -> None:
    memo = ConsolidationMemo()
    first = decode_as({"metadata": {"name": "n1"}}, Node, "node/n1")
    found = [Drift("NodePoolDrifted", "changed"), None]
    assert memo.drift_of("n1", first, lambda: found[0]) == found[0]
    assert memo.drift_of("n1", first, lambda: found[1]) == found[0]  # the same object: not looked at again
    relabelled = decode_as({"metadata": {"name": "n1", "labels": {"a": "b"}}}, Node, "node/n1")
    assert memo.drift_of("n1", relabelled, lambda: found[1]) is None


def test_a_node_seen_again_after_its_deletion_forgets_what_pods_fit() -> None:
    memo = ConsolidationMemo()
    memo.node_added("n1")
    memo.fits[(b"shape", "n1")] = (3, 0, False)
    memo.node_added("n2")
    assert memo.fits
    memo.node_added("n1")
    assert not memo.fits


def test_a_node_s_slices_changing_forget_what_pods_fit_there_and_a_shared_slice_everywhere() -> None:
    memo = ConsolidationMemo()
    memo.fits = {(b"shape", "n1"): (3, 0, False), (b"shape", "n2"): (5, 0, False)}
    memo.slices_changed("n1")
    assert list(memo.fits) == [(b"shape", "n2")]
    memo.slices_changed(None)
    assert not memo.fits

"""Search effort: the same steps as upstream's search, and the filter-timeout budget that bounds it.

The pinned step counts are upstream's own (numAllocateOneInvocations of k8s.io/dynamic-resource-allocation
v0.36.2 on the same objects): a change in how dratwin searches shows up here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders import claim, device_class, node
from tests.builders.allocator import (
    efa_claims,
    efa_classes,
    efa_node,
    partition_claims,
    partition_classes,
    partitionable_gpus,
)

from dratwin.allocator import UNLIMITED, AllocationTimeout, Allocator, EffortBudget, Features, NodeAllocationError
from dratwin.allocator.effort import CHECK_EVERY
from dratwin.api.codec import decode_as
from dratwin.api.loader import load_paths
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice


@dataclass
class Steps:
    id: str
    classes: list[DeviceClass]
    slices: list[ResourceSlice]
    claims: list[ResourceClaim]
    allocated: bool
    steps: int  # upstream's count


STEPS = [
    # 1+1+2 EFAs of 12 with a claim whose class matches nothing: upstream tries every EFA assignment
    # before the second claim fails (incubating tries combinations inside one request)...
    Steps("efa-claim-first", efa_classes(), efa_node(12), efa_claims((1, 1, 2)), False, 19429),
    # ... and answers in one step when the claim that cannot be satisfied comes first.
    Steps("failing-claim-first", efa_classes(), efa_node(12), efa_claims((1, 1, 2), nomatch_first=True), False, 1),
    Steps("partitions-fit", partition_classes(), partitionable_gpus(), partition_claims(4), True, 21),
    Steps("partitions-exhausted", partition_classes(), partitionable_gpus(2, 2), partition_claims(2, 3), False, 3187),
]


@pytest.mark.parametrize("case", STEPS, ids=[c.id for c in STEPS])
def test_the_search_takes_upstreams_steps(case: Steps) -> None:
    outcome = Allocator(Features(), case.classes, case.slices, budget=UNLIMITED).allocate(node("n1"), case.claims)
    assert (outcome.allocated, outcome.steps) == (case.allocated, case.steps)


def test_a_search_past_the_budget_times_out_with_the_schedulers_message() -> None:
    # Five claims of three partitions over two GPUs whose counters hold 14 slices: upstream searched for
    # minutes; kube-scheduler stops it after filterTimeout. A 50 ms budget keeps the test short.
    budget = EffortBudget(0.05)
    allocator = Allocator(Features(), partition_classes(), partitionable_gpus(), budget=budget)
    with pytest.raises(AllocationTimeout) as raised:
        allocator.allocate(node("n1"), partition_claims(5))
    timeout = raised.value
    assert isinstance(timeout, NodeAllocationError)  # unschedulable on this node only, as the scheduler says
    assert str(timeout) == "timed out trying to allocate devices"
    assert "filterTimeout of 0.05 s" in timeout.detail
    assert timeout.steps % CHECK_EVERY == 0 and timeout.steps > 0


def stopped_at(seconds: float) -> int:
    allocator = Allocator(Features(), partition_classes(), partitionable_gpus(), budget=EffortBudget(seconds))
    with pytest.raises(AllocationTimeout) as raised:
        allocator.allocate(node("n1"), partition_claims(5))
    return raised.value.steps


def test_the_budget_is_work_not_time_and_grows_with_the_timeout() -> None:
    # The same step on every machine; twice the timeout, about twice the steps of this search.
    assert stopped_at(0.05) == 6656
    assert 1.8 < stopped_at(0.1) / 6656 < 2.2


def test_a_search_within_the_budget_is_not_cut() -> None:
    allocator = Allocator(Features(), efa_classes(), efa_node(12), budget=EffortBudget(10.0))
    assert allocator.allocate(node("n1"), efa_claims((1, 1, 2))).steps == 19429


def test_the_default_budget_is_kube_schedulers_filter_timeout() -> None:
    assert Allocator(Features(), [], []).budget == EffortBudget(10.0)
    assert UNLIMITED.unlimited and not EffortBudget().unlimited


# ---- the reproducers at full size (the cases) --------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def p5_example() -> tuple[list[DeviceClass], list[ResourceSlice]]:
    objects = load_paths([str(REPO / "examples" / "deviceclasses.yaml"), str(REPO / "examples" / "p5-slices.yaml")])
    classes = [decode_as(o.raw, DeviceClass, o.ref) for o in objects if o.kind == "DeviceClass"]
    slices = [decode_as(o.raw, ResourceSlice, o.ref) for o in objects if o.kind == "ResourceSlice"]
    return [*classes, device_class("nothing", "device.driver == 'none'")], slices


def efas_and_nothing(nomatch_first: bool) -> list[ResourceClaim]:
    efas = claim("efas", "ml")
    for index, size in enumerate((1, 1, 2)):
        efas.request(f"r{index}", "efa.networking.k8s.aws", size, mode="ExactCount")
    nomatch = claim("nomatch", "ml").request("x", "nothing", 1, mode="ExactCount").build()
    return [nomatch, efas.build()] if nomatch_first else [efas.build(), nomatch]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("nomatch_first", "steps"), [(False, 1_326_369), (True, 1)], ids=["efas-first", "nomatch-first"]
)
def test_p5_efas_with_a_claim_that_matches_nothing(nomatch_first: bool, steps: int) -> None:
    # One p5.48xlarge, 1+1+2 EFAs in three requests and a claim whose class matches no device, allocated
    # together: upstream's allocator makes exactly these steps (about 2.5 s of its search in the order
    # the claims are written, one step the other way round); far below the filter timeout.
    classes, slices = p5_example()
    outcome = Allocator(Features(), classes, slices).allocate(node("p5-node-1"), efas_and_nothing(nomatch_first))
    assert (outcome.results, outcome.steps) == (None, steps)


@pytest.mark.slow
def test_five_claims_of_three_partitions_stop_at_the_default_filter_timeout() -> None:
    # Upstream searched this for minutes; within kube-scheduler's 10 s it makes about 1.2 million steps.
    allocator = Allocator(Features(), partition_classes(), partitionable_gpus())
    with pytest.raises(AllocationTimeout) as raised:
        allocator.allocate(node("n1"), partition_claims(5))
    assert raised.value.steps == 1_185_792

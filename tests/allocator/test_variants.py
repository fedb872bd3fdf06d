"""The allocator copy upstream 1.36 picks for the features, and what each copy does differently.

Every expectation here was checked against upstream's allocator (k8s.io/dynamic-resource-allocation
v0.36.2, each variant run on the same objects); step counts are upstream's numAllocateOneInvocations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders import claim, device, device_class, node, resource_slice, wire
from tests.builders.allocator import NIC, efa_claims, efa_classes, efa_node

from dratwin.allocator import AllocatedState, Allocator, Features, select_variant
from dratwin.allocator.order import PROBE_STEPS, from_outcome, probe_pool_orders
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.errors import AllocationError

STABLE_GATES = "DRAConsumableCapacity=false,DRADeviceBindingConditions=false"
DRV, OTHER = "a.example.com", "b.example.com"


@dataclass
class Pick:
    id: str
    gates: str
    variant: str
    allowed: tuple[str, ...] = ()


PICKS = [
    Pick("defaults-run-incubating", "", "incubating"),
    Pick("no-capacity-no-binding-runs-stable", STABLE_GATES, "stable"),
    Pick("binding-conditions-alone-need-incubating", "DRAConsumableCapacity=false", "incubating"),
    Pick("one-binding-gate-off-is-enough", "DRAConsumableCapacity=false,DRAResourceClaimDeviceStatus=false", "stable"),
    Pick("consumable-capacity-alone-needs-incubating", "DRADeviceBindingConditions=false", "incubating"),
    Pick("list-type-attributes-need-experimental", "DRAListTypeAttributes=true", "experimental"),
    Pick("everything-off-runs-stable", STABLE_GATES + ",DRAPrioritizedList=false,DRADeviceTaints=false", "stable"),
    Pick("limited-to-later-copies", STABLE_GATES, "incubating", ("incubating", "experimental")),
]


@pytest.mark.parametrize("pick", PICKS, ids=[p.id for p in PICKS])
def test_the_first_copy_that_supports_every_enabled_feature_is_picked(pick: Pick) -> None:
    assert select_variant(Features.from_gates(pick.gates), pick.allowed).name == pick.variant


def test_no_copy_when_the_allowed_ones_lack_a_feature() -> None:
    with pytest.raises(ValueError, match="no allocator variant \\(stable\\) supports"):
        select_variant(Features(), ("stable",))


# ---- behaviour that differs between the copies -------------------------------------------------


@dataclass
class Case:
    id: str
    slices: list[ResourceSlice]
    claims: list[ResourceClaim]
    stable: Any  # devices per claim ("driver/pool/device"), None (unsatisfiable), or an error pattern
    incubating: Any
    classes: list[DeviceClass] = field(default_factory=lambda: [device_class("any", "true")])
    stable_gates: str = STABLE_GATES
    incubating_gates: str = "DRAConsumableCapacity=false"  # binding conditions on: incubating, capacity off


def devices(outcome_results: list[Any] | None) -> list[list[str]] | None:
    if outcome_results is None:
        return None
    return [[f"{r.driver}/{r.pool}/{r.device}" for r in a.devices.results] for a in outcome_results]


def selector_of(outcome_results: list[Any]) -> Any:
    return wire(outcome_results[0]).get("nodeSelector")


def one(name: str, count: int = 1, cls: str = "any", **extra: Any) -> ResourceClaim:
    return claim(name).request("r", cls, count, mode="ExactCount", **extra).build()


CASES = [
    # Slices of one pool: sorted by name outside stable, in input order in stable.
    Case(
        "stable-keeps-slices-in-input-order",
        [
            resource_slice(f"slice-{i}", DRV, "p", node_name="n1", count=3, devices=[device(f"device-{i}")])
            for i in (3, 2, 1)
        ],
        [one("c", 2)],
        [["a.example.com/p/device-3", "a.example.com/p/device-2"]],
        [["a.example.com/p/device-1", "a.example.com/p/device-2"]],
    ),
    # Pools: (driver, pool) order outside stable; stable's map order, reported here for input order.
    Case(
        "stable-visits-pools-in-input-order",
        [
            resource_slice("s-b", DRV, "pool-b", node_name="n1", devices=[device("d")]),
            resource_slice("s-a", DRV, "pool-a", node_name="n1", devices=[device("d")]),
        ],
        [one("c")],
        [["a.example.com/pool-b/d"]],
        [["a.example.com/pool-a/d"]],
    ),
    # CEL: stable passes no allowMultipleAllocations, so it reads false there.
    Case(
        "stable-hides-allow-multiple-allocations-from-cel",
        [resource_slice("s", NIC, node_name="n1", devices=[device("nic-0", allow_multiple=True)])],
        [one("c", cls="multi")],
        None,
        [["nic.example.com/n1/nic-0"]],
        classes=[device_class("multi", "device.allowMultipleAllocations")],
    ),
    # Constraints: distinctAttribute is unknown to stable.
    Case(
        "stable-does-not-know-distinct-attribute",
        [resource_slice("s", DRV, node_name="n1", devices=[device("d0", {"x": 0}), device("d1", {"x": 1})])],
        [claim("c").request("r", "any", 2, mode="ExactCount").distinct_attribute(f"{DRV}/x").build()],
        "constraint #0: empty constraint",
        [["a.example.com/n1/d0", "a.example.com/n1/d1"]],
    ),
    # Capacity requests: ignored by stable, refused by incubating while DRAConsumableCapacity is off.
    Case(
        "capacity-requests-ignored-by-stable-refused-by-incubating",
        [resource_slice("s", NIC, node_name="n1", devices=[device("nic-0", capacity={"bw": "10G"})])],
        [one("c", capacity={"bw": "1G"})],
        [["nic.example.com/n1/nic-0"]],
        "has capacity requests, but the DRAConsumableCapacity feature is disabled",
    ),
]


def allocate(case: Case, gates: str) -> Any:
    features = Features.from_gates(gates)
    allocator = Allocator(features, case.classes, case.slices, AllocatedState())
    try:
        return devices(allocator.allocate(node("n1"), case.claims).results)
    except AllocationError as error:
        return str(error)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_copy_answers_as_upstream_does(case: Case) -> None:
    for gates, want in ((case.stable_gates, case.stable), (case.incubating_gates, case.incubating)):
        got = allocate(case, gates)
        if isinstance(want, str):
            assert isinstance(got, str) and want in got, got
        else:
            assert got == want


def test_binds_to_node_pins_the_allocation_only_outside_stable() -> None:
    slices = [resource_slice("s", DRV, "shared", all_nodes=True, devices=[device("d", binds_to_node=True)])]
    classes = [device_class("any", "true")]
    pinned = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    for gates, want in ((STABLE_GATES, None), ("DRAConsumableCapacity=false", pinned)):
        outcome = Allocator(Features.from_gates(gates), classes, slices).allocate(node("n1"), [one("c")])
        assert outcome.results is not None
        assert selector_of(outcome.results) == want, gates


@pytest.mark.parametrize(
    ("gates", "steps"),
    [(STABLE_GATES, 37249), ("", 19429)],
    ids=["stable-searches-permutations", "incubating-searches-combinations"],
)
def test_stable_searches_more_steps_for_the_same_answer(gates: str, steps: int) -> None:
    allocator = Allocator(Features.from_gates(gates), efa_classes(), efa_node(12))
    outcome = allocator.allocate(node("n1"), efa_claims((1, 1, 2)))
    assert (outcome.results, outcome.steps) == (None, steps)  # upstream's step counts for each copy


# ---- where stable's random pool order decides --------------------------------------------------


def test_an_answer_that_depends_on_stable_pool_order_says_so() -> None:
    slices = [
        resource_slice("s-b", DRV, "pool-b", node_name="n1", devices=[device("d")]),
        resource_slice("s-a", DRV, "pool-a", node_name="n1", devices=[device("d")]),
    ]
    allocator = Allocator(Features.from_gates(STABLE_GATES), [device_class("any", "true")], slices)
    claims = [one("c")]
    probe = probe_pool_orders(allocator, node("n1"), claims, from_outcome(allocator.allocate(node("n1"), claims)))
    assert probe is not None and probe.depends_on_order
    assert [devices(a.results) for a in probe.answers] == [[["a.example.com/pool-b/d"]], [["a.example.com/pool-a/d"]]]
    assert "random on every call" in probe.note()


def test_an_answer_every_pool_order_gives_is_not_flagged() -> None:
    slices = [
        resource_slice("s-b", DRV, "pool-b", node_name="n1", devices=[device("d")]),
        resource_slice("s-a", OTHER, "pool-a", node_name="n1", devices=[device("d")]),
    ]
    classes = [device_class("a", f"device.driver == '{DRV}'")]
    allocator = Allocator(Features.from_gates(STABLE_GATES), classes, slices)
    claims = [one("c", cls="a")]
    probe = probe_pool_orders(allocator, node("n1"), claims, from_outcome(allocator.allocate(node("n1"), claims)))
    assert probe is not None and not probe.depends_on_order and probe.orders == 2


def test_a_search_too_long_to_repeat_is_answered_once_and_says_so() -> None:
    slices = [
        resource_slice("s-b", DRV, "pool-b", node_name="n1", devices=[device("d")]),
        resource_slice("s-a", DRV, "pool-a", node_name="n1", devices=[device("d")]),
    ]
    allocator = Allocator(Features.from_gates(STABLE_GATES), [device_class("any", "true")], slices)
    claims = [one("c")]
    first = from_outcome(allocator.allocate(node("n1"), claims))
    probe = probe_pool_orders(allocator, node("n1"), claims, first, first_steps=PROBE_STEPS + 1)
    assert probe is not None and (probe.orders, probe.skipped) == (1, 1)
    assert not probe.depends_on_order  # the other order, which would differ, was not tried
    assert "not tried" in probe.note() and f"{PROBE_STEPS + 1:,} steps" in probe.note()
    affordable = probe_pool_orders(allocator, node("n1"), claims, first, first_steps=PROBE_STEPS)
    assert affordable is not None and affordable.depends_on_order and affordable.skipped == 0


def test_sorting_copies_are_not_probed() -> None:
    allocator = Allocator(Features(), efa_classes(), efa_node(4))
    claims = [one("c", cls="efa")]
    first = from_outcome(allocator.allocate(node("n1"), claims))
    assert probe_pool_orders(allocator, node("n1"), claims, first) is None


# ---- shared counters keyed by pool name ------------------------------------------------------


def test_two_drivers_pools_of_one_name_share_counters_with_a_warning() -> None:
    # Driver a's pool "p" has 1 slot, driver b's pool "p" has 10; b's devices are checked against a's
    # counter set and their consumption adds to a's, as upstream keys counters by pool name alone.
    def pool(driver: str, slots: str, names: list[str]) -> list[ResourceSlice]:
        return [
            resource_slice(f"{driver}-cs", driver, "p", node_name="n1", count=2, shared_counters={"cs": {"n": slots}}),
            resource_slice(
                f"{driver}-dev",
                driver,
                "p",
                node_name="n1",
                count=2,
                devices=[device(n, consumes_counters={"cs": {"n": "1"}}) for n in names],
            ),
        ]

    slices = pool(DRV, "1", ["a0"]) + pool(OTHER, "10", ["b0", "b1"])
    classes = [device_class("a", f"device.driver == '{DRV}'"), device_class("b", f"device.driver == '{OTHER}'")]
    claims = [one("ca", cls="a"), one("cb", cls="b")]
    outcome = Allocator(Features(), classes, slices).allocate(node("n1"), claims)
    assert outcome.results is None
    assert outcome.warnings and "pools a.example.com/p and b.example.com/p have the same name" in outcome.warnings[0]
    alone = Allocator(Features(), classes, slices).allocate(node("n1"), claims[1:])
    assert devices(alone.results) == [["b.example.com/p/b0"]]



"""Shares of multi-allocatable devices (consumable capacity) taken and given back while backtracking.

Upstream records a share's consumption only when it has some and forgets a device's total once it is
all zero; giving back a share of a device it no longer records does nothing. Checked against upstream's
allocator on the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.builders import claim, device, device_class, node, resource_slice
from tests.builders.allocator import NIC

from dratwin.allocator import Allocator, Features
from dratwin.api.resource import ResourceClaim, ResourceSlice


@dataclass
class Case:
    id: str
    slices: list[ResourceSlice]
    claims: list[ResourceClaim]
    devices: list[list[str]] | None  # per claim, or None: cannot be allocated


def nics(*devices: dict[str, object]) -> list[ResourceSlice]:
    return [resource_slice("n1-nics", NIC, node_name="n1", devices=list(devices))]


ZERO_DEFAULT = {"value": "10G", "requestPolicy": {"default": "0", "validRange": {"min": "0"}}}


def two_shares_then(last_class: str, name: str = "c") -> ResourceClaim:
    return (
        claim(name)
        .request("a", "multi", 1, mode="ExactCount")
        .request("b", "multi", 1, mode="ExactCount")
        .request("c", last_class, 1, mode="ExactCount")
        .build()
    )


CASES = [
    # Two shares of a device without capacities consume nothing; the third request fails and both are
    # given back (this used to fail with a KeyError in the undo).
    Case(
        "shares-without-capacity-given-back",
        nics(device("nic-0", allow_multiple=True)),
        [two_shares_then("none")],
        None,
    ),
    # The same with a capacity whose policy default is zero.
    Case(
        "zero-default-shares-given-back",
        nics(device("nic-0", capacity={"bw": ZERO_DEFAULT}, allow_multiple=True)),
        [two_shares_then("none")],
        None,
    ),
    # Backtracking over such shares still finds the solution behind them.
    Case(
        "zero-default-shares-then-a-plain-device",
        nics(device("nic-0", capacity={"bw": ZERO_DEFAULT}, allow_multiple=True), device("plain")),
        [two_shares_then("plain")],
        [["nic-0", "nic-0", "plain"]],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_shares_are_given_back_like_upstream(case: Case) -> None:
    classes = [
        device_class("multi", "device.allowMultipleAllocations"),
        device_class("plain", "!device.allowMultipleAllocations"),
        device_class("none", "false"),
    ]
    outcome = Allocator(Features(), classes, case.slices).allocate(node("n1"), case.claims)
    got = None if outcome.results is None else [[r.device for r in a.devices.results] for a in outcome.results]
    assert got == case.devices

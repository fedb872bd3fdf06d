"""The explanation of a "cannot allocate": one reason per device and request, aggregated for people.

Each test builds a situation where the allocator says no and checks what ``explain`` reports: the
reason (as data), the detail users read (owner of an in-use device, failing selector and the
device's values it read), the aggregated ``summary_lines()``, the verdict and the JSON shape.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from tests.builders import claim, device, device_class, node, resource_slice, subrequest, taint
from tests.builders.allocator import GPU, NIC, default_classes, gpus, holder, partitioned, shareable

from dratwin.allocator import AllocatedState, Allocator, Features
from dratwin.allocator.explain import Explanation, Reason, RequestExplanation, explain
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice

N1 = node("n1")
BIG = "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0"


def explained(
    slices: list[ResourceSlice],
    claims: list[ResourceClaim],
    allocated: list[ResourceClaim] = (),  # type: ignore[assignment]
    classes: list[DeviceClass] | None = None,
    features: Features | None = None,
    check_unallocatable: bool = True,
) -> Explanation:
    features = features or Features()
    allocator = Allocator(
        features,
        default_classes() if classes is None else classes,
        slices,
        AllocatedState.from_claims(allocated, features),
    )
    if check_unallocatable:
        assert allocator.allocate(N1, claims).results is None, "the situation must be a 'cannot allocate'"
    return explain(allocator, N1, claims)


def reasons(request: RequestExplanation) -> dict[str, tuple[Reason, str, tuple[str, ...]]]:
    """device name -> (reason, detail, values)"""
    return {r.device.device: (r.reason, r.detail, r.values) for r in request.rejections}


def eligible(request: RequestExplanation) -> list[str]:
    return [d.device for d in request.eligible]


# ---- one test per reason -------------------------------------------------------------------------


def test_in_use_names_the_owner() -> None:
    e = explained([gpus()], [claim("c0").request("gpu", "gpu", 2).build()], [holder(*(_g(i) for i in range(3)))])
    (request,) = e.requests
    assert reasons(request) == {
        f"gpu-{i}": (Reason.IN_USE, "allocated to another claim", ("other/holder",)) for i in range(3)
    }
    assert eligible(request) == ["gpu-3"]
    assert request.summary_lines() == ["3 of 4 devices: in use (allocated to another claim): other/holder"]
    assert e.verdict == "request gpu of claim default/c0 needs 2 device(s), 1 of 4 are eligible"


def test_in_use_does_not_apply_to_admin_access() -> None:
    e = explained(
        [gpus()],
        [claim("c0").request("gpu", "gpu", 5, admin=True).build()],
        [holder(*(_g(i) for i in range(4)))],
    )
    assert eligible(e.requests[0]) == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert e.requests[0].rejections == []


def test_class_selector_false_shows_the_values_it_read() -> None:
    devices = [device(f"gpu-{i}", capacity={"memory": "24Gi" if i < 6 else "80Gi"}) for i in range(8)]
    classes = [device_class("big-gpu", f"device.driver == '{GPU}'", BIG)]
    e = explained(
        [resource_slice("s", GPU, "n1", node_name="n1", devices=devices)],
        [claim("c0").request("gpu", "big-gpu", 3).build()],
        classes=classes,
    )
    (request,) = e.requests
    detail = f"selector #1 of class big-gpu: {BIG}"
    assert reasons(request) == {f"gpu-{i}": (Reason.CLASS_SELECTOR_FALSE, detail, ("memory=24Gi",)) for i in range(6)}
    assert request.summary_lines() == [f"6 of 8 devices: selector #1 of class big-gpu was false: {BIG}: memory=24Gi"]
    assert e.verdict == "request gpu of claim default/c0 needs 3 device(s), 2 of 8 are eligible"


def test_selector_values_are_aggregated_and_sorted() -> None:
    memories = ["24Gi", "16Gi", "24Gi", "16Gi", "80Gi"]
    devices = [device(f"gpu-{i}", capacity={"memory": m}) for i, m in enumerate(memories)]
    e = explained(
        [resource_slice("s", GPU, "n1", node_name="n1", devices=devices)],
        [claim("c0").request("gpu", "gpu", 2, selectors=[BIG]).build()],
    )
    assert e.requests[0].summary_lines() == [
        f"4 of 5 devices: selector #0 of request gpu was false: {BIG}: memory=16Gi, memory=24Gi"
    ]


def test_request_selector_false() -> None:
    h100 = f'device.attributes["{GPU}"].model == "h100"'
    e = explained([gpus()], [claim("c0").request("gpu", "gpu", 3, selectors=[h100]).build()])
    (request,) = e.requests
    detail = f"selector #0 of request gpu: {h100}"
    assert reasons(request) == {
        "gpu-0": (Reason.REQUEST_SELECTOR_FALSE, detail, ("model=a100",)),
        "gpu-1": (Reason.REQUEST_SELECTOR_FALSE, detail, ("model=a100",)),
    }
    assert request.summary_lines() == [f"2 of 4 devices: selector #0 of request gpu was false: {h100}: model=a100"]


def test_multi_line_selector_is_shown_on_one_line() -> None:
    expression = f"device.attributes['{GPU}'].model == 'h100'\n  && device.attributes['{GPU}'].index > 2"
    e = explained([gpus()], [claim("c0").request("gpu", "gpu", 2, selectors=[expression]).build()])
    details = {detail for _, detail, _ in reasons(e.requests[0]).values()}
    assert details == {f"selector #0 of request gpu: {' '.join(expression.split())}"}


def test_cel_error_is_a_reason_not_an_exception() -> None:
    missing = f"device.attributes['{GPU}'].numa == 0"
    allocator = Allocator(Features(), default_classes(), [gpus()], AllocatedState())
    claims = [claim("c0").request("gpu", "gpu", selectors=[missing]).build()]
    e = explain(allocator, N1, claims)
    (request,) = e.requests
    assert {r.reason for r in request.rejections} == {Reason.CEL_ERROR}
    assert len(request.rejections) == 4
    assert all(r.detail.startswith("selector #0 of request gpu: CEL runtime error") for r in request.rejections)
    assert "numa" in request.rejections[0].detail


def test_taint_not_tolerated() -> None:
    tainted = resource_slice(
        "s",
        GPU,
        "n1",
        node_name="n1",
        devices=[
            device("gpu-0", taints=[taint("broken", "yes", "NoSchedule"), taint("info", "x", "None")]),
            device("gpu-1", taints=[taint("maint", "", "NoExecute")]),
            device("gpu-2"),
        ],
    )
    e = explained([tainted], [claim("c0").request("gpu", "gpu", 2).build()])
    (request,) = e.requests
    assert reasons(request) == {
        "gpu-0": (Reason.TAINT, "broken=yes:NoSchedule", ()),
        "gpu-1": (Reason.TAINT, "maint=:NoExecute", ()),
    }
    assert eligible(request) == ["gpu-2"]


def test_counters_exhausted() -> None:
    e = explained(partitioned(), [claim("c0").request("mig", "mig").build()], [holder(_g("0"))])
    (request,) = e.requests
    assert reasons(request) == {
        "gpu-0": (Reason.IN_USE, "allocated to another claim", ("other/holder",)),
        "gpu-0-mig-a": (Reason.COUNTERS, "exhausted: gpu-0-cs/memory", ()),
        "gpu-0-mig-b": (Reason.COUNTERS, "exhausted: gpu-0-cs/memory", ()),
        "plain": (
            Reason.CLASS_SELECTOR_FALSE,
            f"selector #1 of class mig: device.attributes['{GPU}'].type == 'mig'",
            ("type=other",),
        ),
    }
    assert request.summary_lines()[0] == "2 of 4 devices: counters exhausted (exhausted: gpu-0-cs/memory)"


def test_counters_off() -> None:
    e = explained(
        partitioned(),
        [claim("c0").request("mig", "mig").build()],
        features=Features.from_gates("DRAPartitionableDevices=false"),
    )
    rejected = reasons(e.requests[0])
    assert rejected["gpu-0-mig-a"] == (Reason.COUNTERS_OFF, "DRAPartitionableDevices is off", ())
    assert rejected["gpu-0-mig-b"] == (Reason.COUNTERS_OFF, "DRAPartitionableDevices is off", ())


def test_capacity_left_and_unknown_capacity() -> None:
    share = {"shareID": "0b7c2b40-8b3a-4cf1-9d43-3d5c4f4a8e11", "consumedCapacity": {"bandwidth": "100G"}}
    full = claim("holder", "other").request("r", "nic").allocated(_n("nic-0", **share)).build()
    e = explained(
        [shareable()],
        [
            claim("c0").request("a", "nic", 2, capacity={"bandwidth": "10G"}).build(),
            claim("c1").request("b", "nic", capacity={"ports": "1"}).build(),
        ],
        [full],
    )
    a, b = e.requests
    assert reasons(a) == {"nic-0": (Reason.CAPACITY, "not enough capacity left", ())}
    assert eligible(a) == ["nic-1"]
    assert reasons(b) == {
        "nic-0": (Reason.CAPACITY, "requests a capacity the device does not have", ()),
        "nic-1": (Reason.CAPACITY, "requests a capacity the device does not have", ()),
    }
    assert e.verdict == "request a of claim default/c0 needs 2 device(s), 1 of 2 are eligible"


def test_missing_device_class_verdict() -> None:
    allocator = Allocator(Features(), default_classes(), [gpus()], AllocatedState())
    e = explain(allocator, N1, [claim("c0").request("gpu", "tpu").build()])
    assert e.verdict == "DeviceClass 'tpu' does not exist: the claim stays pending until it is created"
    (request,) = e.requests
    assert request.error == e.verdict and request.considered == 0 and request.rejections == []
    assert e.lines() == [
        f"cannot allocate on node n1: {e.verdict}",
        "  claim default/c0, request gpu (class tpu): 0 eligible, needs 1",
        f"    error: {e.verdict}",
    ]


def test_pool_incomplete() -> None:
    half = resource_slice("half", GPU, "p", node_name="n1", count=2, devices=[device("gpu-0"), device("gpu-1")])
    e = explained([half], [claim("c0").request("gpu", "gpu").build()])
    (request,) = e.requests
    assert set(reasons(request).values()) == {(Reason.POOL_INCOMPLETE, "pool gpu.example.com/p is being updated", ())}
    assert e.pools == ["gpu.example.com/p: incomplete"]
    assert request.summary_lines() == ["2 of 2 devices: pool incomplete (pool gpu.example.com/p is being updated)"]


def test_pool_invalid() -> None:
    slices = [
        resource_slice("p-1", GPU, "p", node_name="n1", count=2, devices=[device("gpu-0")]),
        resource_slice("p-2", GPU, "p", node_name="n1", count=2, devices=[device("gpu-0")]),
    ]
    allocator = Allocator(Features(), default_classes(), slices, AllocatedState())
    e = explain(allocator, N1, [claim("c0").request("gpu", "gpu").build()])
    assert set(reasons(e.requests[0]).values()) == {(Reason.POOL_INVALID, "duplicate device name gpu-0", ())}
    assert e.pools == ["gpu.example.com/p: duplicate device name gpu-0"]


def test_binding_conditions_off() -> None:
    s = resource_slice("s", GPU, "n1", node_name="n1", devices=[device("gpu-0", binding_conditions=["Ready"])])
    e = explained(
        [s],
        [claim("c0").request("gpu", "gpu").build()],
        features=Features.from_gates("DRADeviceBindingConditions=false"),
    )
    assert reasons(e.requests[0]) == {"gpu-0": (Reason.BINDING_CONDITIONS_OFF, "DRADeviceBindingConditions is off", ())}


def test_device_on_another_node() -> None:
    s = resource_slice(
        "s",
        GPU,
        "shared",
        per_device=True,
        devices=[device("gpu-0", node_name="n1"), device("gpu-1", node_name="n2")],
    )
    e = explained([s], [claim("c0").request("gpu", "gpu", 2).build()])
    assert reasons(e.requests[0]) == {
        "gpu-1": (Reason.NODE_MISMATCH, "the device's own node selection excludes this node", ())
    }
    assert eligible(e.requests[0]) == ["gpu-0"]


# ---- aggregation, verdicts, JSON ------------------------------------------------------------------


def test_summary_lines_largest_group_first() -> None:
    h100 = f"device.attributes['{GPU}'].model == 'h100'"
    models = ["a100", "a100", "a100", "h100", "h100", "h100", "h100"]
    devices = [
        device(f"gpu-{i}", {"model": m}, taints=[taint("broken", "", "NoSchedule")] if i in (4, 5) else [])
        for i, m in enumerate(models)
    ]
    e = explained(
        [resource_slice("s", GPU, "n1", node_name="n1", devices=devices)],
        [claim("c0").request("gpu", "gpu", 2, selectors=[h100]).build()],
        [holder(_g(3))],
    )
    assert e.requests[0].summary_lines() == [
        f"3 of 7 devices: selector #0 of request gpu was false: {h100}: model=a100",
        "2 of 7 devices: taint not tolerated (broken=:NoSchedule)",
        "1 of 7 devices: in use (allocated to another claim): other/holder",
    ]


def test_in_use_devices_aggregate_with_their_owners() -> None:
    e = explained(
        [gpus()],
        [claim("c0").request("gpu", "gpu", 2).build()],
        [holder(_g(0), _g(1), name="a"), holder(_g(2), name="b")],
    )
    assert e.requests[0].summary_lines() == ["3 of 4 devices: in use (allocated to another claim): other/a, other/b"]


@pytest.mark.parametrize(
    ("claims", "verdict"),
    [
        pytest.param(
            [claim("c0").request("a", "gpu", 3).build(), claim("c1").request("b", "gpu", 3).build()],
            "the requests compete for the same devices and together need more than are free",
            id="competition",
        ),
        pytest.param(
            [claim("c0").request("a", "gpu", 2).request("b", "gpu", 2).match_attribute(f"{GPU}/model").build()],
            "every request has enough eligible devices on its own, but no combination satisfies the claim constraints",
            id="constraints",
        ),
        pytest.param(
            [
                claim("c0")
                .request("gpu", "gpu", mode="All", selectors=[f"device.attributes['{GPU}'].model == 'v100'"])
                .build()
            ],
            "request gpu asks for all matching devices and none matches",
            id="all-mode-empty",
        ),
        pytest.param(
            [
                claim("c0")
                .first_available(
                    "gpu",
                    subrequest("big", "gpu", 3, selectors=[f"device.attributes['{GPU}'].model == 'h100'"]),
                    subrequest("small", "gpu", 3, selectors=[f"device.attributes['{GPU}'].model == 'a100'"]),
                )
                .build()
            ],
            "request gpu/small of claim default/c0 needs 3 device(s), 2 of 4 are eligible",
            id="first-available-every-subrequest-short",
        ),
        pytest.param(
            [
                claim("c0")
                .first_available(
                    "gpu",
                    subrequest("big", "gpu", 3, selectors=[f"device.attributes['{GPU}'].model == 'h100'"]),
                    subrequest("small", "gpu", 1),
                )
                .request("x", "gpu", 5)
                .build()
            ],
            "request x of claim default/c0 needs 5 device(s), 4 of 4 are eligible",
            id="first-available-not-blamed-when-an-alternative-fits",
        ),
    ],
)
def test_verdicts(claims: list[ResourceClaim], verdict: str) -> None:
    assert explained([gpus()], claims).verdict == verdict


def test_counters_joint_failure_verdict() -> None:
    whole = f"device.attributes['{GPU}'].type == 'gpu'"
    e = explained(partitioned(), [claim("c0").request("a", "gpu", selectors=[whole]).request("b", "mig").build()])
    assert e.verdict == "no combination of eligible devices satisfies all requests together"
    assert [eligible(r) for r in e.requests] == [["gpu-0"], ["gpu-0-mig-a", "gpu-0-mig-b"]]


def test_constraint_notes() -> None:
    e = explained(
        [gpus()],
        [claim("c0").request("a", "gpu", 2).request("b", "gpu", 2).match_attribute(f"{GPU}/model", "a", "b").build()],
    )
    assert e.notes == [f"claim default/c0: matchAttribute {GPU}/model over a, b narrows the eligible devices further"]


def test_to_dict_shape() -> None:
    e = explained([gpus()], [claim("c0").request("gpu", "gpu", 2).build()], [holder(*(_g(i) for i in range(3)))])
    data = e.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data == {
        "node": "n1",
        "verdict": "request gpu of claim default/c0 needs 2 device(s), 1 of 4 are eligible",
        "pools": [],
        "requests": [
            {
                "claim": "default/c0",
                "request": "gpu",
                "deviceClass": "gpu",
                "needed": 2,
                "considered": 4,
                "eligible": [f"{GPU}/n1/gpu-3"],
                "error": None,
                "reasons": [
                    {
                        "reason": "in use",
                        "detail": "allocated to another claim",
                        "devices": 3,
                        "examples": [f"{GPU}/n1/gpu-0", f"{GPU}/n1/gpu-1", f"{GPU}/n1/gpu-2"],
                        "values": ["other/holder"],
                    }
                ],
            }
        ],
        "notes": [],
    }


def test_to_dict_all_mode_and_lines() -> None:
    e = explained([gpus()], [claim("c0").request("gpu", "gpu", mode="All").build()], [holder(_g(1))])
    assert e.to_dict()["requests"][0]["needed"] == "all"
    assert e.lines()[1] == "  claim default/c0, request gpu (class gpu): 3 eligible, needs all"


def test_explain_does_not_change_its_inputs() -> None:
    slices, claims, held = [gpus()], [claim("c0").request("gpu", "gpu", 5).build()], [holder(_g(0))]
    before = msgspec.to_builtins([slices, claims, held])
    explained(slices, claims, held)
    assert msgspec.to_builtins([slices, claims, held]) == before


def _g(index: int | str, **extra: Any) -> dict[str, Any]:
    return {"request": "r", "driver": GPU, "pool": "n1", "device": f"gpu-{index}", **extra}


def _n(name: str, **extra: Any) -> dict[str, Any]:
    return {"request": "r", "driver": NIC, "pool": "n1", "device": name, **extra}

"""MIG profile tables: the A100-40GB table equals the shared DynamicMIG capture; placement of static layouts."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from tests.conftest import DRIVERS

from dratwin.catalog import UnknownMigProfileError, mig_layout
from dratwin.catalog.nvidia import mig_layouts

A100 = "NVIDIA A100-SXM4-40GB"
H100 = "NVIDIA H100 80GB HBM3"
NAME = re.compile(r"^gpu-0-mig-(?P<infix>.+)-(?P<gi>\d+)-(?P<start>\d)$")
# NVIDIA MIG user guide: instances of each profile per GPU (1-slice, +me, 2-slice 1g, 2g, 3g, 4g, 7g).
MAX_PER_GPU = [7, 1, 4, 3, 2, 1, 1]


def _gpu0_devices(file: str) -> list[dict[str, Any]]:
    docs = yaml.safe_load_all((DRIVERS / file).read_text())
    return [d for doc in docs if doc for d in doc["spec"].get("devices", []) if d["name"].startswith("gpu-0-")]


def test_a100_table_equals_the_dynamic_mig_capture() -> None:
    layout = mig_layout(A100)
    assert layout is not None and not layout.estimated
    by_name = {p.name: p for p in layout.profiles}
    seen: dict[str, set[int]] = {name: set() for name in by_name}
    for device in _gpu0_devices("resourceslice-p4d.24xlarge-dynamic-mig.yaml"):
        profile = by_name[device["attributes"]["profile"]["string"]]
        match = NAME.match(device["name"])
        assert match is not None
        assert (match["infix"], int(match["gi"])) == (profile.device_infix, profile.gi_profile_id)
        seen[profile.name].add(int(match["start"]))
        capacity = {k: v["value"] for k, v in device["capacity"].items()}
        assert capacity["memory"] == profile.memory
        assert {k: int(capacity[k]) for k in profile.engines} == dict(profile.engines)
        counters = device["consumesCounters"][0]["counters"]
        slices = {int(key.removeprefix("memory-slice-")) for key in counters if key.startswith("memory-slice-")}
        assert slices == set(range(int(match["start"]), int(match["start"]) + profile.memory_slices))
    assert seen == {name: set(p.placements) for name, p in by_name.items()}


def test_static_layout_reproduces_the_static_mig_capture() -> None:
    layout = mig_layout(A100)
    assert layout is not None
    planned = layout.plan([("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1)])
    captured = _gpu0_devices("resourceslice-p4d.24xlarge-static-mig.yaml")
    assert [i.profile.device_name(0, i.start) for i in planned] == [d["name"] for d in captured]
    for instance, device in zip(planned, captured, strict=True):
        slices = {k for k in device["capacity"] if k.startswith("memorySlice")}
        assert slices == {f"memorySlice{s}" for s in instance.memory_slices}


@pytest.mark.parametrize("product", sorted(mig_layouts()))
def test_instances_per_gpu_follow_nvidias_table(product: str) -> None:
    layout = mig_layout(product)
    assert layout is not None
    assert [layout.max_instances(p.name) for p in layout.profiles] == MAX_PER_GPU


def test_fill_after_fixed_instances() -> None:
    layout = mig_layout(H100)
    assert layout is not None
    planned = layout.plan([("3g.40gb", 1), ("1g.10gb", None)])
    assert [(i.profile.name, i.start) for i in planned] == [("3g.40gb", 0), *[("1g.10gb", s) for s in (4, 5, 6)]]
    # A mixed layout that only fits in one order is still found (backtracking).
    planned = layout.plan([("3g.40gb", 1), ("2g.20gb", 1), ("1g.10gb", 2)])
    assert sorted(i.profile.name for i in planned) == ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]


def test_layouts_that_do_not_fit_or_do_not_exist() -> None:
    layout = mig_layout(H100)
    assert layout is not None
    with pytest.raises(UnknownMigProfileError, match=r"3x 3g\.40gb does not fit on one NVIDIA H100"):
        layout.plan([("3g.40gb", 3)])
    with pytest.raises(UnknownMigProfileError, match=r"valid profiles: 1g\.10gb, 1g\.10gb\+me, 1g\.20gb"):
        layout.plan([("1g.5gb", None)])
    assert layout.max_instances("1g.10gb+me") == 1  # one OFA engine per GPU


def test_device_names() -> None:
    layout = mig_layout(A100)
    assert layout is not None
    assert layout.profile("1g.5gb+me").device_name(3, 6) == "gpu-3-mig-1g5gb-me-20-6"
    assert mig_layout("NVIDIA L40S") is None

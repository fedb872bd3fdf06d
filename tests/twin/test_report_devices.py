"""The devices ``schedule`` shows for each pod (table and JSON) and ``explain`` shows for a scheduled pod.

A claim that several pods name (``resourceClaimName``) is allocated once, for the first pod scheduled;
the others reuse the allocation. Every one of them uses the devices, so every one of them shows them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from tests.builders.manifests import (
    GPU_DRIVER,
    bound_pod_with_claim,
    claim_template,
    gpu_class,
    gpu_request,
    gpu_slice,
    manifest,
    node,
    pod,
    resource_claim,
    run,
)

from dratwin.cel import SelectorCompiler
from dratwin.twin.explain import explain_pod
from dratwin.twin.report import render_json, render_table
from dratwin.twin.schedule import ScheduleReport


@dataclass(frozen=True)
class DevicesCase:
    name: str
    build: Callable[[], str]
    expected: dict[str, list[str]]  # pod -> its device lines


def shared_by_name() -> str:
    return manifest(
        gpu_class(), node("n0"), gpu_slice("n0", 1), resource_claim("shared-gpu"),
        [pod(f"reader-{i}", cpu="1", claims={"gpu": "shared-gpu"}) for i in range(3)],
    )


def shared_claim_allocated_in_the_input() -> str:
    """A running pod's claim (from a dump) that a new pod also names."""
    running, claim = bound_pod_with_claim("first", "n0", ["gpu-1"])
    return manifest(
        gpu_class(), node("n0"), gpu_slice("n0", 2), claim_template("one-gpu"), running, claim,
        pod("second", cpu="1", claims={"gpu": claim["metadata"]["name"]}),
    )


def own_and_shared() -> str:
    """One pod with its own claim and a shared one: both claims' devices, in the pod's order."""
    return manifest(
        gpu_class(), node("n0"), gpu_slice("n0", 3), resource_claim("shared-gpu"),
        resource_claim("own-a", gpu_request()), resource_claim("own-b", gpu_request()),
        pod("a", cpu="1", claims={"own": "own-a", "shared": "shared-gpu"}),
        pod("b", cpu="1", claims={"own": "own-b", "shared": "shared-gpu"}),
    )


def dev(claim: str, device: str, request: str = "gpu") -> str:
    return f"default/{claim}/{request}: {GPU_DRIVER}/n0/{device}"


CASES = [
    DevicesCase("shared-by-name", shared_by_name, {
        f"default/reader-{i}": [dev("shared-gpu", "gpu-0")] for i in range(3)
    }),
    DevicesCase("allocated-in-the-input", shared_claim_allocated_in_the_input, {
        "default/second": [dev("first-gpu-x7k2q", "gpu-1")],
    }),
    DevicesCase("own-and-shared", own_and_shared, {
        "default/a": [dev("own-a", "gpu-0"), dev("shared-gpu", "gpu-1")],
        "default/b": [dev("own-b", "gpu-2"), dev("shared-gpu", "gpu-1")],
    }),
]


def table_devices(report: ScheduleReport) -> dict[str, list[str]]:
    """POD / NODE / DEVICES rows of the table, continuation rows joined to their pod."""
    lines = render_table(report, SelectorCompiler()).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("POD "))
    column = lines[start].index("DEVICES")
    found: dict[str, list[str]] = {}
    current = ""
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if line[:column].strip():
            current = line.split()[0]
            found[current] = []
        device = line[column:].strip()
        if device != "-":
            found[current].append(device)
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_pod_of_a_claim_shows_its_devices_in_the_table(case: DevicesCase) -> None:
    report = run(case.build())
    assert all(a.scheduled for a in report.attempts)
    assert table_devices(report) == case.expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_pod_of_a_claim_shows_its_devices_in_json(case: DevicesCase) -> None:
    report = run(case.build())
    body = json.loads(render_json(report, SelectorCompiler()))
    assert {s["pod"]: s["devices"] for s in body["scheduled"]} == case.expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_explain_of_each_pod_shows_the_devices(case: DevicesCase) -> None:
    report = run(case.build())
    for pod_key, devices in case.expected.items():
        assert explain_pod(report, pod_key).devices == devices

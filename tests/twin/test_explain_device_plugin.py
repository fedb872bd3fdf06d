"""``explain`` of a pod whose claim cannot be allocated on nodes whose devices the device plugin serves:
it says so, names the extended resource to request instead, and says nothing of the kind where a DRA driver
publishes the family's devices or where the claim asks for another family."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.manifests import (
    claim_template,
    device_class,
    gpu_request,
    gpu_slice,
    manifest,
    node,
    pod,
    run,
)

from dratwin.twin.explain import explain_pod

NVIDIA_CLASS = device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com'")
EFA_CLASS = device_class("efa.networking.k8s.aws", "device.driver == 'dra.net'")
ANY_CLASS = device_class("any-device", "true")


def plugin_line(nodes: str, devices: str, resource: str, count: int, each: str = "") -> str:
    whose = "their" if "," in nodes else "its"
    return (
        f"{nodes}: {whose} {devices} are served by the device plugin ({resource}: {count} allocatable{each}), not by "
        f"a DRA driver: no ResourceSlice publishes them; request {resource} in the container, or run the DRA "
        "driver there"
    )


@dataclass(frozen=True)
class PluginCase:
    name: str
    objects: list[Any]
    device_class: str
    expected: list[str] = field(default_factory=list)  # the device-plugin lines, in order
    count: int = 1  # devices the claim asks for


CASES = [
    PluginCase(
        "one-plugin-node",
        [NVIDIA_CLASS, node("p5-plugin", extended={"nvidia.com/gpu": "8"})],
        "gpu.nvidia.com",
        [plugin_line("node p5-plugin", "GPUs", "nvidia.com/gpu", 8)],
    ),
    PluginCase(
        "several-plugin-nodes-one-line",
        [NVIDIA_CLASS, *(node(f"g6-{i}", extended={"nvidia.com/gpu": "4"}) for i in range(3))],
        "gpu.nvidia.com",
        [plugin_line("nodes g6-0, g6-1, g6-2", "GPUs", "nvidia.com/gpu", 4, " each")],
    ),
    PluginCase(
        "efa-claim-on-a-gpu-plugin-node-says-nothing-of-gpus",
        [EFA_CLASS, node("p5-plugin", extended={"nvidia.com/gpu": "8"})],
        "efa.networking.k8s.aws",
    ),
    PluginCase(
        "efa-plugin-beside-a-dra-gpu-driver",
        [EFA_CLASS, node("p5-mixed", extended={"vpc.amazonaws.com/efa": "32"}),
         gpu_slice("p5-mixed", 8, driver="gpu.nvidia.com")],
        "efa.networking.k8s.aws",
        [plugin_line("node p5-mixed", "EFA adapters", "vpc.amazonaws.com/efa", 32)],
    ),
    PluginCase(
        "dra-driver-node-is-not-blamed-on-the-plugin",
        [NVIDIA_CLASS, node("p5-dra"), gpu_slice("p5-dra", 1, driver="gpu.nvidia.com")],
        "gpu.nvidia.com",
        count=2,
    ),
    PluginCase(
        "a-class-naming-no-driver-could-want-any-family",
        [ANY_CLASS, node("p5-plugin", extended={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"})],
        "any-device",
        [plugin_line("node p5-plugin", "GPUs", "nvidia.com/gpu", 8),
         plugin_line("node p5-plugin", "EFA adapters", "vpc.amazonaws.com/efa", 32)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_explain_says_when_the_device_plugin_serves_the_devices(case: PluginCase) -> None:
    text = manifest(
        *case.objects,
        claim_template("devices", gpu_request(count=case.count, device_class_name=case.device_class)),
        pod("trainer", cpu="1", templates={"devices": "devices"}),
    )
    explanation = explain_pod(run(text), "default/trainer")
    assert explanation.status == "Pending"
    lines = [line for g in explanation.groups for line in g.lines if "device plugin" in line]
    assert lines == case.expected

"""Slices, classes and claims shared by the allocator tests: small GPU and NIC nodes in several shapes."""

from __future__ import annotations

from typing import Any

from tests.builders import claim, device, device_class, resource_slice

from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice

GPU = "gpu.example.com"
NIC = "nic.example.com"
PCIE = "resource.kubernetes.io/pcieRoot"
SHARE = "<share>"



def default_classes() -> list[DeviceClass]:
    return [
        device_class("gpu", f"device.driver == '{GPU}'", config=[(GPU, {"sharing": "none"})]),
        device_class("nic", f"device.driver == '{NIC}'"),
        device_class("mig", f"device.driver == '{GPU}'", f"device.attributes['{GPU}'].type == 'mig'"),
    ]


def gpus(node_name: str = "n1", **device_extra: Any) -> ResourceSlice:
    """gpu-0, gpu-1: a100 40Gi; gpu-2, gpu-3: h100 80Gi. Extra keyword arguments go to gpu-0 only."""
    models = [("a100", "40Gi"), ("a100", "40Gi"), ("h100", "80Gi"), ("h100", "80Gi")]
    devices = [
        device(
            f"gpu-{i}",
            {"model": model, "index": i, "type": "gpu"},
            {"memory": memory},
            **(device_extra if i == 0 else {}),
        )
        for i, (model, memory) in enumerate(models)
    ]
    return resource_slice(f"{node_name}-gpus", GPU, node_name=node_name, devices=devices)


def many(count: int) -> ResourceSlice:
    return resource_slice("n1-gpus", GPU, node_name="n1", devices=[device(f"gpu-{i}") for i in range(count)])


def p5_like() -> list[ResourceSlice]:
    """gpu-0 on root pci-a (2 NICs behind it), gpu-1 on root pci-b (4 NICs behind it)."""
    gpus = [device(f"gpu-{i}", {PCIE: root}) for i, root in enumerate(["pci-a", "pci-b"])]
    roots = ["pci-a", "pci-a", "pci-b", "pci-b", "pci-b", "pci-b"]
    nics = [device(f"nic-{i}", {PCIE: root, "rdma": True}) for i, root in enumerate(roots)]
    return [
        resource_slice("n1-gpus", GPU, node_name="n1", devices=gpus),
        resource_slice("n1-nics", NIC, node_name="n1", devices=nics),
    ]


def partitioned(**whole_extra: Any) -> list[ResourceSlice]:
    """One 40Gi GPU offered whole (gpu-0) or as two 20Gi MIG halves; a counter set in its own slice."""
    counters = resource_slice(
        "n1-counters", GPU, "n1", node_name="n1", count=2, shared_counters={"gpu-0-cs": {"memory": "40Gi"}}
    )
    devices = [
        device("gpu-0", {"type": "gpu"}, consumes_counters={"gpu-0-cs": {"memory": "40Gi"}}, **whole_extra),
        device("gpu-0-mig-a", {"type": "mig"}, consumes_counters={"gpu-0-cs": {"memory": "20Gi"}}),
        device("gpu-0-mig-b", {"type": "mig"}, consumes_counters={"gpu-0-cs": {"memory": "20Gi"}}),
        device("plain", {"type": "other"}),
    ]
    return [counters, resource_slice("n1-devices", GPU, "n1", node_name="n1", count=2, devices=devices)]


def shareable() -> ResourceSlice:
    """nic-0 is multi-allocatable: 100G bandwidth, 10G default, steps of 10G; nic-1 is an ordinary NIC."""
    policy = {"default": "10G", "validRange": {"min": "10G", "step": "10G"}}
    return resource_slice(
        "n1-nics",
        NIC,
        node_name="n1",
        devices=[
            device("nic-0", capacity={"bandwidth": {"value": "100G", "requestPolicy": policy}}, allow_multiple=True),
            device("nic-1", capacity={"bandwidth": "100G"}),
        ],
    )


def holder(*results: dict[str, Any], name: str = "holder") -> ResourceClaim:
    return claim(name, "other").request("r", "gpu").allocated(*results).build()


def one_gpu(name: str = "c0", **request: Any) -> ResourceClaim:
    return claim(name).request("gpu", "gpu", **request).build()

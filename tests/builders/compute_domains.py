"""Builders for NVIDIA ComputeDomains and the pods that use their channel template (plain wire dicts)."""

from __future__ import annotations

from typing import Any

Wire = dict[str, Any]

CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"


def compute_domain(
    name: str = "imex",
    namespace: str | None = "ml",
    template: str = "imex-channel-0",
    num_nodes: int | None = None,
    allocation_mode: str | None = None,
    uid: str | None = None,
) -> Wire:
    channel: Wire = {"resourceClaimTemplate": {"name": template}}
    if allocation_mode is not None:
        channel["allocationMode"] = allocation_mode
    spec: Wire = {"channel": channel}
    if num_nodes is not None:
        spec["numNodes"] = num_nodes
    metadata: Wire = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if uid is not None:
        metadata["uid"] = uid
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "metadata": metadata, "spec": spec}


def channel_pod(
    name: str,
    template: str = "imex-channel-0",
    namespace: str = "ml",
    claim: str = "imex-channel-0",
    gpus: int = 0,
    node_selector: dict[str, str] | None = None,
) -> Wire:
    """A workload pod with one claim from a ComputeDomain's channel template (and device-plugin GPUs)."""
    resources: Wire = {"claims": [{"name": claim}]}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    spec: Wire = {
        "containers": [{"name": "ctr", "image": "ubuntu:22.04", "resources": resources}],
        "resourceClaims": [{"name": claim, "resourceClaimTemplateName": template}],
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def compute_domain_classes() -> list[Wire]:
    """The two DeviceClasses the NVIDIA DRA driver's chart creates for ComputeDomains."""
    def device_class(name: str, kind: str, extra: str = "") -> Wire:
        expression = (f"device.driver == 'compute-domain.nvidia.com' && "
                      f"device.attributes['compute-domain.nvidia.com'].type == '{kind}'{extra}")
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                "spec": {"selectors": [{"cel": {"expression": expression}}]}}

    return [device_class(DAEMON_CLASS, "daemon"),
            device_class(CHANNEL_CLASS, "channel", " && device.attributes['compute-domain.nvidia.com'].id == 0")]


def gb200_node(name: str, clique: str = "cluster-a.1", gpus: int = 4) -> Wire:
    """A P6e-GB200 node as GPU Feature Discovery labels it (its clique), with device-plugin GPUs."""
    allocatable = {"cpu": "143", "memory": "900Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p6e-gb200.36xlarge",
              "nvidia.com/gpu.present": "true"}
    if clique:
        labels["nvidia.com/gpu.clique"] = clique
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": dict(allocatable), "allocatable": allocatable}}


def compute_domain_slice(node: str) -> Wire:
    """The ComputeDomain kubelet plugin's slice on ``node``: channel-0 and daemon-0."""
    devices = [{"name": f"{kind}-0", "attributes": {"id": {"int": 0}, "type": {"string": kind}}}
               for kind in ("channel", "daemon")]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-compute-domain.nvidia.com"},
            "spec": {"driver": "compute-domain.nvidia.com", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}


def gb200_nodes(*names: str, clique: str = "cluster-a.1") -> list[Wire]:
    """Nodes of one UltraServer (one clique), each with its ComputeDomain slice."""
    return [obj for name in names for obj in (gb200_node(name, clique), compute_domain_slice(name))]

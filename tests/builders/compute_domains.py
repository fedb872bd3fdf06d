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

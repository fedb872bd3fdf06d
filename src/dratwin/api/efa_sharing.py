"""A ResourceClaim with EFA devices that several pods share: what DRANET then does.

Sharing a claim is an API feature (``resourceClaimName`` in several pods): kube-scheduler reserves the claim for
each of them and places them on the node of its devices. The EKS guide ("Manage EFA devices on Amazon EKS",
"Share EFA devices between multiple Pods") shows it with the EFA DRA driver. What happens on the node is DRANET's
doing (kubernetes-sigs/dranet ``pkg/driver/dra_hooks.go``, ``nri_hooks.go``): the kubelet prepares a claim once per
node, and DRANET records the EFAs for the pods the claim is reserved for *at that moment*; its NRI hooks give a pod
the EFA's character devices only if it was recorded. So:

- DRANET v1.2.0, the version of the EKS aws-dranet chart (image ``v1.2.0-eksbuild.2``): pods reserved when the
  claim is first prepared share the EFAs; a pod reserved later (it started after the first one) runs without them;
- DRANET v1.4.0 and later (PR #214, "1:1 pod-to-claim enforcement"): preparing a claim reserved for more than one
  pod fails ("driver only supports one pod per claim"), so those pods stay ContainerCreating; a pod reserved after
  the claim was prepared for one pod still runs without the EFAs.

Either way the second pod can end up without the EFAs it asked for, and nothing in the API says so. The fix is one
claim per pod: a ResourceClaimTemplate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dratwin.api.driver_shapes import requests_driver
from dratwin.api.resource import DeviceClaim, DeviceClass, ResourceClaim

EFA_DRIVER = "dra.net"
_SHOWN = 3


def requests_efa(devices: DeviceClaim, classes: Mapping[str, DeviceClass]) -> bool:
    """Whether some request (or subrequest) of the claim asks for devices of a class that selects DRANET's."""
    return requests_driver(devices, classes, EFA_DRIVER)


def allocated_efas(claim: ResourceClaim) -> list[str]:
    """The EFA devices of the claim's allocation (on one node: their pool is the node's)."""
    allocation = claim.status.allocation
    if allocation is None:
        return []
    return [r.device for r in allocation.devices.results if r.driver == EFA_DRIVER]


def shared_efa_message(claim: str, pods: Sequence[str], efas: Sequence[str] = (), count: int | None = None) -> str:
    """What a real cluster does with ``claim`` (namespace/name), which holds EFAs, shared by ``pods`` (``count``
    pods in all, when some entries stand for a workload's many pods)."""
    shown = ", ".join(pods[:_SHOWN]) + (f" and {len(pods) - _SHOWN} more" if len(pods) > _SHOWN else "")
    held = f" ({', '.join(efas[:_SHOWN])}{' ...' if len(efas) > _SHOWN else ''})" if efas else ""
    return (
        f"ResourceClaim {claim} holds EFA devices{held} and is shared by {count or len(pods)} pods ({shown}): "
        "kube-scheduler "
        "reserves it for all of them on one node, but DRANET hands the EFAs only to the pods the claim is reserved "
        "for when the kubelet first prepares it: with DRANET v1.2.0 (the EKS aws-dranet chart's) a pod that starts "
        "later runs without the EFAs; DRANET v1.4.0 and later refuse to prepare a claim reserved for more than one pod "
        "(\"driver only supports one pod per claim\"), so those pods stay ContainerCreating; give each pod its own "
        "claim with a ResourceClaimTemplate"
    )


def shared_efa_warnings(claims: Iterable[ResourceClaim]) -> dict[str, str]:
    """Claim key (namespace/name) -> the warning, for every allocated claim with EFAs reserved by several pods."""
    found = {}
    for claim in claims:
        pods = [r.name for r in claim.status.reserved_for if r.resource == "pods"]
        efas = allocated_efas(claim)
        if len(pods) > 1 and efas:
            key = f"{claim.metadata.namespace or 'default'}/{claim.metadata.name}"
            found[key] = shared_efa_message(key, pods, efas)
    return found

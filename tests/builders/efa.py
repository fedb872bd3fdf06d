"""EFA objects as the EKS guide writes them: DRANET's DeviceClass, a ResourceClaim of EFAs, pods sharing it."""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]

EFA_CLASS_NAME = "efa.networking.k8s.aws"


def efa_class(selector: str = 'device.driver == "dra.net" && '
              "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'") -> Raw:
    """The DeviceClass the aws-dranet chart creates."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": EFA_CLASS_NAME},
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}


def efa_claim(name: str = "shared-efa", count: int = 4, device_class: str = EFA_CLASS_NAME,
              namespace: str = "default") -> Raw:
    """The guide's ``shared-efa`` ResourceClaim: ``count`` EFAs."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "efa", "exactly": {"deviceClassName": device_class,
                                                                         "count": count}}]}}}


def claim_user(name: str, claim: str = "shared-efa", kind: str = "Pod", replicas: int | None = None) -> Raw:
    """A Pod (or a workload of ``replicas`` pods) whose containers use the ResourceClaim ``claim`` by name."""
    spec: Raw = {"containers": [{"name": "main", "image": "my-training-image",
                                 "resources": {"claims": [{"name": "efa-devices"}]}}],
                 "resourceClaims": [{"name": "efa-devices", "resourceClaimName": claim}]}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    body: Raw = {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": body}

"""NodePools, pods and claim templates for the provisioning tests, and a one-call `plan`."""

from __future__ import annotations

from typing import Any

from tests.conftest import DRIVERS

from dratwin.allocator import Features
from dratwin.api.codec import dump_yaml_documents
from dratwin.api.loader import load_paths, load_text
from dratwin.twin.plan import PlanOptions, PlanReport, plan

CLASSES = DRIVERS / "deviceclasses.yaml"
CLAIMS = {o.name: o.raw for o in load_paths([str(DRIVERS / "resourceclaims.yaml")])}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists"}
EC2_NODE_CLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}
AUTO_MODE_NODE_CLASS = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}


def nodepool(
    name: str = "gpu",
    weight: int | None = 10,
    requirements: list[dict[str, Any]] | None = None,
    limits: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    auto_mode: bool = False,
) -> dict[str, Any]:
    """A NodePool of self-managed Karpenter (an EC2NodeClass), or of EKS Auto Mode (its NodeClass)."""
    node_class = AUTO_MODE_NODE_CLASS if auto_mode else EC2_NODE_CLASS
    spec: dict[str, Any] = {
        "template": {
            "spec": {
                "nodeClassRef": dict(node_class),
                "requirements": requirements or [],
            }
        },
    }
    if weight is not None:
        spec["weight"] = weight
    if labels:
        spec["template"]["metadata"] = {"labels": labels}
    if limits:
        spec["limits"] = limits
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def template_from_shared(name: str, namespace: str = "ml") -> dict[str, Any]:
    raw = CLAIMS[name]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": raw["spec"],
    }


def pod(
    name: str,
    template: str = "",
    gpus: int = 0,
    cpu: str = "1",
    namespace: str = "ml",
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
    spec: dict[str, Any] = {
        "tolerations": [GPU_TOLERATION],
        "containers": [{"name": "c", "image": "x", "resources": resources}],
    }
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    if template:
        resources["claims"] = [{"name": "dev"}]
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def run_plan(*objects: dict[str, Any], auto_mode: bool = False) -> PlanReport:
    text = dump_yaml_documents(list(objects))
    loaded = load_paths([str(CLASSES)]) + load_text(text)
    return plan(loaded, Features(), PlanOptions(auto_mode=auto_mode))


def launched(report: PlanReport) -> list[tuple[str, list[str]]]:
    return [(c.chosen().instance_type.name, [p.info.key for p in c.pods]) for c in report.plan.claims]


def ec2_node_class(name: str = "x", interfaces: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An EC2NodeClass; ``interfaces`` become its spec.networkInterfaces."""
    spec: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    }
    if interfaces is not None:
        spec["networkInterfaces"] = interfaces
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": spec}


def auto_node_class(name: str = "default", interfaces: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An EKS Auto Mode NodeClass; ``interfaces`` become its spec.advancedNetworking.networkInterfaces."""
    spec: dict[str, Any] = {"role": "MyNodeRole"}
    if interfaces is not None:
        spec["advancedNetworking"] = {"networkInterfaces": interfaces}
    return {"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass", "metadata": {"name": name}, "spec": spec}


def interfaces(efa_only: int) -> list[dict[str, Any]]:
    """The EKS guide's layout: the primary ENA interface, then ``efa_only`` EFA-only interfaces, one per card."""
    primary = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    return [primary] + [{"networkCardIndex": i, "deviceIndex": 0 if i else 1, "interfaceType": "efa-only"}
                        for i in range(efa_only)]

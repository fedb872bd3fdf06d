"""A trace as Kubernetes manifests: Nodes, the GPU driver's ResourceSlices, claim templates and Pods.

With the DRA driver (``dra``), each GPU node publishes one ResourceSlice of driver ``gpu.nvidia.com``: its
GPUs ``gpu-0..`` carry the trace's model as attribute ``model``, allow multiple allocations and have a
consumable capacity ``milli`` of 1000 (DRAConsumableCapacity; a request that names no amount takes the
policy default, the whole GPU). A pod that uses GPUs gets a claim from a template for its shape:
``num_gpu`` GPUs, each giving ``gpu_milli`` of its ``milli`` capacity, and, when the pod lists allowed
models (``gpu_spec``), a CEL selector on the model. Several pods then share one GPU as long as their
shares fit in 1000, which is the trace's sharing model.

With the device plugin (``device-plugin``), the NVIDIA device plugin's time-slicing stands in for
sharing: each GPU is advertised as ``replicas`` units of ``nvidia.com/gpu``, a pod asks for its share
rounded up to whole units (``ceil(gpu_milli * replicas / 1000)`` per GPU) and its allowed models become a
node affinity on the GPU feature discovery label ``nvidia.com/gpu.product``. Time-slicing isolates nothing
and does not keep a pod's units on distinct GPUs: the comparison with DRA shares is the point.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dratwin.errors import InputError
from dratwin.gpushare.fragmentation import MILLI
from dratwin.trace.alibaba import AlibabaNode, AlibabaPod, read_nodes, read_pods

DRA, DEVICE_PLUGIN = "dra", "device-plugin"
GPU_MANAGERS = (DRA, DEVICE_PLUGIN)
DEFAULT_REPLICAS = 10
DRIVER = "gpu.nvidia.com"
DEVICE_CLASS = "gpu.nvidia.com"
CAPACITY = "milli"
MODEL_LABEL = "nvidia.com/gpu.product"
EXTENDED_RESOURCE = "nvidia.com/gpu"
MAX_PODS_PER_NODE = "110"  # the kubelet's default
IMAGE = "registry.k8s.io/pause:3.10"
Shape = tuple[int, int, tuple[str, ...]]  # a pod's GPUs, the share of each, its allowed models
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class ImportOptions:
    gpu_manager: str = DRA
    replicas: int = DEFAULT_REPLICAS
    namespace: str = "default"


def import_alibaba(node_list: Path, pod_list: Path, options: ImportOptions) -> list[dict[str, Any]]:
    """The manifests of a trace's node list and pod list (an InputError names the file and row)."""
    nodes = read_nodes(node_list)
    pods = read_pods(pod_list)
    _check_names(node_list, [n.name for n in nodes], "sn")
    _check_names(pod_list, [p.name for p in pods], "name")
    return list(manifests(nodes, pods, options))


def manifests(
    nodes: Sequence[AlibabaNode], pods: Sequence[AlibabaPod], options: ImportOptions
) -> Iterator[dict[str, Any]]:
    """DeviceClass (DRA), then each Node and its slice, then claim templates (DRA), then the Pods."""
    dra = options.gpu_manager == DRA
    if dra:
        yield _device_class()
    for node in nodes:
        yield _node(node, options)
        if dra and node.gpus > 0:
            yield _slice(node)
    templates: dict[Shape, str] = {}
    for pod in pods:
        if dra and _uses_gpu(pod):
            shape = (pod.num_gpu, _share(pod), pod.gpu_spec)
            if shape not in templates:
                templates[shape] = _template_name(*shape)
                yield _template(templates[shape], *shape, options.namespace)
    for pod in pods:
        yield _pod(pod, options, templates)


def _check_names(path: Path, names: list[str], column: str) -> None:
    for row, name in enumerate(names, start=2):
        if not _DNS_LABEL.match(name) or len(name) > 63:
            raise InputError(
                f"{path}: data row {row - 1}: column {column}: {name!r} is not a valid Kubernetes name "
                "(lowercase letters, digits and '-', at most 63 characters)"
            )


def _uses_gpu(pod: AlibabaPod) -> bool:
    return pod.num_gpu > 0 and pod.gpu_milli > 0


def _share(pod: AlibabaPod) -> int:
    return min(pod.gpu_milli, MILLI)


def _device_class() -> dict[str, Any]:
    expression = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DEVICE_CLASS},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def _node(node: AlibabaNode, options: ImportOptions) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux"}
    if node.model:
        labels[MODEL_LABEL] = node.model
    resources = {"cpu": f"{node.cpu_milli}m", "memory": f"{node.memory_mib}Mi", "pods": MAX_PODS_PER_NODE}
    if options.gpu_manager == DEVICE_PLUGIN and node.gpus > 0:
        resources[EXTENDED_RESOURCE] = str(node.gpus * options.replicas)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def _slice(node: AlibabaNode) -> dict[str, Any]:
    capacity = {
        CAPACITY: {
            "value": str(MILLI),
            "requestPolicy": {"default": str(MILLI), "validRange": {"min": "1", "max": str(MILLI), "step": "1"}},
        }
    }
    devices = [
        {
            "name": f"gpu-{index}",
            "attributes": {"type": {"string": "gpu"}, "model": {"string": node.model}, "index": {"int": index}},
            "capacity": capacity,
            "allowMultipleAllocations": True,
        }
        for index in range(node.gpus)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node.name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node.name,
            "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _template_name(count: int, share: int, models: tuple[str, ...]) -> str:
    name = f"gpu-{count}x{share}m"
    if models:
        name += "-" + "-".join(re.sub(r"[^a-z0-9]+", "-", m.lower()).strip("-") for m in models)
    return name[:63].rstrip("-")


def model_selector(models: tuple[str, ...]) -> str:
    """The CEL expression that admits only GPUs of ``models``."""
    listed = ", ".join(f"'{m}'" for m in models)
    return f"device.attributes['{DRIVER}'].model in [{listed}]"


def _template(name: str, count: int, share: int, models: tuple[str, ...], namespace: str) -> dict[str, Any]:
    request: dict[str, Any] = {
        "deviceClassName": DEVICE_CLASS,
        "allocationMode": "ExactCount",
        "count": count,
        "capacity": {"requests": {CAPACITY: str(share)}},
    }
    if models:
        request["selectors"] = [{"cel": {"expression": model_selector(models)}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}},
    }


def _pod(pod: AlibabaPod, options: ImportOptions, templates: dict[Shape, str]) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": f"{pod.cpu_milli}m", "memory": f"{pod.memory_mib}Mi"}
    container: dict[str, Any] = {"name": "main", "image": IMAGE, "resources": {"requests": requests}}
    spec: dict[str, Any] = {"containers": [container]}
    if _uses_gpu(pod) and options.gpu_manager == DRA:
        container["resources"]["claims"] = [{"name": "gpu"}]
        template = templates[(pod.num_gpu, _share(pod), pod.gpu_spec)]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    elif _uses_gpu(pod):
        units = str(pod.num_gpu * math.ceil(_share(pod) * options.replicas / MILLI))
        requests[EXTENDED_RESOURCE] = units
        container["resources"]["limits"] = {EXTENDED_RESOURCE: units}
        if pod.gpu_spec:
            term = {"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": list(pod.gpu_spec)}]}
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [term]}}}
    metadata: dict[str, Any] = {"name": pod.name, "namespace": options.namespace}
    if pod.qos:
        metadata["labels"] = {"trace.dratwin.io/qos": pod.qos}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


__all__ = ["DEFAULT_REPLICAS", "DEVICE_PLUGIN", "DRA", "GPU_MANAGERS", "ImportOptions", "import_alibaba",
           "manifests", "model_selector"]

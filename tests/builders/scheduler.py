"""Pods, nodes and node books for the scheduler tests, written as in the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.builders import Wire, convert

from dratwin.api.core import Node, Pod
from dratwin.scheduler.framework import NodeInfo, PodInfo
from dratwin.scheduler.resources import make_pod_info, new_node_info


def container(
    requests: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    *,
    name: str = "c",
    sidecar: bool = False,
) -> Wire:
    data: Wire = {"name": name, "resources": {"requests": dict(requests or {}), "limits": dict(limits or {})}}
    if sidecar:
        data["restartPolicy"] = "Always"
    return data


def make_pod(
    name: str = "p",
    *containers: Wire,
    init: Sequence[Wire] = (),
    namespace: str = "default",
    **spec: Any,
) -> Pod:
    """A pod; ``spec`` keys are written as in the API (``priority=5``, ``preemptionPolicy="Never"``)."""
    data = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": list(containers), "initContainers": list(init), **spec},
    }
    return convert(data, Pod)


def make_node(
    name: str = "n1",
    allocatable: Mapping[str, Any] | None = None,
    *,
    capacity: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Wire] = (),
    unschedulable: bool = False,
) -> Node:
    data = {
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {"unschedulable": unschedulable, "taints": list(taints)},
        "status": {"allocatable": dict(allocatable or {}), "capacity": dict(capacity or {})},
    }
    return convert(data, Node)


STANDARD = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def info(pod: Pod, order: int = 0) -> PodInfo:
    return make_pod_info(pod, order)


def node_info(node: Node, *pods: PodInfo) -> NodeInfo:
    return new_node_info(node, pods)


def busy(name: str, cpu: str, priority: int = 0, order: int = 0, **spec: Any) -> PodInfo:
    """A bound pod requesting ``cpu``."""
    return info(make_pod(name, container({"cpu": cpu}), priority=priority, **spec), order)

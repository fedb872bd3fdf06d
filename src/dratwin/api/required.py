"""Fields the 1.36 API server requires in the built-in kinds dratwin reads (``Required value`` errors).

Built-in types mark nothing "required" in their schema: the API server's validation code asks for these
(pkg/apis/core/validation and apps/batch validation of kubernetes/kubernetes). Only presence is checked
here; the values themselves (formats, enums, limits) are the semantic rules of the validation modules.

- every pod spec (a Pod, and the pod template of each workload): at least one container; a name and an
  image for every container, init container and ephemeral container; a name for every volume, volume
  mount (and its mountPath), env var and port (and its containerPort);
- Deployment, ReplicaSet, StatefulSet, DaemonSet: ``spec.selector``; ReplicationController:
  ``spec.template``; CronJob: ``spec.schedule``.

Custom resources (Karpenter) carry their own ``required`` lists in their CRD schema: see
:mod:`dratwin.api.schema`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dratwin.api.loader import FieldPath

POD_SPEC_PATHS: dict[tuple[str, str], FieldPath] = {
    ("v1", "Pod"): ("spec",),
    ("v1", "PodTemplate"): ("template", "spec"),
    ("v1", "ReplicationController"): ("spec", "template", "spec"),
    ("apps/v1", "Deployment"): ("spec", "template", "spec"),
    ("apps/v1", "ReplicaSet"): ("spec", "template", "spec"),
    ("apps/v1", "StatefulSet"): ("spec", "template", "spec"),
    ("apps/v1", "DaemonSet"): ("spec", "template", "spec"),
    ("batch/v1", "Job"): ("spec", "template", "spec"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}
_SELECTOR_REQUIRED = {("apps/v1", k) for k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")}
_CONTAINER_GROUPS = ("containers", "initContainers", "ephemeralContainers")


def missing_fields(raw: Mapping[str, Any]) -> Iterator[FieldPath]:
    """The path of every required field ``raw`` (a structurally valid object) leaves out, in document order."""
    key = (str(raw.get("apiVersion")), str(raw.get("kind")))
    spec = _at(raw, ("spec",))
    if key in _SELECTOR_REQUIRED and not spec.get("selector"):
        yield ("spec", "selector")
    if key == ("v1", "ReplicationController") and spec.get("template") is None:
        yield ("spec", "template")
        return
    if key == ("batch/v1", "CronJob") and not spec.get("schedule"):
        yield ("spec", "schedule")
    path = POD_SPEC_PATHS.get(key)
    if path is not None:
        yield from _pod_spec(_at(raw, path), path)


def _at(raw: Mapping[str, Any], path: FieldPath) -> Mapping[str, Any]:
    value: Any = raw
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _items(spec: Mapping[str, Any], name: str) -> list[tuple[int, Mapping[str, Any]]]:
    value = spec.get(name)
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)] if isinstance(value, list) else []


def _pod_spec(spec: Mapping[str, Any], path: FieldPath) -> Iterator[FieldPath]:
    if not spec.get("containers"):
        yield (*path, "containers")
    for group in _CONTAINER_GROUPS:
        for index, container in _items(spec, group):
            yield from _container(container, (*path, group, index))
    for index, volume in _items(spec, "volumes"):
        if not volume.get("name"):
            yield (*path, "volumes", index, "name")


def _container(container: Mapping[str, Any], path: FieldPath) -> Iterator[FieldPath]:
    for name in ("name", "image"):
        if not container.get(name):
            yield (*path, name)
    for index, mount in _items(container, "volumeMounts"):
        for name in ("name", "mountPath"):
            if not mount.get(name):
                yield (*path, "volumeMounts", index, name)
    for index, variable in _items(container, "env"):
        if not variable.get("name"):
            yield (*path, "env", index, "name")
    for index, port in _items(container, "ports"):
        if not port.get("containerPort"):
            yield (*path, "ports", index, "containerPort")

"""Helpers for validation tests: build objects as dicts, validate them as YAML (so lines are real)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dratwin.api.codec import dump_yaml_documents
from dratwin.api.loader import LoadedObject, load_text
from dratwin.api.validation import FeatureGatesLike, Problem, SelectorCompilerLike, validate_objects
from dratwin.errors import CelCompileError

Wire = dict[str, Any]

GPU_CLASS: Wire = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def claim(devices: Wire, name: str = "c", namespace: str = "default", kind: str = "ResourceClaim") -> Wire:
    spec: Wire = {"devices": devices}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec,
    }


def request(name: str = "gpu", **exactly: Any) -> Wire:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **exactly}}


def resource_slice(devices: list[Wire] | None = None, name: str = "s", **spec: Any) -> Wire:
    body: Wire = {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
    }
    body.update(spec)
    if devices is not None:
        body["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def device(name: str = "gpu-0", **fields: Any) -> Wire:
    return {"name": name, **fields}


def as_yaml(objects: Sequence[Wire]) -> str:
    return dump_yaml_documents(list(objects))


def validate(
    *objects: Wire, compiler: SelectorCompilerLike | None = None, gates: FeatureGatesLike | None = None
) -> list[Problem]:
    return validate_objects(load_text(as_yaml(objects), "test.yaml"), compiler, gates)


def errors(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.is_error]


def at(problems: Sequence[Problem], field: str) -> list[Problem]:
    return [p for p in problems if p.field == field]


class FakeCompiler:
    """Compiles anything except expressions containing ``BAD``, which fail at a known position."""

    def __init__(self) -> None:
        self.compiled: list[str] = []

    def compile(self, expression: str) -> object:
        self.compiled.append(expression)
        if "BAD" in expression:
            column = expression.index("BAD") + 1
            raise CelCompileError(expression, "undeclared reference to 'BAD'", 1, column, "did you mean device?")
        return object()


def namespace(name: str = "ml", **labels: str) -> Wire:
    meta: Wire = {"name": name, "labels": labels} if labels else {"name": name}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def pod(claims: list[Wire], name: str = "p", namespace: str = "default", image: str = "x") -> Wire:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceClaims": claims,
                 "containers": [{"name": "c", "image": image, "resources": {"claims": [{"name": c["name"]}
                                                                                      for c in claims]}}]},
    }


def load_files(files: dict[str, Sequence[Wire]]) -> list[LoadedObject]:
    """The objects of several files, in order, each file as YAML (so lines are real)."""
    return [obj for name, objects in files.items() for obj in load_text(as_yaml(objects), name)]


def validate_files(files: dict[str, Sequence[Wire]], compiler: SelectorCompilerLike | None = None) -> list[Problem]:
    return validate_objects(load_files(files), compiler)

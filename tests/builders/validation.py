"""Helpers for validation tests: build objects as dicts, validate them as YAML (so lines are real)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from dratwin.api.loader import load_text
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
    return "---\n".join(yaml.safe_dump(o, sort_keys=False) for o in objects)


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

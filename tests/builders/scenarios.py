"""Scenario files for the tests: a small valid scenario as text (its lines are asserted), edits of it,
and a builder of scenario documents for the cases that need no lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# Line numbers are part of the tests: keep this text as it is, add cases by editing copies of it.
BASE = """\
apiVersion: dratwin.io/v1alpha1
kind: Scenario
metadata:
  name: small
spec:
  duration: 2d
  seed: 7
  cluster:
    generate:
    - {instanceType: p5.48xlarge, count: 2}
    - {instanceType: g6.12xlarge, count: 1}
  workloads:
  - name: train
    arrival: {poisson: {rate: 12/h}}
    runFor: {exponential: {mean: 30m}}
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: train, namespace: ml}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: c
              image: pytorch
              resources:
                limits: {nvidia.com/gpu: 1}
  - name: serve
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: vllm}
      spec:
        selector: {matchLabels: {app: vllm}}
        template:
          metadata: {labels: {app: vllm}}
          spec:
            containers: [{name: c, image: vllm, resources: {limits: {nvidia.com/gpu: 1}}}]
    service:
      rate: {diurnal: {mean: 40/s, peak: "14:00", amplitude: 0.5}}
      requestsPerSecondPerGpu: 20
      autoscaler: {kind: hpa, metric: DCGM_FI_DEV_GPU_UTIL, target: 70, maxReplicas: 4}
  variants:
  - name: dra
  - name: device-plugin
    overrides: {gpuManager: device-plugin}
"""


def edited(old: str, new: str, text: str = BASE) -> str:
    """``text`` with ``old`` (which must be there once) replaced by ``new``."""
    assert text.count(old) == 1, f"{old!r} is not in the base scenario exactly once"
    return text.replace(old, new)


def write(folder: Path, text: str, name: str = "scenario.yaml") -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def job(name: str, gpus: int = 1, namespace: str = "ml", claim_template: str | None = None) -> dict[str, Any]:
    """A Job of one pod asking for ``gpus`` through the device plugin, or through a claim template."""
    container: dict[str, Any] = {"name": "c", "image": "pytorch"}
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if claim_template is None:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    else:
        container["resources"] = {"claims": [{"name": "gpu"}]}
        pod["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": claim_template}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": pod}}}


def claim_template(name: str, namespace: str = "ml", device_class: str = "gpu.nvidia.com") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}}}


def gpu_class() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}


def scenario(workloads: list[dict[str, Any]], *, duration: str = "1d", name: str = "built",
             cluster: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A scenario document; ``spec`` fields are given in the file's own (camelCase) names."""
    body: dict[str, Any] = {"duration": duration, "workloads": workloads, **spec}
    body["cluster"] = cluster if cluster is not None else {"generate": [{"instanceType": "p5.48xlarge", "count": 1}]}
    return {"apiVersion": "dratwin.io/v1alpha1", "kind": "Scenario", "metadata": {"name": name}, "spec": body}


def write_document(folder: Path, document: dict[str, Any], name: str = "scenario.yaml") -> str:
    return write(folder, yaml.safe_dump(document, sort_keys=False), name)

"""Objects the twin does not model are named, once per kind, with what is missing from the result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.manifests import manifest

from dratwin.api.loader import load_text
from dratwin.cluster.skipped import skipped_objects

Raw = dict[str, Any]


def obj(api_version: str, kind: str, name: str, namespace: str | None = "ml") -> Raw:
    meta: Raw = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


@dataclass(frozen=True)
class SkippedCase:
    name: str
    objects: list[Raw]
    expected: list[str]


CASES = [
    SkippedCase("one-mpijob", [obj("kubeflow.org/v2beta1", "MPIJob", "x")],
                ["MPIJob ml/x (kubeflow.org/v2beta1) is not modelled: its pods are not created"]),
    SkippedCase("two-pytorchjobs-one-line",
                [obj("kubeflow.org/v1", "PyTorchJob", "a"), obj("kubeflow.org/v1", "PyTorchJob", "b")],
                ["PyTorchJob ml/a, ml/b (kubeflow.org/v1) are not modelled: their pods are not created"]),
    SkippedCase("many-names-are-cut",
                [obj("ray.io/v1", "RayCluster", f"r{i}") for i in range(5)],
                ["RayCluster ml/r0, ml/r1, ml/r2 and 2 more (ray.io/v1) are not modelled: their pods are not created"]),
    SkippedCase("jobset-and-lws", [obj("jobset.x-k8s.io/v1alpha2", "JobSet", "js"),
                                   obj("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws")],
                ["JobSet ml/js (jobset.x-k8s.io/v1alpha2) is not modelled: its Jobs and pods are not created",
                 "LeaderWorkerSet ml/lws (leaderworkerset.x-k8s.io/v1) is not modelled: its StatefulSets and pods "
                 "are not created"]),
    SkippedCase("compute-domain-is-modelled", [obj("resource.nvidia.com/v1beta1", "ComputeDomain", "imex")], []),
    SkippedCase("compute-domain-clique", [obj("resource.nvidia.com/v1beta1", "ComputeDomainClique", "u.c")],
                ["skipped, not modelled by dratwin: ComputeDomainClique ml/u.c (resource.nvidia.com/v1beta1)"]),
    SkippedCase("kueue-any-kind", [obj("kueue.x-k8s.io/v1beta1", "ClusterQueue", "cq", namespace=None),
                                   obj("kueue.x-k8s.io/v1beta1", "LocalQueue", "lq")],
                ["ClusterQueue cq (kueue.x-k8s.io/v1beta1) is validated, not applied: quotas and admission are not "
                 "applied: "
                 "workloads that name a queue run as if admitted (a Job written with spec.suspend: true stays "
                 "suspended)",
                 "LocalQueue ml/lq (kueue.x-k8s.io/v1beta1) is validated, not applied: quotas and admission are not "
                 "applied: "
                 "workloads that name a queue run as if admitted (a Job written with spec.suspend: true stays "
                 "suspended)"]),
    SkippedCase("other-kinds-share-one-line",
                [obj("v1", "ConfigMap", "a"), obj("v1", "Service", "s"), obj("v1", "ConfigMap", "b"),
                 obj("example.com/v1", "Widget", "w", namespace=None)],
                ["skipped, not modelled by dratwin: ConfigMap ml/a, ml/b (v1); Service ml/s (v1); Widget w "
                 "(example.com/v1)"]),
    SkippedCase("modelled-kinds-are-not-skipped",
                [obj("v1", "Namespace", "ml", namespace=None), obj("resource.k8s.io/v1", "DeviceClass", "gpu",
                                                                  namespace=None)], []),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_skipped_objects(case: SkippedCase) -> None:
    assert skipped_objects(load_text(manifest(case.objects))) == case.expected


def test_kinds_read_elsewhere_are_not_listed() -> None:
    objects = load_text(manifest(obj("scheduling.k8s.io/v1", "PriorityClass", "high", namespace=None),
                                 obj("v1", "ConfigMap", "a")))
    assert skipped_objects(objects, {("scheduling.k8s.io", "PriorityClass")}) == [
        "skipped, not modelled by dratwin: ConfigMap ml/a (v1)"
    ]

"""Workload and PodGroup (scheduling.k8s.io, 1.36 alpha behind GenericWorkload, off by default) and the pod
fields that name them: what a 1.36 cluster with its defaults does, and that gang scheduling is not modelled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.manifests import manifest, pod

from dratwin.api.loader import load_text
from dratwin.cluster.pod_groups import NOT_MODELLED, pod_group_objects, pod_group_references

Raw = dict[str, Any]


def group_object(kind: str, version: str, name: str = "train") -> Raw:
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": kind,
            "metadata": {"name": name, "namespace": "ml"}, "spec": {}}


@dataclass(frozen=True)
class ObjectCase:
    name: str
    obj: Raw
    starts: str


OBJECT_CASES = [
    ObjectCase("workload-v1alpha2", group_object("Workload", "v1alpha2"),
               "Workload ml/train (scheduling.k8s.io/v1alpha2) is refused: the API server serves it only with the "
               "alpha feature gate GenericWorkload, off by default in 1.36; "),
    ObjectCase("podgroup-v1alpha2", group_object("PodGroup", "v1alpha2", "train-0"),
               "PodGroup ml/train-0 (scheduling.k8s.io/v1alpha2) is refused: the API server serves it only with "),
    ObjectCase("workload-v1alpha1-of-1.35", group_object("Workload", "v1alpha1"),
               "Workload ml/train (scheduling.k8s.io/v1alpha1) is refused: Kubernetes 1.36 serves Workload only in "
               "scheduling.k8s.io/v1alpha2 (behind the alpha feature gate GenericWorkload); pods join a PodGroup "
               "through spec.schedulingGroup.podGroupName; "),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.name)
def test_each_object_is_named_with_what_the_api_server_does(case: ObjectCase) -> None:
    [line] = pod_group_objects(load_text(manifest(case.obj)))
    assert line.startswith(case.starts)
    assert line.endswith(NOT_MODELLED)


def test_priority_classes_of_the_same_group_are_not_pod_groups() -> None:
    priority = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"}, "value": 1}
    assert pod_group_objects(load_text(manifest(priority))) == []


def grouped(name: str, field: str, value: Any) -> Raw:
    raw = pod(name, namespace="ml")
    raw["spec"][field] = value
    return raw


@dataclass(frozen=True)
class ReferenceCase:
    name: str
    pods: list[Raw]
    expected: list[str]


REFERENCE_CASES = [
    ReferenceCase("scheduling-group", [grouped(f"w{i}", "schedulingGroup", {"podGroupName": "g"}) for i in range(4)],
                  ["4 pod(s) set spec.schedulingGroup (ml/w0, ml/w1, ml/w2 and 1 more): the API server drops it "
                   "while the alpha feature gate GenericWorkload is off (the 1.36 default), so they are scheduled "
                   "one by one, as here; gang scheduling is not modelled"]),
    ReferenceCase("workload-ref-of-1.35", [grouped("w", "workloadRef", {"name": "train", "podGroup": "g"})],
                  ["1 pod(s) set spec.workloadRef (ml/w): a 1.35 alpha field that 1.36 no longer has (replaced by "
                   "spec.schedulingGroup): kubectl's strict field validation refuses the pod, and without it the API "
                   "server drops the field; gang scheduling is not modelled"]),
    ReferenceCase("plain-pods", [pod("p")], []),
]


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=lambda c: c.name)
def test_pods_that_name_a_group_are_named(case: ReferenceCase) -> None:
    assert pod_group_references(case.pods) == case.expected

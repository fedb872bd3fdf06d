"""What a ClusterQueue refuses before nomination (pkg/workload/resources.go ValidateAdmissibility, called by
pkg/scheduler/scheduler.go nominate) at Kueue ff69552: its namespaceSelector (concept: cluster_queue.md
"Namespace selector": nil selects no namespace, {} every namespace), requests over limits (ValidateResources)
and the namespace's LimitRange bounds (ValidateLimitRange, pkg/util/limitrange)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import (
    cluster_queue,
    container,
    cpu_flavor,
    cpu_workload,
    group,
    kueue_snapshot,
    pod_set,
    pod_spec,
    queued,
    workload,
)

from dratwin.api.core import LimitRange
from dratwin.api.kueue import Workload
from dratwin.kueue.admissibility import NAMESPACE_MISMATCH, resources_refusal
from dratwin.kueue.cycle import scheduling_cycle

UNSET = object()  # the ClusterQueue has no namespaceSelector at all
NAMESPACES = {"team": {"dep": "eng"}, "sales": {"dep": "sales"}}
NOT_FOUND = 'workload namespace "ghost" does not exist: namespaces "ghost" not found'


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    selector: Any
    namespace: str = "team"
    namespaces: dict[str, dict[str, str]] | None = None
    message: str = ""  # "" admitted; else the Misconfigured message


CASES = [
    Case("empty-selector-selects-all", "LabelSelectorAsSelector({}) = Everything", {}, namespaces=NAMESPACES),
    Case("unset-selector-selects-none", "LabelSelectorAsSelector(nil) = Nothing; ErrNamespaceMismatch", UNSET,
         namespaces=NAMESPACES, message=NAMESPACE_MISMATCH),
    Case("match-labels", "cluster_queue.md: namespaceSelector matchLabels", {"matchLabels": {"dep": "eng"}},
         namespaces=NAMESPACES),
    Case("match-labels-other-namespace", "ErrNamespaceMismatch", {"matchLabels": {"dep": "eng"}},
         namespace="sales", namespaces=NAMESPACES, message=NAMESPACE_MISMATCH),
    Case("match-expressions-in", "scheduler_fs_test.go: dep In [eng]",
         {"matchExpressions": [{"key": "dep", "operator": "In", "values": ["eng"]}]}, namespaces=NAMESPACES),
    Case("match-expressions-not-in", "dep NotIn [eng] refuses team",
         {"matchExpressions": [{"key": "dep", "operator": "NotIn", "values": ["eng"]}]}, namespaces=NAMESPACES,
         message=NAMESPACE_MISMATCH),
    Case("namespace-missing", "ValidateAdmissibility: the Namespace is read first", {}, namespace="ghost",
         namespaces=NAMESPACES, message=NOT_FOUND),
    Case("namespaces-unknown-empty-selector", "no Namespaces given: taken to exist, with no labels", {}),
    Case("namespaces-unknown-label-selector", "no Namespaces given: a label selector finds no label",
         {"matchLabels": {"dep": "eng"}}, message=NAMESPACE_MISMATCH),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_namespace_selector(case: Case) -> None:
    spec = {} if case.selector is UNSET else {"namespaceSelector": case.selector}
    cq = cluster_queue("cq", group(["cpu"], cpu_flavor("default", 10)), **spec)
    if case.selector is UNSET:
        del cq["spec"]["namespaceSelector"]
    snapshot = kueue_snapshot([cq], namespaces=case.namespaces)
    result = scheduling_cycle(snapshot, [queued(cpu_workload("w", 1, namespace=case.namespace), "cq")])
    if not case.message:
        assert [a.entry.workload.metadata.name for a in result.admitted] == ["w"], case.cite
        return
    [pending] = result.pending
    assert (pending.reason, pending.message) == ("Misconfigured", case.message), case.cite
    assert snapshot.tree.nodes["cq:cq"].usage == {}


def _limit_range(kind: str, **values: dict[str, str]) -> LimitRange:
    return msgspec.convert({"metadata": {"name": "lr", "namespace": "team"},
                            "spec": {"limits": [{"type": kind, **values}]}}, LimitRange)


SIDECAR = {"name": "side", "image": "busybox", "restartPolicy": "Always", "resources": {"requests": {"cpu": "300m"}}}
PS0 = "spec.podSets[0].template.spec"


@dataclass(frozen=True)
class ResourcesCase:
    name: str
    cite: str
    pod_sets: list[dict[str, Any]]
    limit_ranges: list[LimitRange] = field(default_factory=list)
    message: str = ""  # "" admissible


RESOURCES_CASES = [
    ResourcesCase("requests-within-limits", "resources_test.go TestValidateResources: valid",
                  [pod_set(spec=pod_spec(container({"cpu": "100m"}, {"cpu": "200m"})))]),
    ResourcesCase("requests-over-limits-everywhere", "TestValidateResources 'invalid workload; multiple PodSet has "
                  "invalid initContainers and containers'",
                  [pod_set("a", spec=pod_spec(container({"cpu": "300m"}, {"cpu": "200m"}), initContainers=[
                      container({"memory": "200Mi", "cpu": "100m"}, {"memory": "100Mi", "cpu": "200m"}, name="i")])),
                   pod_set("b", spec=pod_spec(container({"cpu": "100m"}, {"cpu": "200m"}), initContainers=[
                       container({"cpu": "300m"}, {"cpu": "200m"}, name="i")]))],
                  message=f'resources validation failed: [{PS0}.initContainers[0]: Invalid value: ["memory"]: '
                          f'requests must not exceed its limits, {PS0}.containers[0]: Invalid value: ["cpu"]: '
                          "requests must not exceed its limits, spec.podSets[1].template.spec.initContainers[0]: "
                          'Invalid value: ["cpu"]: requests must not exceed its limits]'),
    ResourcesCase("limit-range-default-limit-below-the-request", "AdjustResources before ValidateResources: the "
                  "default limit 4 is put beside the request 6", [pod_set(spec=pod_spec(container({"cpu": "6"})))],
                  [_limit_range("Container", default={"cpu": "4"})],
                  message=f'resources validation failed: {PS0}.containers[0]: Invalid value: ["cpu"]: requests '
                          "must not exceed its limits"),
    ResourcesCase("within-limit-range", "TestValidateLimitRange 'valid case with LimitRange'",
                  [pod_set(spec=pod_spec(container({"cpu": "300m"})))],
                  [_limit_range("Container", max={"cpu": "1000m"})]),
    ResourcesCase("container-above-max", "limitrange.go validatePodSpecContainers: max(requests, limits) > max",
                  [pod_set(spec=pod_spec(container({"cpu": "1"}, {"cpu": "2"})))],
                  [_limit_range("Container", max={"cpu": "1500m"})],
                  message=f"resources didn't satisfy LimitRange constraints: {PS0}.containers[0]: Invalid value: "
                          '["cpu"]: requests must not be above the limitRange max'),
    ResourcesCase("container-below-min", "validatePodSpecContainers: min > min(requests, limits)",
                  [pod_set(spec=pod_spec(container({"memory": "1Gi"})))],
                  [_limit_range("Container", min={"memory": "2Gi"})],
                  message=f"resources didn't satisfy LimitRange constraints: {PS0}.containers[0]: Invalid value: "
                          '["memory"]: requests must not be below the limitRange min'),
    ResourcesCase("pod-above-max-with-sidecar", "TestValidateLimitRange 'pod doesn't satisfy LimitRange "
                  "constraints': 300m + a 300m sidecar > 500m",
                  [pod_set(spec=pod_spec(container({"cpu": "300m"}), initContainers=[SIDECAR]))],
                  [_limit_range("Pod", max={"cpu": "500m"})],
                  message=f"resources didn't satisfy LimitRange constraints: {PS0}: Invalid value: [\"cpu\"]: "
                          "requests must not be above the limitRange max"),
]


@pytest.mark.parametrize("case", RESOURCES_CASES, ids=lambda c: c.name)
def test_resources_and_limit_ranges(case: ResourcesCase) -> None:
    wl = msgspec.convert(workload("w", *case.pod_sets), Workload)
    assert resources_refusal(wl, case.limit_ranges) == case.message, case.cite


def test_resource_refusal_in_the_cycle() -> None:
    """nominate: a Workload refused by ValidateAdmissibility is Misconfigured and charges no quota."""
    cq = cluster_queue("cq", group(["cpu"], cpu_flavor("default", 10)))
    snapshot = kueue_snapshot([cq])
    snapshot = dataclasses.replace(snapshot, limit_ranges=[_limit_range("Container", max={"cpu": "500m"})])
    result = scheduling_cycle(snapshot, [queued(cpu_workload("w", 1), "cq")])
    [pending] = result.pending
    assert pending.reason == "Misconfigured"
    assert pending.message.startswith("resources didn't satisfy LimitRange constraints: ")
    assert not result.admitted

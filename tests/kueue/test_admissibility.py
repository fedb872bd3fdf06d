"""A ClusterQueue's namespaceSelector, checked at nomination (pkg/workload/resources.go ValidateAdmissibility,
called by pkg/scheduler/scheduler.go nominate) at Kueue ff69552; concept: cluster_queue.md "Namespace
selector" (nil selects no namespace, {} every namespace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.kueue import cluster_queue, cpu_flavor, cpu_workload, group, kueue_snapshot, queued

from dratwin.kueue.admissibility import NAMESPACE_MISMATCH
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

"""Whether a ClusterQueue may take a Workload at all, checked at nomination before any flavor is tried.

The twin of ``workload.ValidateAdmissibility`` (``pkg/workload/resources.go`` at Kueue ``ff69552``), as the
scheduler's ``nominate`` calls it: the Workload's Namespace must exist and its labels must match the
ClusterQueue's ``namespaceSelector``. The selector is read as ``metav1.LabelSelectorAsSelector`` reads it:
left unset it selects **no** namespace, ``{}`` selects every namespace. A refusal is ``QuotaReserved=False``
with reason ``Misconfigured`` and Kueue's message. Pure: the caller gives the namespaces' labels.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from dratwin.api.kueue import ClusterQueue, Workload
from dratwin.api.workloads import LabelSelector, label_selector_matches

MISCONFIGURED = "Misconfigured"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"

NamespaceLabels = Mapping[str, Mapping[str, str]]  # namespace → its labels


def namespace_refusal(cq: ClusterQueue, workload: Workload, namespaces: NamespaceLabels | None) -> str:
    """Kueue's message when ``cq`` may not admit ``workload`` for its namespace, "" when it may.

    ``namespaces`` None: the cluster's Namespaces are not known; the Workload's is taken to exist, with no
    labels (so only a selector that needs no label, such as ``{}``, matches it)."""
    namespace = workload.metadata.namespace or "default"
    if namespaces is not None and namespace not in namespaces:
        return f'workload namespace "{namespace}" does not exist: namespaces "{namespace}" not found'
    labels = namespaces.get(namespace, {}) if namespaces is not None else {}
    return "" if selects(cq.spec.namespace_selector, labels) else NAMESPACE_MISMATCH


def selects(selector: Mapping[str, object] | None, labels: Mapping[str, str]) -> bool:
    """``LabelSelectorAsSelector(selector).Matches(labels)``: nil selects nothing, ``{}`` everything."""
    if selector is None:
        return False
    try:
        typed = msgspec.convert(selector, LabelSelector)
    except msgspec.ValidationError:
        return False  # a selector Kueue cannot parse keeps the ClusterQueue out of its cache
    return label_selector_matches(typed, labels)

"""apps/v1, batch/v1 and scheduling.k8s.io/v1 objects, reduced to what the workload controllers and the
priority admission plugin read.

These are typed *views*: workloads flow through dratwin as raw dicts (so that fields users wrote survive),
and :mod:`dratwin.cluster.workloads` decodes them here only to read replicas, selectors, Job modes and
priority classes. Pod templates keep their raw form for copying into pods. Like :mod:`dratwin.api.core`,
the structs are permissive (strings for enums, optional fields where the API defaults them) so that input
the API server would reject can still be represented and reported.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from dratwin.api.core import PodSpec
from dratwin.api.meta import ObjectMeta

IntOrString = int | str


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of every wire struct: keyword-only, camelCase, absent fields omitted on output."""


# ---- shared pieces -------------------------------------------------------------------------------


class LabelSelectorRequirement(_Wire):
    key: str = ""
    operator: str = ""  # In | NotIn | Exists | DoesNotExist
    values: list[str] = msgspec.field(default_factory=list)


class LabelSelector(_Wire):
    match_labels: dict[str, str] = msgspec.field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = msgspec.field(default_factory=list)


def label_selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(...).Matches``: matchLabels and matchExpressions all hold."""
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for req in selector.match_expressions:
        present = req.key in labels
        if req.operator == "In" and not (present and labels[req.key] in req.values):
            return False
        if req.operator == "NotIn" and present and labels[req.key] in req.values:
            return False
        if req.operator == "Exists" and not present:
            return False
        if req.operator == "DoesNotExist" and present:
            return False
        if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


class PodTemplateSpec(_Wire):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


class PersistentVolumeClaimTemplate(_Wire):
    """An entry of a StatefulSet's ``volumeClaimTemplates``: only its name matters to pod creation."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


# ---- apps/v1 -------------------------------------------------------------------------------------


class RollingUpdateDeployment(_Wire):
    max_surge: IntOrString | None = None  # default 25%
    max_unavailable: IntOrString | None = None  # default 25%


class DeploymentStrategy(_Wire):
    type: str = ""  # RollingUpdate (default) | Recreate
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(_Wire):
    replicas: int | None = None  # default 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy = msgspec.field(default_factory=DeploymentStrategy)
    min_ready_seconds: int = 0
    paused: bool = False


class Deployment(_Wire):
    api_version: str = "apps/v1"
    kind: str = "Deployment"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeploymentSpec = msgspec.field(default_factory=DeploymentSpec)


class ReplicaSetSpec(_Wire):
    replicas: int | None = None  # default 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    min_ready_seconds: int = 0


class ReplicaSet(_Wire):
    api_version: str = "apps/v1"
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = msgspec.field(default_factory=ReplicaSetSpec)


class StatefulSetOrdinals(_Wire):
    start: int = 0


class StatefulSetSpec(_Wire):
    replicas: int | None = None  # default 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    service_name: str = ""
    pod_management_policy: str = ""  # OrderedReady (default) | Parallel
    ordinals: StatefulSetOrdinals | None = None
    volume_claim_templates: list[PersistentVolumeClaimTemplate] = msgspec.field(default_factory=list)


class StatefulSet(_Wire):
    api_version: str = "apps/v1"
    kind: str = "StatefulSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = msgspec.field(default_factory=StatefulSetSpec)


# ---- batch/v1 ------------------------------------------------------------------------------------


class JobSpec(_Wire):
    parallelism: int | None = None  # default 1
    completions: int | None = None  # default 1 when parallelism is unset too; unset = work queue
    completion_mode: str = ""  # NonIndexed (default) | Indexed
    backoff_limit: int | None = None  # default 6
    backoff_limit_per_index: int | None = None
    suspend: bool | None = None
    manual_selector: bool | None = None
    managed_by: str | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)


class Job(_Wire):
    api_version: str = "batch/v1"
    kind: str = "Job"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec = msgspec.field(default_factory=JobSpec)


# ---- scheduling.k8s.io/v1 ------------------------------------------------------------------------


class PriorityClass(_Wire):
    """Cluster-scoped; ``value``, ``globalDefault`` and ``preemptionPolicy`` sit at the top level."""

    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None  # PreemptLowerPriority (default) | Never
    description: str = ""

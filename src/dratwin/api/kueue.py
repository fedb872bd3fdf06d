"""Kueue's objects (``kueue.x-k8s.io/v1beta2``) and its manager Configuration (``config.kueue.x-k8s.io/v1beta2``).

Typed views with wire names, like the other kinds of :mod:`dratwin.api`: permissive where the CRDs are strict
(strings for enums, quantities as written, ``None`` where absence differs from a zero value) so that what
the API server or Kueue's webhooks refuse can still be read and reported by
:mod:`dratwin.api.validation_kueue`. The CRDs' defaults are named here (``DEFAULT_*``), not filled in; a
Workload's ``status`` and every field dratwin does not read stay in the raw object and survive a round trip.

Fields follow ``apis/kueue/v1beta2/*_types.go`` and ``apis/config/v1beta2/configuration_types.go`` of
kubernetes-sigs/kueue; v1beta1 objects are converted to v1beta2 on the way in
(:mod:`dratwin.api.conversion_kueue`). What Kueue does with them lives in :mod:`dratwin.kueue`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dratwin.api.core import PodSpec, Taint, Toleration
from dratwin.api.meta import ObjectMeta

GROUP = "kueue.x-k8s.io"
VERSION = "v1beta2"
API_VERSION = f"{GROUP}/{VERSION}"
CONFIG_GROUP = "config.kueue.x-k8s.io"
CONFIG_API_VERSION = f"{CONFIG_GROUP}/{VERSION}"
OLDER_VERSIONS = ("v1beta1",)  # served, deprecated; converted to v1beta2 as Kueue's conversion webhook does

RESOURCE_FLAVOR = "ResourceFlavor"
CLUSTER_QUEUE = "ClusterQueue"
LOCAL_QUEUE = "LocalQueue"
COHORT = "Cohort"
WORKLOAD_PRIORITY_CLASS = "WorkloadPriorityClass"
ADMISSION_CHECK = "AdmissionCheck"
TOPOLOGY = "Topology"
WORKLOAD = "Workload"
CONFIGURATION = "Configuration"
# Kinds of the group that dratwin does not model (MultiKueue, ProvisioningRequestConfig): skipped with a warning.
UNMODELLED_KINDS = frozenset({"MultiKueueCluster", "MultiKueueConfig", "ProvisioningRequestConfig"})

# Labels and annotations Kueue reads on jobs and pods (pkg/controller/constants).
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
POD_GROUP_NAME_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL_COUNT_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
DEFAULT_QUEUE_NAME = "default"  # the LocalQueue a job without the label goes to, where the feature is on

# Enums of the CRDs, in the order they declare them.
QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
DEFAULT_QUEUEING_STRATEGY = "BestEffortFIFO"
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_WITHIN_COHORT = ("Never", "LowerPriority", "Any")
BORROW_WITHIN_COHORT = ("Never", "LowerPriority")
WHEN_CAN_BORROW = ("MayStopSearch", "TryNextFlavor")
WHEN_CAN_PREEMPT = ("MayStopSearch", "TryNextFlavor")
DEFAULT_WHEN_CAN_BORROW = "MayStopSearch"
DEFAULT_WHEN_CAN_PREEMPT = "TryNextFlavor"
FUNGIBILITY_PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
DEFAULT_POD_SET_NAME = "main"
DEFAULT_POD_SET_COUNT = 1
DEFAULT_FAIR_SHARING_WEIGHT = "1"
PODS_RESOURCE = "pods"  # the special resource a ClusterQueue may cover: one per pod
MAX_RESOURCE_GROUPS = 16
MAX_FLAVORS_PER_GROUP = 64
MAX_COVERED_RESOURCES = 64
MAX_POD_SETS = 8


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    pass


QuantityText = str | int | float


# ---- ResourceFlavor ------------------------------------------------------------------------------


class ResourceFlavorSpec(_Wire):
    node_labels: dict[str, str] = msgspec.field(default_factory=dict)
    node_taints: list[Taint] = msgspec.field(default_factory=list)
    tolerations: list[Toleration] = msgspec.field(default_factory=list)
    topology_name: str | None = None


class ResourceFlavor(_Wire):
    api_version: str = API_VERSION
    kind: str = RESOURCE_FLAVOR
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceFlavorSpec = msgspec.field(default_factory=ResourceFlavorSpec)


# ---- quota (ClusterQueue, Cohort) ----------------------------------------------------------------


class ResourceQuota(_Wire):
    name: str = ""
    nominal_quota: QuantityText | None = None
    borrowing_limit: QuantityText | None = None  # None: may borrow all the cohort lends
    lending_limit: QuantityText | None = None  # None: lends all its unused nominal quota


class FlavorQuotas(_Wire):
    name: str = ""
    resources: list[ResourceQuota] = msgspec.field(default_factory=list)


class ResourceGroup(_Wire):
    covered_resources: list[str] = msgspec.field(default_factory=list)
    flavors: list[FlavorQuotas] = msgspec.field(default_factory=list)


class BorrowWithinCohort(_Wire):
    policy: str | None = None
    max_priority_threshold: int | None = None


class Preemption(_Wire):
    within_cluster_queue: str | None = None  # default Never
    reclaim_within_cohort: str | None = None  # default Never
    borrow_within_cohort: BorrowWithinCohort | None = None


class FlavorFungibility(_Wire):
    when_can_borrow: str | None = None
    when_can_preempt: str | None = None
    preference: str | None = None


class FairSharing(_Wire):
    weight: QuantityText | None = None


class AdmissionCheckStrategyRule(_Wire):
    name: str = ""
    on_flavors: list[str] = msgspec.field(default_factory=list)


class AdmissionChecksStrategy(_Wire):
    admission_checks: list[AdmissionCheckStrategyRule] = msgspec.field(default_factory=list)


class ClusterQueueSpec(_Wire):
    resource_groups: list[ResourceGroup] = msgspec.field(default_factory=list)
    cohort_name: str = ""
    queueing_strategy: str | None = None
    namespace_selector: dict[str, Any] | None = None  # None: no namespace; {}: every namespace
    flavor_fungibility: FlavorFungibility | None = None
    preemption: Preemption | None = None
    admission_checks_strategy: AdmissionChecksStrategy | None = None
    stop_policy: str | None = None
    fair_sharing: FairSharing | None = None


class ClusterQueue(_Wire):
    api_version: str = API_VERSION
    kind: str = CLUSTER_QUEUE
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ClusterQueueSpec = msgspec.field(default_factory=ClusterQueueSpec)

    @property
    def queueing_strategy(self) -> str:
        return self.spec.queueing_strategy or DEFAULT_QUEUEING_STRATEGY


class CohortSpec(_Wire):
    parent_name: str = ""
    resource_groups: list[ResourceGroup] = msgspec.field(default_factory=list)
    fair_sharing: FairSharing | None = None


class Cohort(_Wire):
    api_version: str = API_VERSION
    kind: str = COHORT
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CohortSpec = msgspec.field(default_factory=CohortSpec)


# ---- LocalQueue, WorkloadPriorityClass, AdmissionCheck, Topology ---------------------------------


class LocalQueueSpec(_Wire):
    cluster_queue: str = ""
    stop_policy: str | None = None
    fair_sharing: FairSharing | None = None


class LocalQueue(_Wire):
    api_version: str = API_VERSION
    kind: str = LOCAL_QUEUE
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LocalQueueSpec = msgspec.field(default_factory=LocalQueueSpec)


class WorkloadPriorityClass(_Wire):
    api_version: str = API_VERSION
    kind: str = WORKLOAD_PRIORITY_CLASS
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: int = 0
    description: str = ""


class AdmissionCheckParametersReference(_Wire):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class AdmissionCheckSpec(_Wire):
    controller_name: str = ""
    parameters: AdmissionCheckParametersReference | None = None


class AdmissionCheck(_Wire):
    api_version: str = API_VERSION
    kind: str = ADMISSION_CHECK
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: AdmissionCheckSpec = msgspec.field(default_factory=AdmissionCheckSpec)


class TopologyLevel(_Wire):
    node_label: str = ""


class TopologySpec(_Wire):
    levels: list[TopologyLevel] = msgspec.field(default_factory=list)


class Topology(_Wire):
    api_version: str = API_VERSION
    kind: str = TOPOLOGY
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TopologySpec = msgspec.field(default_factory=TopologySpec)


# ---- Workload ------------------------------------------------------------------------------------


class PodTemplateSpec(_Wire):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


class PodSetSliceConstraint(_Wire):
    topology: str = ""
    size: int = 0


class PodSetTopologyRequest(_Wire):
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    pod_index_label: str | None = None
    sub_group_index_label: str | None = None
    sub_group_count: int | None = None
    pod_set_group_name: str | None = None
    pod_set_slice_required_topology: str | None = None
    pod_set_slice_size: int | None = None
    podset_slice_required_topology_constraints: list[PodSetSliceConstraint] = msgspec.field(default_factory=list)


class PodSet(_Wire):
    name: str = DEFAULT_POD_SET_NAME
    count: int = DEFAULT_POD_SET_COUNT
    min_count: int | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    topology_request: PodSetTopologyRequest | None = None


class PriorityClassRef(_Wire):
    group: str = ""
    kind: str = ""
    name: str = ""


class WorkloadSpec(_Wire):
    pod_sets: list[PodSet] = msgspec.field(default_factory=list)
    queue_name: str = ""
    priority_class_ref: PriorityClassRef | None = None
    priority: int | None = None
    active: bool | None = None  # None: active (the CRD's default true)
    maximum_execution_time_seconds: int | None = None


class Workload(_Wire):
    api_version: str = API_VERSION
    kind: str = WORKLOAD
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)
    status: dict[str, Any] = msgspec.field(default_factory=dict)  # as Kueue stores it; read by dratwin.kueue


# ---- Configuration (config.kueue.x-k8s.io) -------------------------------------------------------


class CelSelector(_Wire):
    expression: str = ""


class DeviceSelector(_Wire):
    cel: CelSelector | None = None


class DeviceSource(_Wire):
    """A counter or a capacity of the devices of one driver that a mapping charges (Kueue 0.19+)."""

    name: str = ""
    driver: str = ""
    device_selector: DeviceSelector | None = None


class DeviceClassMappingSource(_Wire):
    counter: DeviceSource | None = None
    capacity: DeviceSource | None = None


class DeviceClassMapping(_Wire):
    name: str = ""
    device_class_names: list[str] = msgspec.field(default_factory=list)
    sources: list[DeviceClassMappingSource] = msgspec.field(default_factory=list)


class ResourceTransformation(_Wire):
    input: str = ""
    strategy: str | None = None  # Retain (default) or Replace
    outputs: dict[str, QuantityText] = msgspec.field(default_factory=dict)
    multiply_by: str | None = None


class Resources(_Wire):
    exclude_resource_prefixes: list[str] = msgspec.field(default_factory=list)
    transformations: list[ResourceTransformation] = msgspec.field(default_factory=list)
    device_class_mappings: list[DeviceClassMapping] = msgspec.field(default_factory=list)


class ConfigFairSharing(_Wire):
    preemption_strategies: list[str] = msgspec.field(default_factory=list)


class RequeuingStrategy(_Wire):
    timestamp: str | None = None
    backoff_limit_count: int | None = None
    backoff_base_seconds: int | None = None
    backoff_max_seconds: int | None = None


class WaitForPodsReady(_Wire):
    timeout: str | None = None
    block_admission: bool | None = None
    requeuing_strategy: RequeuingStrategy | None = None
    recovery_timeout: str | None = None


class Configuration(_Wire):
    api_version: str = CONFIG_API_VERSION
    kind: str = CONFIGURATION
    namespace: str | None = None
    manage_jobs_without_queue_name: bool | None = None
    resources: Resources | None = None
    fair_sharing: ConfigFairSharing | None = None  # present: fair sharing is on (v1beta2)
    wait_for_pods_ready: WaitForPodsReady | None = None  # present: on (v1beta2)
    feature_gates: dict[str, bool] = msgspec.field(default_factory=dict)

    @property
    def device_class_mappings(self) -> list[DeviceClassMapping]:
        return self.resources.device_class_mappings if self.resources is not None else []


KUEUE_KINDS: dict[str, tuple[type[msgspec.Struct], bool]] = {  # kind → (typed view, namespaced)
    RESOURCE_FLAVOR: (ResourceFlavor, False),
    CLUSTER_QUEUE: (ClusterQueue, False),
    LOCAL_QUEUE: (LocalQueue, True),
    COHORT: (Cohort, False),
    WORKLOAD_PRIORITY_CLASS: (WorkloadPriorityClass, False),
    ADMISSION_CHECK: (AdmissionCheck, False),
    TOPOLOGY: (Topology, False),
    WORKLOAD: (Workload, True),
}

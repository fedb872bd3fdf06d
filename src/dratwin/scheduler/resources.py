"""Resource arithmetic of the scheduler: what a pod requests, what a node offers, and the node's books.

This is the twin of three upstream pieces: ``k8s.io/component-helpers/resource.PodRequests`` (the
effective requests of a pod: containers summed, init containers as a maximum with sidecars
accumulating, plus overhead), ``framework.Resource`` (which resource names the scheduler counts
at all) and ``NodeInfo.AddPod``/``RemovePod`` (the requested totals of a node).

Amounts are integers as the scheduler keeps them: ``cpu`` in millicores (rounded up, like
``Quantity.MilliValue``), every other resource in its base unit rounded up (``Quantity.Value``).
Sums are taken on exact quantities and rounded once at the end, as upstream adds quantities before
converting. The ``pods`` entry of a pod's requests is always 1, so that a node's ``requested["pods"]``
counts its pods.

Two derived views exist on purpose and must not be mixed:

* :func:`pod_requests` feeds filtering and a node's ``requested`` totals;
* :func:`pod_requests_for_scoring` replaces a *missing* container cpu/memory request by 100m/200Mi
  (upstream's ``NonMissingContainerRequests``) and only feeds the resource scores, so that pods
  without requests still spread.

Like the API server's defaulting (``SetDefaults_Pod``), a container that sets a limit but no request
for a resource requests its limit. Pod-level ``spec.resources`` and DRA node-allocatable resources in
pod status are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction

from dratwin.api.core import Container, Node, Pod
from dratwin.api.meta import object_key
from dratwin.api.quantity import Quantity
from dratwin.errors import QuantityError
from dratwin.scheduler.framework import NodeInfo, PodInfo, Resources

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core, upstream schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200Mi, upstream schedutil.DefaultMemoryRequest

_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_RESTART_ALWAYS = "Always"

_Exact = dict[str, Fraction]


# ---- resource names -------------------------------------------------------------------------------


def is_extended_resource_name(name: str) -> bool:
    """A vendor resource such as ``nvidia.com/gpu``: domain-prefixed, outside ``kubernetes.io/``."""
    if "/" not in name or _NATIVE_PREFIX in name:
        return False
    return not name.startswith(_REQUESTS_PREFIX)


def is_scalar_resource_name(name: str) -> bool:
    """Names the scheduler counts besides cpu, memory, ephemeral-storage and pods (upstream
    ``IsScalarResourceName``): extended resources, hugepages, prefixed native resources (such as
    DRA's ``deviceclass.resource.kubernetes.io/<class>``) and attachable volumes."""
    return (
        is_extended_resource_name(name)
        or name.startswith(_HUGEPAGES_PREFIX)
        or _NATIVE_PREFIX in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


def _counted(name: str) -> bool:
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)


# ---- pods -----------------------------------------------------------------------------------------


def pod_requests(pod: Pod) -> Resources:
    """The effective requests of a pod, as kube-scheduler computes them for filtering.

    ``sum(containers)`` and, for each init container in order, ``that container + all earlier
    sidecars`` (a sidecar is an init container with ``restartPolicy: Always``; it also adds to the
    running sum), taking the per-resource maximum; then ``spec.overhead`` is added.
    """
    return _to_resources(_aggregate(pod, non_missing=False), pods=1)


def exact_pod_requests(pod: Pod) -> dict[str, Fraction]:
    """The effective requests of :func:`pod_requests` as exact quantities, every resource name kept (no
    ``pods`` entry): for callers that count what the scheduler does not (Kueue's quota)."""
    return _aggregate(pod, non_missing=False)


def pod_requests_for_scoring(pod: Pod) -> Resources:
    """Like :func:`pod_requests`, but each container that does not set a cpu (memory) request counts
    100m (200Mi). Only the resource scores use this; an explicit ``0`` stays 0."""
    return _to_resources(_aggregate(pod, non_missing=True), pods=1)


def pod_priority(pod: Pod) -> int:
    """``spec.priority``, 0 when unset (upstream ``corev1helpers.PodPriority``)."""
    return pod.spec.priority if pod.spec.priority is not None else 0


def make_pod_info(pod: Pod, order: int = 0) -> PodInfo:
    """The derived view of a pod that the scheduler computes once per pod."""
    requests, scoring = _requests_of(pod)
    return PodInfo(pod, object_key(pod.metadata), pod_priority(pod), dict(requests), order, dict(scoring))


# Both request views by what they are computed from (every container's requests and limits, the init
# containers' restart policies, the overhead): the pods of one template share them, and exact arithmetic
# on quantities costs several times what the lookup does. Bounded; each PodInfo gets its own copies.
_Signature = tuple[object, ...]
_REQUESTS_SEEN: dict[_Signature, tuple[Resources, Resources]] = {}
_REQUESTS_SEEN_MAX = 4096


def _requests_of(pod: Pod) -> tuple[Resources, Resources]:
    spec = pod.spec
    signature = (
        tuple((c.restart_policy, tuple(c.resources.requests.items()), tuple(c.resources.limits.items()))
              for c in spec.init_containers),
        tuple((tuple(c.resources.requests.items()), tuple(c.resources.limits.items())) for c in spec.containers),
        tuple(spec.overhead.items()),
    )
    found = _REQUESTS_SEEN.get(signature)
    if found is None:
        found = (pod_requests(pod), pod_requests_for_scoring(pod))  # a bad quantity raises, naming this pod
        if len(_REQUESTS_SEEN) >= _REQUESTS_SEEN_MAX:
            _REQUESTS_SEEN.clear()
        _REQUESTS_SEEN[signature] = found
    return found


def _aggregate(pod: Pod, *, non_missing: bool) -> _Exact:
    where = object_key(pod.metadata) or "<unnamed>"
    total: _Exact = {}
    for container in pod.spec.containers:
        _add(total, _container_requests(container, where, non_missing))
    sidecars: _Exact = {}
    init_peak: _Exact = {}
    for container in pod.spec.init_containers:
        requests = _container_requests(container, where, non_missing)
        if container.restart_policy == _RESTART_ALWAYS:
            _add(total, requests)
            _add(sidecars, requests)
            in_use = dict(sidecars)
        else:
            in_use = dict(requests)
            _add(in_use, sidecars)
        _max(init_peak, in_use)
    _max(total, init_peak)
    _add(total, _parse_list(pod.spec.overhead, f"pod {where}: spec.overhead"))
    return total


def defaulted_requests(container: Container) -> Mapping[str, str | int | float]:
    """The container's requests as the API server stores them: it defaults a missing request to the limit
    of the same resource. Every reader of requests (resource fit, DRA's extended resources) starts here."""
    resources = container.resources
    if not resources.limits:
        return resources.requests
    return {**resources.limits, **resources.requests}


def _container_requests(container: Container, pod: str, non_missing: bool) -> _Exact:
    where = f"pod {pod}, container {container.name or '<unnamed>'}"
    written = container.resources.requests
    requests: _Exact = {}
    for name, text in defaulted_requests(container).items():
        field = "requests" if name in written else "limits"
        requests[name] = _parse_quantity(text, f"{where}: resources.{field}[{name}]")
    if non_missing:
        requests.setdefault(CPU, _DEFAULT_CPU)
        requests.setdefault(MEMORY, _DEFAULT_MEMORY)
    return requests


# Built once: a Fraction costs microseconds to make, and every container of every pod may take these.
_DEFAULT_CPU = Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000)
_DEFAULT_MEMORY = Fraction(DEFAULT_MEMORY_REQUEST)


def _parse_list(values: Mapping[str, str | int | float], where: str) -> _Exact:
    return {name: _parse_quantity(text, f"{where}[{name}]") for name, text in values.items()}


def _parse_quantity(text: str | int | float, where: str) -> Fraction:
    try:
        return Quantity.parse(text).value
    except QuantityError as error:
        raise QuantityError(f"{where}: {error}") from error


def _add(into: _Exact, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        into[name] = into[name] + value if name in into else value  # no Fraction(0) to make and add


def _max(into: _Exact, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        if name not in into or value > into[name]:
            into[name] = value


def _to_resources(exact: Mapping[str, Fraction], *, pods: int | None) -> Resources:
    result: Resources = {}
    for name in sorted(exact):
        if not _counted(name):
            continue  # e.g. "storage": not something the scheduler books on a node
        amount = _to_int(name, exact[name])
        if amount:
            result[name] = amount
    if pods is not None:
        result[PODS] = pods
    return result


def _to_int(name: str, value: Fraction) -> int:
    # MilliValue / Value round up, so 0.1m of cpu still counts as 1m.
    return math.ceil(value * 1000) if name == CPU else math.ceil(value)


# ---- nodes ----------------------------------------------------------------------------------------


def node_allocatable(node: Node) -> Resources:
    """What a node offers: ``status.allocatable``, or ``status.capacity`` when allocatable is absent
    (the API server's defaulting). Every resource present is kept, even at 0; a missing ``pods``
    means 0 pods fit, as upstream (there is no default of 110 in the scheduler)."""
    values = node.status.allocatable or node.status.capacity
    field = "status.allocatable" if node.status.allocatable else "status.capacity"
    exact = _parse_list(values, f"node {node.metadata.name}: {field}")
    result: Resources = {}
    for name in sorted(exact):
        if name == PODS or _counted(name):
            result[name] = _to_int(name, exact[name])
    return result


def node_capacity(node: Node) -> Resources:
    """What a node holds in all (``status.capacity``, or allocatable when capacity is absent): what
    Karpenter counts against a NodePool's limits."""
    values = node.status.capacity or node.status.allocatable
    field = "status.capacity" if node.status.capacity else "status.allocatable"
    exact = _parse_list(values, f"node {node.metadata.name}: {field}")
    return {name: _to_int(name, exact[name]) for name in sorted(exact) if name == PODS or _counted(name)}


def new_node_info(node: Node, pods: Iterable[PodInfo] = ()) -> NodeInfo:
    """A NodeInfo for the node with the given pods booked on it."""
    info = NodeInfo(node, node_allocatable(node))
    for pod in pods:
        add_pod(info, pod)
    return info


def add_pod(node: NodeInfo, pod: PodInfo) -> None:
    """Book a pod on a node: its requests join ``requested`` and ``generation`` moves on."""
    node.pods.append(pod)
    for name, amount in pod.requests.items():
        node.requested[name] = node.requested.get(name, 0) + amount
    for name, amount in _scoring(pod).items():
        if name in (CPU, MEMORY):
            node.non_zero_requested[name] = node.non_zero_requested.get(name, 0) + amount
    node.changed()


def _scoring(pod: PodInfo) -> Resources:
    if not pod.scoring_requests:
        pod.scoring_requests = pod_requests_for_scoring(pod.pod)
    return pod.scoring_requests


def remove_pod(node: NodeInfo, pod: PodInfo) -> None:
    """Undo :func:`add_pod` for the pod with the same key; KeyError when it is not on the node."""
    index = next((i for i, booked in enumerate(node.pods) if booked.key == pod.key), None)
    if index is None:
        raise KeyError(f"node {node.name}: pod {pod.key} is not bound or assumed there")
    booked = node.pods.pop(index)
    for name, amount in booked.requests.items():
        left = node.requested.get(name, 0) - amount
        if left:
            node.requested[name] = left
        else:
            node.requested.pop(name, None)
    for name, amount in _scoring(booked).items():
        if name in (CPU, MEMORY):
            node.non_zero_requested[name] = node.non_zero_requested.get(name, 0) - amount
    node.changed()


def copy_node_info(node: NodeInfo) -> NodeInfo:
    """A copy whose books can change without touching the original (the Node object is shared)."""
    return NodeInfo(
        node.node,
        dict(node.allocatable),
        dict(node.requested),
        list(node.pods),
        node.generation,
        dict(node.non_zero_requested),
    )


def non_zero_requested(node: NodeInfo) -> Resources:
    """cpu and memory booked on the node as the resource scores count them (upstream
    ``NodeInfo.NonZeroRequested``): each pod's :func:`pod_requests_for_scoring`."""
    return {CPU: node.non_zero_requested.get(CPU, 0), MEMORY: node.non_zero_requested.get(MEMORY, 0)}


__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "add_pod",
    "copy_node_info",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "make_pod_info",
    "new_node_info",
    "node_allocatable",
    "non_zero_requested",
    "pod_priority",
    "pod_requests",
    "pod_requests_for_scoring",
    "remove_pod",
]

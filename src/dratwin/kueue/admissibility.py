"""Whether a ClusterQueue may take a Workload at all, checked at nomination before any flavor is tried.

The twin of ``workload.ValidateAdmissibility`` (``pkg/workload/resources.go`` at Kueue ``ff69552``), as the
scheduler's ``nominate`` calls it, in its order:

1. the Workload's Namespace must exist and its labels must match the ClusterQueue's ``namespaceSelector``,
   read as ``metav1.LabelSelectorAsSelector`` reads it: left unset it selects **no** namespace, ``{}``
   every namespace;
2. ``ValidateResources``: no container's request may exceed its limit ("resources validation failed");
3. ``ValidateLimitRange``: no container's request or limit may pass its namespace's LimitRange ``max`` or
   fall below its ``min``, nor a pod's effective requests those of the ``Pod`` type ("resources didn't
   satisfy LimitRange constraints").

Both resource checks read the Workload as Kueue's queue holds it: with the LimitRange defaults filled in
(:mod:`.limit_range`) and limits standing for missing requests. A refusal is ``QuotaReserved=False`` with
reason ``Misconfigured`` and Kueue's message (its field errors as their aggregate prints them). Pure: the
caller gives the namespaces' labels and the LimitRanges.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction

import msgspec

from dratwin.api.core import Container, LimitRange, Pod
from dratwin.api.kueue import ClusterQueue, Workload
from dratwin.api.quantity import Quantity
from dratwin.api.workloads import LabelSelector, label_selector_matches
from dratwin.kueue.limit_range import CONTAINER, POD, Bounds, limit_bounds, with_limit_range_defaults
from dratwin.kueue.usage import resource_value
from dratwin.scheduler.resources import defaulted_requests, exact_pod_requests

MISCONFIGURED = "Misconfigured"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
INVALID_RESOURCES = "resources validation failed"
LIMIT_RANGE_UNSATISFIED = "resources didn't satisfy LimitRange constraints"
REQUESTS_EXCEED_LIMITS = "requests must not exceed its limits"
ABOVE_MAX = "requests must not be above the limitRange max"
BELOW_MIN = "requests must not be below the limitRange min"

NamespaceLabels = Mapping[str, Mapping[str, str]]  # namespace → its labels


def admissibility_refusal(cq: ClusterQueue, workload: Workload, namespaces: NamespaceLabels | None,
                          limit_ranges: Sequence[LimitRange] = ()) -> str:
    """Kueue's message when ``cq`` may not take ``workload`` at all, "" when it may."""
    return namespace_refusal(cq, workload, namespaces) or resources_refusal(workload, limit_ranges)


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
    if not selector:
        return True  # {}: every namespace (the common case, asked at every cycle)
    try:
        typed = msgspec.convert(selector, LabelSelector)
    except msgspec.ValidationError:
        return False  # a selector Kueue cannot parse keeps the ClusterQueue out of its cache
    return label_selector_matches(typed, labels)


def resources_refusal(workload: Workload, limit_ranges: Sequence[LimitRange] = ()) -> str:
    """``ValidateResources`` then ``ValidateLimitRange`` on the adjusted Workload ("" when both pass)."""
    adjusted = with_limit_range_defaults(workload, limit_ranges)
    errors = list(_requests_over_limits(adjusted))
    if errors:
        return f"{INVALID_RESOURCES}: {_aggregate(errors)}"
    bounds = limit_bounds(limit_ranges, workload.metadata.namespace or "default")
    errors = list(_outside_limit_range(adjusted, bounds)) if bounds else []
    return f"{LIMIT_RANGE_UNSATISFIED}: {_aggregate(errors)}" if errors else ""


Values = dict[str, int]


def _requests_over_limits(workload: Workload) -> Iterator[str]:
    for path, container in _containers(workload):
        requests, limits = _values(defaulted_requests(container)), _values(container.resources.limits)
        yield from _invalid(path, _greater(requests, limits), REQUESTS_EXCEED_LIMITS)


def _outside_limit_range(workload: Workload, bounds: Mapping[str, Bounds]) -> Iterator[str]:
    """``Summary.ValidatePodSpec`` per PodSet: its containers, then the pod as a whole."""
    container_bounds, pod_bounds = bounds.get(CONTAINER), bounds.get(POD)
    for index, pod_set in enumerate(workload.spec.pod_sets):
        base = f"spec.podSets[{index}].template.spec"
        spec = pod_set.template.spec
        for kind, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
            for j, container in enumerate(containers) if container_bounds is not None else ():
                requests, limits = _values(defaulted_requests(container)), _values(container.resources.limits)
                low = {k: min(v, limits.get(k, v)) for k, v in {**limits, **requests}.items()}
                high = {k: max(v, limits.get(k, v)) for k, v in {**limits, **requests}.items()}
                yield from _bound_errors(f"{base}.{kind}[{j}]", low, high, container_bounds)
        if pod_bounds is not None:
            total = {k: resource_value(k, v) for k, v in exact_pod_requests(Pod(spec=spec)).items()}
            yield from _bound_errors(base, total, total, pod_bounds)


def _bound_errors(path: str, low: Values, high: Values, bounds: Bounds | None) -> Iterator[str]:
    if bounds is None:
        return
    yield from _invalid(path, _greater(high, _exact_values(bounds.max)), ABOVE_MAX)
    yield from _invalid(path, _greater(_exact_values(bounds.min), low), BELOW_MIN)


def _containers(workload: Workload) -> Iterator[tuple[str, Container]]:
    for index, pod_set in enumerate(workload.spec.pod_sets):
        base = f"spec.podSets[{index}].template.spec"
        for j, container in enumerate(pod_set.template.spec.init_containers):
            yield f"{base}.initContainers[{j}]", container
        for j, container in enumerate(pod_set.template.spec.containers):
            yield f"{base}.containers[{j}]", container


def _values(resources: Mapping[str, str | int | float]) -> Values:
    """``NewRequestsFromResourceList``: Kueue's integer amounts (cpu in millicores)."""
    return {name: resource_value(name, Quantity.parse(value).value) for name, value in resources.items()}


def _exact_values(resources: Mapping[str, Fraction]) -> Values:
    return {name: resource_value(name, value) for name, value in resources.items()}


def _greater(these: Values, than: Values) -> list[str]:
    """``GreaterKeys``: the resources both name where ``these`` is larger, sorted."""
    return sorted(name for name, value in these.items() if name in than and value > than[name])


def _invalid(path: str, names: list[str], detail: str) -> Iterator[str]:
    if names:
        yield f"{path}: Invalid value: {json.dumps(names, separators=(',', ':'))}: {detail}"


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one error as is, several in brackets, duplicates dropped."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"

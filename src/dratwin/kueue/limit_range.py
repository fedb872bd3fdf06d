"""A namespace's LimitRange defaults, applied to a Workload's pod templates before Kueue counts them.

The twin of ``handlePodLimitRange`` (``pkg/workload/resources.go``, run by ``AdjustResources`` before the
usage is computed) and ``limitrange.Summarize`` (``pkg/util/limitrange``) at Kueue ``ff69552``:

- the LimitRanges of the Workload's namespace are summarised per type, each ``default`` and
  ``defaultRequest`` resource taken from the first LimitRange that sets it (Kueue lists them from its
  informer cache, in no set order; here by name, so that the result does not depend on the input order);
- every container and init container of every PodSet keeps its own limits and requests and gains, for each
  resource it does not set, the ``Container`` type's ``default`` as a limit and ``defaultRequest`` as a
  request. A limit gained this way then stands for a missing request, as Kueue's next step
  (``handleLimitsToRequests``) and the usage rule (:mod:`.usage`) make it.

The ``Pod`` type's defaults apply only to pod-level resources, which the twin does not model; the
LimitRanges' ``min``/``max`` checks (``ValidateLimitRange``) are not made here. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from dratwin.api.core import Container, LimitRange, PodSpec
from dratwin.api.kueue import Workload

CONTAINER = "Container"
ResourceList = dict[str, str | int | float]


def container_defaults(limit_ranges: Sequence[LimitRange], namespace: str) -> tuple[ResourceList, ResourceList]:
    """(default limits, default requests) of containers in ``namespace``: ``Summarize``'s keep-first merge."""
    limits: ResourceList = {}
    requests: ResourceList = {}
    for limit_range in sorted(limit_ranges, key=lambda r: r.metadata.name):
        if (limit_range.metadata.namespace or "default") != namespace:
            continue
        for item in limit_range.spec.limits:
            if item.type == CONTAINER:
                limits = _keep_first(limits, item.default)
                requests = _keep_first(requests, item.default_request)
    return limits, requests


def with_limit_range_defaults(workload: Workload, limit_ranges: Sequence[LimitRange]) -> Workload:
    """``workload`` with its namespace's container defaults in every PodSet (itself when there are none)."""
    limits, requests = container_defaults(limit_ranges, workload.metadata.namespace or "default")
    if not limits and not requests:
        return workload
    pod_sets = [msgspec.structs.replace(ps, template=msgspec.structs.replace(
        ps.template, spec=_defaulted_spec(ps.template.spec, limits, requests))) for ps in workload.spec.pod_sets]
    return msgspec.structs.replace(workload, spec=msgspec.structs.replace(workload.spec, pod_sets=pod_sets))


def _defaulted_spec(spec: PodSpec, limits: ResourceList, requests: ResourceList) -> PodSpec:
    return msgspec.structs.replace(
        spec, containers=[_defaulted(c, limits, requests) for c in spec.containers],
        init_containers=[_defaulted(c, limits, requests) for c in spec.init_containers])


def _defaulted(container: Container, limits: ResourceList, requests: ResourceList) -> Container:
    resources = msgspec.structs.replace(container.resources,
                                        limits=_keep_first(container.resources.limits, limits),
                                        requests=_keep_first(container.resources.requests, requests))
    return msgspec.structs.replace(container, resources=resources)


def _keep_first(first: Mapping[str, str | int | float], then: Mapping[str, str | int | float]) -> ResourceList:
    """``MergeResourceListKeepFirst``: ``first``, plus what only ``then`` has."""
    return {**then, **first}

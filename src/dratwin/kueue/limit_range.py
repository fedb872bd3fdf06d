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

The ``Pod`` type's defaults apply only to pod-level resources, which the twin does not model. The
LimitRanges' ``min`` and ``max`` (:func:`limit_bounds`: the lowest max and the highest min per resource, as
``Summarize`` keeps them) are checked at nomination (:mod:`.admissibility`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import msgspec

from dratwin.api.core import Container, LimitRange, PodSpec
from dratwin.api.kueue import Workload
from dratwin.api.quantity import Quantity

CONTAINER = "Container"
POD = "Pod"
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


@dataclass
class Bounds:
    """The summarised ``max`` and ``min`` of one LimitRange type, exact quantities per resource."""

    max: dict[str, Fraction] = field(default_factory=dict)
    min: dict[str, Fraction] = field(default_factory=dict)


def limit_bounds(limit_ranges: Sequence[LimitRange], namespace: str) -> dict[str, Bounds]:
    """Per LimitRange type (``Container``, ``Pod``), the bounds of ``namespace``'s LimitRanges."""
    out: dict[str, Bounds] = {}
    for limit_range in limit_ranges:
        if (limit_range.metadata.namespace or "default") != namespace:
            continue
        for item in limit_range.spec.limits:
            bounds = out.setdefault(item.type, Bounds())
            _merge(bounds.max, item.max, min)
            _merge(bounds.min, item.min, max)
    return out


def _merge(into: dict[str, Fraction], values: Mapping[str, str | int | float],
           keep: Callable[[Fraction, Fraction], Fraction]) -> None:
    """``MergeResourceListKeepMin`` / ``KeepMax``: per resource, the one ``keep`` picks."""
    for name, text in values.items():
        value = Quantity.parse(text).value
        into[name] = keep(into[name], value) if name in into else value


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

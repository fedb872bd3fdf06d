"""The bare form of a scenario, until scenario files exist: ordinary manifests with two annotations.

Cluster objects (nodes, slices, classes, claims, templates, PriorityClasses) are there at time 0.
Workloads (Pods, Jobs, Deployments, ReplicaSets, StatefulSets) arrive at ``dratwin.io/arrive-at``
(default 0) and each of their pods runs for ``dratwin.io/run-for`` once started (default: until the end).
Karpenter runs when the manifests hold a Karpenter NodePool.
Durations as in scenario files: ``30s``, ``10m``, ``2h``, ``7d``, or combined, ``1h30m``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.api.loader import LoadedObject
from dratwin.errors import InputError
from dratwin.scenario import quantities
from dratwin.scenario.model import Arrival, Provisioner, RunSpec

ARRIVE_AT = "dratwin.io/arrive-at"
RUN_FOR = "dratwin.io/run-for"
WORKLOAD_KINDS = frozenset({"Pod", "Job", "Deployment", "ReplicaSet", "StatefulSet"})
DEFAULT_UNTIL_SECONDS = 86400.0



class DurationError(InputError):
    pass


def parse_duration(text: str) -> float:
    """Seconds in a duration, read as a scenario file reads them (:mod:`dratwin.scenario.quantities`: Go's
    syntax plus ``d``; a bare number is refused except 0); :class:`DurationError` with the hint otherwise."""
    try:
        seconds = quantities.parse_duration(text.strip())
    except quantities.NotationError as error:
        raise DurationError(f"{text!r} {error.message}: {error.hint}") from None
    if seconds < 0:
        raise DurationError(f"{text!r} is negative: {quantities.DURATION_HINT}")
    return seconds


def _annotation(obj: LoadedObject, key: str) -> float | None:
    meta = obj.raw.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(key)
    if value is None:
        return None
    try:
        return parse_duration(str(value))
    except DurationError as error:
        line = obj.line_of(("metadata", "annotations", key))
        raise InputError(f"{obj.source.path}:{line}: {obj.ref}: metadata.annotations[{key}]: {error}") from None


def run_spec(objects: Sequence[LoadedObject], *, name: str, seed: int = 0,
             until_seconds: float | None = None, provisioner: Provisioner | None = None,
             admitted: bool = False) -> RunSpec:
    """A RunSpec from manifests: see the module docstring. ``provisioner`` None: Karpenter when the
    manifests hold a Karpenter NodePool, none otherwise. ``admitted``: the objects are what
    :func:`dratwin.api.intake.admit` took, so the run does not read them again."""
    if provisioner is None:
        has_pools = any(o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/") for o in objects)
        provisioner = "karpenter" if has_pools else "none"
    cluster: list[LoadedObject] = []
    groups: dict[tuple[float, float | None], list[LoadedObject]] = {}
    for obj in objects:
        if obj.kind not in WORKLOAD_KINDS:
            cluster.append(obj)
            continue
        at = _annotation(obj, ARRIVE_AT) or 0.0
        groups.setdefault((at, _annotation(obj, RUN_FOR)), []).append(obj)
    arrivals = tuple(
        Arrival(at, tuple(group), run_for, group[0].source)
        for (at, run_for), group in sorted(groups.items(), key=lambda item: item[0][0])
    )
    last = max((a.at_seconds for a in arrivals), default=0.0)
    until = until_seconds if until_seconds is not None else max(DEFAULT_UNTIL_SECONDS, last)
    return RunSpec(scenario=name, variant="default", seed=seed, until_seconds=until, objects=tuple(cluster),
                   arrivals=arrivals, provisioner=provisioner, admitted=admitted)


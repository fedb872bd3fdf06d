"""The ``topologyAssignment`` of a PodSetAssignment as Kueue v1beta2 stores it, and what each pod gets from it.

The twin of ``pkg/util/tas/tas_assignment.go`` (``V1Beta2From``, ``InternalSeqFrom``) and of the topology
ungater (``pkg/controller/tas/topology_ungater.go``) at Kueue ``ff69552``:

- **encoding**: the domains are cut into slices; in a slice each level's values are one ``universal``
  value when all are equal, else ``individual`` roots with their common ``prefix`` and ``suffix`` taken
  out, and the pod counts are ``universal`` or ``individual`` likewise. With
  ``TASAssignmentsEncodingByHostnamePrefix`` (beta, on) consecutive hostnames that share a reusable
  ``-``-delimited prefix form a slice of their own, the longest such prefixes first, backing off until at
  most 1,000 slices remain; of that and the single-slice form the one whose JSON is shorter is kept
  (the prefix form on a tie). A slice holds at most 100,000 domains;
- **ungating**: on admission Kueue adds the ``kueue.x-k8s.io/topology`` scheduling gate to the pod
  template; the ungater then gives each gated pod, in order (or by its index label), the next free slot of
  the assignment: a ``nodeSelector`` with the domain's label per level, and removes the gate.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dratwin.kueue.tas.assign import DomainAssignment, TopologyAssignment
from dratwin.kueue.tas.domains import HOSTNAME_LABEL
from dratwin.kueue.tas.request import TOPOLOGY_SCHEDULING_GATE

MAX_DOMAINS_PER_SLICE = 100_000
MAX_SLICES = 1_000
Raw = dict[str, Any]


def encode(assignment: TopologyAssignment, by_hostname_prefix: bool = True) -> Raw:
    """``V1Beta2From``: the wire ``topologyAssignment``."""
    if not by_hostname_prefix:
        return _single(assignment)
    prefixed = _by_prefix_runs(assignment)
    if len(prefixed["slices"]) <= 1 or len(assignment.domains) > MAX_DOMAINS_PER_SLICE:
        return prefixed
    single = _single(assignment)
    return single if len(_json(single)) < len(_json(prefixed)) else prefixed


def decode(raw: Mapping[str, Any]) -> TopologyAssignment:
    """``InternalFrom``: the domains and counts of a stored ``topologyAssignment``."""
    levels = tuple(raw.get("levels") or ())
    domains = []
    for piece in raw.get("slices") or []:
        per_level = piece.get("valuesPerLevel") or []
        counts = piece.get("podCounts") or {}
        for i in range(int(piece.get("domainCount") or 0)):
            values = tuple(_value_at(per_level[level], i) for level in range(len(levels)))
            count = counts["universal"] if "universal" in counts else counts["individual"][i]
            domains.append(DomainAssignment(values, int(count)))
    return TopologyAssignment(levels, tuple(domains))


def _value_at(values: Mapping[str, Any], index: int) -> str:
    if "universal" in values:
        return str(values["universal"])
    individual = values["individual"]
    return f"{individual.get('prefix', '')}{individual['roots'][index]}{individual.get('suffix', '')}"


def _json(raw: Raw) -> str:
    return json.dumps(raw, separators=(",", ":"), ensure_ascii=False)


def _single(assignment: TopologyAssignment) -> Raw:
    slices = [_slice(assignment.levels, assignment.domains)] if assignment.domains else []
    return {"levels": list(assignment.levels), "slices": slices}


def _by_prefix_runs(assignment: TopologyAssignment) -> Raw:
    domains = assignment.domains
    keys: list[str] | None = None
    if len(domains) > 1 and assignment.levels and assignment.levels[-1] == HOSTNAME_LABEL:
        keys = _prefix_keys([d.values[-1] for d in domains])
    slices = []
    for run in _runs(domains, keys):
        for start in range(0, len(run), MAX_DOMAINS_PER_SLICE):
            slices.append(_slice(assignment.levels, run[start:start + MAX_DOMAINS_PER_SLICE]))
    return {"levels": list(assignment.levels), "slices": slices}


def _runs(domains: Sequence[DomainAssignment], keys: Sequence[str] | None) -> list[Sequence[DomainAssignment]]:
    if not domains:
        return []
    if not keys:
        return [domains]
    runs, start = [], 0
    for i in range(1, len(domains)):
        if keys[i] != keys[start]:
            runs.append(domains[start:i])
            start = i
    return [*runs, domains[start:]]


def _prefix_keys(hostnames: Sequence[str]) -> list[str] | None:
    """``reusableHostnamePrefixKeys``: each hostname's longest ``-``-ended prefix that another hostname of the
    assignment shares, backing off to shorter prefixes while the runs would make too many slices."""
    candidates = [[name[:end + 1] for end in range(len(name) - 1) if name[end] == "-"] for name in hostnames]
    seen: dict[str, int] = {}
    for prefixes in candidates:
        for prefix in prefixes:
            seen[prefix] = min(2, seen.get(prefix, 0) + 1)
    for depth in range(max((len(c) for c in candidates), default=0), 0, -1):
        keys = [next((p for p in reversed(prefixes[:depth]) if seen[p] >= 2), "") for prefixes in candidates]
        count, start = 0, 0
        for i in range(1, len(keys)):
            if keys[i] != keys[start]:
                count += _chunks(i - start)
                start = i
        count += _chunks(len(keys) - start)
        if count <= MAX_SLICES:
            return keys
    return None


def _chunks(length: int) -> int:
    return (length + MAX_DOMAINS_PER_SLICE - 1) // MAX_DOMAINS_PER_SLICE


def _slice(levels: Sequence[str], domains: Sequence[DomainAssignment]) -> Raw:
    """``compactSliceEncoding``: one slice, every level and the counts as compact as they go."""
    per_level = [_level_values([d.values[level] for d in domains]) for level in range(len(levels))]
    counts = [d.count for d in domains]
    pod_counts: Raw = {"universal": counts[0]} if len(set(counts)) == 1 else {"individual": counts}
    return {"domainCount": len(domains), "valuesPerLevel": per_level, "podCounts": pod_counts}


def _level_values(values: Sequence[str]) -> Raw:
    prefix = suffix = values[0]
    for value in values[1:]:
        prefix = _common_prefix(prefix, value)
        suffix = _common_prefix(suffix[::-1], value[::-1])[::-1]
    longest, shortest = max(len(v) for v in values), min(len(v) for v in values)
    if len(prefix) == longest:
        return {"universal": prefix}
    if len(prefix) + len(suffix) > shortest:  # they must not overlap ("ababa" and "aba")
        prefix = prefix[:shortest - len(suffix)]
    individual: Raw = {}
    if prefix:
        individual["prefix"] = prefix
    if suffix:
        individual["suffix"] = suffix
    individual["roots"] = [v[len(prefix):len(v) - len(suffix)] for v in values]
    return {"individual": individual}


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


# ---- ungating ------------------------------------------------------------------------------------


def node_selectors(assignment: TopologyAssignment) -> Iterator[dict[str, str]]:
    """The ``nodeSelector`` of each pod slot of the assignment, in order (a domain's once per pod there)."""
    for domain in assignment.domains:
        selector = dict(zip(assignment.levels, domain.values, strict=True))
        for _ in range(domain.count):
            yield dict(selector)


def gated(pod_spec: Raw) -> Raw:
    """A pod spec with the ``kueue.x-k8s.io/topology`` scheduling gate (as Kueue starts a TAS PodSet)."""
    out = copy.deepcopy(pod_spec)
    gates = out.setdefault("schedulingGates", [])
    if not any(g.get("name") == TOPOLOGY_SCHEDULING_GATE for g in gates):
        gates.append({"name": TOPOLOGY_SCHEDULING_GATE})
    return out


def remove_scheduling_gate(pod_spec: Raw, name: str) -> None:
    """Remove the scheduling gate ``name`` from a pod spec in place (the field goes with the last gate, as a
    Kueue ungater's patch leaves it)."""
    gates = [g for g in pod_spec.get("schedulingGates") or [] if g.get("name") != name]
    if gates:
        pod_spec["schedulingGates"] = gates
    else:
        pod_spec.pop("schedulingGates", None)


def ungated(pod: Mapping[str, Any], selector: Mapping[str, str]) -> Raw:
    """The pod as the topology ungater leaves it: the gate removed, its domain's labels in ``nodeSelector``."""
    out = copy.deepcopy(dict(pod))
    spec = out.setdefault("spec", {})
    remove_scheduling_gate(spec, TOPOLOGY_SCHEDULING_GATE)
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **selector}
    return out

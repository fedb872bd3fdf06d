"""The topology assignment of a PodSet: which domains its pods go to, or why they cannot fit.

The twin of ``TASFlavorSnapshot.findTopologyAssignment`` (``pkg/cache/scheduler/tas_flavor_snapshot.go`` at
Kueue ``ff69552``):

1. **counts**: every leaf the pods may use (when the lowest level is ``kubernetes.io/hostname``, nodes whose
   NoSchedule/NoExecute taints the pod and the flavor do not tolerate, or that the pod's nodeSelector or
   required node affinity reject, are excluded and counted; above hostname no node is filtered) gets the
   number of pods that fit in its remaining capacity; parents sum their children. At the slice level a
   domain's slice count is its pods divided by the slice size; above it, the sum of its children's;
   below it, 0 (a slice is one pod when none is requested, at the lowest level);
2. **the level**: the domains of the requested level are sorted (most slices first, then fewer pods, then
   by name; with ``TASProfileMixed``, on by default, an unconstrained request sorts fewest slices first:
   LeastFreeCapacity). BestFit takes the fitting domain with the fewest slices. A required request that
   no single domain fits fails; a preferred one tries the next level up, and at the top (or when
   unconstrained) takes domains greedily, best-fitting the last one;
3. **descent**: level by level the chosen domains' children are sorted the same way and filled greedily
   with the last one best-fitted, so that the pods use as few domains as possible; below the slice level
   each domain's pods are spread over its own children only;
4. the leaves with pods, in name order, are the assignment (only the hostname level when the topology
   ends with it).

A PodSet group (``podSetGroupName``: a one-pod leader and its workers) is placed together: each leaf also
records whether the leader fits and how many workers fit beside it; domains that can hold the leader sort
first and the leader's domain is taken first where it leaves the workers enough room.

A "no" is Kueue's message: ``topology "T" doesn't allow to fit any of N pod(s)`` or ``... allows to fit
only K out of N pod(s)``, with the excluded nodes counted by cause. Balanced placement
(``TASBalancedPlacement``, alpha, off), preferred node affinity (``TASRespectNodeAffinityPreferred``, alpha,
off) and multi-layer slices are not modelled; a request that needs multi-layer slices gets a "not
modelled" reason, never a made-up placement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.allocator.nodes import selector_matches
from dratwin.api.core import PodSpec
from dratwin.api.kueue import PodSetTopologyRequest
from dratwin.errors import AllocationError
from dratwin.kueue.tas.domains import Amounts, Domain, FlavorTopology, Leaf, count_in, domain_id
from dratwin.kueue.tas.request import slice_layers
from dratwin.scheduler.plugins.taint_toleration import find_untolerated_taint

_MAX_COUNT = 2**31 - 1
NOT_MODELLED = "not modelled by dratwin"


@dataclass(frozen=True)
class DomainAssignment:
    values: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class TopologyAssignment:
    """``utiltas.TopologyAssignment``: the levels (from the highest kept) and the pods per domain."""

    levels: tuple[str, ...]
    domains: tuple[DomainAssignment, ...]

    @property
    def pod_count(self) -> int:
        return sum(d.count for d in self.domains)

    def usage(self, per_pod: Mapping[str, int]) -> dict[str, Amounts]:
        """What the assignment books per leaf (``ComputeUsagePerDomain``): the pod's requests × its count there."""
        return {domain_id(d.values): {name: amount * d.count for name, amount in per_pod.items()}
                for d in self.domains}

    def counts(self, per_pod: Mapping[str, int]) -> list[tuple[str, Amounts, int]]:
        """``TopologyDomainRequests``: (leaf, one pod's requests, pods there) per domain."""
        return [(domain_id(d.values), dict(per_pod), d.count) for d in self.domains]


@dataclass(frozen=True)
class PodSetRequest:
    """``TASPodSetRequests``: one PodSet's pods (``per_pod`` with ``pods: 1``), how many, and what it asks."""

    name: str
    count: int
    per_pod: Mapping[str, int]
    request: PodSetTopologyRequest | None
    pod: PodSpec
    implied: bool = False  # a TAS-only ClusterQueue places a PodSet that asks nothing as unconstrained


@dataclass(frozen=True)
class Gates:
    """The feature gates that change an assignment, at their ``ff69552`` defaults."""

    profile_mixed: bool = True  # TASProfileMixed (beta, on): unconstrained requests use LeastFreeCapacity


@dataclass
class Exclusions:
    """``tasExclusionStats``: the nodes considered and why some were left out."""

    total: int = 0
    node_selector: int = 0
    affinity: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def any(self) -> bool:
        return bool(self.node_selector or self.affinity or self.taints or self.resources)

    def reasons(self) -> str:
        parts = []
        if self.node_selector:
            parts.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            parts.append(f"affinity: {self.affinity}")
        parts += [f"taint {json.dumps(t)}: {n}" for t, n in self.taints.items()]
        parts += [f"resource {json.dumps(r)}: {n}" for r, n in self.resources.items()]
        return ", ".join(sorted(parts))


@dataclass
class _Run:
    """The scratch state of one assignment run (Kueue's per-snapshot ``domainStates``). With a leader, the
    ``*_wl`` counts are the workers that still fit where the leader is placed too."""

    topo: FlavorTopology
    count: int
    slice_size: int
    slice_level: int
    required: bool
    unconstrained: bool
    least_free: bool
    size: int
    leader_count: int = 0  # 1 when a leader PodSet is placed with the workers
    stats: Exclusions = field(default_factory=Exclusions)
    pods: list[int] = field(default_factory=list)
    slices: list[int] = field(default_factory=list)
    pods_wl: list[int] = field(default_factory=list)
    slices_wl: list[int] = field(default_factory=list)
    leaders: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pods, self.slices, self.pods_wl, self.slices_wl, self.leaders = ([0] * self.size for _ in range(5))

    def sort(self, domains: Sequence[Domain]) -> list[Domain]:
        """``sortedDomains``: BestFit by slices descending, LeastFreeCapacity ascending; then fewer pods; then name."""
        sign = 1 if self.least_free else -1
        return sorted(domains, key=lambda d: (sign * self.slices[d.index], self.pods[d.index], d.values))

    def sort_with_leader(self, domains: Sequence[Domain]) -> list[Domain]:
        """``sortedDomainsWithLeader``: domains that hold a leader first, then as :meth:`sort` with the leader."""
        sign = 1 if self.least_free else -1
        return sorted(domains, key=lambda d: (-self.leaders[d.index], sign * self.slices_wl[d.index],
                                              self.pods_wl[d.index], d.values))

    def best_fit(self, domains: Sequence[Domain], needed: int, by_slices: bool, leaders: int = 0) -> Domain:
        """``findBestFitDomainBy``: the first domain with the fewest units that still holds ``needed`` (and the
        leaders); the first domain when none does."""
        if leaders > 0:
            counts = self.slices_wl if by_slices else self.pods_wl
        else:
            counts = self.slices if by_slices else self.pods
        best, best_count = domains[0], _MAX_COUNT
        found = False
        for domain in domains:
            if self.leaders[domain.index] < leaders:
                continue
            units = counts[domain.index]
            if needed <= units < best_count:
                best, best_count, found = domain, units, True
        return best if found else domains[0]

    def not_fit(self, fitting: int, needed: int) -> str:
        unit = "pod" if self.slice_size == 1 else "slice"
        name = self.topo.topology_name
        if fitting == 0:
            text = f'topology "{name}" doesn\'t allow to fit any of {needed} {unit}(s)'
        else:
            text = f'topology "{name}" allows to fit only {fitting} out of {needed} {unit}(s)'
        if self.stats.any():
            text += f". Total nodes: {self.stats.total}; excluded: {self.stats.reasons()}"
        return text


def level_key(topo: FlavorTopology, request: PodSetTopologyRequest | None) -> str | None:
    """``levelKey``: required, else preferred, else the top level for a slice-only request, else the lowest
    level for an unconstrained one."""
    if request is None:
        return None
    if request.required is not None:
        return request.required
    if request.preferred is not None:
        return request.preferred
    if _slice_only(request):
        return topo.tree.levels[0]
    if request.unconstrained:
        return topo.tree.levels[-1]
    return None


def has_level(topo: FlavorTopology, request: PodSetTopologyRequest | None) -> bool:
    """``HasLevel``: the flavor's topology has the requested level and every slice level."""
    key = level_key(topo, request)
    if key is None:
        return False
    layers = slice_layers(request)
    wanted = [key, layers[0][0] if layers else topo.tree.levels[-1], *(t for t, _ in layers)]
    return all(topo.tree.level_index(k) is not None for k in wanted)


def _slice_only(request: PodSetTopologyRequest | None) -> bool:
    if request is None or request.required is not None or request.preferred is not None:
        return False
    return bool(slice_layers(request))


def find_assignment(topo: FlavorTopology, ps: PodSetRequest, assumed: Mapping[str, Amounts] | None = None,
                    simulate_empty: bool = False, gates: Gates = Gates()) -> TopologyAssignment | str:
    """The assignment of ``ps`` in ``topo`` (``assumed``: usage of earlier PodSets of the same Workload), or
    the reason it cannot be placed, in Kueue's words."""
    found = find_group_assignment(topo, ps, None, assumed, simulate_empty, gates)
    return found if isinstance(found, str) else found[0]


def find_group_assignment(topo: FlavorTopology, ps: PodSetRequest, leader: PodSetRequest | None,
                          assumed: Mapping[str, Amounts] | None = None, simulate_empty: bool = False,
                          gates: Gates = Gates()) -> tuple[TopologyAssignment, TopologyAssignment | None] | str:
    """The workers' assignment and, for a PodSet group, its one-pod leader's, placed together."""
    tree = topo.tree
    layers = slice_layers(ps.request)
    slice_size = layers[0][1] if layers else 1
    if slice_size <= 0:
        return "slice topology requested, but slice size not provided"
    key = level_key(topo, ps.request) or (tree.levels[-1] if ps.implied else None)
    if key is None:
        return "topology level not specified"
    level = tree.level_index(key)
    if level is None:
        return f"no requested topology level: {key}"
    slice_key = layers[0][0] if layers else tree.levels[-1]
    slice_level = tree.level_index(slice_key)
    if slice_level is None:
        return f"no requested topology level for slices: {slice_key}"
    if level > slice_level:
        return f"podset slice topology {slice_key} is above the podset topology {key}"
    if len(layers) > 1:
        return f"multi-layer slice topology constraints are {NOT_MODELLED}"
    request = ps.request
    unconstrained = bool(request is not None and request.unconstrained) or ps.implied or _slice_only(request)
    run = _Run(topo, ps.count, slice_size, slice_level, required=request is not None and request.required is not None,
               unconstrained=unconstrained, least_free=unconstrained and gates.profile_mixed, size=tree.size,
               leader_count=1 if leader is not None else 0)
    leaves = _feasible_leaves(run, ps)
    if isinstance(leaves, str):
        return leaves
    _fill_counts(run, leaves, ps.per_pod, leader.per_pod if leader is not None else None, assumed or {},
                 simulate_empty)
    found = _level_with_fit(run, level)
    if isinstance(found, str):
        return found
    fit_level, chosen = found
    return _descend(run, fit_level, chosen)


def _feasible_leaves(run: _Run, ps: PodSetRequest) -> list[Leaf] | str:
    """The leaves the pods may use (``FindFeasibleNodes`` of the default simulator, hostname topologies only)."""
    tree = run.topo.tree
    run.stats.total = len(tree.leaves)
    if not tree.hostname_lowest:
        return list(tree.leaves.values())
    tolerations = [*ps.pod.tolerations, *run.topo.tolerations]
    affinity = ps.pod.affinity.node_affinity if ps.pod.affinity is not None else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity is not None else None
    selector = ps.pod.node_selector
    out = []
    for leaf in tree.leaves.values():
        node = leaf.node
        assert node is not None  # hostname leaves keep their node
        if not node.spec.taints and not selector and required is None:
            out.append(leaf)  # nothing to check: the common case, kept fast
            continue
        taint = find_untolerated_taint(node.spec.taints, tolerations)
        if taint is not None:
            shown = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
            run.stats.taints[shown] = run.stats.taints.get(shown, 0) + 1
            continue
        labels = node.metadata.labels
        if any(labels.get(k) != v for k, v in selector.items()):
            run.stats.node_selector += 1
            continue
        if required is not None:
            try:
                matches = selector_matches(node, required)
            except AllocationError as error:
                return f"invalid affinity node selectors: {error}"
            if not matches:
                run.stats.affinity += 1
                continue
        out.append(leaf)
    return out


def _fill_counts(run: _Run, leaves: Sequence[Leaf], per_pod: Mapping[str, int], leader: Mapping[str, int] | None,
                 assumed: Mapping[str, Amounts], simulate_empty: bool) -> None:
    """Phase 1 (``fillInCounts``): pods per leaf, summed up the tree; slices at and above the slice level.
    With a leader: whether a leaf holds it, and the workers that fit beside it."""
    asked = sorted(per_pod.items())  # by name: count_in's tie-break
    free, booked = run.topo.free, {} if simulate_empty else run.topo.tas_usage
    nothing: Amounts = {}
    for leaf in leaves:
        # count_in over free - booked - assumed, without building the remaining capacity (the hot loop)
        leaf_free = free[leaf.id]
        leaf_booked, leaf_assumed = booked.get(leaf.id, nothing), assumed.get(leaf.id, nothing)
        fitting, limiting = _MAX_COUNT, ""
        for name, amount in asked:
            if amount == 0:
                continue
            left = leaf_free.get(name, 0) - leaf_booked.get(name, 0) - leaf_assumed.get(name, 0)
            count = left // amount if left > 0 else 0
            if count < fitting:
                fitting, limiting = count, name
        if not limiting:
            fitting, limiting = count_in(per_pod, {})  # nothing asked but zeros: count_in's own answer
        i = leaf.index
        run.pods[i] = run.pods_wl[i] = fitting
        if fitting == 0 and limiting:
            run.stats.resources[limiting] = run.stats.resources.get(limiting, 0) + 1
        if leader is not None:
            left_over = {name: leaf_free.get(name, 0) - leaf_booked.get(name, 0) - leaf_assumed.get(name, 0)
                         for name in {*leaf_free, *per_pod, *leader}}
            if count_in(leader, left_over)[0] > 0:
                run.leaders[i] = 1
                for name, amount in leader.items():
                    left_over[name] = left_over.get(name, 0) - amount
            run.pods_wl[i] = count_in(per_pod, left_over)[0]
    per_level = run.topo.tree.per_level
    lowest = len(per_level) - 1
    for level in range(lowest, -1, -1):
        for domain in per_level[level].values():
            i = domain.index
            if level < lowest:
                _roll_up(run, domain)
            if level == run.slice_level:
                run.slices[i] = run.pods[i] // run.slice_size
                run.slices_wl[i] = run.pods_wl[i] // run.slice_size


def _roll_up(run: _Run, domain: Domain) -> None:
    """``fillInCountsHelper`` for a parent: sums, and with a leader the smallest loss a child holding it costs."""
    i, children = domain.index, domain.children
    pods, slices = run.pods, run.slices
    run.pods[i] = sum(pods[c.index] for c in children)
    run.slices[i] = sum(slices[c.index] for c in children)
    if run.leader_count == 0:  # without a leader the counts "with the leader" are the counts
        run.pods_wl[i], run.slices_wl[i] = run.pods[i], run.slices[i]
        return
    run.leaders[i] = max(run.leaders[c.index] for c in children)
    holders = [c.index for c in children if run.leader_count == 0 or run.leaders[c.index] > 0]
    if holders:
        run.pods_wl[i] = run.pods[i] - min(run.pods[c] - run.pods_wl[c] for c in holders)
        run.slices_wl[i] = run.slices[i] - min(run.slices[c] - run.slices_wl[c] for c in holders)
    else:
        run.pods_wl[i] = run.slices_wl[i] = 0


def _level_with_fit(run: _Run, level: int) -> tuple[int, list[Domain]] | str:
    """Phase 2a (``findLevelWithFitDomains``): the level and the domains that take every slice (and the leader)."""
    domains = list(run.topo.tree.per_level[level].values())
    if not domains:
        return f"no topology domains at level: {run.topo.tree.levels[level]}"
    ordered = run.sort_with_leader(domains)
    needed, leaders = run.count // run.slice_size, run.leader_count
    slices, slices_wl, held = run.slices, run.slices_wl, run.leaders
    top = ordered[0]
    if not run.least_free and slices_wl[top.index] >= needed and held[top.index] >= leaders:
        top = run.best_fit(ordered, needed, True, leaders)
    if run.least_free:
        for domain in ordered:
            if leaders > 0 and held[domain.index] < leaders:
                continue
            if (slices_wl if leaders > 0 else slices)[domain.index] >= needed:
                return level, [domain]
        if run.required:
            return run.not_fit(run.pods[ordered[-1].index], needed)
    if slices_wl[top.index] >= needed and held[top.index] >= leaders:
        return level, [top]
    if run.required:
        return run.not_fit(slices[top.index], needed)
    if level > 0 and not run.unconstrained:
        return _level_with_fit(run, level - 1)
    chosen: list[Domain] = []
    remaining, leaders_left = needed, leaders
    ordered = _leader_first(run, ordered, run.count, leaders, run.slice_size, by_slices=True)
    i = 0
    while leaders_left > 0 and i < len(ordered) and held[ordered[i].index] > 0:  # the leader's domain first
        domain = ordered[i]
        if not run.least_free and slices_wl[domain.index] >= remaining:
            domain = run.best_fit(ordered[i:], remaining, True, leaders_left)
        chosen.append(domain)
        leaders_left -= held[domain.index]
        remaining -= slices_wl[domain.index]
        i += 1
    if leaders_left > 0:
        return run.not_fit(leaders - leaders_left, needed)
    rest = run.sort(ordered[i:])
    for j, domain in enumerate(rest):
        if remaining <= 0:
            break
        if not run.least_free and slices[domain.index] >= remaining:
            domain = run.best_fit(rest[j:], remaining, True)
        chosen.append(domain)
        remaining -= slices[domain.index]
    if remaining > 0:
        return run.not_fit(needed - remaining, needed)
    return level, chosen


def _descend(run: _Run, fit_level: int, chosen: list[Domain]) -> tuple[TopologyAssignment, TopologyAssignment | None]:
    """Phases 2b-2d: fill the chosen domains' children level by level, then list the leaves with pods (the
    leader's leaf apart)."""
    tree = run.topo.tree
    lowest = len(tree.levels) - 1
    current = _take(run, chosen, run.count, run.leader_count, run.slice_size, by_slices=True)
    level = fit_level
    while level < min(lowest, run.slice_level):
        current = _take(run, run.sort([c for d in current for c in d.children]), run.count, run.leader_count,
                        run.slice_size, by_slices=True)
        level += 1
    while level < lowest:
        below: list[Domain] = []
        for domain in current:
            below += _take(run, run.sort(domain.children), run.pods[domain.index], run.leaders[domain.index], 1,
                           by_slices=False)
        current = below
        level += 1
    first = lowest if tree.hostname_lowest else 0

    def assignment(counts: Sequence[tuple[Domain, int]]) -> TopologyAssignment:
        kept = sorted(((d, n) for d, n in counts if n > 0), key=lambda pair: pair[0].values)
        return TopologyAssignment(tree.levels[first:], tuple(DomainAssignment(d.values[first:], n) for d, n in kept))

    workers = assignment([(d, run.pods[d.index]) for d in current])
    if run.leader_count == 0:
        return workers, None
    return workers, assignment([(d, run.leaders[d.index]) for d in current])


def _leader_first(run: _Run, domains: list[Domain], count: int, leaders: int, slice_size: int,
                  by_slices: bool) -> list[Domain]:
    """``prioritizeLeaderDomain``: move to the front the first domain that holds the leader without leaving
    too few workers' room in all."""
    if leaders == 0 or len(domains) < 2:
        return domains
    units, units_wl = (run.slices, run.slices_wl) if by_slices else (run.pods, run.pods_wl)
    needed = count // slice_size if by_slices else count
    available = sum(units[d.index] for d in domains)
    for i, domain in enumerate(domains):
        if run.leaders[domain.index] < leaders:
            continue
        if available - (units[domain.index] - units_wl[domain.index]) < needed:
            continue
        return domains if i == 0 else [domain, *domains[:i], *domains[i + 1:]]
    return domains


def _take(run: _Run, domains: Sequence[Domain], count: int, leaders: int, slice_size: int,
          by_slices: bool) -> list[Domain]:
    """``updateCountsToMinimumGeneric``: fill ``domains`` in order, the leader's first, best-fitting the last."""
    domains = _leader_first(run, list(domains), count, leaders, slice_size, by_slices)
    units, units_wl = (run.slices, run.slices_wl) if by_slices else (run.pods, run.pods_wl)
    scale = slice_size if by_slices else 1
    remaining = count // slice_size if by_slices else count
    leaders_left = leaders
    taken: list[Domain] = []
    for i, domain in enumerate(domains):
        if leaders_left > 0:  # consumeWithLeadersGeneric
            if (not run.least_free and units_wl[domain.index] >= remaining
                    and run.leaders[domain.index] >= leaders_left):
                domain = run.best_fit(domains[i:], remaining, by_slices, leaders_left)
            d = domain.index
            taken.append(domain)
            if units_wl[d] >= remaining and run.leaders[d] >= leaders_left:
                units[d], run.leaders[d], run.pods[d] = remaining, leaders_left, remaining * scale
                return taken
            units_wl[d] = min(units_wl[d], remaining)
            run.leaders[d] = min(run.leaders[d], leaders_left)
            units[d] = units_wl[d]
            run.pods[d] = units_wl[d] * scale
            leaders_left -= run.leaders[d]
            remaining -= units_wl[d]
            continue
        if units[domain.index] >= remaining:
            domain = run.best_fit(domains[i:], remaining, by_slices) if not run.least_free else domain
            d = domain.index
            run.leaders[d] = 0
            units[d] = remaining
            run.pods[d] = remaining * scale
            taken.append(domain)
            return taken
        d = domain.index
        run.leaders[d] = 0
        run.pods[d] = units[d] * scale
        remaining -= units[d]
        taken.append(domain)
    return []  # Kueue logs "unexpected remainingCount" and places nothing

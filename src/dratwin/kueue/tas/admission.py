"""Topology-aware scheduling in Kueue's flavor assignment and scheduling cycle.

The twin of ``pkg/scheduler/flavorassigner/tas_flavorassigner.go``, the TAS steps of
``FlavorAssigner.assignFlavors`` and ``ClusterQueueSnapshot.Fits`` at Kueue ``ff69552``:

- **flavor match** (``checkPodSetAndFlavorMatchForTAS``, before taints): a PodSet that asks for TAS
  (explicitly, or every PodSet when each flavor of the ClusterQueue has a topology: "TAS implied") needs
  a flavor with ``topologyName`` whose Topology has the requested levels; a PodSet that does not ask for
  TAS cannot use a TAS flavor;
- **placement**, after quota: when quota fits, each TAS PodSet (count > 0) is placed in its TAS flavor with
  the usage of the others assumed (:func:`~.assign.find_assignment`); a PodSet that does not fit turns the
  Workload to Preempt with Kueue's message. A Workload in Preempt mode is then placed as if the cluster
  held no TAS Workload: when even that fails it is NoFit (``TopologyPlacementFailed``), else every TAS
  PodSet stays Preempt (only preemption could make room);
- **PodSet groups** (``podSetGroupName``) are placed as one unit, the one-pod PodSet as the leader; the
  flavor assigner still gives each PodSet its flavors on its own (Kueue assigns a group's flavors together),
  so a group split over two TAS flavors is placed as two units;
- **the cycle** (``FitsCheckNoTAS``, ``TASRecomputeAssignmentWithinSchedulingCycle`` on): before admitting,
  the assignment must still fit what earlier admissions of the cycle took, else it is computed again;
  an admitted Workload's pods are booked on its domains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dratwin.api.core import Pod
from dratwin.api.kueue import ClusterQueue, Configuration, PodSet, ResourceFlavor, ResourceGroup, Topology, Workload
from dratwin.kueue.flavors import FIT, NO_FIT, PREEMPT, Assignment, FlavorContext, Mode, PodSetAssignment
from dratwin.kueue.tas.assign import Gates, PodSetRequest, TopologyAssignment, find_group_assignment, has_level
from dratwin.kueue.tas.domains import Amounts, FlavorTopology, NodeView
from dratwin.kueue.tas.encoding import decode
from dratwin.kueue.tas.request import explicitly_requests_tas
from dratwin.scheduler.resources import pod_requests

TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
NO_TAS_FLAVOR = "no TAS flavor assigned"
TAS_GATE = "TopologyAwareScheduling"  # beta, on by default since 0.14
PROFILE_MIXED_GATE = "TASProfileMixed"  # beta, on by default since 0.15


def gates_of(config: Configuration | None) -> tuple[bool, Gates]:
    """(TAS on, the gates of the assignment) from Kueue's Configuration ``featureGates``, defaults otherwise."""
    written = config.feature_gates if config is not None else {}
    return written.get(TAS_GATE, True), Gates(profile_mixed=written.get(PROFILE_MIXED_GATE, True))


def tas_context(flavors: Iterable[ResourceFlavor], topologies: Iterable[Topology], nodes: Sequence[NodeView],
                pods: Sequence[Pod] = (), config: Configuration | None = None) -> TasContext | None:
    """The TAS snapshots of the flavors whose Topology exists; ``None`` when TAS is off or no flavor names a
    topology (a flavor naming a missing Topology is left out, as Kueue's cache has no information for it)."""
    enabled, gates = gates_of(config)
    with_topology = [f for f in flavors if f.spec.topology_name]
    if not enabled or not with_topology:
        return None
    by_name = {t.metadata.name: t for t in topologies}
    return TasContext({f.metadata.name: FlavorTopology.build(f, by_name[f.spec.topology_name], nodes, pods)
                       for f in with_topology if f.spec.topology_name in by_name}, gates)


@dataclass
class TasContext:
    """The TAS snapshots of the cluster's flavors (by flavor name) and the gates; the one owner of the TAS
    usage a scheduling cycle books."""

    flavors: dict[str, FlavorTopology] = field(default_factory=dict)
    gates: Gates = field(default_factory=Gates)

    # ---- flavor match ----------------------------------------------------------------------------

    def tas_only(self, cq: ClusterQueue) -> bool:
        """``isTASOnly``: every flavor of every resource group is a TAS flavor."""
        return all(f.name in self.flavors for g in cq.spec.resource_groups for f in g.flavors)

    def requested(self, cq: ClusterQueue, pod_set: PodSet) -> tuple[bool, bool]:
        """(TAS requested, TAS implied) for a PodSet in the ClusterQueue."""
        explicit = explicitly_requests_tas(pod_set.topology_request)
        implied = not explicit and self.tas_only(cq)
        return explicit or implied, implied

    def mismatch(self, cq: ClusterQueue, pod_set: PodSet, flavor: ResourceFlavor, group: ResourceGroup) -> str:
        name = flavor.metadata.name
        requested, implied = self.requested(cq, pod_set)
        if not requested:
            return f'Flavor "{name}" supports only TopologyAwareScheduling' if flavor.spec.topology_name else ""
        if implied:
            return ""
        if not flavor.spec.topology_name:
            asked = _per_pod(pod_set)
            if not any(r in asked for r in group.covered_resources):
                return ""  # may still serve quota-only resources
            return f'Flavor "{name}" does not support TopologyAwareScheduling'
        topology = self.flavors.get(name)
        if topology is None:
            return f'Flavor "{name}" information missing in TAS cache'
        if not has_level(topology, pod_set.topology_request):
            return f'Flavor "{name}" does not contain the requested level'
        return ""

    # ---- placement -------------------------------------------------------------------------------

    def place(self, ctx: FlavorContext, workload: Workload, assignment: Assignment) -> None:
        requests = self._requests(ctx.cq, workload, assignment)
        if not requests:
            return
        if assignment.mode.preemption == NO_FIT:  # a PodSet had no TAS flavor
            return
        if assignment.mode.preemption == FIT:
            failed, placed = self._find(requests, simulate_empty=False)
            if failed is None:
                for name, topology in placed.items():
                    _pod_set(assignment, name).topology = topology
                return
            name, message = failed
            pod_set = _pod_set(assignment, name)
            pod_set.reasons.append(message)
            _set_mode(pod_set, PREEMPT)
        failed, _ = self._find(requests, simulate_empty=True)
        if failed is not None:
            pod_set = _pod_set(assignment, failed[0])
            _set_mode(pod_set, NO_FIT)
            pod_set.no_fit_reason = TOPOLOGY_PLACEMENT_FAILED
            return
        for flavor_requests in requests.values():
            for request in flavor_requests:
                _set_mode(_pod_set(assignment, request.name), PREEMPT)

    def _requests(self, cq: ClusterQueue, workload: Workload,
                  assignment: Assignment) -> dict[str, list[PodSetRequest]]:
        """``WorkloadsTopologyRequests``: the TAS PodSets by their TAS flavor (a PodSet with none, or with
        more than one, fails with Kueue's error)."""
        out: dict[str, list[PodSetRequest]] = {}
        for pod_set, placed in zip(workload.spec.pod_sets, assignment.pod_sets, strict=True):
            requested, implied = self.requested(cq, pod_set)
            if not requested or placed.count == 0 or (placed.usage and not placed.flavors):
                continue
            tas = sorted({f for f in placed.flavors.values() if f in self.flavors})
            if len(tas) != 1:
                several = f"more than one TAS flavor assigned: {', '.join(tas)}"
                placed.reasons.append(several if tas else NO_TAS_FLAVOR)
                _set_mode(placed, NO_FIT)
                continue
            out.setdefault(tas[0], []).append(PodSetRequest(
                placed.name, placed.count, _per_pod(pod_set), pod_set.topology_request, pod_set.template.spec,
                implied))
        return out

    def _find(self, requests: Mapping[str, list[PodSetRequest]],
              simulate_empty: bool) -> tuple[tuple[str, str] | None, dict[str, TopologyAssignment]]:
        """``FindTopologyAssignmentsForWorkload``: flavors in name order, PodSets (or PodSet groups, a one-pod
        leader with its workers) in order, each with the usage of those placed before it in the same flavor
        assumed; the first failure ends it."""
        placed: dict[str, TopologyAssignment] = {}
        for flavor in sorted(requests):
            topology = self.flavors[flavor]
            assumed: dict[str, Amounts] = {}
            for group in _groups(requests[flavor]):
                workers, leader = _leader_and_workers(group)
                found = find_group_assignment(topology, workers, leader, assumed, simulate_empty, self.gates)
                if isinstance(found, str):
                    return (group[0].name, found), placed
                placed[workers.name] = found[0]
                if leader is not None and found[1] is not None:
                    placed[leader.name] = found[1]
                for request in group[:2]:
                    for leaf, amounts in placed[request.name].usage(request.per_pod).items():
                        into = assumed.setdefault(leaf, {})
                        for resource, amount in amounts.items():
                            into[resource] = into.get(resource, 0) + amount
        return None, placed

    # ---- the cycle -------------------------------------------------------------------------------

    def usage(self, workload: Workload, assignment: Assignment) -> dict[str, list[tuple[str, Amounts, int]]]:
        """The pods an assignment puts on its leaves, per TAS flavor: (leaf, one pod's requests, count) per
        PodSet and domain (``ComputeTASNetUsage``)."""
        out: dict[str, list[tuple[str, Amounts, int]]] = {}
        for pod_set, placed in zip(workload.spec.pod_sets, assignment.pod_sets, strict=True):
            if placed.topology is None:
                continue
            flavor = next(f for f in sorted(set(placed.flavors.values())) if f in self.flavors)
            out.setdefault(flavor, []).extend(placed.topology.counts(_per_pod(pod_set)))
        return out

    def fits(self, workload: Workload, assignment: Assignment) -> bool:
        """``ClusterQueueSnapshot.Fits``, its TAS part: every domain still takes its pods."""
        return all(self.flavors[f].fits(counts) for f, counts in self.usage(workload, assignment).items())

    def book_admitted(self, workload: Workload) -> None:
        """Book a Workload admitted before the cycle from its stored ``status.admission`` (the TAS cache's
        ``addUsage``): each PodSet's topology assignment in its TAS flavor, one pod's requests per slot."""
        admission = workload.status.get("admission") or {}
        by_name = {p.name: p for p in workload.spec.pod_sets}
        for stored in admission.get("podSetAssignments") or []:
            raw = stored.get("topologyAssignment")
            pod_set = by_name.get(stored.get("name", ""))
            flavor = next((f for f in sorted(set((stored.get("flavors") or {}).values())) if f in self.flavors), None)
            if raw is None or pod_set is None or flavor is None:
                continue
            self.flavors[flavor].add_usage(decode(raw).usage(_per_pod(pod_set)))

    def book(self, workload: Workload, assignment: Assignment) -> None:
        """An admitted Workload's pods, booked on their domains."""
        for flavor, counts in self.usage(workload, assignment).items():
            booked: dict[str, Amounts] = {}
            for leaf, per_pod, n in counts:
                into = booked.setdefault(leaf, {})
                for resource, amount in per_pod.items():
                    into[resource] = into.get(resource, 0) + amount * n
            self.flavors[flavor].add_usage(booked)


def _groups(requests: Sequence[PodSetRequest]) -> list[list[PodSetRequest]]:
    """The PodSets by ``podSetGroupName`` (a PodSet without one is a group of its own), in first-seen order."""
    groups: dict[str, list[PodSetRequest]] = {}
    for i, request in enumerate(requests):
        name = request.request.pod_set_group_name if request.request is not None else None
        groups.setdefault(f"#{i}" if name is None else name, []).append(request)
    return list(groups.values())


def _leader_and_workers(group: Sequence[PodSetRequest]) -> tuple[PodSetRequest, PodSetRequest | None]:
    """``findLeaderAndWorkers``: of two grouped PodSets the one with fewer pods leads (the second on a tie)."""
    if len(group) < 2:
        return group[0], None
    workers, leader = group[0], group[1]
    if leader.count > workers.count:
        workers, leader = leader, workers
    return workers, leader


def _per_pod(pod_set: PodSet) -> Amounts:
    """One pod's requests as TAS counts them (the pod spec's, ``pods: 1`` included; not quota's view)."""
    return dict(pod_requests(Pod(metadata=pod_set.template.metadata, spec=pod_set.template.spec)))


def _pod_set(assignment: Assignment, name: str) -> PodSetAssignment:
    return next(p for p in assignment.pod_sets if p.name == name)


def _set_mode(pod_set: PodSetAssignment, preemption: int) -> None:
    """``updateMode``: every resource of the PodSet takes the mode, its borrowing kept. Kueue's flavor modes are
    only NoFit, Preempt and Fit: a resource already in one of the Preempt modes keeps its own."""
    for resource, mode in pod_set.modes.items():
        if preemption == NO_FIT or mode.preemption == FIT:
            pod_set.modes[resource] = Mode(preemption, mode.borrowing)
    if not pod_set.modes:
        pod_set.modes["pods"] = Mode(preemption, 0)

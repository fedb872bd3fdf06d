"""Karpenter's ``SimulateScheduling`` over a fork of the cluster: the candidates' pods (and the provisionable
pending ones) placed first fit on the other nodes, else on new NodeClaims from the provisioning solver; and
a command applied to the plan's world (its nodes gone, its pods where the simulation put them)."""

from __future__ import annotations

import copy
import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from dratwin.allocator.state import AllocatedState
from dratwin.cluster.state import ClaimRecord, ClusterState, PodRecord, pod_claim_keys
from dratwin.provisioner.candidates import NODEPOOL_LABEL
from dratwin.provisioner.consolidation.model import Candidate, Command, Context, Placement, Simulation, World
from dratwin.provisioner.consolidation.pods import (
    consolidate_after_pending,
    is_initialized,
    is_marked_for_deletion,
    is_provisionable,
    is_reschedulable,
    money,
)
from dratwin.provisioner.memo import FitEntry, FitKey
from dratwin.provisioner.solver import Plan, PodToPlace, Solver, Unplaced
from dratwin.scheduler.binder import StateBinder
from dratwin.scheduler.framework import CycleState, NodeInfo, PodInfo
from dratwin.scheduler.profile import Options as ScheduleOptions
from dratwin.scheduler.profile import default_profile
from dratwin.scheduler.scheduler import Profile


def simulate(ctx: Context, world: World, candidates: list[Candidate], at_most: float | None = None) -> Simulation:
    """``SimulateScheduling``: the candidates gone, where do their pods (and the pending pods) go?

    ``at_most``: the candidates' price (pruning): a candidate's pod that fits on no other node, and on no
    instance type cheaper than that, decides it (no delete, no cheaper replace: a new node holding it and
    more can be no cheaper than one holding it alone), and the simulation stops there."""
    sim = fork(world.state)
    names = [c.name for c in candidates]
    moving = _evict(sim, names)
    from_candidates = {info.key for info in moving}
    for key in _provisionable(world):
        record = sim.pods[key]  # binding it in the fork changes its record: the fork gets its own copy
        copied = PodRecord(record.raw, record.pod, dataclasses.replace(record.info))
        sim.pods[key] = copied
        moving.append(copied.info)
    moving.sort(key=_size_order)
    profile = default_profile(sim, ScheduleOptions(), ctx.compiler)
    binder = StateBinder(sim)
    simulation = Simulation({}, [], {}, {})
    leftovers = []

    def unchanged(node: NodeInfo) -> bool:
        before = world.state.nodes.get(node.name)
        return (
            before is not None
            and before.generation == node.generation
            and sim.dra_global_version == world.state.dra_global_version
        )

    usable = {flag: [sim.nodes[n] for n in _destinations(ctx, world, flag) if n in sim.nodes] for flag in (True, False)}
    for info in moving:
        candidate_pod = info.key in from_candidates
        placement = _first_fit(profile, binder, info, usable[candidate_pod], (_shape(sim, info), world.fits, unchanged))
        if placement is None:
            if candidate_pod and at_most is not None and _cheapest_new_node(ctx, sim, info) >= at_most:
                simulation.errors[info.key] = (f"pod {info.key} fits on no other node, and no instance type it "
                                               f"fits is cheaper than {money(at_most)}/h")
                return simulation
            leftovers.append(info)
        elif candidate_pod:
            simulation.placed[info.key] = placement
            if not is_initialized(sim.nodes[placement.node]):
                simulation.errors[info.key] = (
                    f"pod {info.key} would schedule against uninitialized node {placement.node}"
                )
    to_place = []
    for info in leftovers:
        pod, problem = _to_place(sim, info)
        if pod is not None:
            to_place.append(pod)
        elif info.key in from_candidates:
            simulation.errors[info.key] = problem
    plan = _solve(ctx, to_place)
    unplaced = {u.pod: u for u in plan.unplaced}
    for key in sorted(from_candidates & unplaced.keys()):
        simulation.errors[key] = (
            f"pod {key} fits on no other node and on no new node ({_unplaced_reason(unplaced[key])})"
        )
    simulation.new_claims = plan.claims
    for index, claim in enumerate(plan.claims):
        for pod_to_place in claim.pods:
            if pod_to_place.info.key in from_candidates:
                simulation.on_new[pod_to_place.info.key] = index
    return simulation


def _first_fit(
    profile: Profile,
    binder: StateBinder,
    info: PodInfo,
    nodes: list[NodeInfo],
    cache: tuple[bytes, dict[FitKey, FitEntry], Callable[[NodeInfo], bool]],
) -> Placement | None:
    """Karpenter's ``addToExistingNode``: the first node (in its order) the pod fits, judged by the twin's
    scheduler filters and DRA allocator; the pod is bound there, its claims allocated. ``cache``: the pod's
    shape, the known verdicts, and whether a node is as the verdicts found it."""
    shape, verdicts, unchanged = cache
    dra_version = binder.cluster.dra_global_version
    state = CycleState()
    for plugin in profile.pre_filters:
        if not plugin.pre_filter(state, info, nodes).ok:
            return None
    for node in nodes:
        key = (shape, node.name)
        reusable = unchanged(node)
        if reusable and verdicts.get(key) == (node.generation, dra_version, False):
            continue
        fits = all(plugin.filter(state, info, node).ok for plugin in profile.filters)
        if reusable:
            verdicts[key] = (node.generation, dra_version, fits)
        if not fits:
            continue
        dra = profile.dra
        placement = Placement(
            node.name,
            dra.reserve(state, info, node.name),
            dra.claims_to_reserve(state, node.name),
            dra.extended_claim(state, node.name),
            list(dra.extended_requests(state)),
        )
        _bind(binder, info, placement)
        return placement
    return None


def _shape(sim: ClusterState, info: PodInfo) -> bytes:
    """What the filters read of a pod: its spec, and its claims' specs and allocations (not their names, so
    that the pods of one workload share a shape)."""
    claims: list[Any] = []
    for key in pod_claim_keys(info.pod, extended=True):
        record = sim.claims.get(key)
        claims.append([record.claim.spec, record.claim.status.allocation] if record is not None else key)
    spec = msgspec.structs.replace(info.pod.spec, resource_claims=[], node_name="")
    return msgspec.json.encode([spec, claims])


def _bind(binder: StateBinder, info: PodInfo, placement: Placement) -> None:
    if placement.special is not None:
        binder.create_extended_claim(info, placement.special, placement.special_requests)
    binder.bind(info, placement.node, placement.allocations, placement.reserve)


def _destinations(ctx: Context, world: World, candidate_pod: bool) -> list[str]:
    """The nodes that may take a pod, in Karpenter's order (initialized ones first, by name); the same for every
    simulation of a pass (each leaves out its own candidates)."""
    known = world.destinations.get(candidate_pod)
    if known is None:
        state = world.state
        order = sorted(state.nodes.values(), key=lambda n: (not is_initialized(n), n.name))
        known = [n.name for n in order if _destination_ok(ctx, world, state, n, candidate_pod)]
        world.destinations[candidate_pod] = known
    return known


def _provisionable(world: World) -> list[str]:
    """The pending pods every simulation also places (``IsProvisionable``), in the world's order; the same for
    every simulation of a pass: a fork only takes bound pods out, and a bound pod is never provisionable."""
    known = world.provisionable
    if known is None:
        known = [key for key, record in world.state.pods.items() if is_provisionable(record)]
        world.provisionable = known
    return known


def _cheapest_new_node(ctx: Context, sim: ClusterState, info: PodInfo) -> float:
    """A lower bound of what a new node holding the pod costs: the cheapest offering of the instance types of
    any NodePool that could hold it alone, leaving the NodePools' limits out (0 when it cannot tell)."""
    if ctx.cheapest_offering == math.inf:
        return math.inf
    pod, _ = _to_place(sim, info)
    if pod is None:
        return 0.0

    def cheapest() -> float:
        prices = [math.inf]
        for pool in ctx.pools:
            unlimited = dataclasses.replace(pool, limits={}, used={})
            plan = Solver([unlimited], ctx.features, ctx.classes, ctx.compiler).solve([pod])
            prices += [o.price for claim in plan.claims for t in claim.options for o in t.offerings]
        return min(prices)

    return cheapest() if ctx.memo is None else ctx.memo.cheapest_new_node(pod, cheapest)


def _solve(ctx: Context, pods: list[PodToPlace]) -> Plan:
    def solve(ordered: list[PodToPlace]) -> Plan:
        return Solver(ctx.pools, ctx.features, ctx.classes, ctx.compiler).solve(ordered)

    return solve(pods) if ctx.memo is None or not pods else ctx.memo.solve(ctx.pools, pods, solve)


def _destination_ok(ctx: Context, world: World, sim: ClusterState, node: NodeInfo, candidate_pod: bool) -> bool:
    """Nodes being deleted take no pod; a node still under its NodePool's consolidateAfter takes no pod
    from a consolidation candidate (``isUnderConsolidateAfter``)."""
    if is_marked_for_deletion(sim.node_raw.get(node.name) or {}, node):
        return False
    pool = node.node.metadata.labels.get(NODEPOOL_LABEL)
    policy = ctx.policies.get(pool) if pool is not None else None
    if not candidate_pod or policy is None or not is_initialized(node):
        return True
    return not consolidate_after_pending(ctx, world, node.name, policy)


def _to_place(sim: ClusterState, info: PodInfo) -> tuple[PodToPlace | None, str]:
    """The pod as the solver takes it: its claims that need devices; None when a claim pins it elsewhere."""
    claims, keys = [], []
    for key in pod_claim_keys(info.pod, extended=False):
        record = sim.claims.get(key)
        if record is None:
            return None, f"pod {info.key}: its ResourceClaim {key} does not exist"
        allocation = record.claim.status.allocation
        if allocation is None:
            claims.append(record.claim)
            keys.append(key)
        elif allocation.node_selector is not None:
            return None, (
                f"pod {info.key} fits on no other node, and its claim {key} stays allocated to devices that "
                "pods staying elsewhere share (a new node cannot have them)"
            )
    return PodToPlace(info, claims, keys), ""


def _unplaced_reason(unplaced: Unplaced) -> str:
    for pool, rejections in unplaced.reasons.items():
        if not rejections:
            continue
        reason, count = Counter(r.reason for r in rejections).most_common(1)[0]
        share = f" for {count} of {len(rejections)} instance types" if len(rejections) > 1 else ""
        return f"NodePool {pool}: {reason}{share}"
    return "no NodePool can launch a node for it"


def _size_order(info: PodInfo) -> tuple[int, int, int]:
    """``byCPUAndMemoryDescending``; ties by queue order."""
    return (-info.requests.get("cpu", 0), -info.requests.get("memory", 0), info.order)


def fork(state: ClusterState) -> ClusterState:
    """A copy whose changes leave ``state`` as it is: containers copied, objects shared until changed
    (claim records are replaced before they change; nodes are copied). The slices and their index are
    shared (a fork never adds slices), so each simulation does not index them again."""
    index = state.slice_index
    return ClusterState(
        features=state.features,
        nodes={name: _copy_node(info) for name, info in state.nodes.items()},
        node_raw=dict(state.node_raw),
        pods=dict(state.pods),
        claims=dict(state.claims),
        templates=state.templates,
        classes=state.classes,
        slices=state.slices,  # never added to here
        allocated=_copy_allocated(state.allocated),
        dra_version=dict(state.dra_version),
        dra_global_version=state.dra_global_version,
        device_views=state.device_views,
        _index=index,
        _pool_nodes=state._pool_nodes,
    )


def _copy_node(info: NodeInfo) -> NodeInfo:
    return NodeInfo(
        info.node,
        info.allocatable,
        dict(info.requested),
        list(info.pods),
        info.generation,
        dict(info.non_zero_requested),
    )


def _copy_allocated(allocated: AllocatedState) -> AllocatedState:
    return AllocatedState(
        set(allocated.exclusive),
        set(allocated.shared),
        {device: dict(totals) for device, totals in allocated.aggregated_capacity.items()},
        {device: list(owners) for device, owners in allocated.owners.items()},
    )


def _evict(sim: ClusterState, names: Sequence[str]) -> list[PodInfo]:
    """Take nodes out of a fork: their pods leave; the reschedulable ones come back unbound (what Karpenter
    simulates for them), the claims that only leaving pods use are deallocated (their devices freed).
    Returns the unbound pods."""
    records = [sim.pods[pod.key] for name in names for pod in sim.nodes[name].pods]
    leaving = {(r.pod.metadata.namespace, r.pod.metadata.name) for r in records}
    for record in records:
        for key in pod_claim_keys(record.pod, extended=True):
            claim = sim.claims.get(key)
            if claim is not None:
                sim.claims[key] = ClaimRecord(claim.raw, claim.claim)  # copy on write
    unbound = []
    for record in records:
        sim.remove_pod(record.info.key)
        if not is_reschedulable(record.raw):
            sim.release_claims_of(record)
            continue
        for key in pod_claim_keys(record.pod, extended=True):
            claim = sim.claims.get(key)
            if claim is not None and claim.claim.status.allocation is not None and _used_only_by(claim, leaving):
                sim.deallocate_claim(key)
        raw = copy.copy(record.raw)
        raw["spec"] = {k: v for k, v in (record.raw.get("spec") or {}).items() if k != "nodeName"}
        pod = msgspec.structs.replace(record.pod, spec=msgspec.structs.replace(record.pod.spec, node_name=""))
        info = dataclasses.replace(record.info, pod=pod)
        sim.pods[info.key] = PodRecord(raw, pod, info)
        unbound.append(info)
    for name in names:
        del sim.nodes[name]
        sim.node_raw.pop(name, None)
    return unbound


def _used_only_by(claim: ClaimRecord, leaving: set[tuple[str, str]]) -> bool:
    namespace = claim.claim.metadata.namespace
    entries = (claim.raw.get("status") or {}).get("reservedFor") or []
    return all((namespace, e.get("name")) in leaving for e in entries if e.get("resource") == "pods")


def apply_command(world: World, command: Command) -> None:
    """The command's nodes are gone; their pods are on the destinations the simulation found (or on the
    replacement, which is still launching: later passes neither use nor disrupt it)."""
    state = fork(world.state)
    names = [c.name for c in command.candidates]
    unbound = {info.key: info for info in _evict(state, names)}
    placed = command.simulation.placed if command.simulation is not None else {}
    binder = StateBinder(state)
    for key, placement in placed.items():
        _bind(binder, unbound[key], placement)
        world.touched.add(placement.node)
    for key in unbound.keys() - placed.keys():
        del state.pods[key]  # on the replacement, or back to the scheduler (pods of an "empty" node)
    world.state = state
    world.destinations, world.provisionable = {}, None  # found in the world before: found again in this one
    world.planned.update(names)
    world.fits.clear()

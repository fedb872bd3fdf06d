"""The entry point (:func:`consolidate`): passes of the disruption controller over the cluster until none finds
a command, the candidates of each pass, and why every other Karpenter node is kept."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from dratwin.allocator import Features
from dratwin.api.resource import DeviceClass
from dratwin.catalog import Catalog, load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClusterState
from dratwin.provisioner.budgets import (
    NodePoolPolicy,
    utc,
)
from dratwin.provisioner.candidates import CAPACITY_TYPE, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL
from dratwin.provisioner.consolidation.describe import describe, drifted_node, drifts, policy_notes
from dratwin.provisioner.consolidation.methods import (
    budget_mapping,
    consolidation_ok,
    drift_command,
    emptiness,
    multi_node,
    single_node,
)
from dratwin.provisioner.consolidation.model import (
    DO_NOT_DISRUPT,
    UNDERUTILIZED,
    Action,
    BudgetNode,
    Candidate,
    Command,
    ConsolidationPlan,
    Context,
    World,
)
from dratwin.provisioner.consolidation.pods import (
    eviction_cost,
    is_active,
    is_do_not_disrupt,
    is_initialized,
    is_marked_for_deletion,
    is_ready,
    is_reschedulable,
)
from dratwin.provisioner.consolidation.pricing import node_price
from dratwin.provisioner.consolidation.simulation import apply_command, fork
from dratwin.provisioner.memo import ConsolidationMemo
from dratwin.provisioner.solver import Pool
from dratwin.scheduler.framework import NodeInfo

Raw = dict[str, Any]


def consolidate(
    cluster: ClusterState,
    pools: Sequence[Pool],
    nodepools_raw: Sequence[Mapping[str, Any]],
    features: Features,
    classes: Mapping[str, DeviceClass],
    compiler: SelectorCompiler | None = None,
    now: datetime | None = None,
    *,
    spot_to_spot: bool = False,
    catalog: Catalog | None = None,
    node_classes: Mapping[str, Mapping[str, Any]] | None = None,
    first_only: bool = False,
    last_pod_events: Mapping[str, datetime] | None = None,
    held: Mapping[str, str] | None = None,
    prune: bool = False,
    only: Iterable[str] | None = None,
    memo: ConsolidationMemo | None = None,
) -> ConsolidationPlan:
    """What Karpenter's disruption controller would do to ``cluster`` now (see the module docstring).

    ``pools``: the NodePools' instance types (as ``twin.plan.read_pool`` builds them), for node prices and
    replacements; ``nodepools_raw``: the NodePool objects, for their disruption settings. ``now``: the clock
    for budget schedules, ``consolidateAfter`` and duration-valued ``do-not-disrupt``; without it scheduled
    budgets count as active, ``consolidateAfter`` as elapsed and duration ``do-not-disrupt`` as active.
    ``spot_to_spot``: Karpenter's SpotToSpotConsolidation feature gate. ``catalog``: where the nodes' prices
    come from (the packaged one by default), whatever their NodePool allows now; ``node_classes``: the
    EC2NodeClasses (raw, by name), for their drift.

    For a caller that runs the cluster through time (the simulation): ``first_only`` stops after the first
    command (what one pass of the disruption controller finds); ``last_pod_events`` gives, by node, the time
    of its last pod event (a pod bound or gone; else its initialization), where the input objects cannot tell
    it; ``held`` names nodes Karpenter leaves alone for a reason the cluster objects do not show (a node with
    pods nominated to it), with that reason; ``prune`` gives up on a consolidation as soon as one of the
    candidates' pods fits on no other node while no instance type of any NodePool is cheaper than the
    candidates (the decision is the same, found sooner; the reason given for a kept node is shorter); ``only``
    limits the candidates to these nodes (a command's validation: every node stays a destination); ``memo``:
    what earlier calls on the same cluster found that this one may reuse (see :mod:`dratwin.provisioner.memo`)."""
    compiler = compiler or SelectorCompiler(list_type_attributes=features.list_type_attributes)
    policies = {p.name: p for p in (NodePoolPolicy.read(raw) for raw in nodepools_raw)}
    ctx = Context(list(pools), policies, features, dict(classes), compiler, utc(now) if now else None, spot_to_spot,
                   catalog or load_catalog())
    ctx.memo = memo
    ctx.drift = drifts(cluster, nodepools_raw, node_classes or {}, memo)
    ctx.last_pod_events = dict(last_pod_events or {})
    ctx.held = dict(held or {})
    ctx.prune = prune
    ctx.only = None if only is None else frozenset(only)
    ctx.notes += policy_notes(policies, now)
    world = World(fork(cluster), _budget_nodes(cluster), fits=memo.fits if memo is not None else {})
    actions: list[Action] = []
    while True:
        blocked: dict[str, str] = {}
        command = _next_command(ctx, world, blocked)
        if command is None:
            break
        actions.append(describe(command, ctx.drift))
        if first_only:
            break
        apply_command(world, command)
        world.fits = {}  # the applied world's nodes are not the cluster's: what they fit is not remembered
    kept = [(name, reason) for name, reason in sorted(blocked.items()) if name in world.state.nodes]
    drifted = [drifted_node(ctx, cluster, name, drift) for name, drift in sorted(ctx.drift.items())]
    return ConsolidationPlan(actions, sum(a.savings_per_hour for a in actions), kept, ctx.notes, drifted)


def _next_command(ctx: Context, world: World, blocked: dict[str, str]) -> Command | None:
    candidates = _candidates(ctx, world, blocked)
    empty = emptiness(ctx, world, candidates, blocked)
    if empty is not None:
        return empty
    held_back: dict[str, str] = {}  # why drift left a drifted node: said first, before what consolidation says
    drift = drift_command(ctx, world, candidates, held_back)
    if drift is not None:
        return drift
    consolidatable = [c for c in candidates if consolidation_ok(ctx, world, c, blocked)]
    budgets = budget_mapping(ctx, world, UNDERUTILIZED)
    command = multi_node(ctx, world, consolidatable, budgets) or single_node(
        ctx, world, consolidatable, budgets, blocked
    )
    for name, why in held_back.items():
        blocked[name] = f"{why}; {blocked[name]}" if name in blocked else why
    return command


def _candidates(ctx: Context, world: World, blocked: dict[str, str]) -> list[Candidate]:
    """``GetCandidates``: the Karpenter nodes that may be disrupted at all, with their price and pods."""
    found = []
    state = world.state
    for name in sorted(state.nodes):
        info = state.nodes[name]
        labels = info.node.metadata.labels
        pool_name = labels.get(NODEPOOL_LABEL)
        if pool_name is None or (ctx.only is not None and name not in ctx.only):
            continue  # not launched by Karpenter (never its candidate), or not asked about
        raw = state.node_raw.get(name) or {}
        problem = ctx.held.get(name) or _node_problem(ctx, raw, info, pool_name) or _pods_problem(ctx, state, info)
        if problem:
            blocked[name] = problem
            continue
        policy = ctx.policies[pool_name]
        type_name = labels.get(INSTANCE_TYPE_LABEL, "")
        instance = ctx.catalog.get(type_name) if type_name in ctx.catalog else None
        zone, capacity_type = labels.get(ZONE_LABEL, ""), labels.get(CAPACITY_TYPE, "")
        price, priced = node_price(instance, zone, capacity_type)
        reschedulable, cost, total = [], 1.0, 0.0
        for pod in info.pods:
            record = state.pods[pod.key]
            eviction = eviction_cost(record, pod)
            total += eviction
            if is_reschedulable(record.raw):
                reschedulable.append(pod.key)
                cost += max(0.0, eviction)
        found.append(
            Candidate(
                name,
                info,
                policy,
                type_name,
                instance,
                zone,
                capacity_type,
                price if priced else 0.0,
                priced,
                price,
                reschedulable,
                cost,
                total,
            )
        )
    return found


def _node_problem(ctx: Context, raw: Raw, info: NodeInfo, pool_name: str) -> str:
    """``ValidateNodeDisruptable`` and the NodePool lookup of ``NewCandidate``."""
    if not is_initialized(info):
        return "node isn't initialized"
    if is_marked_for_deletion(raw, info):
        return "node is deleting or marked for deletion"
    if info.node.metadata.annotations.get(DO_NOT_DISRUPT) == "true":
        return f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation on the node'
    if pool_name not in ctx.policies:
        return f"NodePool {pool_name} not found"
    if not any(p.name == pool_name for p in ctx.pools):
        return f"NodePool {pool_name} has no instance types"
    return ""


def _pods_problem(ctx: Context, state: ClusterState, info: NodeInfo) -> str:
    """``ValidatePodsDisruptable``: a running pod with an active do-not-disrupt keeps the node."""
    for pod in info.pods:
        record = state.pods[pod.key]
        if is_active(record.raw) and is_do_not_disrupt(record.raw, ctx.now):
            return f"pod {pod.key} has {DO_NOT_DISRUPT}"
    return ""


def _budget_nodes(cluster: ClusterState) -> dict[str, BudgetNode]:
    found = {}
    for name, info in cluster.nodes.items():
        pool = info.node.metadata.labels.get(NODEPOOL_LABEL)
        if pool is None:
            continue
        raw = cluster.node_raw.get(name) or {}
        found[name] = BudgetNode(pool, is_initialized(info), not is_ready(raw) or is_marked_for_deletion(raw, info))
    return found

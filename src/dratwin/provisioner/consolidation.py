"""Karpenter's consolidation over the twin: which nodes it would delete or replace now, and why the rest stay.

Pure (no I/O): the input cluster is never changed; every simulation runs on a copy of its books.

The disruption controller of kubernetes-sigs/karpenter (core v1.14, ``pkg/controllers/disruption``) runs
its methods in order and acts on the first that finds something: Emptiness, (Drift, not modelled here),
multi-node consolidation, single-node consolidation. A command marks its nodes for deletion; the next pass
runs while they are still in flight, so they count against the NodePools' disruption budgets. The plan
here repeats passes until none finds anything. Each pass sees the cluster as the earlier commands leave
it (their nodes gone, their pods where Karpenter's simulation put them, which counts as a pod event on
those nodes), while their nodes still count against the budgets, as in flight.

* **Candidates** (``NewCandidate``, ``StateNode.ValidateNodeDisruptable``, ``ValidatePodsDisruptable``):
  nodes with the ``karpenter.sh/nodepool`` label whose NodePool is known, initialized, not being deleted,
  without ``karpenter.sh/do-not-disrupt: "true"`` on the node or an active one on a running pod
  (``"true"``, or a duration not yet elapsed since the pod started). Static NodePools (``spec.replicas``)
  and ``consolidateAfter: Never`` are left alone; a node is consolidatable once ``consolidateAfter`` has
  passed since its last pod event. Its price is its instance type's offering in its zone and capacity type.
* **Emptiness** (``emptiness.go``): every empty candidate (no reschedulable pod, i.e. none but DaemonSet,
  mirror or finished pods; strictly, none with a positive eviction cost) is deleted in one command,
  budgets permitting; it runs for every consolidation policy.
* **Consolidation** (``consolidation.go`` ``computeConsolidation``, ``helpers.go`` ``SimulateScheduling``):
  the candidates' pods (with the provisionable pending pods of the cluster) are simulated, largest first:
  first fit on the other nodes (initialized ones first, by name; the twin's scheduler filters and the DRA
  allocator, with the devices of claims used only by the leaving pods freed), else on new NodeClaims
  (the provisioning :class:`~dratwin.provisioner.solver.Solver`). A pod that fits nowhere keeps the nodes;
  no new NodeClaim is a delete; one is a replace if some instance type that fits is strictly cheaper
  (worst launch price) than the candidates together; two or more is no action. All-spot candidates are
  only replaced spot-to-spot behind the ``SpotToSpotConsolidation`` gate (off by default; with it, single
  nodes need 15 cheaper types and launch the 15 cheapest).
* **Multi-node** (``multinodeconsolidation.go``): candidates ordered by savings ratio (price per unit of
  disruption, highest first), cut to what the budgets allow, at most 100; a binary search for the longest
  prefix (of at least two) that consolidates, a replacement of the same instance type as one of them only
  if cheaper than that node (``filterOutSameInstanceType``).
* **Single-node** (``singlenodeconsolidation.go``): the same order, interleaved by NodePool; the first
  candidate that consolidates.
* **Budgets** (``pkg/apis/v1/nodepool.go`` ``GetAllowedDisruptionsByReason``, ``helpers.go``
  ``BuildDisruptionBudgetMapping``): per NodePool and reason (Empty for emptiness, Underutilized for
  consolidation) the minimum over the budgets that name the reason (or none), each a count or a
  percentage of the NodePool's initialized nodes rounded up, active always or for ``duration`` after each
  hit of its 5-field cron ``schedule`` (UTC); minus the nodes NotReady or being deleted. A budget that
  cannot be read blocks all disruption of its NodePool (Karpenter fails closed).

Left out: Drift and Expiration, the Balanced policy's scoring (treated as WhenEmptyOrUnderutilized), PDBs
(the twin has none), the 15 s re-validation of commands, pods on nodes that are already being deleted,
topology spread and pod (anti-)affinity (the twin's scheduler has no such filters), the DaemonSet overhead
of a replacement (the solver's), and later passes using a replacement that is still launching.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec

from dratwin.allocator import Features
from dratwin.allocator.state import AllocatedState
from dratwin.api.resource import AllocationResult, DeviceClass, ResourceClaim
from dratwin.catalog import Catalog, InstanceType, load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClaimRecord, ClusterState, PodRecord, pod_claim_keys
from dratwin.provisioner.budgets import (
    BALANCED,
    WHEN_EMPTY,
    NodePoolPolicy,
    go_duration,
    show_duration,
    utc,
)
from dratwin.provisioner.candidates import CAPACITY_TYPE, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL, Template
from dratwin.provisioner.drift import Drift, drift_of
from dratwin.provisioner.memo import ConsolidationMemo, FitEntry, FitKey
from dratwin.provisioner.solver import Plan, PlannedClaim, PodToPlace, Pool, Solver, Unplaced
from dratwin.scheduler.binder import StateBinder
from dratwin.scheduler.framework import CycleState, NodeInfo, PodInfo
from dratwin.scheduler.plugins.dynamic_resources import ExtendedRequest
from dratwin.scheduler.profile import Options as ScheduleOptions
from dratwin.scheduler.profile import default_profile
from dratwin.scheduler.scheduler import Profile

Raw = dict[str, Any]

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
DISRUPTED_TAINT = "karpenter.sh/disrupted"
INITIALIZED_LABEL = "karpenter.sh/initialized"
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

EMPTY = "Empty"  # Karpenter's disruption reasons, as budgets name them
UNDERUTILIZED = "Underutilized"
DRIFTED = "Drifted"
EMPTINESS, DRIFT, MULTI_NODE, SINGLE_NODE = "emptiness", "drift", "multi-node", "single-node"
DELETE, REPLACE = "delete", "replace"


MAX_MULTI_NODE_CANDIDATES = 100  # multinodeconsolidation.go: "a maximum batch of 100 NodeClaims"
SPOT_TO_SPOT_MIN_TYPES = 15  # consolidation.go MinInstanceTypesForSpotToSpotConsolidation
CAPACITY_ORDER = ("reserved", "spot", "on-demand")  # Offerings.WorstLaunchPrice


# ---- the result ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCost:
    """A node taken out: what it is and what it costs (its catalog offering's price; the list price of a type EC2
    no longer offers; 0 when the catalog has neither)."""

    name: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    price: float


@dataclass(frozen=True)
class Replacement:
    """The one NodeClaim a replace launches: the cheapest type kept, and every type Karpenter would offer
    to the launch (all strictly cheaper than the nodes replaced)."""

    nodepool: str
    instance_type: str
    price: float
    options: tuple[str, ...]


@dataclass(frozen=True)
class DriftedNode:
    """An existing node Karpenter marks Drifted, and what it costs now (from the catalog)."""

    name: str
    nodepool: str
    instance_type: str
    price: float
    drift: Drift


@dataclass
class Action:
    method: str  # emptiness | drift | multi-node | single-node
    reason: str  # the disruption reason budgets count it under: Empty | Drifted | Underutilized
    decision: str  # delete | replace
    nodes: list[NodeCost]
    replacement: Replacement | None  # the first (for drift: the cheapest) of the NodeClaims launched
    destinations: dict[str, str]  # pod -> the node it moves to ("new <type>" for the replacement)
    savings_per_hour: float  # negative when a drift replacement costs more than the node it replaces
    sentence: str
    more_replacements: list[Replacement] = field(default_factory=list)  # drift: the other new NodeClaims


@dataclass
class ConsolidationPlan:
    actions: list[Action]
    savings_per_hour: float
    blocked: list[tuple[str, str]]  # (node, why Karpenter leaves it) for every Karpenter node kept
    notes: list[str] = field(default_factory=list)
    drifted: list[DriftedNode] = field(default_factory=list)  # every existing node Karpenter marks Drifted

    def lines(self) -> list[str]:
        """The plan as sentences: the actions in order, then one ``keep`` line per node left alone."""
        return [a.sentence for a in self.actions] + [f"keep {node}: {reason}" for node, reason in self.blocked]


# ---- the entry point ---------------------------------------------------------------------------------


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
    ctx = _Context(list(pools), policies, features, dict(classes), compiler, utc(now) if now else None, spot_to_spot,
                   catalog or load_catalog())
    ctx.memo = memo
    ctx.drift = _drifts(cluster, nodepools_raw, node_classes or {}, memo)
    ctx.last_pod_events = dict(last_pod_events or {})
    ctx.held = dict(held or {})
    ctx.prune = prune
    ctx.only = None if only is None else frozenset(only)
    ctx.notes += _policy_notes(policies, now)
    world = _World(_fork(cluster), _budget_nodes(cluster), fits=memo.fits if memo is not None else {})
    actions: list[Action] = []
    while True:
        blocked: dict[str, str] = {}
        command = _next_command(ctx, world, blocked)
        if command is None:
            break
        actions.append(_describe(command, ctx.drift))
        if first_only:
            break
        _apply(world, command)
        world.fits = {}  # the applied world's nodes are not the cluster's: what they fit is not remembered
        world.destinations = {}
    kept = [(name, reason) for name, reason in sorted(blocked.items()) if name in world.state.nodes]
    drifted = [_drifted_node(ctx, cluster, name, drift) for name, drift in sorted(ctx.drift.items())]
    return ConsolidationPlan(actions, sum(a.savings_per_hour for a in actions), kept, ctx.notes, drifted)


@dataclass
class _Context:
    pools: list[Pool]
    policies: dict[str, NodePoolPolicy]
    features: Features
    classes: dict[str, DeviceClass]
    compiler: SelectorCompiler
    now: datetime | None
    spot_to_spot: bool
    catalog: Catalog
    notes: list[str] = field(default_factory=list)
    drift: dict[str, Drift] = field(default_factory=dict)  # node -> why Karpenter marks it Drifted
    last_pod_events: dict[str, datetime] = field(default_factory=dict)  # given by the caller, by node
    held: dict[str, str] = field(default_factory=dict)  # node -> why the caller knows Karpenter leaves it
    prune: bool = False
    only: frozenset[str] | None = None  # the nodes that may be candidates (None: all)
    memo: ConsolidationMemo | None = None
    _cheapest: float | None = None

    @property
    def cheapest_offering(self) -> float:
        """The lowest price any NodePool could launch at: no replacement can cost less."""
        if self._cheapest is None:
            prices = [o.price for pool in self.pools for t in pool.templates for o in t.offerings]
            self._cheapest = min(prices, default=math.inf)
        return self._cheapest


@dataclass(frozen=True)
class _BudgetNode:
    """A node as the budget mapping counts it (from the input cluster)."""

    nodepool: str
    counted: bool  # managed and initialized
    disrupting: bool  # NotReady or being deleted


@dataclass
class _World:
    """The cluster as the plan so far leaves it: planned nodes gone, their pods on their destinations."""

    state: ClusterState
    budget_nodes: dict[str, _BudgetNode]
    planned: set[str] = field(default_factory=set)  # nodes of earlier commands, still in flight
    touched: set[str] = field(default_factory=set)  # nodes that received pods: their last pod event is now
    # (pod shape, node) -> (the node's generation, the DRA global version, did the filters pass), for nodes a
    # simulation has not changed (simulations of one pass, and passes over time, try the same pods on the
    # same nodes).
    fits: dict[FitKey, FitEntry] = field(default_factory=dict)
    # whether a candidate's pod (True) or another pod (False) -> the nodes that may take it, in Karpenter's order
    destinations: dict[bool, list[str]] = field(default_factory=dict)


@dataclass
class _Candidate:
    name: str
    info: NodeInfo
    policy: NodePoolPolicy
    instance_type: str
    instance: InstanceType | None  # the type as the catalog has it (None: not in the catalog)
    zone: str
    capacity_type: str
    price: float  # Karpenter's: its offering's price, 0 without one
    priced: bool
    listed_price: float  # what the plan reports: the offering's price, else the type's last list price
    reschedulable: list[str]
    reschedule_cost: float  # 1 + the positive eviction costs of its reschedulable pods
    disruption_cost: float  # the eviction costs of all its pods

    @property
    def empty(self) -> bool:
        return self.reschedule_cost <= 1.0

    @property
    def savings_ratio(self) -> float:
        return self.price / self.reschedule_cost


@dataclass
class _Placement:
    node: str
    allocations: dict[str, AllocationResult]
    reserve: list[str]
    special: ResourceClaim | None
    special_requests: list[ExtendedRequest]


@dataclass
class _Simulation:
    placed: dict[str, _Placement]  # candidate pod -> its existing destination, in placement order
    new_claims: list[PlannedClaim]
    on_new: dict[str, int]  # candidate pod -> index of its new NodeClaim
    errors: dict[str, str]  # candidate pod -> why it fits nowhere


@dataclass
class _Command:
    method: str
    reason: str
    candidates: list[_Candidate]
    simulation: _Simulation | None = None
    replacement: PlannedClaim | None = None
    options: list[Template] = field(default_factory=list)  # cheaper types kept, cheapest first
    drift_claims: list[PlannedClaim] = field(default_factory=list)  # drift: every NodeClaim it launches

    @property
    def decision(self) -> str:
        return REPLACE if self.replacement is not None or self.drift_claims else DELETE


def _next_command(ctx: _Context, world: _World, blocked: dict[str, str]) -> _Command | None:
    candidates = _candidates(ctx, world, blocked)
    empty = _emptiness(ctx, world, candidates, blocked)
    if empty is not None:
        return empty
    held_back: dict[str, str] = {}  # why drift left a drifted node: said first, before what consolidation says
    drift = _drift(ctx, world, candidates, held_back)
    if drift is not None:
        return drift
    consolidatable = [c for c in candidates if _consolidation_ok(ctx, world, c, blocked)]
    budgets = _budget_mapping(ctx, world, UNDERUTILIZED)
    command = _multi_node(ctx, world, consolidatable, budgets) or _single_node(
        ctx, world, consolidatable, budgets, blocked
    )
    for name, why in held_back.items():
        blocked[name] = f"{why}; {blocked[name]}" if name in blocked else why
    return command


# ---- candidates ----------------------------------------------------------------------------------------


def _candidates(ctx: _Context, world: _World, blocked: dict[str, str]) -> list[_Candidate]:
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
            eviction = _eviction_cost(record, pod)
            total += eviction
            if _reschedulable(record.raw):
                reschedulable.append(pod.key)
                cost += max(0.0, eviction)
        found.append(
            _Candidate(
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


def _node_problem(ctx: _Context, raw: Raw, info: NodeInfo, pool_name: str) -> str:
    """``ValidateNodeDisruptable`` and the NodePool lookup of ``NewCandidate``."""
    if not _initialized(info):
        return "node isn't initialized"
    if _marked_for_deletion(raw, info):
        return "node is deleting or marked for deletion"
    if info.node.metadata.annotations.get(DO_NOT_DISRUPT) == "true":
        return f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation on the node'
    if pool_name not in ctx.policies:
        return f"NodePool {pool_name} not found"
    if not any(p.name == pool_name for p in ctx.pools):
        return f"NodePool {pool_name} has no instance types"
    return ""


def _pods_problem(ctx: _Context, state: ClusterState, info: NodeInfo) -> str:
    """``ValidatePodsDisruptable``: a running pod with an active do-not-disrupt keeps the node."""
    for pod in info.pods:
        record = state.pods[pod.key]
        if _active(record.raw) and _do_not_disrupt(record.raw, ctx.now):
            return f"pod {pod.key} has {DO_NOT_DISRUPT}"
    return ""


def _emptiness_ok(ctx: _Context, world: _World, candidate: _Candidate, blocked: dict[str, str]) -> bool:
    """``Emptiness.ShouldDisrupt`` (every policy, including WhenEmpty)."""
    policy = candidate.policy
    if policy.static:
        blocked[candidate.name] = f"NodePool {policy.name} is static (spec.replicas): only drift replaces its nodes"
        return False
    if policy.consolidate_after is None:
        blocked[candidate.name] = f"NodePool {policy.name} has consolidation disabled (consolidateAfter: Never)"
        return False
    if not candidate.empty:
        return False
    waiting = _consolidate_after_pending(ctx, world, candidate.name, policy)
    if waiting:
        blocked[candidate.name] = waiting
        return False
    return True


def _consolidation_ok(ctx: _Context, world: _World, candidate: _Candidate, blocked: dict[str, str]) -> bool:
    """``consolidation.ShouldDisrupt`` (multi- and single-node)."""
    policy, labels = candidate.policy, candidate.info.node.metadata.labels
    if candidate.empty:
        return False  # Emptiness handles it (and has said why not, if it did not)
    problem = ""
    if policy.static:
        problem = f"NodePool {policy.name} is static (spec.replicas): only drift replaces its nodes"
    elif candidate.instance is None:
        problem = (f'instance type "{candidate.instance_type}" not found in the catalog (give it with --catalog, see '
                   "dratwin/data/CATALOG.md)")
    elif CAPACITY_TYPE not in labels:
        problem = f'node does not have label "{CAPACITY_TYPE}"'
    elif ZONE_LABEL not in labels:
        problem = f'node does not have label "{ZONE_LABEL}"'
    elif policy.consolidate_after is None:
        problem = f"NodePool {policy.name} has consolidation disabled (consolidateAfter: Never)"
    elif policy.policy == WHEN_EMPTY:
        problem = f"NodePool {policy.name} has consolidation policy WhenEmpty, but node is not empty"
    else:
        problem = _consolidate_after_pending(ctx, world, candidate.name, policy)
    if problem:
        blocked[candidate.name] = problem
    return not problem


def _consolidate_after_pending(ctx: _Context, world: _World, name: str, policy: NodePoolPolicy) -> str:
    """The NodeClaim is not Consolidatable yet: ``consolidateAfter`` has not passed since its last pod event.

    The twin has no NodeClaim: the last pod event is taken as the latest of the node's creation and its
    pods' start (or creation) times, and "now" for a node that received pods earlier in this plan."""
    after = policy.consolidate_after
    if after is None or after <= timedelta(0):
        return ""
    if name in world.touched:
        return f"consolidateAfter {show_duration(after)} has not passed since pods moved onto it (earlier action)"
    if ctx.now is None:
        return ""
    last = ctx.last_pod_events.get(name) or _last_pod_event(world.state, name)
    if last is None or ctx.now - last >= after:
        return ""
    return f"consolidateAfter {show_duration(after)} has not passed since its last pod event ({_stamp(last)})"


def _last_pod_event(state: ClusterState, name: str) -> datetime | None:
    raw = state.node_raw.get(name) or {}
    times = [_timestamp((raw.get("metadata") or {}).get("creationTimestamp"))]
    for pod in state.nodes[name].pods:
        record = state.pods[pod.key].raw
        status, meta = record.get("status") or {}, record.get("metadata") or {}
        times.append(_timestamp(status.get("startTime") or meta.get("creationTimestamp")))
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _sorted(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """``sortCandidates`` (v1.14): highest savings ratio first (price per unit of disruption); ties by
    disruption cost (the order before v1.14), then name."""
    return sorted(candidates, key=lambda c: (-c.savings_ratio, c.disruption_cost, c.name))


# ---- budgets -------------------------------------------------------------------------------------------


def _budget_nodes(cluster: ClusterState) -> dict[str, _BudgetNode]:
    found = {}
    for name, info in cluster.nodes.items():
        pool = info.node.metadata.labels.get(NODEPOOL_LABEL)
        if pool is None:
            continue
        raw = cluster.node_raw.get(name) or {}
        found[name] = _BudgetNode(pool, _initialized(info), not _ready(raw) or _marked_for_deletion(raw, info))
    return found


@dataclass
class _Allowance:
    left: int
    explanation: str


def _budget_mapping(ctx: _Context, world: _World, reason: str) -> dict[str, _Allowance]:
    """``BuildDisruptionBudgetMapping``: per NodePool, the disruptions the budgets allow for ``reason`` minus
    the nodes already disrupting (NotReady, being deleted, or in an earlier command of this plan)."""
    counts: Counter[str] = Counter()
    disrupting: Counter[str] = Counter()
    for name, node in world.budget_nodes.items():
        if not node.counted:
            continue
        counts[node.nodepool] += 1
        if node.disrupting or name in world.planned:
            disrupting[node.nodepool] += 1
    mapping = {}
    for name, policy in ctx.policies.items():
        allowed, limiting = policy.allowed(reason, counts[name], ctx.now)
        left = max(allowed - disrupting[name], 0)
        text = (
            f"the disruption budgets of NodePool {name} allow no more {reason} disruptions now "
            f"({limiting or 'no budget'}: {allowed} of {counts[name]} nodes, {disrupting[name]} already disrupting)"
        )
        mapping[name] = _Allowance(left, text)
    return mapping


# ---- the methods ---------------------------------------------------------------------------------------


def _emptiness(ctx: _Context, world: _World, candidates: list[_Candidate], blocked: dict[str, str]) -> _Command | None:
    """``Emptiness.ComputeCommands``: every empty candidate the budgets allow, in one command."""
    empty = [c for c in candidates if _emptiness_ok(ctx, world, c, blocked)]
    if not empty:
        return None
    budgets = _budget_mapping(ctx, world, EMPTY)
    taken = []
    for candidate in _sorted(empty):
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = f"empty, but {allowance.explanation}"
            continue
        taken.append(candidate)
        allowance.left -= 1
    return _Command(EMPTINESS, EMPTY, taken) if taken else None


def _drift(ctx: _Context, world: _World, candidates: list[_Candidate], blocked: dict[str, str]) -> _Command | None:
    """``Drift.ComputeCommands``: the first drifted candidate (empty ones first; upstream orders the rest by when
    they drifted, unknown here: by name) that the Drifted budgets allow and whose pods all fit on other nodes or
    new NodeClaims. Those are launched whatever they cost: drift is not a price decision."""
    drifted = [c for c in candidates if c.name in ctx.drift]
    if not drifted:
        return None
    budgets = _budget_mapping(ctx, world, DRIFTED)
    for candidate in sorted(drifted, key=lambda c: (not c.empty, c.name)):
        reason = ctx.drift[candidate.name].reason
        if candidate.policy.static:
            blocked[candidate.name] = (f"drifted ({reason}); NodePool {candidate.policy.name} is static: Karpenter "
                                       "replaces it one for one (StaticDrift), which the plan does not simulate")
            continue
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = f"drifted ({reason}), but {allowance.explanation}"
            continue
        simulation = _simulate(ctx, world, [candidate])
        if simulation.errors:
            blocked[candidate.name] = f"drifted ({reason}), but {next(iter(simulation.errors.values()))}"
            continue
        return _Command(DRIFT, DRIFTED, [candidate], simulation, drift_claims=simulation.new_claims)
    return None


def _multi_node(
    ctx: _Context, world: _World, candidates: list[_Candidate], budgets: Mapping[str, _Allowance]
) -> _Command | None:
    """``MultiNodeConsolidation.firstNConsolidationOption``: binary search for the longest prefix (two or
    more candidates) of the ordered, budget-cut candidates that consolidates into at most one new node."""
    left = {name: a.left for name, a in budgets.items()}
    disruptable = []
    for candidate in _sorted(candidates):
        if left[candidate.policy.name] == 0:
            continue
        disruptable.append(candidate)
        left[candidate.policy.name] -= 1
    if len(disruptable) < 2:
        return None
    low, high = 1, min(len(disruptable), MAX_MULTI_NODE_CANDIDATES)
    if len(disruptable) <= high:
        high = len(disruptable) - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        batch = disruptable[: middle + 1]
        command, _ = _compute(ctx, world, batch, MULTI_NODE)
        if command is not None and command.replacement is not None and not _filter_same_type(command):
            command = None
        if command is not None:
            best, low = command, middle + 1
        else:
            high = middle - 1
    return best


def _single_node(
    ctx: _Context,
    world: _World,
    candidates: list[_Candidate],
    budgets: Mapping[str, _Allowance],
    blocked: dict[str, str],
) -> _Command | None:
    """``SingleNodeConsolidation.ComputeCommands``: the first candidate (ordered, interleaved by NodePool)
    that can be deleted or replaced by a cheaper node."""
    for candidate in _interleaved(_sorted(candidates)):
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = allowance.explanation
            continue
        command, why = _compute(ctx, world, [candidate], SINGLE_NODE)
        if command is not None:
            return command
        blocked[candidate.name] = why
    return None


def _interleaved(candidates: list[_Candidate]) -> list[_Candidate]:
    """``shuffleCandidates``: one candidate of each NodePool in turn (NodePools by name; Karpenter's order
    of NodePools is a Go map's)."""
    by_pool: dict[str, list[_Candidate]] = {}
    for candidate in candidates:
        by_pool.setdefault(candidate.policy.name, []).append(candidate)
    pools = sorted(by_pool)
    found = []
    for index in range(max((len(v) for v in by_pool.values()), default=0)):
        found += [by_pool[p][index] for p in pools if index < len(by_pool[p])]
    return found


def _compute(ctx: _Context, world: _World, candidates: list[_Candidate], method: str) -> tuple[_Command | None, str]:
    """``computeConsolidation``: a command for these candidates, or why there is none."""
    price = sum(c.price for c in candidates)
    simulation = _simulate(ctx, world, candidates, price if ctx.prune else None)
    if simulation.errors:
        return None, next(iter(simulation.errors.values()))
    command = _Command(method, UNDERUTILIZED, candidates, simulation)
    new = simulation.new_claims
    if not new:
        return command, ""
    if len(new) > 1:
        return None, f"its pods would need {len(new)} new nodes; Karpenter replaces with at most one"
    claim = new[0]
    options = sorted(claim.options, key=_price_order)
    if all(c.capacity_type == "spot" for c in candidates) and any(_offers(t, "spot") for t in options):
        return _spot_to_spot(ctx, command, claim, options, price)
    kept = [t for t in options if _worst_launch_price(t) < price]
    problem = _min_values_problem(claim.pool, kept)
    if problem:
        return None, f"filtering by price: {problem}"
    if not kept:
        cheapest = options[0]
        unpriced = [c for c in candidates if not c.priced]
        why = "".join(
            f"; {c.name}: no {c.capacity_type or '?'} price for {c.instance_type} in {c.zone or '?'}" for c in unpriced
        )
        return None, (
            f"can't replace with a cheaper node: the cheapest type its pods fit on is "
            f"{cheapest.instance_type.name} ({_money(_launch_price(cheapest))}/h), not below {_money(price)}/h{why}"
        )
    command.replacement, command.options = claim, kept
    return command, ""


def _spot_to_spot(
    ctx: _Context, command: _Command, claim: PlannedClaim, options: list[Template], price: float
) -> tuple[_Command | None, str]:
    """``computeSpotToSpotConsolidation``."""
    if not ctx.spot_to_spot:
        return None, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    spot = [t for t in options if _offers(t, "spot")]
    kept = [t for t in spot if _worst_launch_price(t, ("spot",)) < price]
    problem = _min_values_problem(claim.pool, kept)
    if problem:
        return None, f"filtering by price: {problem}"
    if not kept:
        return None, "can't replace with a cheaper node"
    if len(command.candidates) == 1:
        if len(kept) < SPOT_TO_SPOT_MIN_TYPES:
            return None, (
                f"SpotToSpotConsolidation requires {SPOT_TO_SPOT_MIN_TYPES} cheaper instance type options than "
                f"the current candidate to consolidate, got {len(kept)}"
            )
        kept = kept[: max(SPOT_TO_SPOT_MIN_TYPES, _min_values_prefix(claim.pool, kept))]
    command.replacement, command.options = claim, kept
    return command, ""


def _filter_same_type(command: _Command) -> bool:
    """``filterOutSameInstanceType``: a replacement of a type being removed must be cheaper than that node
    (else deleting the others is the same move with less churn). False when nothing is left."""
    existing = {c.instance_type for c in command.candidates}
    prices: dict[str, float] = {}
    for candidate in command.candidates:
        if candidate.priced:
            prices[candidate.instance_type] = min(prices.get(candidate.instance_type, math.inf), candidate.price)
    limit = min(
        (prices.get(t.instance_type.name, 0.0) for t in command.options if t.instance_type.name in existing),
        default=math.inf,
    )
    kept = [t for t in command.options if _worst_launch_price(t) < limit]
    assert command.replacement is not None
    if not kept or _min_values_problem(command.replacement.pool, kept):
        return False
    command.options = kept
    return True


def _offers(template: Template, capacity_type: str) -> bool:
    return any(o.capacity_type == capacity_type for o in template.offerings)


def _worst_launch_price(template: Template, capacity_types: Sequence[str] = CAPACITY_ORDER) -> float:
    """``Offerings.WorstLaunchPrice``: the most expensive offering of the first capacity type (reserved,
    spot, on-demand) the type has."""
    for capacity_type in capacity_types:
        prices = [o.price for o in template.offerings if o.capacity_type == capacity_type]
        if prices:
            return max(prices)
    return math.inf


def _launch_price(template: Template) -> float:
    offering = template.cheapest
    return offering.price if offering is not None else math.inf


def _price_order(template: Template) -> tuple[float, str]:
    return (_launch_price(template), template.instance_type.name)


def _min_values_problem(pool: Pool, options: Sequence[Template]) -> str:
    for key, wanted in pool.min_values.items():
        values = {t.node.metadata.labels.get(key) for t in options} - {None}
        if len(values) < wanted:
            return f"minValues {wanted} for {key} not met: {len(values)} value(s) among the cheaper instance types"
    return ""


def _min_values_prefix(pool: Pool, options: Sequence[Template]) -> int:
    """How many of the (ordered) options it takes to meet every minValues."""
    seen: dict[str, set[str]] = {key: set() for key in pool.min_values}
    for count, template in enumerate(options, 1):
        for key in seen:
            value = template.node.metadata.labels.get(key)
            if value is not None:
                seen[key].add(value)
        if all(len(seen[k]) >= w for k, w in pool.min_values.items()):
            return count
    return len(options)


# ---- the scheduling simulation -------------------------------------------------------------------------


def _simulate(ctx: _Context, world: _World, candidates: list[_Candidate], at_most: float | None = None) -> _Simulation:
    """``SimulateScheduling``: the candidates gone, where do their pods (and the pending pods) go?

    ``at_most``: the candidates' price (pruning): a candidate's pod that fits on no other node, and on no
    instance type cheaper than that, decides it (no delete, no cheaper replace: a new node holding it and
    more can be no cheaper than one holding it alone), and the simulation stops there."""
    sim = _fork(world.state)
    names = [c.name for c in candidates]
    moving = _evict(sim, names)
    from_candidates = {info.key for info in moving}
    for key, record in list(sim.pods.items()):
        if _provisionable(record):  # binding one in the fork changes its record: the fork gets its own copy
            copied = PodRecord(record.raw, record.pod, dataclasses.replace(record.info))
            sim.pods[key] = copied
            moving.append(copied.info)
    moving.sort(key=_size_order)
    profile = default_profile(sim, ScheduleOptions(), ctx.compiler)
    binder = StateBinder(sim)
    simulation = _Simulation({}, [], {}, {})
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
                                               f"fits is cheaper than {_money(at_most)}/h")
                return simulation
            leftovers.append(info)
        elif candidate_pod:
            simulation.placed[info.key] = placement
            if not _initialized(sim.nodes[placement.node]):
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
) -> _Placement | None:
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
        placement = _Placement(
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


def _bind(binder: StateBinder, info: PodInfo, placement: _Placement) -> None:
    if placement.special is not None:
        binder.create_extended_claim(info, placement.special, placement.special_requests)
    binder.bind(info, placement.node, placement.allocations, placement.reserve)


def _destinations(ctx: _Context, world: _World, candidate_pod: bool) -> list[str]:
    """The nodes that may take a pod, in Karpenter's order (initialized ones first, by name); the same for every
    simulation of a pass (each leaves out its own candidates)."""
    known = world.destinations.get(candidate_pod)
    if known is None:
        state = world.state
        order = sorted(state.nodes.values(), key=lambda n: (not _initialized(n), n.name))
        known = [n.name for n in order if _destination_ok(ctx, world, state, n, candidate_pod)]
        world.destinations[candidate_pod] = known
    return known


def _cheapest_new_node(ctx: _Context, sim: ClusterState, info: PodInfo) -> float:
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


def _solve(ctx: _Context, pods: list[PodToPlace]) -> Plan:
    def solve(ordered: list[PodToPlace]) -> Plan:
        return Solver(ctx.pools, ctx.features, ctx.classes, ctx.compiler).solve(ordered)

    return solve(pods) if ctx.memo is None or not pods else ctx.memo.solve(ctx.pools, pods, solve)


def _destination_ok(ctx: _Context, world: _World, sim: ClusterState, node: NodeInfo, candidate_pod: bool) -> bool:
    """Nodes being deleted take no pod; a node still under its NodePool's consolidateAfter takes no pod
    from a consolidation candidate (``isUnderConsolidateAfter``)."""
    if _marked_for_deletion(sim.node_raw.get(node.name) or {}, node):
        return False
    pool = node.node.metadata.labels.get(NODEPOOL_LABEL)
    policy = ctx.policies.get(pool) if pool is not None else None
    if not candidate_pod or policy is None or not _initialized(node):
        return True
    return not _consolidate_after_pending(ctx, world, node.name, policy)


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


# ---- forks of the cluster state ------------------------------------------------------------------------


def _fork(state: ClusterState) -> ClusterState:
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
        if not _reschedulable(record.raw):
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




# ---- applying a command to the plan's world ------------------------------------------------------------


def _apply(world: _World, command: _Command) -> None:
    """The command's nodes are gone; their pods are on the destinations the simulation found (or on the
    replacement, which is still launching: later passes neither use nor disrupt it)."""
    state = _fork(world.state)
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
    world.planned.update(names)
    world.fits.clear()


def _describe(command: _Command, drift: Mapping[str, Drift]) -> Action:
    nodes = [
        NodeCost(c.name, c.policy.name, c.instance_type, c.zone, c.capacity_type, c.listed_price)
        for c in command.candidates
    ]
    if command.method == DRIFT:
        return _describe_drift(command, nodes, drift[command.candidates[0].name])
    source = sum(n.price for n in nodes)
    listed = ", ".join(f"{n.name} ({n.instance_type}, {_money(n.price)}/h)" for n in nodes)
    simulation = command.simulation
    destinations: dict[str, str] = {}
    replacement = None
    savings = source
    if command.replacement is not None:
        chosen = command.options[0]
        price = _launch_price(chosen)
        replacement = Replacement(
            command.replacement.pool.name,
            chosen.instance_type.name,
            price,
            tuple(t.instance_type.name for t in command.options),
        )
        savings = source - price
    if simulation is not None:
        destinations = {key: p.node for key, p in simulation.placed.items()}
        for key in simulation.on_new:
            destinations[key] = f"new {replacement.instance_type}" if replacement is not None else "new node"
    moved = len(destinations)
    if command.method == EMPTINESS:
        sentence = f"delete {listed}: empty (no pods but DaemonSet pods); saves {_money(savings)}/h"
    else:
        whose = "its" if len(nodes) == 1 else "their"
        pods = f"{whose} {moved} pod{'s' if moved != 1 else ''} fit{'s' if moved == 1 else ''}"
        existing = sorted({d for d in destinations.values() if not d.startswith("new ")})
        if replacement is None:
            sentence = f"delete {listed}: {pods} on {', '.join(existing)}; saves {_money(savings)}/h"
        else:
            on_existing = sum(1 for d in destinations.values() if not d.startswith("new "))
            split = (
                f" ({moved - on_existing} on the new node, {on_existing} on {', '.join(existing)})"
                if on_existing
                else ""
            )
            sentence = (
                f"replace {listed} with {replacement.instance_type} ({_money(replacement.price)}/h): "
                f"{pods}{split}; saves {_money(savings)}/h"
            )
    return Action(command.method, command.reason, command.decision, nodes, replacement, destinations, savings, sentence)


def _describe_drift(command: _Command, nodes: list[NodeCost], drift: Drift) -> Action:
    (node,) = nodes
    replacements = sorted(
        (
            Replacement(c.pool.name, c.chosen().instance_type.name, o.price if (o := c.offering()) else 0.0,
                        tuple(sorted(t.instance_type.name for t in c.options)))
            for c in command.drift_claims
        ),
        key=lambda r: (r.price, r.instance_type),
    )
    savings = node.price - sum(r.price for r in replacements)
    simulation = command.simulation
    assert simulation is not None
    destinations = {key: p.node for key, p in simulation.placed.items()}
    for key, index in simulation.on_new.items():
        destinations[key] = f"new {command.drift_claims[index].chosen().instance_type.name}"
    listed = f"drifted {node.name} ({node.instance_type}, {_money(node.price)}/h)"
    moved = len(destinations)
    pods = f"its {moved} pod{'s' if moved != 1 else ''} go{'es' if moved == 1 else ''} to " + (
        ", ".join(sorted(set(destinations.values()))) if destinations else "nowhere (none to move)"
    )
    change = f"saves {_money(savings)}/h" if savings >= 0 else f"costs {_money(-savings)}/h more"
    if replacements:
        new = ", ".join(f"{r.instance_type} ({_money(r.price)}/h)" for r in replacements)
        sentence = f"replace {listed} with {new}: {drift}; {pods}; {change}"
    else:
        sentence = f"delete {listed}: {drift}; {pods}; {change}"
    return Action(DRIFT, DRIFTED, command.decision, nodes, replacements[0] if replacements else None, destinations,
                  savings, sentence, replacements[1:])


# ---- drift and prices ----------------------------------------------------------------------------------


def node_price(instance: InstanceType | None, zone: str, capacity_type: str) -> tuple[float, bool]:
    """A running node's price from the catalog: its offering in its zone and capacity type (True), else the type's
    last list price, or 0 (False: Karpenter sees no price for it)."""
    if instance is None:
        return 0.0, False
    offering = next((o for o in instance.offerings if (o.zone, o.capacity_type) == (zone, capacity_type)), None)
    if offering is not None:
        return offering.price, True
    return instance.list_price_usd_per_hour or 0.0, False


def _drifts(
    cluster: ClusterState,
    nodepools_raw: Sequence[Mapping[str, Any]],
    node_classes: Mapping[str, Mapping[str, Any]],
    memo: ConsolidationMemo | None,
) -> dict[str, Drift]:
    by_name = {str((raw.get("metadata") or {}).get("name", "")): raw for raw in nodepools_raw}
    found = {}
    for name, info in cluster.nodes.items():
        nodepool = by_name.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
        if nodepool is None:
            continue
        node = info.node
        drift = (drift_of(node, nodepool, node_classes) if memo is None else
                 memo.drift_of(name, node, functools.partial(drift_of, node, nodepool, node_classes)))
        if drift is not None:
            found[name] = drift
    return found


def _drifted_node(ctx: _Context, cluster: ClusterState, name: str, drift: Drift) -> DriftedNode:
    labels = cluster.nodes[name].node.metadata.labels
    type_name = labels.get(INSTANCE_TYPE_LABEL, "")
    instance = ctx.catalog.get(type_name) if type_name in ctx.catalog else None
    price, _ = node_price(instance, labels.get(ZONE_LABEL, ""), labels.get(CAPACITY_TYPE, ""))
    return DriftedNode(name, labels.get(NODEPOOL_LABEL, ""), type_name, price, drift)


# ---- pods and nodes ------------------------------------------------------------------------------------


def _owners(raw: Raw) -> list[tuple[str, str]]:
    return [
        (str(o.get("apiVersion", "")), str(o.get("kind", "")))
        for o in (raw.get("metadata") or {}).get("ownerReferences") or []
    ]


def _terminal(raw: Raw) -> bool:
    return (raw.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _terminating(raw: Raw) -> bool:
    return bool((raw.get("metadata") or {}).get("deletionTimestamp"))


def _active(raw: Raw) -> bool:
    return not _terminal(raw) and not _terminating(raw)


def _reschedulable(raw: Raw) -> bool:
    """``pod.IsReschedulable``: active (or a terminating StatefulSet pod), not a DaemonSet or mirror pod."""
    owners = _owners(raw)
    statefulset = ("apps/v1", "StatefulSet") in owners
    return (
        (_active(raw) or (statefulset and _terminating(raw)))
        and ("apps/v1", "DaemonSet") not in owners
        and ("v1", "Node") not in owners
    )


def _provisionable(record: PodRecord) -> bool:
    """``pod.IsProvisionable``: pending, marked Unschedulable by kube-scheduler, not nominated, not a
    DaemonSet or mirror pod."""
    raw = record.raw
    status = raw.get("status") or {}
    if record.pod.spec.node_name or status.get("nominatedNodeName") or not _active(raw):
        return False
    owners = _owners(raw)
    if ("apps/v1", "DaemonSet") in owners or ("v1", "Node") in owners:
        return False
    return any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in status.get("conditions") or []
    )


def _do_not_disrupt(raw: Raw, now: datetime | None) -> bool:
    """``IsDoNotDisruptActive``: "true", or a duration not yet elapsed since the pod started."""
    value = ((raw.get("metadata") or {}).get("annotations") or {}).get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    try:
        duration = go_duration(value)
    except ValueError:
        return False  # an invalid value is ignored (Karpenter emits an event)
    if duration <= timedelta(0):
        return False
    started = _timestamp((raw.get("status") or {}).get("startTime"))
    if started is None or now is None:
        return True
    return now - started < duration


def _eviction_cost(record: PodRecord, info: PodInfo) -> float:
    """``disruption.EvictionCost``: 1, plus the pod deletion cost / 2^27, plus the priority / 2^25, in
    [-10, 10]."""
    cost = 1.0
    annotation = record.pod.metadata.annotations.get(POD_DELETION_COST)
    if annotation is not None:
        with contextlib.suppress(ValueError):  # Karpenter logs the parse error and ignores the annotation
            cost += float(annotation) / 2**27
    cost += info.priority / 2**25
    return min(max(cost, -10.0), 10.0)


def _initialized(info: NodeInfo) -> bool:
    """Karpenter labels initialized nodes ``karpenter.sh/initialized=true``; a node without the label (a
    hand-written input) counts as initialized."""
    return info.node.metadata.labels.get(INITIALIZED_LABEL, "true") == "true"


def _marked_for_deletion(raw: Raw, info: NodeInfo) -> bool:
    if (raw.get("metadata") or {}).get("deletionTimestamp"):
        return True
    return any(t.key == DISRUPTED_TAINT for t in info.node.spec.taints)


def _ready(raw: Raw) -> bool:
    """The Ready condition; a node without conditions (a hand-written input) counts as Ready."""
    for condition in (raw.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return True


# ---- small helpers -------------------------------------------------------------------------------------


def _policy_notes(policies: Mapping[str, NodePoolPolicy], now: datetime | None) -> list[str]:
    notes = []
    balanced = sorted(p.name for p in policies.values() if p.policy == BALANCED)
    if balanced:
        notes.append(
            f"NodePool {', '.join(balanced)}: consolidationPolicy Balanced is planned as WhenEmptyOrUnderutilized; "
            "Karpenter may still reject some of these moves by their savings-to-disruption score"
        )
    if now is None and any(b.schedule for p in policies.values() for b in p.budgets):
        notes.append("no time given: budgets with a schedule are taken as active")
    return notes


def _timestamp(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return utc(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
    except ValueError:
        return None


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _money(amount: float) -> str:
    if math.isinf(amount):
        return "$?"
    if amount == 0 or amount >= 1:
        return f"${amount:.2f}"
    text = f"{amount:.4f}".rstrip("0")
    return "$" + (text if len(text.split(".")[1]) >= 2 else f"{amount:.2f}")

"""The consolidation plan's values: what it decides (actions, kept nodes, drifted nodes), and the books a plan
keeps while it decides (the context of one call, the world as earlier commands leave it, candidates,
simulations, commands). No logic beyond the properties that read them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dratwin.allocator import Features
from dratwin.api.resource import AllocationResult, DeviceClass, ResourceClaim
from dratwin.catalog import Catalog, InstanceType
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClusterState
from dratwin.provisioner.budgets import NodePoolPolicy
from dratwin.provisioner.candidates import Template
from dratwin.provisioner.drift import Drift
from dratwin.provisioner.memo import ConsolidationMemo, FitEntry, FitKey
from dratwin.provisioner.solver import PlannedClaim, Pool
from dratwin.scheduler.framework import NodeInfo
from dratwin.scheduler.plugins.dynamic_resources import ExtendedRequest

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


# ---- the books of one call ---------------------------------------------------------------------------


@dataclass
class Context:
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
class BudgetNode:
    """A node as the budget mapping counts it (from the input cluster)."""

    nodepool: str
    counted: bool  # managed and initialized
    disrupting: bool  # NotReady or being deleted


@dataclass
class World:
    """The cluster as the plan so far leaves it: planned nodes gone, their pods on their destinations."""

    state: ClusterState
    budget_nodes: dict[str, BudgetNode]
    planned: set[str] = field(default_factory=set)  # nodes of earlier commands, still in flight
    touched: set[str] = field(default_factory=set)  # nodes that received pods: their last pod event is now
    # (pod shape, node) -> (the node's generation, the DRA global version, did the filters pass), for nodes a
    # simulation has not changed (simulations of one pass, and passes over time, try the same pods on the
    # same nodes).
    fits: dict[FitKey, FitEntry] = field(default_factory=dict)
    # whether a candidate's pod (True) or another pod (False) -> the nodes that may take it, in Karpenter's order
    destinations: dict[bool, list[str]] = field(default_factory=dict)
    provisionable: list[str] | None = None  # the pending pods Karpenter's simulations also place (None: not yet)


@dataclass
class Candidate:
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
class Placement:
    node: str
    allocations: dict[str, AllocationResult]
    reserve: list[str]
    special: ResourceClaim | None
    special_requests: list[ExtendedRequest]


@dataclass
class Simulation:
    placed: dict[str, Placement]  # candidate pod -> its existing destination, in placement order
    new_claims: list[PlannedClaim]
    on_new: dict[str, int]  # candidate pod -> index of its new NodeClaim
    errors: dict[str, str]  # candidate pod -> why it fits nowhere


@dataclass
class Command:
    method: str
    reason: str
    candidates: list[Candidate]
    simulation: Simulation | None = None
    replacement: PlannedClaim | None = None
    options: list[Template] = field(default_factory=list)  # cheaper types kept, cheapest first
    drift_claims: list[PlannedClaim] = field(default_factory=list)  # drift: every NodeClaim it launches

    @property
    def decision(self) -> str:
        return REPLACE if self.replacement is not None or self.drift_claims else DELETE


@dataclass
class Allowance:
    left: int
    explanation: str

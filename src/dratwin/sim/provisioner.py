"""Karpenter over time: a batching window, NodeClaims launched with a latency, then disruption.

- Batching (Karpenter's ``BatchIdleDuration`` 1 s and ``BatchMaxDuration`` 10 s): the first pod found
  unschedulable opens a window; it closes 1 s after the last such pod, or 10 s after it opened.
- At the close, the pods still pending and not waiting for a node already launched go to the twin's
  provisioning solver (:class:`dratwin.provisioner.solver.Solver`, as ``dratwin plan`` runs it) over the
  NodePools of the cluster that this provisioner manages (by nodeClassRef), less the pods no launch can help
  (:mod:`dratwin.provisioner.pending`, the rule plan applies; each reason said once in the notes); every
  NodeClaim it plans is launched: the node registers and becomes Ready after ``RunSpec.node_launch_seconds``
  of its instance type, and the DRA drivers publish its ResourceSlices then (the devices ``dratwin cluster
  generate`` gives that type). The scheduler binds the pods when the node appears (a cluster event).
- The capacity type is the solver's choice: the cheapest offering the NodePool allows, so spot wherever the
  catalog has a spot price below on-demand (the packaged catalog has no spot prices: every node launches
  on-demand unless a user catalog gives them; the run says so for a NodePool that allows spot).
- Disruption (emptiness, drift, consolidation of empty and underused nodes, budgets, replacements launched
  before the drain): :mod:`dratwin.sim.disruption`; a node it deletes gives its capacity back to its
  NodePool's limits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator import Features
from dratwin.api.codec import decode_as
from dratwin.api.core import Node
from dratwin.api.resource import ResourceSlice
from dratwin.catalog import Catalog
from dratwin.catalog.offerings import Offering
from dratwin.cel import SelectorCompiler
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import AUTO_MODE, KARPENTER, GenerateOptions, NodeGroup
from dratwin.provisioner.budgets import NodePoolPolicy
from dratwin.provisioner.candidates import Template
from dratwin.provisioner.nodepools import PlanError, PlanOptions, managed_nodepools, read_pool
from dratwin.provisioner.pending import pod_to_place, split_unprovisionable
from dratwin.provisioner.solver import PlannedClaim, PodToPlace, Pool, Solver
from dratwin.scenario.model import RunSpec
from dratwin.scheduler.framework import NodeInfo
from dratwin.scheduler.resources import node_allocatable
from dratwin.sim.disruption import DisruptionController
from dratwin.sim.engine import CONTROLLER, WORLD, Engine
from dratwin.sim.outcomes import Disruptions
from dratwin.sim.scheduling import SchedulingController
from dratwin.sim.store import Store

BATCH_IDLE_SECONDS = 1.0
BATCH_MAX_SECONDS = 10.0
NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NOT_MODELLED = ("Karpenter in the simulation: PodDisruptionBudgets, graceful termination, expiry, spot interruptions "
                "and drift that starts during the run are not simulated")


@dataclass
class Launch:
    name: str
    pool: str
    instance_type: str
    zone: str
    capacity_type: str
    pods: tuple[str, ...]
    booked: dict[str, int]  # what it counts against its NodePool's limits
    then: Callable[[], None] | None = None  # called once it is Ready (a disruption's replacement)


@dataclass
class ProvisionerController:
    engine: Engine
    store: Store
    scheduling: SchedulingController
    spec: RunSpec
    catalog: Catalog
    features: Features
    compiler: SelectorCompiler
    pools: list[Pool] = field(default_factory=list)
    policies: dict[str, NodePoolPolicy] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    in_flight: dict[str, str] = field(default_factory=dict)  # pod -> the NodeClaim launched for it
    booked: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)  # node -> (NodePool, usage)
    disruption: DisruptionController | None = None
    _window: tuple[float, float] | None = None  # (opened, last pod) of the open batch
    _options: PlanOptions = field(default_factory=PlanOptions)
    _reasons_noted: set[str] = field(default_factory=set)  # why pods were left, each said once in the notes
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        written = [o.raw for o in self.spec.objects
                   if o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/")]
        options = PlanOptions(seed=self.spec.seed, auto_mode=self.spec.provisioner == "auto-mode")
        self._options = options
        written, unmanaged = managed_nodepools(written, options.auto_mode)  # as dratwin plan reads them
        self.notes += unmanaged
        for raw in written:
            try:
                pool = read_pool(raw, self.catalog, self.store.loaded, options)
            except PlanError as error:  # like Karpenter, a NodePool that can launch nothing is skipped
                self.notes.append(str(error))
                continue
            if not pool.static:
                self.pools.append(pool)
            self.policies[pool.name] = NodePoolPolicy.read(raw)
        if not self.pools:
            self.notes.append("provisioner: no NodePool that can launch nodes: nothing will be launched")
        self.notes += _spot_notes(self.pools, written)
        self.notes.append(NOT_MODELLED)
        self.scheduling.on_unschedulable.append(self.pod_unschedulable)
        if self.pools:
            node_classes = {str((o.raw.get("metadata") or {}).get("name", "")): o.raw for o in self.spec.objects
                            if o.kind == "EC2NodeClass"}
            self.disruption = DisruptionController(self.engine, self.store, self.pools, written, self.policies,
                                                   node_classes, self.catalog, self.features, self.compiler,
                                                   self.launch_replacement, self.release)

    # ---- the batcher ----

    def pod_unschedulable(self, key: str) -> None:
        if key in self.in_flight or not self.pools:
            return
        now = self.engine.now()
        if self._window is None:
            self._window = (now, now)
            self.engine.at(now + BATCH_IDLE_SECONDS, CONTROLLER, self._maybe_close)
        else:
            self._window = (self._window[0], now)

    def _maybe_close(self) -> None:
        if self._window is None:
            return
        opened, last = self._window
        now = self.engine.now()
        due = min(last + BATCH_IDLE_SECONDS, opened + BATCH_MAX_SECONDS)
        if now < due:
            self.engine.at(due, CONTROLLER, self._maybe_close)
            return
        self._window = None
        self._provision()

    # ---- a provisioning round ----

    def _provision(self) -> None:
        pending = self._pending()
        if not pending:
            return
        solver = Solver(self.pools, self.features, dict(self.store.state.classes), self.compiler)
        plan = solver.solve(pending)
        for claim in plan.claims:
            self._launch(claim)

    def _pending(self) -> list[PodToPlace]:
        """The unschedulable pods not waiting for a launch, less those no launch can help (as in dratwin plan)."""
        state = self.store.state
        found = []
        for key in sorted(self.scheduling.queue.pods, key=lambda k: self.scheduling.queue.pods[k].info.order):
            record = state.pods.get(key)
            if record is None or record.pod.spec.node_name or key in self.in_flight:
                continue
            if key not in self.scheduling.messages:
                continue  # not found unschedulable yet: the scheduler may still place it
            found.append(pod_to_place(state, record))
        kept, left = split_unprovisionable(found, state.classes, self.pools, self._options)
        for unplaced in left:
            for rejections in unplaced.reasons.values():
                for rejection in rejections:
                    if rejection.reason not in self._reasons_noted:
                        self._reasons_noted.add(rejection.reason)
                        self.notes.append(f"provisioner: launches nothing for {unplaced.pod} (and any pod like it): "
                                          f"{rejection.reason}")
        return kept

    def _launch(self, claim: PlannedClaim) -> None:
        self._start(claim.pool, claim.chosen(), claim.offering(), tuple(p.info.key for p in claim.pods))

    def launch_replacement(self, pool_name: str, instance_type: str, then: Callable[[], None]) -> bool:
        """A NodeClaim the disruption controller launches to replace nodes: the type's cheapest offering."""
        pool = next((p for p in self.pools if p.name == pool_name), None)
        template = next((t for t in pool.templates if t.instance_type.name == instance_type), None) if pool else None
        if pool is None or template is None:
            return False
        self._start(pool, template, template.cheapest, (), then)
        return True

    def release(self, node: str) -> None:
        """A node the disruption controller deleted: its NodePool's usage goes down."""
        pool_name, usage = self.booked.pop(node, ("", {}))
        for pool in self.pools:
            if pool.name == pool_name:
                for resource, amount in usage.items():
                    pool.used[resource] = pool.used.get(resource, 0) - amount

    def _start(self, pool: Pool, template: Template, offering: Offering | None, pods: tuple[str, ...],
               then: Callable[[], None] | None = None) -> None:
        zone = offering.zone if offering is not None else ""
        capacity = offering.capacity_type if offering is not None else "on-demand"
        name = f"{pool.name}-{next(self._names):05d}"
        launch = Launch(name, pool.name, template.instance_type.name, zone, capacity, pods, dict(template.capacity),
                        then)
        self.launches.append(launch)
        for key in pods:
            self.in_flight[key] = name
        for resource, amount in template.capacity.items():
            pool.used[resource] = pool.used.get(resource, 0) + amount
        latency = self.spec.node_launch_seconds.get(launch.instance_type, self.spec.default_node_launch_seconds)
        purpose = f"for {len(pods)} pod(s)" if pods else "to replace disrupted nodes"
        self.store.note("Launched", "NodeClaim", name, f"{launch.instance_type} in {zone or 'any zone'} ({capacity}) "
                        f"{purpose}; Ready in {latency:g} s")
        self.engine.after(latency, WORLD, lambda: self._ready(launch))

    def _ready(self, launch: Launch) -> None:
        """The node registers and is Ready; the DRA drivers publish its slices."""
        state = self.store.state
        options = GenerateOptions(groups=(NodeGroup(launch.instance_type, 1),),
                                  zones=(launch.zone,) if launch.zone else ("us-east-1a",),
                                  name_prefix=launch.name, nodepool=launch.pool,
                                  provisioner=AUTO_MODE if self.spec.provisioner == "auto-mode" else KARPENTER)
        generated = generate(options, self.catalog)
        names = []
        for raw in generated.nodes:
            raw["metadata"]["labels"][CAPACITY_TYPE_LABEL] = launch.capacity_type
            node = decode_as(raw, Node, f"Node {raw['metadata']['name']}")
            state.add_node(raw, node, NodeInfo(node, node_allocatable(node)))
            names.append(node.metadata.name)
        for raw in generated.slices:
            state.add_slice(decode_as(raw, ResourceSlice, f"ResourceSlice {raw['metadata']['name']}"))
        for key in launch.pods:
            if self.in_flight.get(key) == launch.name:
                del self.in_flight[key]
        for name in names:
            self.booked[name] = (launch.pool, launch.booked)
            if self.disruption is not None:
                self.disruption.node_ready(name, nominated=bool(launch.pods))
        if launch.then is not None:
            launch.then()

    def disruptions(self) -> Disruptions:
        return self.disruption.outcome() if self.disruption is not None else Disruptions()


def _spot_notes(pools: list[Pool], written: list[dict[str, Any]]) -> list[str]:
    """A NodePool that allows spot launches on-demand where the catalog has no spot price: say so."""
    notes = []
    for pool in pools:
        allows_spot = any(r.get("key") == CAPACITY_TYPE_LABEL and "spot" in (r.get("values") or [])
                          for raw in written if (raw.get("metadata") or {}).get("name") == pool.name
                          for r in ((raw.get("spec") or {}).get("template") or {}).get("spec", {}).get(
                              "requirements") or [] if isinstance(r, dict))
        if allows_spot and not any(o.capacity_type == "spot" for t in pool.templates for o in t.offerings):
            notes.append(f"NodePool {pool.name} allows spot, but the catalog has no spot prices for its instance "
                         "types: its nodes launch and are costed on-demand (give spot prices with a user catalog, "
                         "see dratwin/data/CATALOG.md)")
    return notes

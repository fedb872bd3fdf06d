"""Karpenter's disruption controller over time: emptiness, drift and consolidation, validated, then carried out.

What it decides is the plan's core (:func:`dratwin.provisioner.consolidation.consolidate`, as ``dratwin plan``
runs it): candidates, ``consolidateAfter``, ``do-not-disrupt``, the disruption budgets (``nodes: "10%"`` by
default), emptiness, drift, multi-node then single-node consolidation, with the moves simulated by the twin's
scheduler filters, DRA allocator and provisioning solver (a node whose pods hold claims is a candidate only if
the claims can be satisfied elsewhere). This module is the time around it (``pkg/controllers/disruption``,
kubernetes-sigs/karpenter v1):

- **The loop**: a pass every 10 s (its polling period). A pass is skipped while the cluster is unchanged since a
  pass found nothing (Karpenter's consolidation state), for at most 5 minutes. Pods bound or gone, nodes added,
  changed or removed change it, and so does a node's ``consolidateAfter`` running out (its NodeClaim turns
  Consolidatable), counted from its last pod event (a pod bound there or gone), else from its initialization.
- **Validation**: the first command a pass finds is held for 15 s (the loop waits with it), then its nodes are
  looked at again, alone as candidates (every node still a destination): it is carried out (with the
  replacement found then) if that finds the same method and decision for the same nodes (still candidates,
  budgets still allowing them, their pods still fitting), else it is dropped (counted as invalidated).
- **Carrying out** (the orchestration queue and the termination controller): the nodes are tainted
  ``karpenter.sh/disrupted:NoSchedule`` (nothing new lands there; later passes count them against the budgets
  as disrupting); the replacement NodeClaims are launched and, once every one is Ready, the nodes are drained:
  every pod is evicted (Failed, with a ``DisruptionTarget`` condition), its owner replaces it (a Job after its
  pod failure backoff, a Deployment at once; a bare pod is gone), the pods go back to the scheduler's queue,
  then the nodes and their ResourceSlices are deleted and their cost stops. After a command is carried out the
  next pass runs at once.
- **Nominated nodes**: a node launched for pods is left alone for 20 s after it is Ready (Karpenter nominates
  it to them for twice the batch maximum).

Each pass decides afresh, but what does not change between passes is not worked out again: the controller
owns a :class:`~dratwin.provisioner.memo.ConsolidationMemo` that every pass hands the core (filter verdicts per
node generation, the solver's answers per pod shapes, drift per node object), and a pass gives up on a
candidate as soon as one of its pods fits on no other node and on no instance type cheaper than it (the
same decision, found sooner).

The pods the scheduler found unschedulable are simulated with the moved ones (as Karpenter does), including
those waiting for a NodeClaim still launching, which Karpenter leaves out as nominated.

Not modelled: PodDisruptionBudgets and graceful termination (an eviction is instant, and a node is deleted as
soon as it is drained), NodeClaims still launching as destinations, a replacement that fails to launch, expiry,
spot interruptions, and drift that starts during a run (a scenario cannot change a NodePool over time: only
nodes drifted at time 0 are).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator import Features
from dratwin.catalog import Catalog
from dratwin.cel import SelectorCompiler
from dratwin.cluster.workloads import SIMULATION_EPOCH
from dratwin.provisioner.budgets import NodePoolPolicy
from dratwin.provisioner.candidates import NODEPOOL_LABEL
from dratwin.provisioner.consolidation import (
    DISRUPTED_TAINT,
    DRIFTED,
    EMPTY,
    REPLACE,
    UNDERUTILIZED,
    Action,
    consolidate,
)
from dratwin.provisioner.memo import ConsolidationMemo
from dratwin.provisioner.solver import Pool
from dratwin.sim.engine import BOOKKEEPING, CONTROLLER, Engine
from dratwin.sim.outcomes import DisruptionCommand, Disruptions, rounded
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase

Raw = dict[str, Any]
# Launch a replacement: (NodePool, instance type, called once it is Ready) -> whether it could be launched.
Launcher = Callable[[str, str, Callable[[], None]], bool]

POLL_SECONDS = 10.0  # the disruption controller's polling period
VALIDATION_SECONDS = 15.0  # consolidationTTL: how long a command waits before it is validated
RECHECK_SECONDS = 300.0  # an unchanged cluster is considered again after five minutes
NOMINATION_SECONDS = 20.0  # twice the batch maximum
_EPOCH = datetime.datetime.fromisoformat(SIMULATION_EPOCH.replace("Z", "+00:00"))
_NOMINATED = "node is nominated for a pending pod"


def moment(seconds: float) -> datetime.datetime:
    """The wall-clock time of a simulated moment (runs start at the workload controllers' epoch)."""
    return _EPOCH + datetime.timedelta(seconds=seconds)


@dataclass
class _InFlight:
    action: Action
    started: float
    waiting: int  # replacements not Ready yet
    evicted: int = 0
    drained: float | None = None


@dataclass
class DisruptionController:
    engine: Engine
    store: Store
    pools: list[Pool]  # shared with the provisioner: the NodePools' templates and what they use
    nodepools_raw: Sequence[Mapping[str, Any]]
    policies: Mapping[str, NodePoolPolicy]  # by NodePool, as the provisioner read them
    node_classes: Mapping[str, Mapping[str, Any]]
    catalog: Catalog
    features: Features
    compiler: SelectorCompiler
    launch: Launcher
    released: Callable[[str], None]  # a node it deleted: its NodePool's usage goes down
    last_pod_event: dict[str, float] = field(default_factory=dict)  # node -> seconds
    nominated_until: dict[str, float] = field(default_factory=dict)
    running_since: dict[str, float] = field(default_factory=dict)  # pod -> when its containers started
    bound_to: dict[str, str] = field(default_factory=dict)  # pod -> node, to see bindings and departures
    in_flight: list[_InFlight] = field(default_factory=list)
    invalidated: int = 0
    memo: ConsolidationMemo = field(default_factory=ConsolidationMemo)  # what one pass may reuse of the last
    slice_nodes: dict[str, str] = field(default_factory=dict)  # ResourceSlice -> the node it is published for
    work_lost_seconds: float = 0.0
    _changed: bool = True
    _settled_at: float = 0.0  # when a pass last found nothing

    def __post_init__(self) -> None:
        state = self.store.state
        for name in state.nodes:
            self.last_pod_event[name] = 0.0
        self.slice_nodes = {s.metadata.name: s.spec.node_name for s in state.slices if s.spec.node_name}
        for key, record in state.pods.items():
            if record.pod.spec.node_name:
                self.bound_to[key] = record.pod.spec.node_name
                if pod_phase(record.raw) == "Running":
                    self.running_since[key] = 0.0
        self.store.subscribe("Pod", self._on_pod)
        self.store.subscribe("Node", self._on_node)
        self.store.subscribe("ResourceSlice", self._on_slice)
        for name in state.nodes:
            self.memo.node_added(name)
            self._remind(name, 0.0)
        self.engine.at(0.0, CONTROLLER, self._tick)

    # ---- what changes the cluster's consolidation state ----

    def node_ready(self, name: str, nominated: bool) -> None:
        """A node the provisioner launched is Ready (its initialization is its first pod event)."""
        now = self.engine.now()
        if nominated:
            self.nominated_until[name] = now + NOMINATION_SECONDS
            self.engine.at(now + NOMINATION_SECONDS, CONTROLLER, self._touch)

    def _on_node(self, change: Change) -> None:
        self._changed = True
        if change.type == "Added":
            self.memo.node_added(change.key)
            self.last_pod_event[change.key] = change.time
            self._remind(change.key, change.time)
        elif change.type == "Deleted":
            self.last_pod_event.pop(change.key, None)
            self.nominated_until.pop(change.key, None)

    def _on_slice(self, change: Change) -> None:
        if change.type == "Deleted":
            node = self.slice_nodes.pop(change.key, None)
            if node is None or node in self.store.state.nodes:
                self.memo.slices_changed(node)
            return  # the slices of a node that is gone: nothing is kept for it
        found = next((s for s in self.store.state.slices if s.metadata.name == change.key), None)
        node = (found.spec.node_name or None) if found is not None else None  # not found: assume any node
        if node is not None:
            self.slice_nodes[change.key] = node
        self.memo.slices_changed(node)

    def _on_pod(self, change: Change) -> None:
        now = change.time
        if change.type == "Deleted":
            self.running_since.pop(change.key, None)
            node = self.bound_to.pop(change.key, None)
            if node is not None:
                self._pod_event(node, now)
            return
        record = self.store.state.pods.get(change.key)
        if record is None or not record.pod.spec.node_name:
            return
        if change.key not in self.bound_to:
            self.bound_to[change.key] = record.pod.spec.node_name
            self._pod_event(record.pod.spec.node_name, now)
        if change.key not in self.running_since and pod_phase(record.raw) == "Running":
            self.running_since[change.key] = now

    def _pod_event(self, node: str, now: float) -> None:
        self._changed = True
        if node in self.store.state.nodes:
            self.last_pod_event[node] = now
            self._remind(node, now)

    def _remind(self, node: str, since: float) -> None:
        """When ``consolidateAfter`` runs out on the node, its NodeClaim turns Consolidatable: a change."""
        after = self._consolidate_after(node)
        if after is not None and after > 0:
            self.engine.at(since + after, CONTROLLER, lambda: self._expired(node, since))

    def _expired(self, node: str, since: float) -> None:
        if self.last_pod_event.get(node) == since:
            self._changed = True

    def _touch(self) -> None:
        self._changed = True

    def _consolidate_after(self, node: str) -> float | None:
        info = self.store.state.nodes.get(node)
        policy = self.policies.get(info.node.metadata.labels.get(NODEPOOL_LABEL, "")) if info is not None else None
        if policy is None or policy.consolidate_after is None:
            return None
        return policy.consolidate_after.total_seconds()

    # ---- the loop ----

    def _tick(self) -> None:
        now = self.engine.now()
        if not self._changed and now - self._settled_at < RECHECK_SECONDS:
            self.engine.at(now + POLL_SECONDS, CONTROLLER, self._tick)
            return
        self._changed = False
        action = self._first_command()
        if action is None:
            self._settled_at = now
            self.engine.at(now + POLL_SECONDS, CONTROLLER, self._tick)
            return
        self.store.note("Validating", "NodePool", action.nodes[0].nodepool, action.sentence)
        # after the cycles of that moment, as the controller's re-check reads the cluster then
        self.engine.at(now + VALIDATION_SECONDS, BOOKKEEPING, lambda: self._validate(action))

    def _validate(self, found: Action) -> None:
        now = self.engine.now()
        again = self._first_command(only=[n.name for n in found.nodes])
        if again is None or _signature(again) != _signature(found):
            self.invalidated += 1
            self._changed = True
            self.store.note("Invalidated", "NodePool", found.nodes[0].nodepool,
                            f"no longer valid after {VALIDATION_SECONDS:g} s: {found.sentence}")
            self.engine.at(now + POLL_SECONDS, CONTROLLER, self._tick)
            return
        self._carry_out(again)
        self.engine.at(now, CONTROLLER, self._tick)

    def _first_command(self, only: list[str] | None = None) -> Action | None:
        state = self.store.state
        now = self.engine.now()
        held = {n: _NOMINATED for n, until in self.nominated_until.items() if until > now}
        events = {n: moment(t) for n, t in self.last_pod_event.items() if n in state.nodes}
        plan = consolidate(state, self.pools, self.nodepools_raw, self.features, dict(state.classes), self.compiler,
                           moment(now), catalog=self.catalog, node_classes=self.node_classes, first_only=True,
                           last_pod_events=events, held=held, prune=True,
                           only=only, memo=self.memo)
        return plan.actions[0] if plan.actions else None

    # ---- carrying a command out ----

    def _carry_out(self, action: Action) -> None:
        state = self.store.state
        command = _InFlight(action, self.engine.now(), 0)
        self.in_flight.append(command)
        for node in action.nodes:
            state.taint_node(node.name, DISRUPTED_TAINT, "NoSchedule")
            self.store.note("Disrupting", "Node", node.name, action.sentence)
        replacements = [action.replacement, *action.more_replacements] if action.decision == REPLACE else []
        for replacement in replacements:
            if replacement is not None and self.launch(replacement.nodepool, replacement.instance_type,
                                                       lambda: self._replacement_ready(command)):
                command.waiting += 1
        if command.waiting == 0:
            self._drain(command)

    def _replacement_ready(self, command: _InFlight) -> None:
        command.waiting -= 1
        if command.waiting == 0:
            self._drain(command)

    def _drain(self, command: _InFlight) -> None:
        state = self.store.state
        now = self.engine.now()
        for node in command.action.nodes:
            info = state.nodes.get(node.name)
            if info is None:
                continue
            for pod in list(info.pods):
                self._evict(pod.key, node.name, command)
        command.drained = now
        # the node goes once the evictions are through (the resourceclaim controller has released their claims)
        self.engine.at(now, BOOKKEEPING, lambda: self._delete_nodes(command))

    def _evict(self, key: str, node: str, command: _InFlight) -> None:
        record = self.store.state.pods.get(key)
        if record is None:
            return
        record.raw = evicted(record.raw)
        self.work_lost_seconds += lost_progress(record.raw, self.running_since.get(key), self.engine.now())
        command.evicted += 1
        self.store.note("Evicted", "Pod", key, f"evicted from {node}: Karpenter disrupts the node "
                        f"({command.action.reason})")
        self.store.delete_pod(key)

    def _delete_nodes(self, command: _InFlight) -> None:
        state = self.store.state
        for node in command.action.nodes:
            info = state.nodes.get(node.name)
            if info is None:
                continue
            for pod in list(info.pods):  # bound since the drain (a pod that tolerates every taint)
                self._evict(pod.key, node.name, command)
            self.store.note("Consolidated", "Node", node.name,
                            f"{command.action.reason}: deleted ({command.action.method}, {command.action.decision})")
            state.remove_node(node.name)
            self.released(node.name)

    # ---- the outcome ----

    def outcome(self) -> Disruptions:
        by_reason = {EMPTY: 0, UNDERUTILIZED: 0, DRIFTED: 0}
        commands = []
        launched = 0
        for command in self.in_flight:
            action = command.action
            types = tuple(r.instance_type for r in [action.replacement, *action.more_replacements]
                          if r is not None and action.decision == REPLACE)
            launched += len(types)
            if command.drained is not None:
                by_reason[action.reason] = by_reason.get(action.reason, 0) + len(action.nodes)
            commands.append(DisruptionCommand(rounded(command.started), action.reason, action.method,
                                              action.decision, tuple(n.name for n in action.nodes), types,
                                              command.evicted,
                                              None if command.drained is None else rounded(command.drained)))
        return Disruptions(by_reason[EMPTY], by_reason[UNDERUTILIZED], by_reason[DRIFTED], launched,
                           sum(c.evicted for c in self.in_flight), rounded(self.work_lost_seconds), self.invalidated,
                           tuple(commands))


def evicted(raw: Raw) -> Raw:
    """The pod as its owner last sees it after an eviction: Failed, with the DisruptionTarget condition."""
    status = dict(raw.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"})
    return {**raw, "status": {**status, "phase": "Failed", "conditions": conditions}}


def lost_progress(raw: Raw, running_since: float | None, now: float) -> float:
    """Seconds of a pod's work thrown away when it is evicted at ``now``: its running time, which it must do
    again; nothing for a pod that never ran, nor for a ReplicaSet's pod (it serves until deleted)."""
    if running_since is None or _serving(raw):
        return 0.0
    return now - running_since


def _serving(raw: Raw) -> bool:
    """A ReplicaSet's pod runs until deleted: its eviction loses no progress, only its start-up."""
    return any(o.get("kind") == "ReplicaSet" for o in (raw.get("metadata") or {}).get("ownerReferences") or [])


def _signature(action: Action) -> tuple[str, str, tuple[str, ...]]:
    return (action.method, action.decision, tuple(n.name for n in action.nodes))


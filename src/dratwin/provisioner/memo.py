"""What consolidation passes over one cluster through time can reuse from each other.

A caller that runs :func:`dratwin.provisioner.consolidation.consolidate` again and again on the same cluster
(the simulation's disruption controller, a pass every 10 s) hands it one :class:`ConsolidationMemo`, which it
owns. Every entry is keyed by everything its answer reads, so a reused answer is the one a fresh computation
would give; only the time to find it changes:

- **fits**: whether a pod (by shape) passes the scheduler's filters on a node, kept with the node's
  generation and the DRA version it was judged at (a node's generation moves on whenever anything on it
  does); a node's ResourceSlices published or withdrawn drop its verdicts, a node seen again after it was
  deleted (or a slice of no one node) drops them all.
- **plans**: the provisioning solver's answer for the pods left over by a simulation, by their shapes (and
  labels) in the solver's order and what the solver reads of the NodePools' usage (the limited resources):
  the same pods of a workload ask it the same question pass after pass.
- **cheapest**: the lowest price of a new node a pod (by shape and labels) fits on alone, limits left out.
- **drift**: a node's drift, by its object (a node whose labels or annotations change is a new object; the
  NodePools and node classes do not change during a run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from dratwin.api.core import Node
from dratwin.provisioner.drift import Drift
from dratwin.provisioner.solver import Plan, PlannedClaim, PodToPlace, Pool, Unplaced
from dratwin.provisioner.solver import _shape as pod_shape
from dratwin.provisioner.solver import _size_order as size_order

PLANS_KEPT = 4096  # solver answers kept before they are all dropped (a run asks far fewer distinct questions)

FitKey = tuple[bytes, str]  # (pod shape, node)
FitEntry = tuple[int, int, bool]  # (node generation, DRA global version, fits)


@dataclass
class ConsolidationMemo:
    fits: dict[FitKey, FitEntry] = field(default_factory=dict)
    plans: dict[tuple[object, ...], tuple[list[PodToPlace], Plan]] = field(default_factory=dict)
    drift: dict[str, tuple[Node, Drift | None]] = field(default_factory=dict)
    cheapest: dict[bytes, float] = field(default_factory=dict)  # pod key -> lowest price of a new node for it
    nodes_seen: set[str] = field(default_factory=set)

    def node_added(self, name: str) -> None:
        """A node joined the cluster: one that was there before under this name starts its generations over."""
        if name in self.nodes_seen:
            self.fits.clear()
        self.nodes_seen.add(name)

    def slices_changed(self, node: str | None) -> None:
        """A ResourceSlice of ``node`` (None: of no one node) was published, changed or withdrawn: what a pod
        fits there (anywhere, for None) may change without a node's generation."""
        if node is None:
            self.fits.clear()
        else:
            self.fits = {key: entry for key, entry in self.fits.items() if key[1] != node}

    def drift_of(self, name: str, node: Node, compute: Callable[[], Drift | None]) -> Drift | None:
        known = self.drift.get(name)
        if known is not None and known[0] is node:
            return known[1]
        drift = compute()
        self.drift[name] = (node, drift)
        return drift

    def cheapest_new_node(self, pod: PodToPlace, compute: Callable[[], float]) -> float:
        """The lowest price of a node that could hold the pod alone (limits left out: the NodePools'
        instance types do not change during a run)."""
        key = _pod_key(pod)
        known = self.cheapest.get(key)
        if known is None:
            known = self.cheapest[key] = compute()
        return known

    def solve(self, pools: Sequence[Pool], pods: Sequence[PodToPlace],
              solve: Callable[[list[PodToPlace]], Plan]) -> Plan:
        """``solve(pods)``, or the answer it gave pods of the same shapes (in the solver's order) while the
        NodePools used what they use now, with these pods in the places of those."""
        ordered = sorted(pods, key=size_order)
        key = (_usage(pools), *(_pod_key(pod) for pod in ordered))
        known = self.plans.get(key)
        if known is None:
            if len(self.plans) >= PLANS_KEPT:
                self.plans.clear()
            plan = solve(ordered)
            self.plans[key] = (ordered, plan)
            return plan
        return _for_pods(*known, ordered)


def _usage(pools: Sequence[Pool]) -> tuple[object, ...]:
    """What the solver reads of the NodePools' usage: the resources they limit, and a static one's node count."""
    return tuple((p.name, tuple((k, p.used.get(k, 0)) for k in sorted(p.limits)),
                  p.existing_nodes if p.replicas is not None else None) for p in pools)


def _pod_key(pod: PodToPlace) -> bytes:
    pod.shape = pod.shape or pod_shape(pod)
    return pod.shape + msgspec.json.encode(pod.info.pod.metadata.labels)


def _for_pods(first: list[PodToPlace], plan: Plan, pods: list[PodToPlace]) -> Plan:
    """The plan made for ``first`` with ``pods`` (of the same shapes, in the same order) in their places (the
    solver's bookkeeping of devices per claim is left out: consolidation reads a claim's pool, options, pods)."""
    by_key = {old.info.key: new for old, new in zip(first, pods, strict=True)}
    claims = [PlannedClaim(c.name, c.pool, c.options, [by_key[p.info.key] for p in c.pods], c.requested,
                           zones=c.zones) for c in plan.claims]
    unplaced = [Unplaced(by_key[u.pod].info.key, u.reasons) for u in plan.unplaced]
    return Plan(claims, unplaced)

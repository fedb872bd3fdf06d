"""Topology-aware scheduling (TAS) on the simulated control plane: Kueue's TAS cache and its topology ungater.

The twin of Kueue's TAS cache (``pkg/cache/scheduler/tas_cache.go``: the Topologies, the flavors naming them,
each node's free capacity less the non-TAS pods bound there, and the admitted TAS Workloads' usage) and of
the topology ungater (``pkg/controller/tas/topology_ungater.go``) at ``ff69552``, over the pure core of
:mod:`dratwin.kueue.tas`:

- the TAS cache (:meth:`TasController.snapshot`) is built from the twin's nodes (their labels, allocatable
  and Ready condition) and bound pods, with the usage of every Workload that holds quota booked on the
  domains of its ``topologyAssignment``; it is kept from cycle to cycle (the cycle books what it admits, a
  Workload finished or evicted is unbooked, :meth:`TasController.unbook`) and built again only after a
  Node changed or a pod that is not a TAS pod did (as Kueue's nodes and non-TAS pods caches follow them);
- an admitted Job whose PodSet has a topology assignment is started with the ``kueue.x-k8s.io/topology``
  scheduling gate (:func:`dratwin.kueue.jobs.admitted_job`); the ungater then gives each new pod the next
  free slot of the assignment: the gate removed and a ``nodeSelector`` with its domain's label per level
  (the hostname alone when the topology ends with it). Upstream the gate is lifted by a later reconcile;
  here in the same simulated moment, so the pod reaches the scheduler already constrained to its domain.
  A pod with the Job's completion index takes the slot of that rank (Kueue's ``podIndexLabel`` order),
  any other the first free one; a deleted pod frees its slot for the replacement. The pods of a pod
  Workload (:mod:`.kueue_pods`: plain pods and pod groups the webhook gated for topology) are ungated the
  same way when the pod reconciler releases them, ranked by ``kueue.x-k8s.io/pod-group-pod-index``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.kueue import Configuration, ResourceFlavor, Topology, Workload
from dratwin.cluster.state import ClusterState
from dratwin.kueue.flavors import Assignment
from dratwin.kueue.tas.admission import TasContext, tas_context
from dratwin.kueue.tas.domains import NodeView, node_is_ready
from dratwin.kueue.tas.encoding import node_selectors, ungated
from dratwin.kueue.tas.request import JOB_COMPLETION_INDEX, is_tas_pod
from dratwin.sim.store import Change, Store

Raw = dict[str, Any]


@dataclass
class _Slots:
    """One Job's pod slots: a nodeSelector per pod of its assignment, and which live pod holds which."""

    selectors: list[dict[str, str]]
    held: dict[str, int] = field(default_factory=dict)  # pod key -> slot

    def take(self, pod_key: str, index: int | None) -> dict[str, str] | None:
        if pod_key in self.held:
            return self.selectors[self.held[pod_key]]
        taken = set(self.held.values())
        slot = index if index is not None and 0 <= index < len(self.selectors) and index not in taken else None
        if slot is None:
            slot = next((i for i in range(len(self.selectors)) if i not in taken), None)
        if slot is None:
            return None  # more pods than the assignment counts: left to the scheduler as they are
        self.held[pod_key] = slot
        return self.selectors[slot]


@dataclass
class TasController:
    """The one owner of the TAS slots of the admitted Jobs; the snapshot is rebuilt for each cycle."""

    flavors: Mapping[str, ResourceFlavor]
    topologies: Mapping[str, Topology]
    config: Configuration
    slots: dict[str, _Slots] = field(default_factory=dict)  # by Job key
    by_pod: dict[str, str] = field(default_factory=dict)  # pod key -> Job key
    _cache: TasContext | None = None
    _stale: bool = True  # a Node or a non-TAS pod changed since the cache was built

    def watch(self, store: Store) -> None:
        """Follow the changes that move the TAS cache's capacity (only when a flavor has a topology)."""
        if self.active:
            store.subscribe("Node", self._node_changed)
            store.subscribe("Pod", self._pod_changed)

    def _node_changed(self, _change: Change) -> None:
        self._stale = True

    def _pod_changed(self, change: Change) -> None:
        raw = change.pod.raw if change.pod is not None else None
        if raw is None or not is_tas_pod((raw.get("metadata") or {}).get("annotations") or {}):
            self._stale = True

    @property
    def active(self) -> bool:
        """Does any flavor name a topology? Without one the cycle takes no TAS snapshot (and costs nothing)."""
        return any(f.spec.topology_name for f in self.flavors.values())

    def snapshot(self, state: ClusterState,
                 admitted: Callable[[], Iterable[tuple[Workload, Assignment]]]) -> TasContext | None:
        """The TAS cache now: the nodes' free capacity (less the non-TAS pods bound there) and the usage of
        the Workloads holding quota (``admitted``: called only when the cache is built again)."""
        if not self.active:
            return None
        if not self._stale:
            return self._cache
        self._stale = False
        nodes = [NodeView(info.node, node_is_ready(state.node_raw.get(name) or {}))
                 for name, info in state.nodes.items()]
        context = tas_context(self.flavors.values(), self.topologies.values(), nodes,
                              [record.pod for record in state.pods.values()], self.config)
        self._cache = context
        if context is None:
            return None
        for workload, assignment in admitted():
            context.book(workload, assignment)
        return context

    def unbook(self, workload: Workload, assignment: Assignment) -> None:
        """A Workload no longer holds its quota (finished, evicted): its pods leave its domains."""
        if self._cache is None or self._stale:
            return  # the next build books only the Workloads still holding quota
        for flavor, counts in self._cache.usage(workload, assignment).items():
            booked: dict[str, dict[str, int]] = {}
            for leaf, per_pod, n in counts:
                into = booked.setdefault(leaf, {})
                for resource, amount in per_pod.items():
                    into[resource] = into.get(resource, 0) + amount * n
            self._cache.flavors[flavor].remove_usage(booked)

    # ---- the ungater -------------------------------------------------------------------------------

    def admitted(self, job_key: str, assignment: Assignment) -> bool:
        """A Job admitted (again): its slots from the PodSet's topology assignment; True when it has one."""
        self.released(job_key)
        placed = next((p.topology for p in assignment.pod_sets if p.topology is not None), None)
        if placed is None:
            return False
        self.slots[job_key] = _Slots(list(node_selectors(placed)))
        return True

    def released(self, job_key: str) -> None:
        """The Job's admission is gone (evicted, finished): its slots with it."""
        gone = self.slots.pop(job_key, None)
        for pod_key in gone.held if gone is not None else ():
            self.by_pod.pop(pod_key, None)

    def ungate(self, job_key: str, pods: Sequence[Raw], live: Callable[[str], bool],
               index_label: str = JOB_COMPLETION_INDEX) -> list[Raw]:
        """The Job's new pods as the ungater leaves them: each in its slot's domain, the gate removed. The slots
        of pods no longer ``live`` are free first (a pod's deletion may reach the Job controller, which creates
        the next pod, before it reaches this). ``job_key``: the Job's key, or a pod Workload's own key;
        ``index_label``: the label that gives a pod's rank (a pod group's ``pod-group-pod-index``)."""
        slots = self.slots.get(job_key)
        if slots is None:
            return list(pods)
        for gone in [k for k in slots.held if not live(k)]:
            self.pod_deleted(gone)
        out = []
        for pod in pods:
            meta = pod.get("metadata") or {}
            key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
            index = (meta.get("labels") or {}).get(index_label)
            selector = slots.take(key, int(index) if isinstance(index, str) and index.isdigit() else None)
            if selector is None:
                out.append(pod)
                continue
            self.by_pod[key] = job_key
            out.append(ungated(pod, selector))
        return out

    def pod_deleted(self, pod_key: str) -> None:
        job_key = self.by_pod.pop(pod_key, None)
        slots = self.slots.get(job_key) if job_key is not None else None
        if slots is not None:
            slots.held.pop(pod_key, None)

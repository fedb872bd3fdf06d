"""The one owner of the cluster's objects during a run, with the indexes the scheduler reads.

Objects are kept both as written (``raw``, so that output keeps every field) and typed. Every change
goes through a method here, which updates the indexes (pods per node, requested resources, devices
in use, DRA versions per node) and appends an event; the scheduler and controllers never keep their
own mutable copies.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from dratwin.allocator.features import Features
from dratwin.allocator.pools import SliceIndex
from dratwin.allocator.state import AllocatedState, DeviceID
from dratwin.api.core import Node, Pod, Taint
from dratwin.api.resource import (
    AllocationResult,
    DeviceClass,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dratwin.cel import CelDevice
from dratwin.cluster.claims import (
    CLAIM_FINALIZER,
    release_after_pod_deletion,
    reserve,
)
from dratwin.cluster.device_taint_rules import RuleTaint
from dratwin.scheduler.framework import NodeInfo, PodInfo
from dratwin.scheduler.resources import add_pod, make_pod_info, remove_pod

Raw = dict[str, Any]
KUEUE_WORKLOAD = "Workload.kueue.x-k8s.io"  # the events' kind (scheduling.k8s.io has a Workload too)
# How many of the latest claim changes ``claims_changed_since`` can name (a reader further behind checks all).
CLAIM_FEED_LENGTH = 4096
_ALLOCATION_FIELDS = frozenset({"allocation", "reservedFor"})  # the status fields a deallocation clears


@dataclass(slots=True)
class PodRecord:
    raw: Raw
    pod: Pod
    info: PodInfo


@dataclass(slots=True)
class ClaimRecord:
    raw: Raw
    claim: ResourceClaim

    @property
    def key(self) -> str:
        return f"{self.claim.metadata.namespace}/{self.claim.metadata.name}"


class Event(NamedTuple):
    """One change, in order: ``type`` is Added, Modified or Deleted, as in a watch. (A named tuple: a run
    records several per pod, and a frozen dataclass takes five times as long to make.)"""

    seq: int
    type: str
    kind: str
    key: str


@dataclass
class ClusterState:
    features: Features = field(default_factory=Features)
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    node_raw: dict[str, Raw] = field(default_factory=dict)
    pods: dict[str, PodRecord] = field(default_factory=dict)
    claims: dict[str, ClaimRecord] = field(default_factory=dict)
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    allocated: AllocatedState = field(default_factory=AllocatedState)
    events: list[Event] = field(default_factory=list)
    events_dropped: int = 0  # events handed on and dropped from ``events`` (a run over time keeps none)
    # A node's DRA version changes whenever a device it can use changes hands; pools not bound to one
    # node (network-attached devices) change the global version instead.
    dra_version: dict[str, int] = field(default_factory=dict)
    dra_global_version: int = 0
    device_views: dict[int, CelDevice] = field(default_factory=dict)
    # The DeviceTaintRules behind the taints of a device in ``slices`` (for explanations).
    taint_sources: dict[DeviceID, list[RuleTaint]] = field(default_factory=dict)
    # Every change of a node, in order (NodeInfo.changed): read by the scheduler to find out-of-date outcomes.
    node_journal: list[NodeInfo] = field(default_factory=list)
    # Kueue's Workloads (kueue.x-k8s.io), as Kueue stores them, by namespace/name: written by its controller only.
    workloads: dict[str, Raw] = field(default_factory=dict)
    # How many claim changes there have been (an Added, Modified or Deleted event each), with the keys of the
    # latest: a reader that derived something from claims learns which it must look at again.
    claim_changes: int = 0
    _claim_feed: deque[str] = field(default_factory=lambda: deque(maxlen=CLAIM_FEED_LENGTH))
    _index: SliceIndex | None = None
    _pool_nodes: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for info in self.nodes.values():  # a state built from another's (copied) nodes keeps its own journal
            info.journal = self.node_journal

    # ---- reading -----------------------------------------------------------------------------------

    @property
    def slice_index(self) -> SliceIndex:
        if self._index is None:
            self._index = SliceIndex(self.slices)
            self._pool_nodes = _pool_nodes(self.slices)
        return self._index

    def dra_key(self, node: str) -> tuple[int, int]:
        return (self.dra_version.get(node, 0), self.dra_global_version)

    def claims_of(self, keys: Iterable[str]) -> list[ClaimRecord]:
        return [self.claims[k] for k in keys if k in self.claims]

    def claims_changed_since(self, seen: int) -> list[str] | None:
        """The keys of the claims changed after the first ``seen`` of ``claim_changes`` (a key once per
        change), or None when the feed no longer reaches back that far."""
        missed, feed = self.claim_changes - seen, self._claim_feed
        if missed > len(feed):
            return None
        return [feed[-back] for back in range(1, missed + 1)]

    # ---- changes -----------------------------------------------------------------------------------

    def record(self, type_: str, kind: str, key: str) -> None:
        self.events.append(Event(self.events_dropped + len(self.events) + 1, type_, kind, key))
        if kind == "ResourceClaim":  # every change of a claim comes through here (and of its record's claim)
            self.claim_changes += 1
            self._claim_feed.append(key)

    def put_workload(self, key: str, raw: Raw) -> None:
        """A Kueue Workload created or its status changed (the object is replaced, never edited in place)."""
        self.record("Modified" if key in self.workloads else "Added", KUEUE_WORKLOAD, key)
        self.workloads[key] = raw

    def add_node(self, raw: Raw, node: Node, info: NodeInfo) -> None:
        self.nodes[node.metadata.name] = info
        info.journal = self.node_journal
        self.node_raw[node.metadata.name] = raw
        self.record("Added", "Node", node.metadata.name)

    def label_node(self, name: str, key: str, value: str) -> None:
        """A label set on a node (as the NVIDIA kubelet plugin labels the nodes of a ComputeDomain): its object and
        its typed view are replaced, and the node recorded in the journal so that cached outcomes see the label."""
        info = self.nodes[name]
        raw = self.node_raw[name]
        metadata = raw.get("metadata") or {}
        self.node_raw[name] = {**raw, "metadata": {**metadata, "labels": {**(metadata.get("labels") or {}),
                                                                            key: value}}}
        meta = msgspec.structs.replace(info.node.metadata, labels={**info.node.metadata.labels, key: value})
        info.node = msgspec.structs.replace(info.node, metadata=meta)
        info.changed()  # through the journal, as any node change: cached filter results and failed verdicts drop
        self.record("Modified", "Node", name)

    def taint_node(self, name: str, key: str, effect: str) -> None:
        """A taint put on a node (as Karpenter taints the nodes it is about to disrupt): its object and typed
        view replaced."""
        info = self.nodes[name]
        raw = self.node_raw[name]
        spec = raw.get("spec") or {}
        taints = [t for t in spec.get("taints") or [] if t.get("key") != key] + [{"key": key, "effect": effect}]
        self.node_raw[name] = {**raw, "spec": {**spec, "taints": taints}}
        kept = [t for t in info.node.spec.taints if t.key != key]
        node_spec = msgspec.structs.replace(info.node.spec, taints=[*kept, Taint(key=key, effect=effect)])
        info.node = msgspec.structs.replace(info.node, spec=node_spec)
        info.changed()  # through the journal: the scheduler's cached filter results for it are dropped
        self.record("Modified", "Node", name)

    def remove_node(self, name: str) -> None:
        """A node deleted (consolidated away): the ResourceSlices its drivers published go with it."""
        gone = [s for s in self.slices if s.spec.node_name == name]
        self.slices = [s for s in self.slices if s.spec.node_name != name]
        self._index = None
        self.device_views.clear()
        for resource_slice in gone:
            self.record("Deleted", "ResourceSlice", resource_slice.metadata.name)
        del self.nodes[name]
        self.node_raw.pop(name, None)
        self.record("Deleted", "Node", name)

    def add_slice(self, resource_slice: ResourceSlice) -> None:
        self.slices.append(resource_slice)
        self._index = None
        self.record("Added", "ResourceSlice", resource_slice.metadata.name)

    def use_tainted_slices(self, slices: list[ResourceSlice], sources: dict[DeviceID, list[RuleTaint]]) -> None:
        """Replace the slices by the view the scheduler gets (DeviceTaintRules applied): every reader of the
        state (scheduler, explanations, reports) then sees the same taints."""
        self.slices = slices
        self.taint_sources = sources
        self._index = None
        self.device_views.clear()

    def add_claim(self, raw: Raw) -> ClaimRecord:
        claim = _decode_claim(raw)
        record = ClaimRecord(raw, claim)
        self.claims[record.key] = record
        if claim.status.allocation is not None:
            self._hold(claim, claim.status.allocation)
        self.record("Added", "ResourceClaim", record.key)
        return record

    def update_claim(self, key: str, raw: Raw) -> ClaimRecord:
        """Replace a claim's object; devices are held or released when its allocation appears or goes."""
        record = self.claims[key]
        self._replace_claim(key, record, raw, _decode_claim(raw))
        return record

    def _replace_claim(self, key: str, record: ClaimRecord, raw: Raw, claim: ResourceClaim) -> None:
        """``raw`` and its typed ``claim`` take the record's place; devices are held or released when the
        allocation appears or goes."""
        before, after = record.claim.status.allocation, claim.status.allocation
        if before is not None and after is None:
            self._bump(self.allocated.release(key, before, self.features))
        elif before is None and after is not None:
            self._hold(claim, after)
        record.raw, record.claim = raw, claim
        self.record("Modified", "ResourceClaim", key)

    def allocate_claim(self, key: str, allocation: AllocationResult) -> None:
        """What the DRA plugin's Reserve/PreBind write: the allocation, and the finalizer that protects it."""
        record = self.claims[key]
        current = record.raw
        meta = dict(current.get("metadata") or {})  # copy on write: the old object stays as it was
        finalizers = list(meta.get("finalizers") or [])
        if CLAIM_FINALIZER not in finalizers:
            meta["finalizers"] = [*finalizers, CLAIM_FINALIZER]
        written = msgspec.to_builtins(allocation)
        raw = {**current, "metadata": meta, "status": {**(current.get("status") or {}), "allocation": written}}
        if record.claim.status.allocation is not None:
            self.update_claim(key, raw)
            return
        # Only the finalizers and the allocation change: the typed claim takes them (the allocation decoded from
        # what is written, as a whole decode would give it), the rest is not decoded again; once per pod.
        decoded = msgspec.convert(written, AllocationResult, strict=False)
        claim = msgspec.structs.replace(
            record.claim,
            metadata=msgspec.structs.replace(record.claim.metadata, finalizers=list(meta.get("finalizers") or [])),
            status=msgspec.structs.replace(record.claim.status, allocation=decoded),
        )
        self._hold(claim, decoded)
        record.raw, record.claim = raw, claim
        self.record("Modified", "ResourceClaim", key)

    def reserve_claim(self, key: str, pod_raw: Raw) -> None:
        """The pod joins the claim's ``status.reservedFor`` (the DRA plugin's PreBind)."""
        record = self.claims[key]
        raw = reserve(record.raw, pod_raw)
        # Only status.reservedFor changes (never the allocation): the typed claim takes the new list, and
        # the rest of it, decoded from the same fields, stays; once per scheduled pod and claim.
        entries = (raw.get("status") or {}).get("reservedFor") or []
        reserved = msgspec.convert(entries, list[ResourceClaimConsumerReference], strict=False)
        status = msgspec.structs.replace(record.claim.status, reserved_for=reserved)
        record.raw, record.claim = raw, msgspec.structs.replace(record.claim, status=status)
        self.record("Modified", "ResourceClaim", key)

    def deallocate_claim(self, key: str) -> None:
        """The claim without ``status.allocation`` and ``status.reservedFor``; its devices released."""
        record = self.claims[key]
        current = record.raw
        # Copy on write: only the status changes, the rest is shared with the old object (which stays as it
        # was: forks share it). The typed claim takes the change without a decode; once per claim deleted,
        # and for each claim of each pod a consolidation simulation evicts.
        raw = dict(current)
        if current.get("status"):
            raw["status"] = {k: v for k, v in current["status"].items() if k not in _ALLOCATION_FIELDS}
        status = msgspec.structs.replace(record.claim.status, allocation=None, reserved_for=[])
        self._replace_claim(key, record, raw, msgspec.structs.replace(record.claim, status=status))

    def delete_claim(self, key: str) -> None:
        self.deallocate_claim(key)
        del self.claims[key]
        self.record("Deleted", "ResourceClaim", key)

    def release_claims_of(self, pod: PodRecord) -> None:
        """The resourceclaim controller after a pod is gone: drop it from reservedFor, deallocate claims
        left without consumers, delete the claims generated for it."""
        for key in pod_claim_keys(pod.pod):
            record = self.claims.get(key)
            if record is None:
                continue
            release = release_after_pod_deletion(record.raw, pod.raw, self._consumers(record))
            if release.delete:
                self.delete_claim(key)
            else:
                self.update_claim(key, release.claim)

    def _consumers(self, record: ClaimRecord) -> list[Raw]:
        """The pods a claim's release looks at: those its reservedFor names and its owner (no other pod can
        change the outcome), found by name in the claim's namespace."""
        namespace = record.claim.metadata.namespace
        names = {entry.name for entry in record.claim.status.reserved_for}
        names.update(o.name for o in record.claim.metadata.owner_references if o.kind == "Pod")
        return [self.pods[f"{namespace}/{name}"].raw for name in sorted(names) if f"{namespace}/{name}" in self.pods]

    def bind_pod(self, key: str, node_name: str, raw: Raw, pod: Pod) -> None:
        """The pod is bound: its new object, and its requests booked on the node."""
        record = self.pods[key]
        record.raw, record.pod, record.info.pod = raw, pod, pod
        add_pod(self.nodes[node_name], record.info)
        self.record("Modified", "Pod", key)

    def update_pod(self, key: str, raw: Raw, pod: Pod) -> None:
        """An unbound pod changed (its scheduling gates removed, its nodeSelector set): its new object; the
        scheduler's view is derived again, in the same queue order."""
        record = self.pods[key]
        assert not record.pod.spec.node_name, f"pod {key} is bound: only a pending pod is updated"
        record.raw, record.pod, record.info = raw, pod, make_pod_info(pod, record.info.order)
        self.record("Modified", "Pod", key)

    def remove_pod(self, key: str) -> PodRecord:
        """Delete a pod: off its node, out of the store."""
        record = self.pods.pop(key)
        node = self.nodes.get(record.pod.spec.node_name) if record.pod.spec.node_name else None
        if node is not None:
            remove_pod(node, record.info)
        self.record("Deleted", "Pod", key)
        return record

    def _hold(self, claim: ResourceClaim, allocation: AllocationResult) -> None:
        owner = f"{claim.metadata.namespace}/{claim.metadata.name}"
        self._bump(self.allocated.hold(owner, allocation, self.features))

    def _bump(self, devices: list[DeviceID]) -> None:
        """Devices changed hands: the nodes that can use them (or all, for shared pools) change version.

        A node's ``generation`` is also bumped, so that anything cached per node (the scheduler's filter
        and score results) is invalidated by one comparison."""
        self.slice_index  # noqa: B018 - builds the pool -> node map on first use
        for node in {self._pool_nodes.get((d.driver, d.pool)) for d in devices}:
            if node is None:
                self.dra_global_version += 1
            else:
                self.dra_version[node] = self.dra_version.get(node, 0) + 1
                info = self.nodes.get(node)
                if info is not None:
                    info.changed()


def _decode_claim(raw: Raw) -> ResourceClaim:
    claim = msgspec.convert(raw, ResourceClaim, strict=False)
    if not claim.metadata.namespace:
        claim.metadata.namespace = "default"
    return claim


def _pool_nodes(slices: Iterable[ResourceSlice]) -> dict[tuple[str, str], str | None]:
    """The one node a pool's devices belong to, or None when the pool serves several nodes."""
    nodes: dict[tuple[str, str], str | None] = {}
    for resource_slice in slices:
        key = (resource_slice.spec.driver, resource_slice.spec.pool.name)
        node = resource_slice.spec.node_name or None
        if resource_slice.spec.shared_counters:
            continue
        if key in nodes and nodes[key] != node:
            nodes[key] = None
        else:
            nodes.setdefault(key, node)
    return nodes


def pod_claim_keys(pod: Pod, *, extended: bool = True) -> list[str]:
    """The claims a pod references: by name, through its status (templates), and (``extended``) the claim
    the scheduler made for its DRA-backed extended resources."""
    namespace = pod.metadata.namespace
    generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    keys = []
    for reference in pod.spec.resource_claims:
        name = reference.resource_claim_name or generated.get(reference.name)
        if name:
            keys.append(f"{namespace}/{name}")
    special = pod.status.extended_resource_claim_status
    if extended and special is not None and special.resource_claim_name:
        keys.append(f"{namespace}/{special.resource_claim_name}")
    return keys

"""The DynamicResources plugin: a pod's ResourceClaims, allocated jointly per node by the DRA allocator.

PreFilter gathers the pod's claims (a missing claim or DeviceClass keeps the pod Pending with that
reason); Filter runs the allocator for each candidate node (claims already allocated must be usable
on the node); Reserve hands back the allocation found for the chosen node, which the scheduler writes
into the claims. Upstream 1.36 cannot preempt pods to free devices: its "no" is unresolvable, so
preemption is not tried for it.

Allocating on a node depends only on the claims' specs and on the devices that node can use, so the
outcome is cached per (claim specs, node) and reused until a device visible to that node changes
hands (the cluster state's DRA version). This is what lets thousands of identical pods be placed
without re-running the allocator on hundreds of nodes each time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dratwin.allocator import AllocationOutcome, Allocator, NodeAllocationError, select_variant
from dratwin.allocator.nodes import selector_matches
from dratwin.api.core import Pod
from dratwin.api.quantity import Quantity
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import ClaimRecord, ClusterState
from dratwin.errors import AllocationError
from dratwin.scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    Status,
    error,
    unresolvable,
)
from dratwin.scheduler.resources import defaulted_requests

NAME = "DynamicResources"
STATE_KEY = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_ON_NODE = "resourceclaim not available on the node"
FIRST_AVAILABLE_MAX = 8


@dataclass
class PodClaims:
    """What PreFilter found for one pod."""

    allocated: list[ClaimRecord] = field(default_factory=list)
    pending: list[ClaimRecord] = field(default_factory=list)
    fingerprint: tuple[bytes, ...] = ()
    allocator: Allocator | None = None
    found: dict[str, AllocationOutcome] = field(default_factory=dict)
    extended: list[ExtendedRequest] = field(default_factory=list)  # extended resources a DeviceClass backs
    extended_claims: dict[str, ResourceClaim] = field(default_factory=dict)  # node -> the special claim used there


@dataclass(frozen=True, slots=True)
class _PreFiltered:
    """A pod's successful PreFilter, valid while the pod object and each claim it read (the record in the
    cluster and that record's claim object: both are replaced on any change) are the ones it saw."""

    pod: Pod
    claims: tuple[tuple[str, ClaimRecord, ResourceClaim], ...]
    classes: int  # how many DeviceClasses there were (a class appears or goes: found again)
    allocated: tuple[ClaimRecord, ...]
    pending: tuple[ClaimRecord, ...]
    fingerprint: tuple[bytes, ...]
    extended: tuple[ExtendedRequest, ...]


@dataclass(frozen=True)
class ExtendedRequest:
    """One container's request for an extended resource that a DeviceClass maps to devices."""

    name: str  # container-<i>-request-<j>
    container: str
    resource: str
    device_class: str
    count: int


class DynamicResources:
    name = NAME

    def __init__(self, cluster: ClusterState, compiler: SelectorCompiler | None = None) -> None:
        self.cluster = cluster
        self.compiler = compiler or SelectorCompiler(list_type_attributes=cluster.features.list_type_attributes)
        self._fingerprints: dict[str, bytes] = {}
        self._cache: dict[tuple[tuple[bytes, ...], str], tuple[tuple[int, int], AllocationOutcome]] = {}
        self.allocator_calls = 0
        self.extended_classes = extended_resource_classes(cluster) if cluster.features.extended_resource else {}
        # The copy of the allocator the features pick, chosen once: hashing the features for the lookup cost
        # as much as building the per-pod allocator.
        self.variant = select_variant(cluster.features)
        # Each pending pod's last successful PreFilter: a pod retried hundreds of times meets the same claims.
        self._pre_filtered: dict[str, _PreFiltered] = {}
        # Which remembered pods read each claim, and those whose claims changed since (the cluster's claim feed,
        # read up to ``_claims_seen``): only these are checked claim by claim (``pre_filters_unchanged``).
        self._readers: dict[str, set[str]] = {}
        self._suspect: set[str] = set()
        self._claims_seen = cluster.claim_changes

    # ---- PreFilter ---------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if self.pre_filters_unchanged((pod,)):
            known = self._pre_filtered[pod.key]
            if not known.pod.spec.resource_claims and not known.extended:
                return Status(Code.SKIP)
            state[STATE_KEY] = PodClaims(list(known.allocated), list(known.pending), known.fingerprint,
                                         extended=list(known.extended))
            return SUCCESS
        spec = pod.pod.spec
        extended = self._extended_requests(pod) if self.extended_classes else []
        if not spec.resource_claims and not extended:
            self._remember(pod, [], PodClaims(extended=extended))
            return Status(Code.SKIP)
        found = PodClaims(extended=extended)
        state[STATE_KEY] = found  # PostFilter always finds a state, as upstream writes it first
        meta = pod.pod.metadata
        read: list[ClaimRecord] = []
        for reference in spec.resource_claims:
            if not reference.resource_claim_name and not reference.resource_claim_template_name:
                return unresolvable(
                    f'pod "{pod.key}", spec.resourceClaim "{reference.name}": none of the supported fields are set'
                )
            name = self._claim_name(pod, reference.name, reference.resource_claim_name)
            if name is None:
                return unresolvable(f'pod "{pod.key}": ResourceClaim not created yet')
            record = self.cluster.claims.get(f"{meta.namespace}/{name}")
            if record is None:
                return unresolvable(f'could not find ResourceClaim "{meta.namespace}/{name}"')
            if reference.resource_claim_template_name and not _owned_by(record.claim, pod):
                return unresolvable(f"ResourceClaim {record.key} was not created for pod {pod.key} (pod is not owner)")
            read.append(record)
            if record.claim.status.allocation is not None:
                found.allocated.append(record)
                continue
            missing = self._missing_class(record.claim)
            if missing:
                return unresolvable(missing)
            found.pending.append(record)
        if found.pending or found.extended:
            found.fingerprint = tuple(self._fingerprint(r) for r in found.pending)
        self._remember(pod, read, found)
        return SUCCESS

    def pre_filters_unchanged(self, pods: Sequence[PodInfo]) -> int:
        """How many of the leading pods PreFilter would now find what it last found for (the same pod, the
        same claim objects): a retry loop's check, pod after pod. The claims of a pod are looked at only when
        one of them changed since they were (the cluster's claim feed says which): a waiting pod's claims
        rarely do, while the claims of running pods change all the time."""
        self._catch_up()
        pre_filtered, classes, suspect = self._pre_filtered, len(self.cluster.classes), self._suspect
        count = 0
        for pod in pods:
            known = pre_filtered.get(pod.key)
            if known is None or known.pod is not pod.pod or known.classes != classes:
                return count
            if pod.key in suspect:
                if not self._claims_unchanged(known):
                    return count
                suspect.discard(pod.key)  # as remembered: only a later change makes it suspect again
            count += 1
        return count

    def _claims_unchanged(self, known: _PreFiltered) -> bool:
        """Each claim PreFilter read is still the cluster's record, holding the same claim object."""
        claims = self.cluster.claims
        return all(claims.get(key) is record and record.claim is claim for key, record, claim in known.claims)

    def _catch_up(self) -> None:
        """The readers of each claim changed since the last look become suspect (all of them when the feed
        no longer reaches back so far)."""
        if self._claims_seen == self.cluster.claim_changes:
            return
        changed = self.cluster.claims_changed_since(self._claims_seen)
        self._claims_seen = self.cluster.claim_changes
        if changed is None:
            self._suspect.update(self._pre_filtered)
            return
        readers, suspect = self._readers, self._suspect
        for key in changed:
            suspect.update(readers.get(key, ()))

    def forget(self, pod_key: str) -> None:
        """The pod is bound: it is not pre-filtered again."""
        self._unread(self._pre_filtered.pop(pod_key, None), pod_key)

    def _remember(self, pod: PodInfo, read: list[ClaimRecord], found: PodClaims) -> None:
        self._catch_up()  # changes before these reads are no reason to look at them again
        claims = tuple((record.key, record, record.claim) for record in read)
        self._unread(self._pre_filtered.get(pod.key), pod.key)
        self._pre_filtered[pod.key] = _PreFiltered(pod.pod, claims, len(self.cluster.classes), tuple(found.allocated),
                                                   tuple(found.pending), found.fingerprint, tuple(found.extended))
        for key, _, _ in claims:
            self._readers.setdefault(key, set()).add(pod.key)

    def _unread(self, known: _PreFiltered | None, pod_key: str) -> None:
        """A pod's memo is replaced or dropped: it no longer reads its claims."""
        self._suspect.discard(pod_key)
        for key, _, _ in known.claims if known is not None else ():
            readers = self._readers.get(key)
            if readers is not None:
                readers.discard(pod_key)
                if not readers:
                    del self._readers[key]

    def _allocator(self, found: PodClaims) -> Allocator:
        """The pod's allocator, made when a node first needs it (a retry that meets only cached outcomes
        never does)."""
        if found.allocator is None:
            found.allocator = Allocator(
                self.cluster.features,
                self.cluster.classes,
                self.cluster.slice_index,
                self.cluster.allocated,
                self.compiler,
                self.cluster.device_views,
                variant=self.variant,
            )
        return found.allocator

    def _claim_name(self, pod: PodInfo, name: str, direct: str | None) -> str | None:
        if direct:
            return direct
        for status in pod.pod.status.resource_claim_statuses:
            if status.name == name:
                return status.resource_claim_name
        return None

    def _missing_class(self, claim: ResourceClaim) -> str:
        for request in claim.spec.devices.requests:
            names = [request.exactly.device_class_name] if request.exactly else []
            names += [s.device_class_name for s in request.first_available or []]
            for name in names:
                if name and name not in self.cluster.classes:
                    return f"request {request.name}: device class {name} does not exist"
        return ""

    def _fingerprint(self, record: ClaimRecord) -> bytes:
        found = self._fingerprints.get(record.key)
        if found is None:
            found = msgspec.json.encode(record.claim.spec)
            self._fingerprints[record.key] = found
        return found

    def shape(self, state: CycleState) -> tuple[Any, ...]:
        """What this plugin's Filter and Score read of the pod: its pending claims' specs and which
        allocated claims it uses (their allocations decide where it may go)."""
        found: PodClaims | None = state.get(STATE_KEY)
        if found is None:
            return ()
        return (found.fingerprint, tuple(r.key for r in found.allocated))

    # ---- Filter ------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        found: PodClaims | None = state.get(STATE_KEY)
        if found is None:
            return SUCCESS
        special = self._extended_claim(found, pod, node)
        if not found.pending and special is None:
            ok = all(_usable_on(r, node) for r in found.allocated)
            return SUCCESS if ok else unresolvable(NOT_ON_NODE)
        try:
            outcome = self._allocate(found, node, special)
        except NodeAllocationError as problem:
            return unresolvable(str(problem))
        except AllocationError as problem:
            return error(str(problem))
        if not outcome.allocated:
            return unresolvable(CANNOT_ALLOCATE, details=node.name)
        found.found[node.name] = outcome
        if special is not None:
            found.extended_claims[node.name] = special
        unavailable = [r for r in found.allocated if not _usable_on(r, node)]
        if unavailable:
            return unresolvable(NOT_ON_NODE)
        return SUCCESS

    def _extended_requests(self, pod: PodInfo) -> list[ExtendedRequest]:
        """Requests for extended resources that a DeviceClass backs (DRAExtendedResource).

        Containers are numbered init containers first, then regular ones; ``j`` is the resource's place
        among the container's request names. Regular containers and sidecars each get their requests;
        plain init containers run before them and one at a time, so they only add what their largest
        request exceeds the rest by."""
        spec = pod.pod.spec
        found: list[ExtendedRequest] = []
        running: dict[str, int] = {}
        init_peak: dict[str, tuple[int, ExtendedRequest]] = {}
        ordered = [(i, c, c.restart_policy != "Always") for i, c in enumerate(spec.init_containers)]
        ordered += [(len(spec.init_containers) + i, c, False) for i, c in enumerate(spec.containers)]
        for position, container, plain_init in ordered:
            requests = defaulted_requests(container)
            for j, resource in enumerate(sorted(requests)):
                device_class = self.extended_classes.get(resource)
                amount = int(Quantity.parse(requests[resource]).value)
                if device_class is None or amount <= 0:
                    continue
                request = ExtendedRequest(
                    f"container-{position}-request-{j}", container.name, resource, device_class, amount
                )
                if plain_init:
                    if amount > init_peak.get(resource, (0, request))[0]:
                        init_peak[resource] = (amount, request)
                else:
                    found.append(request)
                    running[resource] = running.get(resource, 0) + amount
        for resource, (amount, request) in init_peak.items():
            extra = amount - running.get(resource, 0)
            if extra > 0:
                found.append(ExtendedRequest(request.name, request.container, resource, request.device_class, extra))
        return sorted(found, key=lambda r: r.name)

    def _extended_claim(self, found: PodClaims, pod: PodInfo, node: NodeInfo) -> ResourceClaim | None:
        """The special claim for the extended resources this node does not serve with a device plugin."""
        wanted = [r for r in found.extended if node.allocatable.get(r.resource, 0) <= 0]
        if not wanted:
            return None
        requests = [
            {
                "name": r.name,
                "exactly": {"deviceClassName": r.device_class, "allocationMode": "ExactCount", "count": r.count},
            }
            for r in wanted
        ]
        raw = {
            "metadata": {
                # The API server names it from generateName; a suffix derived from the pod keeps runs repeatable.
                "name": f"{pod.pod.metadata.name}-extended-resources-{_suffix(pod.key)}",
                "namespace": pod.pod.metadata.namespace,
            },
            "spec": {"devices": {"requests": requests}},
        }
        return msgspec.convert(raw, ResourceClaim, strict=False)

    def _allocate(self, found: PodClaims, node: NodeInfo, special: ResourceClaim | None) -> AllocationOutcome:
        claims = [r.claim for r in found.pending] + ([special] if special is not None else [])
        fingerprint = found.fingerprint + ((msgspec.json.encode(special.spec),) if special is not None else ())
        key = (fingerprint, node.name)
        version = self.cluster.dra_key(node.name)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        self.allocator_calls += 1
        outcome = self._allocator(found).allocate(node.node, claims)
        if not _has_share_ids(outcome):  # a share ID is fresh per allocation: never reuse one
            self._cache[key] = (version, outcome)
        return outcome

    # ---- Score -------------------------------------------------------------------------------------

    weight = 1

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """1.36 prefers nodes where firstAvailable requests got an earlier subrequest: 8 - index each."""
        found: PodClaims | None = state.get(STATE_KEY)
        outcome = found.found.get(node.name) if found is not None else None
        if outcome is None or outcome.results is None:
            return 0
        total = 0
        pending = found.pending if found else []
        # The special extended-resource claim, if any, comes after the pod's own claims.
        for record, result in zip(pending, outcome.results[: len(pending)], strict=True):
            for request in record.claim.spec.devices.requests:
                if not request.first_available:
                    continue
                chosen = next(
                    (r.request for r in result.devices.results if r.request.startswith(request.name + "/")), ""
                )
                names = [f"{request.name}/{sub.name}" for sub in request.first_available]
                if chosen in names:
                    total += FIRST_AVAILABLE_MAX - names.index(chosen)
        return total

    def normalize(self, state: CycleState, pod: PodInfo, scores: dict[str, int]) -> None:
        highest = max(scores.values(), default=0)
        if highest > 0:
            for name, value in scores.items():
                scores[name] = value * MAX_NODE_SCORE // highest

    # ---- PostFilter --------------------------------------------------------------------------------

    def post_filter_message(self, state: CycleState) -> str:
        """1.36 deallocates claims that became unusable; with nothing to free it says so."""
        found: PodClaims | None = state.get(STATE_KEY)
        if found is None or not (found.allocated or found.pending):
            return "no new claims to deallocate"
        return "still not schedulable"

    # ---- Reserve -----------------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> dict[str, AllocationResult]:
        """The allocation to write into each pending claim for the chosen node."""
        found: PodClaims | None = state.get(STATE_KEY)
        if found is None or node_name not in found.found:
            return {}
        outcome = found.found[node_name]
        assert outcome.results is not None
        keys = [record.key for record in found.pending]
        special = found.extended_claims.get(node_name)
        if special is not None:
            keys.append(f"{special.metadata.namespace}/{special.metadata.name}")
        return dict(zip(keys, outcome.results, strict=True))

    def extended_claim(self, state: CycleState, node_name: str) -> ResourceClaim | None:
        """The special claim to create for the chosen node, if the pod needs one there."""
        found: PodClaims | None = state.get(STATE_KEY)
        return found.extended_claims.get(node_name) if found is not None else None

    def extended_requests(self, state: CycleState) -> list[ExtendedRequest]:
        found: PodClaims | None = state.get(STATE_KEY)
        return found.extended if found is not None else []

    def claims_to_reserve(self, state: CycleState, node_name: str) -> list[str]:
        """Every claim the pod uses on that node, the special extended-resource claim included."""
        found: PodClaims | None = state.get(STATE_KEY)
        if found is None:
            return []
        keys = [r.key for r in (*found.allocated, *found.pending)]
        special = found.extended_claims.get(node_name)
        if special is not None:
            keys.append(f"{special.metadata.namespace}/{special.metadata.name}")
        return keys


def extended_resource_classes(cluster: ClusterState) -> dict[str, str]:
    """Extended resource name -> DeviceClass: ``spec.extendedResourceName`` and the implicit
    ``deviceclass.resource.kubernetes.io/<class>``; on a clash the newer class wins, then the lower name."""
    ordered = sorted(
        cluster.classes.values(),
        key=lambda c: (c.metadata.creation_timestamp or "", _reverse(c.metadata.name)),
    )
    mapping: dict[str, str] = {}
    for device_class in ordered:
        name = device_class.metadata.name
        mapping[f"deviceclass.resource.kubernetes.io/{name}"] = name
        if device_class.spec.extended_resource_name:
            mapping[device_class.spec.extended_resource_name] = name
    return mapping


def _suffix(text: str) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def _reverse(name: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in name)


def _usable_on(record: ClaimRecord, node: NodeInfo) -> bool:
    allocation = record.claim.status.allocation
    selector = allocation.node_selector if allocation is not None else None
    return selector is None or selector_matches(node.node, selector)


def _owned_by(claim: ResourceClaim, pod: PodInfo) -> bool:
    uid = pod.pod.metadata.uid
    return any(
        ref.controller and ref.kind == "Pod" and (not uid or ref.uid == uid) and ref.name == pod.pod.metadata.name
        for ref in claim.metadata.owner_references
    )


def _has_share_ids(outcome: AllocationOutcome) -> bool:
    return any(r.share_id for result in outcome.results or () for r in result.devices.results)

"""Karpenter's provisioning simulation: which NodeClaims to launch for pods that fit no existing node.

Pure (no I/O). Pods are taken largest first (cpu, then memory, as Karpenter sorts them); each goes to
the first in-flight NodeClaim that can still take it, else to a new NodeClaim of the first NodePool
(highest weight first) with an instance type that fits it. A NodeClaim keeps every instance type that
still fits all its pods; at the end the cheapest offering of those is launched, as Karpenter does.
"Fits" is decided by the scheduler's own filters (resources, taints, node affinity) and, for DRA
claims, by the allocator on the devices the type would publish (see ``candidates``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from dratwin.allocator import AllocatedState, Allocator, Features
from dratwin.allocator.explain import Explanation, explain
from dratwin.api.resource import AllocationResult, DeviceClass, ResourceClaim
from dratwin.catalog import Offering
from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.errors import AllocationError
from dratwin.provisioner.candidates import ZONE_LABEL, Template
from dratwin.provisioner.requirements import Requirements
from dratwin.scheduler.framework import CycleState, NodeInfo, PodInfo, Resources
from dratwin.scheduler.plugins.node_affinity import NodeAffinity
from dratwin.scheduler.plugins.node_resources import fits_request
from dratwin.scheduler.plugins.taint_toleration import TaintToleration

ANY_POOL = "(any)"  # key of a reason that holds whatever the NodePool
NO_DRA_METADATA = "no DRA device metadata: Karpenter cannot launch it for DRA claims"
NO_NEURON_METADATA = (
    "no DRA device metadata: Karpenter's covers the NVIDIA GPU and EFA drivers, not this type's Neuron devices, so it "
    "cannot launch it for DRA claims"
)
AUTO_MODE_PLUGIN_ROLE = (
    "as an EKS Auto Mode device-plugin node it publishes no DRA devices (its DRA role is tried apart)"
)
STATIC_POOL = (
    "a static NodePool (spec.replicas): Karpenter keeps its node count and launches nothing for pending pods"
)


@dataclass
class Pool:
    """A NodePool as the solver needs it: its templates (one per instance type it allows), weight,
    limits and what its existing nodes already use."""

    name: str
    weight: int
    templates: list[Template]
    limits: Resources = field(default_factory=dict)
    used: Resources = field(default_factory=dict)
    min_values: dict[str, int] = field(default_factory=dict)
    replicas: int | None = None  # a static NodePool: Karpenter keeps this many nodes, whatever is pending
    existing_nodes: int = 0
    node_class: str = "default"  # spec.template.spec.nodeClassRef.name
    notes: list[str] = field(default_factory=list)  # what the plan should say about how it was read

    @property
    def static(self) -> bool:
        return self.replicas is not None


@dataclass
class PodToPlace:
    info: PodInfo
    claims: list[ResourceClaim]  # its claims that still need devices
    claim_keys: list[str]
    shape: bytes = b""

    @property
    def devices_needed(self) -> int:
        """A lower bound of the devices its claims take (ExactCount counts; the smallest subrequest)."""
        total = 0
        for claim in self.claims:
            for request in claim.spec.devices.requests:
                if request.exactly is not None:
                    total += request.exactly.count or 1 if request.exactly.allocation_mode != "All" else 1
                elif request.first_available:
                    total += min((s.count or 1) for s in request.first_available)
        return total


@dataclass
class PlannedClaim:
    """A NodeClaim being planned: its pods and the instance types that can still hold all of them."""

    name: str
    pool: Pool
    options: list[Template]
    pods: list[PodToPlace] = field(default_factory=list)
    requested: Resources = field(default_factory=dict)
    held: dict[str, AllocatedState] = field(default_factory=dict)  # per type: devices taken so far
    allocations: dict[str, dict[str, AllocationResult]] = field(default_factory=dict)  # type -> claim -> result
    refused_shapes: set[bytes] = field(default_factory=set)
    zones: frozenset[str] | None = None  # the zones its pods allow (None: any)

    def chosen(self) -> Template:
        return min(self.options, key=self._price)

    def offering(self) -> Offering | None:
        """The cheapest offering of the chosen type in a zone all its pods allow."""
        return self._cheapest(self.chosen())

    def _cheapest(self, template: Template) -> Offering | None:
        allowed = [o for o in template.offerings if self.zones is None or o.zone in self.zones]
        return min(allowed, key=lambda o: (o.price, o.zone, o.capacity_type), default=None)

    def _price(self, template: Template) -> tuple[float, str]:
        offering = self._cheapest(template)
        return (offering.price if offering is not None else float("inf"), template.instance_type.name)


@dataclass(frozen=True)
class TypeRejection:
    instance_type: str
    reason: str


@dataclass
class Unplaced:
    pod: str
    reasons: dict[str, list[TypeRejection]]  # NodePool -> why each of its types was turned down


@dataclass
class Plan:
    claims: list[PlannedClaim]
    unplaced: list[Unplaced]

    @property
    def cost_per_hour(self) -> float:
        total = 0.0
        for claim in self.claims:
            offering = claim.offering()
            total += offering.price if offering is not None else 0.0
        return total


class Solver:
    def __init__(
        self,
        pools: Sequence[Pool],
        features: Features,
        classes: dict[str, DeviceClass],
        compiler: SelectorCompiler | None = None,
    ) -> None:
        # The solver books launched capacity on its own copies of the pools' usage.
        self.pools = sorted(
            (dataclasses.replace(p, used=dict(p.used)) for p in pools), key=lambda p: (-p.weight, p.name)
        )
        self.features = features
        self.classes = classes
        self.compiler = compiler or SelectorCompiler(list_type_attributes=features.list_type_attributes)
        self.device_views: dict[int, CelDevice] = {}
        self.claims: list[PlannedClaim] = []
        self._static: dict[tuple[bytes, int], tuple[str, frozenset[str]]] = {}
        self._empty_fit: dict[tuple[bytes, int], tuple[str, list[AllocationResult]]] = {}
        self._affinity = NodeAffinity()
        self._taints = TaintToleration()
        for pool in self.pools:
            self._launch_static(pool)

    # ---- entry ---------------------------------------------------------------------------------------

    def solve(self, pods: Sequence[PodToPlace]) -> Plan:
        unplaced = []
        for pod in sorted(pods, key=_size_order):
            pod.shape = pod.shape or _shape(pod)
            # Karpenter re-sorts its in-flight NodeClaims by pod count before each pod and takes the first that
            # can hold it, so pods go to the emptiest NodeClaim first (Go's sort is unstable: ties keep creation
            # order here, the closest deterministic reading).
            if not any(self._try_add(claim, pod) for claim in sorted(self.claims, key=_pod_count)):
                rejections = self._new_claim(pod)
                if rejections is not None:
                    unplaced.append(Unplaced(pod.info.key, rejections))
        launched = []
        for claim in self.claims:
            problem = _min_values_problem(claim)
            if problem:
                chosen = claim.chosen().instance_type.name
                unplaced += [
                    Unplaced(p.info.key, {claim.pool.name: [TypeRejection(chosen, problem)]}) for p in claim.pods
                ]
            else:
                launched.append(claim)
        return Plan(launched, unplaced)

    def _launch_static(self, pool: Pool) -> None:
        """A static NodePool's missing replicas are launched whatever is pending, each as the cheapest type
        its requirements allow; pending pods may then land on them like on any in-flight NodeClaim."""
        if pool.replicas is None or not pool.templates:
            return
        cheapest = min(pool.templates, key=_template_price)
        for _ in range(max(0, pool.replicas - pool.existing_nodes)):
            self.claims.append(PlannedClaim(f"{pool.name}-{len(self.claims) + 1}", pool, [cheapest]))

    # ---- in-flight NodeClaims ------------------------------------------------------------------------

    def _try_add(self, claim: PlannedClaim, pod: PodToPlace) -> bool:
        if pod.shape in claim.refused_shapes:
            return False  # nothing on this NodeClaim changed since it refused a pod just like this one
        kept: list[tuple[Template, list[AllocationResult]]] = []
        for template in claim.options:
            reason, results = self._fit(claim, template, pod)
            if not reason:
                kept.append((template, results))
        if not kept:
            claim.refused_shapes.add(pod.shape)
            return False
        self._commit(claim, pod, kept)
        return True

    def _new_claim(self, pod: PodToPlace) -> dict[str, list[TypeRejection]] | None:
        rejections: dict[str, list[TypeRejection]] = {}
        for pool in self.pools:
            if pool.static:
                rejections[pool.name] = [TypeRejection("", STATIC_POOL)]
                continue
            claim = PlannedClaim(f"{pool.name}-{len(self.claims) + 1}", pool, [])
            kept: list[tuple[Template, list[AllocationResult]]] = []
            turned_down: list[TypeRejection] = []
            for template in pool.templates:
                reason = _limit_problem(pool, template) or ""
                results: list[AllocationResult] = []
                if not reason:
                    reason, results = self._fit(claim, template, pod)
                if reason:
                    turned_down.append(TypeRejection(template.instance_type.name, reason))
                else:
                    kept.append((template, results))
            if kept:
                claim.options = [t for t, _ in kept]
                self.claims.append(claim)
                self._commit(claim, pod, kept)
                _book(pool, claim.options)
                return None
            rejections[pool.name] = turned_down
        return rejections

    def _commit(
        self, claim: PlannedClaim, pod: PodToPlace, kept: list[tuple[Template, list[AllocationResult]]]
    ) -> None:
        allowed = frozenset().union(*(self._static[(pod.shape, id(t))][1] for t, _ in kept))
        claim.zones = allowed if claim.zones is None else claim.zones & allowed
        claim.options = [t for t, _ in kept]
        claim.pods.append(pod)
        claim.refused_shapes.clear()
        for name, amount in pod.info.requests.items():
            claim.requested[name] = claim.requested.get(name, 0) + amount
        for template, results in kept:
            type_name = template.instance_type.name
            state = claim.held.setdefault(type_name, AllocatedState())
            allocations = claim.allocations.setdefault(type_name, {})
            for key, result in zip(pod.claim_keys, results, strict=True):
                state.hold(key, result, self.features)
                allocations[key] = result

    # ---- does a pod fit one instance type of a NodeClaim? ---------------------------------------------

    def fits_alone(self, pool: Pool, template: Template, pod: PodToPlace) -> bool:
        """Whether the pod fits a new node of this type on its own (the checks a new NodeClaim makes)."""
        pod.shape = pod.shape or _shape(pod)
        return not self._fit(PlannedClaim("probe", pool, [template]), template, pod)[0]

    def _fit(self, claim: PlannedClaim, template: Template, pod: PodToPlace) -> tuple[str, list[AllocationResult]]:
        """ "" and the pod's allocations when it fits next to the claim's pods, else the reason.

        What does not depend on the claim's other pods (taints, node affinity, the devices of an empty
        node) is decided once per pod shape and instance type; the resource sums are compared inline."""
        key = (pod.shape, id(template))
        static = self._static.get(key)
        if static is None:
            static = self._static[key] = self._static_fit(template, pod)
        reason, zones = static
        if reason:
            return reason, []
        if claim.zones is not None and not zones & claim.zones:
            return "no zone that both this pod and the NodeClaim's other pods allow", []
        allocatable = template.allocatable
        requested = claim.requested
        for name, amount in pod.info.requests.items():
            if requested.get(name, 0) + amount > allocatable.get(name, 0):
                return self._resource_reason(claim, template, pod), []
        if len(claim.pods) + 1 > allocatable.get("pods", 0):
            return "Too many pods", []
        if not pod.claims:
            return "", []
        if not claim.pods:
            cached = self._empty_fit.get(key)
            if cached is None:
                cached = self._empty_fit[key] = self._devices(claim, template, pod)
            return cached
        return self._devices(claim, template, pod)

    def _static_fit(self, template: Template, pod: PodToPlace) -> tuple[str, frozenset[str]]:
        """Taints, and node affinity in each zone the type is offered in: the reason it fails everywhere,
        or the zones where it passes (a NodeClaim's zone is decided by its pods)."""
        node = template.node_info()
        state = CycleState()
        status = self._taints.filter(state, pod.info, node)
        if not status.ok:
            return "; ".join(status.reasons), frozenset()
        zones = sorted({o.zone for o in template.offerings})
        passing: set[str] = set()
        failure = ""
        for zone in zones:
            node.node.metadata.labels[ZONE_LABEL] = zone
            status = self._affinity.filter(state, pod.info, node)
            if status.ok:
                passing.add(zone)
            else:
                failure = "; ".join(status.reasons)
        cheapest = template.cheapest
        if cheapest is not None:
            node.node.metadata.labels[ZONE_LABEL] = cheapest.zone
        if not passing and failure:
            failure = _unknown_label(template, pod) or failure
        return ("" if passing else failure or "no zone is offered"), frozenset(passing)

    def _resource_reason(self, claim: PlannedClaim, template: Template, pod: PodToPlace) -> str:
        node = NodeInfo(template.node, template.allocatable, dict(claim.requested))
        node.pods = [p.info for p in claim.pods]
        short = fits_request(pod.info.requests, node)
        return ", ".join(s.reason for s in short) or "does not fit"

    def _devices(self, claim: PlannedClaim, template: Template, pod: PodToPlace) -> tuple[str, list[AllocationResult]]:
        if not template.has_dra_devices:
            plugin_role = template.role == "device-plugin" and template.instance_type.dra is not None
            if plugin_role:
                return AUTO_MODE_PLUGIN_ROLE, []
            return (NO_NEURON_METADATA if template.instance_type.neuron is not None else NO_DRA_METADATA), []
        state = claim.held.get(template.instance_type.name) or AllocatedState()
        if template.device_count - len(state.exclusive) < pod.devices_needed:
            return "DRA: not enough free devices left on this NodeClaim", []  # a cheap bound before the search
        allocator = Allocator(self.features, self.classes, template.index, state, self.compiler, self.device_views)
        try:
            outcome = allocator.allocate(template.node, pod.claims)
        except AllocationError as error:
            return f"DRA: {error}", []
        if outcome.results is None:
            if claim.pods:
                return "DRA: the devices left on this NodeClaim do not fit the pod", []  # only ever compared
            found = explain(allocator, template.node, pod.claims)
            if not any(r.short for r in found.requests) and any(c.spec.devices.constraints for c in pod.claims):
                return "DRA: enough devices, but none of their combinations satisfies the claim's constraints", []
            return f"DRA: {_short_verdict(found)}", []
        return "", outcome.results


def _unknown_label(template: Template, pod: PodToPlace) -> str | None:
    """Karpenter's words when the pod requires a label the provisioner does not know (every alternative term
    fails so): ``incompatible requirements, label "..." does not have known values (typo of "..."?)``."""
    node = Requirements.from_labels(template.node.metadata.labels)
    reasons = [node.compatible(term, template.well_known) for term in Requirements.from_pod(pod.info.pod)]
    if reasons and all(r is not None and r.startswith("label ") for r in reasons):
        return f"incompatible requirements, {reasons[0]}"
    return None


def _short_verdict(found: Explanation) -> str:
    """Why the devices of an instance type do not do, in words that read the same for every pod and type
    with the same problem (no claim names, no device counts), so that types group together."""
    short = [r for r in found.requests if r.short] or found.requests
    if not short:
        return str(found.verdict)
    request = short[0]
    text = f"request {request.request} (class {request.device_class}) needs {request.needed} device(s)"
    if request.error:
        return f"{text}: {request.error}"
    groups = request.groups()
    if not groups:
        return f"{text}, but the instance type has no such device"
    reason, detail, _count, _examples, values = groups[0]
    seen = f" ({', '.join(values)})" if values else ""
    if "selector" in reason.value:
        return f"{text}: {detail.split(': ', 1)[0]} is false for its devices{seen}"
    return f"{text}: {reason.value}{seen}"


def _min_values_problem(claim: PlannedClaim) -> str:
    """Karpenter launches a NodeClaim only if its options keep at least ``minValues`` values per key."""
    for key, wanted in claim.pool.min_values.items():
        values = {t.node.metadata.labels.get(key) for t in claim.options} - {None}
        if len(values) < wanted:
            return (
                f"minValues {wanted} for {key} not met: only {len(values)} value(s) among the instance types that fit"
            )
    return ""


def _book(pool: Pool, options: list[Template]) -> None:
    """Count a new NodeClaim against its NodePool's limits as Karpenter does while scheduling: with the
    largest capacity any of its instance types could bring (it does not know yet which one launches)."""
    for name in pool.limits:
        largest = max((t.capacity.get(name, 0) for t in options), default=0)
        pool.used[name] = pool.used.get(name, 0) + largest


def _limit_problem(pool: Pool, template: Template) -> str | None:
    for name, limit in pool.limits.items():
        if pool.used.get(name, 0) + template.capacity.get(name, 0) > limit:
            return f"NodePool {pool.name} limit {name} would be exceeded"
    return None


def _price_order(template: Template) -> tuple[float, str]:
    offering = template.cheapest
    return (offering.price if offering is not None else float("inf"), template.instance_type.name)


def _size_order(pod: PodToPlace) -> tuple[int, int, int]:
    requests = pod.info.requests
    return (-requests.get("cpu", 0), -requests.get("memory", 0), pod.info.order)


def _shape(pod: PodToPlace) -> bytes:
    return msgspec.json.encode([pod.info.pod.spec, [c.spec for c in pod.claims]])


def _template_price(template: Template) -> tuple[float, str]:
    offering = template.cheapest
    return (offering.price if offering is not None else float("inf"), template.instance_type.name)


def _pod_count(claim: PlannedClaim) -> int:
    return len(claim.pods)

"""Why a pod or a claim is pending: kube-scheduler's summary first, then the drill-down.

The drill-down goes node -> claim -> request -> selector -> device and groups nodes that failed for
the same reason, so that 500 nodes read in a screen. The pod is explained in the state it met when it
was tried: the scheduler is run again (deterministically) up to that pod.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.allocator.explain import Explanation, Reason, explain
from dratwin.api.compute_domain import DRIVER as COMPUTE_DOMAIN_DRIVER
from dratwin.api.efa_sharing import shared_efa_warnings
from dratwin.api.resource import DeviceClass, ResourceClaim
from dratwin.cluster.device_taint_rules import taint_text
from dratwin.cluster.roles import DEVICE_PLUGIN, FAMILIES, Family, plugin_resources
from dratwin.cluster.state import pod_claim_keys
from dratwin.kueue.pods import gated_by_kueue, group_key
from dratwin.scheduler.framework import Status
from dratwin.scheduler.gates import GATED_REASON, pre_enqueue_message, scheduling_gates
from dratwin.scheduler.plugins.dynamic_resources import CANNOT_ALLOCATE
from dratwin.scheduler.plugins.dynamic_resources import NAME as DRA
from dratwin.scheduler.scheduler import Attempt
from dratwin.twin.explain_compute_domain import channel_lines, placed_notes
from dratwin.twin.schedule import ScheduleReport

MAX_NAMES = 5
PRE_ENQUEUE_NOTE = (
    "kube-scheduler's PreEnqueue check holds the pod back until its claims exist: it is never tried, so it "
    "gets no FailedScheduling event and no PodScheduled condition"
)
GATES_NOTE = (
    "kube-scheduler's SchedulingGates PreEnqueue check keeps a pod with spec.schedulingGates out of its queue; "
    "whoever added a gate removes it (Kueue's kueue.x-k8s.io/admission once the pod's Workload is admitted), "
    "and the pod is tried then"
)
DRA_PREEMPTION_NOTE = (
    "Kubernetes 1.36 does not preempt pods to free DRA devices: DynamicResources rejects a node as "
    "unresolvable, so lower-priority pods holding the devices are not evicted for this pod"
)


@dataclass
class NodeGroup:
    """Nodes that said no for the same reason; ``lines`` drill into it."""

    plugin: str
    reason: str
    nodes: list[str]
    lines: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "reason": self.reason,
            "nodes": len(self.nodes),
            "nodeNames": self.nodes,
            "lines": self.lines,
            "details": self.details,
        }


@dataclass
class PodExplanation:
    pod: str
    status: str  # Scheduled | Pending | NotCreated | Unknown
    summary: str
    node: str | None = None
    devices: list[str] = field(default_factory=list)
    groups: list[NodeGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kind: str = "pod"  # or "claim": a ResourceClaim of its own, not one of a pod's claims

    def lines(self) -> list[str]:
        out = [f"{self.kind} {self.pod}: {self.status}", f"  {self.summary}"]
        out += [f"  device {d}" for d in self.devices]
        for group in self.groups:
            more = len(group.nodes) - MAX_NAMES
            names = ", ".join(group.nodes[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
            out.append(f"  {len(group.nodes)} node(s) [{group.plugin}] {group.reason}")
            out.append(f"    nodes: {names}")
            out += [f"    {line}" for line in group.lines]
        out += [f"  note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            self.kind: self.pod,
            "status": self.status,
            "summary": self.summary,
            "node": self.node,
            "devices": self.devices,
            "groups": [g.to_dict() for g in self.groups],
            "notes": self.notes,
        }


def explain_pod(report: ScheduleReport, pod: str) -> PodExplanation:
    """Why ``pod`` is where it is, followed by what the twin ignored or the cluster would refuse in the
    input (skipped kinds, constraints not modelled): they may be the reason."""
    explanation = _explain_pod(report, pod)
    record = report.state.pods.get(pod)
    if record is not None:  # a claim with EFAs it shares with other pods: it may start without them
        shared = shared_efa_warnings(r.claim for r in report.state.claims.values())
        explanation.notes += [shared[key] for key in pod_claim_keys(record.pod) if key in shared]
    explanation.notes += report.loaded.unmodelled
    return explanation


def _explain_pod(report: ScheduleReport, pod: str) -> PodExplanation:
    state = report.state
    blocked = [b.reason for b in report.loaded.blocked if b.pod == pod]
    attempt = report.attempt_of(pod)
    if attempt is None:
        record = state.pods.get(pod)
        if record is None and pod in report.loaded.waiting:
            before = report.loaded.waiting[pod]
            summary = (f"not created yet: its StatefulSet (podManagementPolicy OrderedReady) creates it once {before} "
                       "is Running and Ready")
            listed = re.compile(rf"[:,] {re.escape(pod.split('/', 1)[1])}(,| not created yet)")
            notes = [n for n in report.loaded.notes if listed.search(n)]
            return PodExplanation(pod, "NotCreated", summary, notes=notes)
        if record is None:
            raise KeyError(pod)
        node = record.pod.spec.node_name
        if node:
            return PodExplanation(pod, "Scheduled", f"already bound to node {node} in the input", node)
        gates = scheduling_gates(record.raw)
        if gates:
            summary = f"not tried by kube-scheduler: {pre_enqueue_message(gates)} ({GATED_REASON})"
            return PodExplanation(pod, "Pending", summary, notes=[*blocked, *_kueue_gate_notes(report, record.raw),
                                                                   GATES_NOTE])
        held = [b for b in report.loaded.blocked if b.pod == pod]
        if held:
            summary = f"not tried by kube-scheduler: {held[0].scheduler_status or held[0].reason}"
            notes = [b.reason for b in held] + [PRE_ENQUEUE_NOTE]
            return PodExplanation(pod, "Pending", summary, notes=notes)
        return PodExplanation(pod, "Unknown", "not scheduled in this run", notes=blocked)
    if attempt.scheduled:
        conflict = [r.warning() for r in report.loaded.roles if r.node == attempt.node and r.conflict]
        devices = report.devices_of(attempt)
        notes = conflict + placed_notes(report, pod)
        return PodExplanation(pod, "Scheduled", f"bound to node {attempt.node}", attempt.node, devices, notes=notes)
    explanation = PodExplanation(pod, "Pending", attempt.message, notes=blocked)
    if attempt.diagnosis is not None and attempt.diagnosis.pre_filter is not None:
        status = attempt.diagnosis.pre_filter
        group = NodeGroup(status.plugin, f"rejected before filtering: {'; '.join(status.reasons)}", sorted(state.nodes))
        group.lines = _pre_filter_hints(report, status)
        explanation.groups.append(group)
    elif attempt.diagnosis is not None:
        explanation.groups = _group_nodes(report, attempt)
        dra_nodes = [n for g in explanation.groups if g.plugin == DRA for n in g.nodes]
        lower = _lower_priority_holders(report, pod, dra_nodes)
        if lower:
            explanation.notes.append(f"{DRA_PREEMPTION_NOTE} (lower-priority pods holding devices there: {lower})")
    return explanation


def _kueue_gate_notes(report: ScheduleReport, raw: dict[str, Any]) -> list[str]:
    """For a pod Kueue gated: its Workload, and why Kueue has not made it yet."""
    if report.kueue is None or not gated_by_kueue(raw):
        return []
    workload = group_key(raw)
    why = [n for n in report.kueue.notes if n.startswith(f"Workload {workload}: ")]
    if why:
        return why
    return [f"Kueue gates the pod until its Workload {workload} is admitted (explain workload/{workload})"]


def _lower_priority_holders(report: ScheduleReport, pod: str, nodes: Sequence[str]) -> str:
    state = report.state
    record = state.pods.get(pod)
    if record is None or not nodes:
        return ""
    wanted = set(nodes)
    holders = sorted(
        p.info.key
        for p in state.pods.values()
        if p.pod.spec.node_name in wanted and p.info.priority < record.info.priority and p.pod.spec.resource_claims
    )
    return ", ".join(holders[:MAX_NAMES]) + (
        f" and {len(holders) - MAX_NAMES} more" if len(holders) > MAX_NAMES else ""
    )


def _pre_filter_hints(report: ScheduleReport, status: Status) -> list[str]:
    text = " ".join(status.reasons)
    match = re.search(r"device class (\S+) does not exist", text)
    if not match:
        return []
    classes = sorted(report.state.classes)
    close = difflib.get_close_matches(match.group(1), classes, n=1, cutoff=0.8)
    lines = [f"DeviceClasses in the cluster: {', '.join(classes) or 'none'}"]
    if close:
        lines.append(f"did you mean {close[0]}?")
    lines.append("the pod stays Pending until the class exists; `dratwin validate` reports this before you apply")
    return lines


def _group_nodes(report: ScheduleReport, attempt: Attempt) -> list[NodeGroup]:
    assert attempt.diagnosis is not None
    grouped: dict[tuple[str, str], list[str]] = {}
    statuses: dict[str, Status] = attempt.diagnosis.nodes
    for node, status in statuses.items():
        grouped.setdefault((status.plugin, "; ".join(status.reasons)), []).append(node)
    groups = []
    for (plugin, reason), nodes in sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0])):
        if plugin == DRA and reason == CANNOT_ALLOCATE:
            groups += _dra_groups(report, attempt.pod, nodes)
        else:
            group = NodeGroup(plugin, reason, nodes)
            group.lines = _detail_lines(statuses[nodes[0]], nodes[0])
            groups.append(group)
    return groups


def _detail_lines(status: Status, node: str) -> list[str]:
    details = status.details
    if isinstance(details, tuple):
        lines = []
        for item in details:
            requested, used, capacity = (getattr(item, a, None) for a in ("requested", "used", "capacity"))
            if requested is not None and used is not None and capacity is not None:
                unit = _amount(item.resource)
                lines.append(
                    f"{item.resource}: needs {unit(requested)}, {node} has {unit(max(capacity - used, 0))} "
                    f"of {unit(capacity)} free"
                )
        return lines
    if details is not None and hasattr(details, "key"):
        return [f"taint {details.key}={details.value}:{details.effect} is not tolerated"]
    return []


def _amount(resource: str) -> Callable[[int], str]:
    """How to print an amount of ``resource`` kept as an integer (millicores, bytes, units)."""
    if resource == "cpu":
        return lambda v: f"{v / 1000:g}"
    if resource in ("memory", "ephemeral-storage"):
        return lambda v: f"{v / 2**30:.1f}Gi"
    return str


def _dra_groups(report: ScheduleReport, pod: str, nodes: Sequence[str]) -> list[NodeGroup]:
    """Run the allocator's diagnosis on each node and group the nodes whose explanation reads the same."""
    state = report.state
    dra = report.dra
    claims = _pending_claims(report, pod)
    if dra is None or not claims:
        group = NodeGroup(DRA, CANNOT_ALLOCATE, list(nodes))
        group.lines = _device_plugin_lines(report, nodes, claims)
        return [group]
    from dratwin.allocator import Allocator

    allocator = Allocator(
        state.features, state.classes, state.slice_index, state.allocated, dra.compiler, state.device_views
    )
    by_shape: dict[tuple[Any, ...], tuple[list[str], list[Explanation]]] = {}
    for name in nodes:
        found = explain(allocator, state.nodes[name].node, claims)
        names, explanations = by_shape.setdefault(_signature(found), ([], []))
        names.append(name)
        explanations.append(found)
    groups = []
    for names, explanations in sorted(by_shape.values(), key=lambda item: -len(item[0])):
        found = explanations[0]  # the group's nodes read the same: show the first
        lines = [line[2:] if line.startswith("  ") else line for line in found.lines()[1:]]
        lines += _taint_rule_lines(report, explanations)
        lines += _device_plugin_lines(report, names, claims)
        lines += channel_lines(report, names, claims)
        group = NodeGroup(DRA, f"{CANNOT_ALLOCATE}: {_node_free_verdict(found)}", names, lines)
        group.details = [r.to_dict() for r in found.requests]
        groups.append(group)
    return groups


def _taint_rule_lines(report: ScheduleReport, explanations: Sequence[Explanation]) -> list[str]:
    """Which DeviceTaintRule put the taints that turned devices down, on any node of the group (the allocator
    only sees the taints)."""
    sources = report.state.taint_sources
    tainted: dict[str, list[str]] = {}
    rejections = [j for found in explanations for request in found.requests for j in request.rejections]
    for rejection in rejections:
        if rejection.reason is not Reason.TAINT:
            continue
        for source in sources.get(rejection.device, []):
            if taint_text(source.taint) in rejection.detail.split(", "):
                devices = tainted.setdefault(str(source), [])
                if str(rejection.device) not in devices:
                    devices.append(str(rejection.device))
    lines = []
    for rule_taint, devices in tainted.items():
        more = len(devices) - MAX_NAMES
        which = ", ".join(devices[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
        verb = "is" if len(devices) == 1 else "are"
        lines.append(f"device{'s' if len(devices) > 1 else ''} {which} {verb} tainted by {rule_taint}")
    return lines


def _device_plugin_lines(report: ScheduleReport, nodes: Sequence[str], claims: Sequence[ResourceClaim]) -> list[str]:
    """Nodes whose devices of a family the claims ask for are served by the device plugin only: no
    ResourceSlice publishes them, so no claim can ever get them there, whatever the selectors say."""
    plugin_only = {(r.node, r.family) for r in report.loaded.roles if r.manager == DEVICE_PLUGIN}
    asked = _families_asked(report.state.classes, claims)
    served: dict[tuple[str, str, int], list[str]] = {}
    for name in nodes:
        for family in asked:
            if (name, family.name) not in plugin_only:
                continue
            node = report.state.nodes[name].node
            for resource, count in plugin_resources(node.status.allocatable or node.status.capacity, family):
                served.setdefault((family.devices, resource, count), []).append(name)
    lines = []
    for (devices, resource, count), names in served.items():
        more = len(names) - MAX_NAMES
        which = ", ".join(names[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
        whose, each = ("its", "") if len(names) == 1 else ("their", " each")
        lines.append(
            f"node{'s' if len(names) > 1 else ''} {which}: {whose} {devices} are served by the device plugin "
            f"({resource}: {count} allocatable{each}), not by a DRA driver: no ResourceSlice publishes them; "
            f"request {resource} in the container, or run the DRA driver there"
        )
    return lines


def _families_asked(classes: dict[str, DeviceClass], claims: Sequence[ResourceClaim]) -> list[Family]:
    """The device families the claims' requests name (a family's driver in the class name or in a class or
    request selector); all families when no request names one, since a selector may pick any driver."""
    texts = []
    for claim in claims:
        for request in claim.spec.devices.requests:
            for view in [request.exactly, *(request.first_available or [])]:
                if view is None:
                    continue
                device_class = classes.get(view.device_class_name)
                selectors = [*(device_class.spec.selectors if device_class else []), *view.selectors]
                texts.append(" ".join([view.device_class_name, *(s.cel.expression for s in selectors if s.cel)]))
    text = " ".join(texts)
    named = [f for f in FAMILIES if any(driver in text for driver in f.drivers)]
    if COMPUTE_DOMAIN_DRIVER in text:
        return named  # ComputeDomain channels: no device plugin serves them
    return named or list(FAMILIES)


def _signature(found: Explanation) -> tuple[Any, ...]:
    """What makes two nodes' explanations the same: per request, the reasons and their counts (not
    which devices or which owners, which differ from node to node)."""
    return tuple(
        (
            r.claim,
            r.request,
            len(r.eligible),
            r.error,
            tuple((reason, detail, n) for reason, detail, n, _, _ in r.groups()),
        )
        for r in found.requests
    )


def _node_free_verdict(found: Explanation) -> str:
    return found.verdict


def _pending_claims(report: ScheduleReport, pod: str) -> list[ResourceClaim]:
    state = report.state
    record = state.pods.get(pod)
    if record is None:
        return []
    found = []
    namespace = record.pod.metadata.namespace
    names = {s.name: s.resource_claim_name for s in record.pod.status.resource_claim_statuses}
    for reference in record.pod.spec.resource_claims:
        name = reference.resource_claim_name or names.get(reference.name)
        claim = state.claims.get(f"{namespace}/{name}") if name else None
        if claim is not None and claim.claim.status.allocation is None:
            found.append(claim.claim)
    return found


def explain_claim(report: ScheduleReport, key: str) -> PodExplanation:
    """A claim: its allocation, or why it has none (through the pods that use it); then, as for a pod, what
    the twin ignored in the input."""
    explanation = _explain_claim(report, key)
    explanation.notes += report.loaded.unmodelled
    return explanation


def _explain_claim(report: ScheduleReport, key: str) -> PodExplanation:
    state = report.state
    record = state.claims.get(key)
    if record is None:
        raise KeyError(key)
    claim = record.claim
    allocation = claim.status.allocation
    users = [
        p.info.key
        for p in state.pods.values()
        if any(
            (r.resource_claim_name or _status_name(p.pod, r.name)) == claim.metadata.name
            and p.pod.metadata.namespace == claim.metadata.namespace
            for r in p.pod.spec.resource_claims
        )
    ]
    if allocation is not None:
        devices = [f"{r.request}: {r.driver}/{r.pool}/{r.device}" for r in allocation.devices.results]
        reserved = ", ".join(r.name for r in claim.status.reserved_for) or "nobody"
        summary = f"allocated; reserved for {reserved}"
        return PodExplanation(key, "Allocated", summary, devices=devices, kind="claim")
    if not users:
        return PodExplanation(
            key,
            "Pending",
            "no pod uses this claim: the scheduler allocates a claim when it schedules the first pod using it",
            kind="claim",
        )
    explanations = [_explain_pod(report, user) for user in users]
    first = explanations[0]
    return PodExplanation(
        key,
        "Pending",
        f"used by {', '.join(users)}; {first.summary}",
        groups=first.groups,
        notes=first.notes,
        kind="claim",
    )


def _status_name(pod: Any, name: str) -> str | None:
    return next((s.resource_claim_name for s in pod.status.resource_claim_statuses if s.name == name), None)

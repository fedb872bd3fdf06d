"""What ``explain`` adds for the claims of NVIDIA ComputeDomains: why a channel claim fits no node, and where a
placed pod's domain stands.

A channel claim (from a ComputeDomain's template) can only get the ``channel-0`` that the driver's ComputeDomain
kubelet plugin publishes on each node where it runs: the nodes of multi-node NVLink instances (P6e-GB200
UltraServers) on EKS. The allocator's diagnosis says that no device matched the class; this says why, in the
terms of the driver: the node publishes no ComputeDomain devices at all, or its one channel is held by another
pod's claim (one channel per node: a node serves one pod of one domain at a time, unless pods share a claim).
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.allocator.state import DeviceID
from dratwin.api import compute_domain as cd
from dratwin.api.resource import ResourceClaim
from dratwin.cluster.compute_domains import asks_for_channels, channel_domain, placements
from dratwin.twin.schedule import ScheduleReport

MAX_NAMES = 5


def _names(names: Sequence[str]) -> str:
    more = len(names) - MAX_NAMES
    return ", ".join(names[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")


def channel_lines(report: ScheduleReport, nodes: Sequence[str], claims: Sequence[ResourceClaim]) -> list[str]:
    """For nodes where a ComputeDomain claim did not fit: no ComputeDomain devices there, or a channel in use."""
    state = report.state
    if not asks_for_channels(state.classes, claims):
        return []
    publishing = {s.spec.node_name for s in state.slices if s.spec.driver == cd.DRIVER and s.spec.node_name}
    without = [n for n in nodes if n not in publishing]
    lines = []
    if without:
        types = sorted({state.nodes[n].node.metadata.labels.get("node.kubernetes.io/instance-type", "?")
                        for n in without})
        lines.append(
            f"node{'s' if len(without) > 1 else ''} {_names(without)} ({', '.join(types)}): no {cd.DRIVER} devices: "
            "IMEX channels are published by the NVIDIA DRA driver's ComputeDomain kubelet plugin on multi-node NVLink "
            "nodes (P6e-GB200 UltraServers, labelled nvidia.com/gpu.clique), where the EKS guide enables "
            "ComputeDomains; a ComputeDomain pod needs such a node")
    for node in nodes:
        if node not in publishing:
            continue
        holders = state.allocated.owners.get(DeviceID(cd.DRIVER, node, cd.CHANNEL_DEVICE), [])
        if holders:
            lines.append(f"node {node}: its one IMEX channel ({cd.CHANNEL_DEVICE}) is held by "
                         f"{_holder(report, holders)}: a node serves one pod of one ComputeDomain at a time (pods of "
                         "a domain that share one ResourceClaim can share a node)")
    return lines


def _holder(report: ScheduleReport, claims: Sequence[str]) -> str:
    state = report.state
    domains = report.loaded.compute_domains.by_uid()
    found = []
    for key in claims:
        record = state.claims.get(key)
        uid = channel_domain(record.raw) if record is not None else None
        domain = domains.get(uid) if uid else None
        users = [r.name for r in record.claim.status.reserved_for] if record is not None else []
        text = f"claim {key}"
        if domain is not None:
            text += f" of ComputeDomain {domain.key}"
        if users:
            text += f" (pod {', '.join(users)})"
        found.append(text)
    return "; ".join(found)


def placed_notes(report: ScheduleReport, pod: str) -> list[str]:
    """For a placed pod that holds a ComputeDomain channel: its node's clique and the domain's other nodes."""
    state = report.state
    record = state.pods.get(pod)
    if record is None or not record.pod.spec.node_name or not report.loaded.compute_domains.domains:
        return []
    placed = placements(state, report.loaded.compute_domains)
    notes = []
    for placement in placed:
        if pod not in placement.pods:
            continue
        domain = placement.domain
        peers = sorted(p.node for p in placed if p.domain.uid == domain.uid and p.node != placement.node)
        clique = state.nodes[placement.node].node.metadata.labels.get(cd.CLIQUE_LABEL)
        where = f"NVLink clique {clique}" if clique else f"no NVLink clique (no {cd.CLIQUE_LABEL})"
        notes.append(f"ComputeDomain {domain.key}: this pod holds the IMEX channel of node {placement.node} ({where})"
                     + (f"; the domain's other nodes: {_names(peers)}" if peers else ""))
    return notes

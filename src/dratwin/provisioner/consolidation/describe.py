"""A command put into words and numbers for the plan (its nodes, prices, replacement, destinations and
savings), the nodes Karpenter marks Drifted, and notes on NodePool settings the twin reads loosely."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from dratwin.cluster.state import ClusterState
from dratwin.provisioner.budgets import (
    BALANCED,
    NodePoolPolicy,
)
from dratwin.provisioner.candidates import CAPACITY_TYPE, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL
from dratwin.provisioner.consolidation.model import (
    DRIFT,
    DRIFTED,
    EMPTINESS,
    Action,
    Command,
    Context,
    DriftedNode,
    NodeCost,
    Replacement,
)
from dratwin.provisioner.consolidation.pods import money
from dratwin.provisioner.consolidation.pricing import launch_price, node_price
from dratwin.provisioner.drift import Drift, drift_of
from dratwin.provisioner.memo import ConsolidationMemo


def describe(command: Command, drift: Mapping[str, Drift]) -> Action:
    nodes = [
        NodeCost(c.name, c.policy.name, c.instance_type, c.zone, c.capacity_type, c.listed_price)
        for c in command.candidates
    ]
    if command.method == DRIFT:
        return _describe_drift(command, nodes, drift[command.candidates[0].name])
    source = sum(n.price for n in nodes)
    listed = ", ".join(f"{n.name} ({n.instance_type}, {money(n.price)}/h)" for n in nodes)
    simulation = command.simulation
    destinations: dict[str, str] = {}
    replacement = None
    savings = source
    if command.replacement is not None:
        chosen = command.options[0]
        price = launch_price(chosen)
        replacement = Replacement(
            command.replacement.pool.name,
            chosen.instance_type.name,
            price,
            tuple(t.instance_type.name for t in command.options),
        )
        savings = source - price
    if simulation is not None:
        destinations = {key: p.node for key, p in simulation.placed.items()}
        for key in simulation.on_new:
            destinations[key] = f"new {replacement.instance_type}" if replacement is not None else "new node"
    moved = len(destinations)
    if command.method == EMPTINESS:
        sentence = f"delete {listed}: empty (no pods but DaemonSet pods); saves {money(savings)}/h"
    else:
        whose = "its" if len(nodes) == 1 else "their"
        pods = f"{whose} {moved} pod{'s' if moved != 1 else ''} fit{'s' if moved == 1 else ''}"
        existing = sorted({d for d in destinations.values() if not d.startswith("new ")})
        if replacement is None:
            sentence = f"delete {listed}: {pods} on {', '.join(existing)}; saves {money(savings)}/h"
        else:
            on_existing = sum(1 for d in destinations.values() if not d.startswith("new "))
            split = (
                f" ({moved - on_existing} on the new node, {on_existing} on {', '.join(existing)})"
                if on_existing
                else ""
            )
            sentence = (
                f"replace {listed} with {replacement.instance_type} ({money(replacement.price)}/h): "
                f"{pods}{split}; saves {money(savings)}/h"
            )
    return Action(command.method, command.reason, command.decision, nodes, replacement, destinations, savings, sentence)


def _describe_drift(command: Command, nodes: list[NodeCost], drift: Drift) -> Action:
    (node,) = nodes
    replacements = sorted(
        (
            Replacement(c.pool.name, c.chosen().instance_type.name, o.price if (o := c.offering()) else 0.0,
                        tuple(sorted(t.instance_type.name for t in c.options)))
            for c in command.drift_claims
        ),
        key=lambda r: (r.price, r.instance_type),
    )
    savings = node.price - sum(r.price for r in replacements)
    simulation = command.simulation
    assert simulation is not None
    destinations = {key: p.node for key, p in simulation.placed.items()}
    for key, index in simulation.on_new.items():
        destinations[key] = f"new {command.drift_claims[index].chosen().instance_type.name}"
    listed = f"drifted {node.name} ({node.instance_type}, {money(node.price)}/h)"
    moved = len(destinations)
    pods = f"its {moved} pod{'s' if moved != 1 else ''} go{'es' if moved == 1 else ''} to " + (
        ", ".join(sorted(set(destinations.values()))) if destinations else "nowhere (none to move)"
    )
    change = f"saves {money(savings)}/h" if savings >= 0 else f"costs {money(-savings)}/h more"
    if replacements:
        new = ", ".join(f"{r.instance_type} ({money(r.price)}/h)" for r in replacements)
        sentence = f"replace {listed} with {new}: {drift}; {pods}; {change}"
    else:
        sentence = f"delete {listed}: {drift}; {pods}; {change}"
    return Action(DRIFT, DRIFTED, command.decision, nodes, replacements[0] if replacements else None, destinations,
                  savings, sentence, replacements[1:])


def drifts(
    cluster: ClusterState,
    nodepools_raw: Sequence[Mapping[str, Any]],
    node_classes: Mapping[str, Mapping[str, Any]],
    memo: ConsolidationMemo | None,
) -> dict[str, Drift]:
    by_name = {str((raw.get("metadata") or {}).get("name", "")): raw for raw in nodepools_raw}
    found = {}
    for name, info in cluster.nodes.items():
        nodepool = by_name.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
        if nodepool is None:
            continue
        node = info.node
        drift = (drift_of(node, nodepool, node_classes) if memo is None else
                 memo.drift_of(name, node, functools.partial(drift_of, node, nodepool, node_classes)))
        if drift is not None:
            found[name] = drift
    return found


def drifted_node(ctx: Context, cluster: ClusterState, name: str, drift: Drift) -> DriftedNode:
    labels = cluster.nodes[name].node.metadata.labels
    type_name = labels.get(INSTANCE_TYPE_LABEL, "")
    instance = ctx.catalog.get(type_name) if type_name in ctx.catalog else None
    price, _ = node_price(instance, labels.get(ZONE_LABEL, ""), labels.get(CAPACITY_TYPE, ""))
    return DriftedNode(name, labels.get(NODEPOOL_LABEL, ""), type_name, price, drift)


def policy_notes(policies: Mapping[str, NodePoolPolicy], now: datetime | None) -> list[str]:
    notes = []
    balanced = sorted(p.name for p in policies.values() if p.policy == BALANCED)
    if balanced:
        notes.append(
            f"NodePool {', '.join(balanced)}: consolidationPolicy Balanced is planned as WhenEmptyOrUnderutilized; "
            "Karpenter may still reject some of these moves by their savings-to-disruption score"
        )
    if now is None and any(b.schedule for p in policies.values() for b in p.budgets):
        notes.append("no time given: budgets with a schedule are taken as active")
    return notes

"""The disruption methods, in Karpenter's order: emptiness, drift, multi-node and single-node consolidation
(with spot-to-spot and the same-type filter), each under the NodePools' disruption budgets."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from dratwin.provisioner.budgets import WHEN_EMPTY
from dratwin.provisioner.candidates import CAPACITY_TYPE, ZONE_LABEL, Template
from dratwin.provisioner.consolidation.model import (
    DRIFT,
    DRIFTED,
    EMPTINESS,
    EMPTY,
    MAX_MULTI_NODE_CANDIDATES,
    MULTI_NODE,
    SINGLE_NODE,
    SPOT_TO_SPOT_MIN_TYPES,
    UNDERUTILIZED,
    Allowance,
    Candidate,
    Command,
    Context,
    World,
)
from dratwin.provisioner.consolidation.pods import consolidate_after_pending, money
from dratwin.provisioner.consolidation.pricing import (
    launch_price,
    min_values_prefix,
    min_values_problem,
    offers,
    price_order,
    worst_launch_price,
)
from dratwin.provisioner.consolidation.simulation import simulate
from dratwin.provisioner.solver import PlannedClaim


def _emptiness_ok(ctx: Context, world: World, candidate: Candidate, blocked: dict[str, str]) -> bool:
    """``Emptiness.ShouldDisrupt`` (every policy, including WhenEmpty)."""
    policy = candidate.policy
    if policy.static:
        blocked[candidate.name] = f"NodePool {policy.name} is static (spec.replicas): only drift replaces its nodes"
        return False
    if policy.consolidate_after is None:
        blocked[candidate.name] = f"NodePool {policy.name} has consolidation disabled (consolidateAfter: Never)"
        return False
    if not candidate.empty:
        return False
    waiting = consolidate_after_pending(ctx, world, candidate.name, policy)
    if waiting:
        blocked[candidate.name] = waiting
        return False
    return True


def consolidation_ok(ctx: Context, world: World, candidate: Candidate, blocked: dict[str, str]) -> bool:
    """``consolidation.ShouldDisrupt`` (multi- and single-node)."""
    policy, labels = candidate.policy, candidate.info.node.metadata.labels
    if candidate.empty:
        return False  # Emptiness handles it (and has said why not, if it did not)
    problem = ""
    if policy.static:
        problem = f"NodePool {policy.name} is static (spec.replicas): only drift replaces its nodes"
    elif candidate.instance is None:
        problem = (f'instance type "{candidate.instance_type}" not found in the catalog (give it with --catalog, see '
                   "dratwin/data/CATALOG.md)")
    elif CAPACITY_TYPE not in labels:
        problem = f'node does not have label "{CAPACITY_TYPE}"'
    elif ZONE_LABEL not in labels:
        problem = f'node does not have label "{ZONE_LABEL}"'
    elif policy.consolidate_after is None:
        problem = f"NodePool {policy.name} has consolidation disabled (consolidateAfter: Never)"
    elif policy.policy == WHEN_EMPTY:
        problem = f"NodePool {policy.name} has consolidation policy WhenEmpty, but node is not empty"
    else:
        problem = consolidate_after_pending(ctx, world, candidate.name, policy)
    if problem:
        blocked[candidate.name] = problem
    return not problem


def _sorted(candidates: Iterable[Candidate]) -> list[Candidate]:
    """``sortCandidates`` (v1.14): highest savings ratio first (price per unit of disruption); ties by
    disruption cost (the order before v1.14), then name."""
    return sorted(candidates, key=lambda c: (-c.savings_ratio, c.disruption_cost, c.name))


def budget_mapping(ctx: Context, world: World, reason: str) -> dict[str, Allowance]:
    """``BuildDisruptionBudgetMapping``: per NodePool, the disruptions the budgets allow for ``reason`` minus
    the nodes already disrupting (NotReady, being deleted, or in an earlier command of this plan)."""
    counts: Counter[str] = Counter()
    disrupting: Counter[str] = Counter()
    for name, node in world.budget_nodes.items():
        if not node.counted:
            continue
        counts[node.nodepool] += 1
        if node.disrupting or name in world.planned:
            disrupting[node.nodepool] += 1
    mapping = {}
    for name, policy in ctx.policies.items():
        allowed, limiting = policy.allowed(reason, counts[name], ctx.now)
        left = max(allowed - disrupting[name], 0)
        text = (
            f"the disruption budgets of NodePool {name} allow no more {reason} disruptions now "
            f"({limiting or 'no budget'}: {allowed} of {counts[name]} nodes, {disrupting[name]} already disrupting)"
        )
        mapping[name] = Allowance(left, text)
    return mapping


def emptiness(ctx: Context, world: World, candidates: list[Candidate], blocked: dict[str, str]) -> Command | None:
    """``Emptiness.ComputeCommands``: every empty candidate the budgets allow, in one command."""
    empty = [c for c in candidates if _emptiness_ok(ctx, world, c, blocked)]
    if not empty:
        return None
    budgets = budget_mapping(ctx, world, EMPTY)
    taken = []
    for candidate in _sorted(empty):
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = f"empty, but {allowance.explanation}"
            continue
        taken.append(candidate)
        allowance.left -= 1
    return Command(EMPTINESS, EMPTY, taken) if taken else None


def drift_command(ctx: Context, world: World, candidates: list[Candidate], blocked: dict[str, str]) -> Command | None:
    """``Drift.ComputeCommands``: the first drifted candidate (empty ones first; upstream orders the rest by when
    they drifted, unknown here: by name) that the Drifted budgets allow and whose pods all fit on other nodes or
    new NodeClaims. Those are launched whatever they cost: drift is not a price decision."""
    drifted = [c for c in candidates if c.name in ctx.drift]
    if not drifted:
        return None
    budgets = budget_mapping(ctx, world, DRIFTED)
    for candidate in sorted(drifted, key=lambda c: (not c.empty, c.name)):
        reason = ctx.drift[candidate.name].reason
        if candidate.policy.static:
            blocked[candidate.name] = (f"drifted ({reason}); NodePool {candidate.policy.name} is static: Karpenter "
                                       "replaces it one for one (StaticDrift), which the plan does not simulate")
            continue
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = f"drifted ({reason}), but {allowance.explanation}"
            continue
        simulation = simulate(ctx, world, [candidate])
        if simulation.errors:
            blocked[candidate.name] = f"drifted ({reason}), but {next(iter(simulation.errors.values()))}"
            continue
        return Command(DRIFT, DRIFTED, [candidate], simulation, drift_claims=simulation.new_claims)
    return None


def multi_node(
    ctx: Context, world: World, candidates: list[Candidate], budgets: Mapping[str, Allowance]
) -> Command | None:
    """``MultiNodeConsolidation.firstNConsolidationOption``: binary search for the longest prefix (two or
    more candidates) of the ordered, budget-cut candidates that consolidates into at most one new node."""
    left = {name: a.left for name, a in budgets.items()}
    disruptable = []
    for candidate in _sorted(candidates):
        if left[candidate.policy.name] == 0:
            continue
        disruptable.append(candidate)
        left[candidate.policy.name] -= 1
    if len(disruptable) < 2:
        return None
    low, high = 1, min(len(disruptable), MAX_MULTI_NODE_CANDIDATES)
    if len(disruptable) <= high:
        high = len(disruptable) - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        batch = disruptable[: middle + 1]
        command, _ = _compute(ctx, world, batch, MULTI_NODE)
        if command is not None and command.replacement is not None and not _filter_same_type(command):
            command = None
        if command is not None:
            best, low = command, middle + 1
        else:
            high = middle - 1
    return best


def single_node(
    ctx: Context,
    world: World,
    candidates: list[Candidate],
    budgets: Mapping[str, Allowance],
    blocked: dict[str, str],
) -> Command | None:
    """``SingleNodeConsolidation.ComputeCommands``: the first candidate (ordered, interleaved by NodePool)
    that can be deleted or replaced by a cheaper node."""
    for candidate in _interleaved(_sorted(candidates)):
        allowance = budgets[candidate.policy.name]
        if allowance.left == 0:
            blocked[candidate.name] = allowance.explanation
            continue
        command, why = _compute(ctx, world, [candidate], SINGLE_NODE)
        if command is not None:
            return command
        blocked[candidate.name] = why
    return None


def _interleaved(candidates: list[Candidate]) -> list[Candidate]:
    """``shuffleCandidates``: one candidate of each NodePool in turn (NodePools by name; Karpenter's order
    of NodePools is a Go map's)."""
    by_pool: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_pool.setdefault(candidate.policy.name, []).append(candidate)
    pools = sorted(by_pool)
    found = []
    for index in range(max((len(v) for v in by_pool.values()), default=0)):
        found += [by_pool[p][index] for p in pools if index < len(by_pool[p])]
    return found


def _compute(ctx: Context, world: World, candidates: list[Candidate], method: str) -> tuple[Command | None, str]:
    """``computeConsolidation``: a command for these candidates, or why there is none."""
    price = sum(c.price for c in candidates)
    simulation = simulate(ctx, world, candidates, price if ctx.prune else None)
    if simulation.errors:
        return None, next(iter(simulation.errors.values()))
    command = Command(method, UNDERUTILIZED, candidates, simulation)
    new = simulation.new_claims
    if not new:
        return command, ""
    if len(new) > 1:
        return None, f"its pods would need {len(new)} new nodes; Karpenter replaces with at most one"
    claim = new[0]
    options = sorted(claim.options, key=price_order)
    if all(c.capacity_type == "spot" for c in candidates) and any(offers(t, "spot") for t in options):
        return _spot_to_spot(ctx, command, claim, options, price)
    kept = [t for t in options if worst_launch_price(t) < price]
    problem = min_values_problem(claim.pool, kept)
    if problem:
        return None, f"filtering by price: {problem}"
    if not kept:
        cheapest = options[0]
        unpriced = [c for c in candidates if not c.priced]
        why = "".join(
            f"; {c.name}: no {c.capacity_type or '?'} price for {c.instance_type} in {c.zone or '?'}" for c in unpriced
        )
        return None, (
            f"can't replace with a cheaper node: the cheapest type its pods fit on is "
            f"{cheapest.instance_type.name} ({money(launch_price(cheapest))}/h), not below {money(price)}/h{why}"
        )
    command.replacement, command.options = claim, kept
    return command, ""


def _spot_to_spot(
    ctx: Context, command: Command, claim: PlannedClaim, options: list[Template], price: float
) -> tuple[Command | None, str]:
    """``computeSpotToSpotConsolidation``."""
    if not ctx.spot_to_spot:
        return None, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    spot = [t for t in options if offers(t, "spot")]
    kept = [t for t in spot if worst_launch_price(t, ("spot",)) < price]
    problem = min_values_problem(claim.pool, kept)
    if problem:
        return None, f"filtering by price: {problem}"
    if not kept:
        return None, "can't replace with a cheaper node"
    if len(command.candidates) == 1:
        if len(kept) < SPOT_TO_SPOT_MIN_TYPES:
            return None, (
                f"SpotToSpotConsolidation requires {SPOT_TO_SPOT_MIN_TYPES} cheaper instance type options than "
                f"the current candidate to consolidate, got {len(kept)}"
            )
        kept = kept[: max(SPOT_TO_SPOT_MIN_TYPES, min_values_prefix(claim.pool, kept))]
    command.replacement, command.options = claim, kept
    return command, ""


def _filter_same_type(command: Command) -> bool:
    """``filterOutSameInstanceType``: a replacement of a type being removed must be cheaper than that node
    (else deleting the others is the same move with less churn). False when nothing is left."""
    existing = {c.instance_type for c in command.candidates}
    prices: dict[str, float] = {}
    for candidate in command.candidates:
        if candidate.priced:
            prices[candidate.instance_type] = min(prices.get(candidate.instance_type, math.inf), candidate.price)
    limit = min(
        (prices.get(t.instance_type.name, 0.0) for t in command.options if t.instance_type.name in existing),
        default=math.inf,
    )
    kept = [t for t in command.options if worst_launch_price(t) < limit]
    assert command.replacement is not None
    if not kept or min_values_problem(command.replacement.pool, kept):
        return False
    command.options = kept
    return True

"""DefaultPreemption as a pure function: which lower-priority pods to evict, on which node, so that a
pod that fits nowhere can run; and, when none, the message kube-scheduler would show.

Mirrors ``pkg/scheduler/framework/preemption`` (``Evaluator.Preempt``, ``DryRunPreemption``,
``pickOneNodeForPreemption``) and ``plugins/defaultpreemption`` (``SelectVictimsOnNode``) for single
pods:

1. A pod with ``preemptionPolicy: Never`` does not preempt.
2. Only nodes whose Filter status is Unschedulable are candidates; UnschedulableAndUnresolvable nodes
   (a taint, affinity, a request larger than the node) and nodes without a status are skipped.
3. On a *copy* of each candidate's NodeInfo, every pod of lower priority is removed; if the pod still
   does not fit, the node is out. Otherwise victims are reprieved one by one, most important first
   (higher priority, then earlier start), keeping each one whose return still lets the pod fit.
4. Among the nodes with victims the winner has, in this order: the fewest PodDisruptionBudget
   violations, the lowest highest-victim priority, the smallest sum of victim priorities, the fewest
   victims, the latest start among its highest-priority victims, and else comes first in the order
   searched.

Not modelled: PodDisruptionBudgets (there is no PDB object in the twin, so every candidate violates
none and that criterion never decides), extenders, the check that a pod already nominated to a node
with terminating victims waits, async preemption, and workload-aware (PodGroup) preemption. The start
time of a pod is approximated by ``PodInfo.order`` (its creation order), because the twin's pods carry
no ``status.startTime``.

The dry run visits at most ``max(10% of candidates, 100)`` candidate nodes, starting at a random
offset (upstream ``GetOffsetAndNumCandidates``) when an ``rng`` is given, else at the first.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dratwin.scheduler.framework import SUCCESS, Code, NodeInfo, PodInfo, Status, unresolvable
from dratwin.scheduler.resources import add_pod, copy_node_info, remove_pod

NO_VICTIMS_REASON = "No preemption victims found for incoming pod"
NOT_HELPFUL_REASON = "Preemption is not helpful for scheduling"
NEVER_MESSAGE = "Preemptor couldn't preempt other victims because of preemptionPolicy: never"
NO_NODE_AVAILABLE = "0/{} nodes are available"
PREEMPTION_PREFIX = "preemption: "

MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100

_INT32_OFFSET = 2**31  # upstream adds MaxInt32+1 so that negative priorities sum sensibly

FitsFunc = Callable[[PodInfo, NodeInfo], Status]
_NO_VICTIMS = unresolvable(NO_VICTIMS_REASON)


@dataclass(frozen=True)
class PreemptionResult:
    """Evict ``victims`` (most important first) from ``node_name`` and nominate the pod there;
    ``reason`` names the rule that chose this node over the other candidates."""

    node_name: str
    victims: list[PodInfo]
    reason: str


@dataclass(frozen=True)
class _Candidate:
    node: str
    victims: list[PodInfo]  # most important first
    index: int  # position in the dry-run order, the last tie-breaker
    pdb_violations: int = 0


@dataclass(frozen=True)
class _DryRun:
    candidates: list[_Candidate]
    statuses: dict[str, Status]  # why each evaluated node is not a candidate


def find_preemption(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, Status],
    fits: FitsFunc,
    *,
    rng: random.Random | None = None,
) -> PreemptionResult | None:
    """The node and victims DefaultPreemption would choose for ``pod``, or None when preemption cannot help.

    ``nodes`` are all nodes of the snapshot and are never modified; ``statuses`` maps node names to the
    pod's Filter status on them. ``fits(pod, node_info)`` must run every Filter plugin for the pod on the
    NodeInfo it is given, which is a private copy with candidate victims removed; it must not keep or
    change it. Nominated pods, if modelled, are the caller's to account for inside ``fits``.

    DRA: whether freeing a victim also frees its devices is decided by ``fits`` alone. In Kubernetes
    1.36 the DynamicResources Filter does not release the devices allocated to victims' claims, so a
    pod waiting for devices held by lower-priority pods finds no victims; a ``fits`` built from the
    DRA filter gives exactly that behaviour.
    """
    if _never_preempts(pod):
        return None
    run = _dry_run(pod, nodes, statuses, fits, rng)
    if not run.candidates:
        return None
    return _pick(run.candidates)


def preempt_or_explain(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, Status],
    fits: FitsFunc,
) -> tuple[PreemptionResult | None, str]:
    """:func:`find_preemption` (without ``rng``) and, when it finds nothing, :func:`preemption_message`,
    from one dry run (both would run the same one)."""
    if _never_preempts(pod):
        return None, PREEMPTION_PREFIX + NEVER_MESSAGE
    run = _dry_run(pod, nodes, statuses, fits, None)
    if run.candidates:
        return _pick(run.candidates), ""
    return None, PREEMPTION_PREFIX + fit_error_message(len(nodes), run.statuses, absent_reason=NOT_HELPFUL_REASON)


def no_victims_message(num_nodes: int, unschedulable_nodes: int) -> str:
    """:func:`preemption_message` when no node holds a pod of lower priority than the preemptor: each node
    whose status is Unschedulable has no victims, preemption cannot help on the others."""
    lists: dict[tuple[str, ...], int] = {(NO_VICTIMS_REASON,): unschedulable_nodes,
                                         (NOT_HELPFUL_REASON,): num_nodes - unschedulable_nodes}
    return PREEMPTION_PREFIX + counted_fit_error_message(num_nodes, lists)


def why_no_preemption(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, Status],
    fits: FitsFunc,
    *,
    other_post_filter_reasons: Sequence[str] = (),
) -> str:
    """The FailedScheduling message for a pod that fits no node, with the preemption part, e.g.
    ``0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available:
    3 No preemption victims found for incoming pod.``

    When preemption does find a node the message has no preemption part (upstream's PostFilter then
    succeeds). ``other_post_filter_reasons`` are messages of PostFilter plugins that ran before
    DefaultPreemption (DRA's "no new claims to deallocate"); they come first, joined by ", ".

    This runs the dry run again (it is pure). It takes no ``rng``: whether some node has victims, and
    why each node has none, does not depend on where the search starts.
    """
    post_filter = list(other_post_filter_reasons)
    preemption = preemption_message(pod, nodes, statuses, fits)
    if preemption:
        post_filter.append(preemption)
    return fit_error_message(len(nodes), statuses, post_filter_msg=", ".join(post_filter))


def preemption_message(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, Status],
    fits: FitsFunc,
) -> str:
    """DefaultPreemption's PostFilter message: "" when it finds a node, else ``preemption: ...``."""
    if _never_preempts(pod):
        return PREEMPTION_PREFIX + NEVER_MESSAGE
    run = _dry_run(pod, nodes, statuses, fits, None)
    if run.candidates:
        return ""
    inner = fit_error_message(len(nodes), run.statuses, absent_reason=NOT_HELPFUL_REASON)
    return PREEMPTION_PREFIX + inner


def fit_error_message(
    num_all_nodes: int,
    statuses: Mapping[str, Status],
    *,
    absent_reason: str | None = None,
    pre_filter_msg: str = "",
    post_filter_msg: str = "",
) -> str:
    """Upstream ``FitError.Error``: ``0/N nodes are available: <count reason, ...>. <post filter>``.

    Reasons are counted per node and the ``"<count> <reason>"`` strings sorted as strings; nodes
    without a status count under ``absent_reason`` when one is given. A PreFilter rejection replaces
    the per-node histogram.
    """
    # Nodes share a few distinct reason lists: count those (in C), then their reasons.
    lists = Counter(status.reasons for status in statuses.values()) if not pre_filter_msg else Counter()
    if absent_reason is not None and len(statuses) < num_all_nodes:
        lists[(absent_reason,)] += num_all_nodes - len(statuses)
    return counted_fit_error_message(num_all_nodes, lists, pre_filter_msg=pre_filter_msg,
                                     post_filter_msg=post_filter_msg)


def counted_fit_error_message(
    num_all_nodes: int,
    reason_lists: Mapping[tuple[str, ...], int],
    *,
    pre_filter_msg: str = "",
    post_filter_msg: str = "",
) -> str:
    """:func:`fit_error_message` from how many nodes gave each list of reasons (what a cache keeps)."""
    message = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        counts: Counter[str] = Counter()
        for reasons, nodes in reason_lists.items():
            for reason in reasons:
                counts[reason] += nodes
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items() if count > 0)
        if histogram:
            message += f" {', '.join(histogram)}."
    if post_filter_msg:
        message += f" {post_filter_msg}"
    return message


# ---- the dry run ------------------------------------------------------------------------------------


def _never_preempts(pod: PodInfo) -> bool:
    return pod.pod.spec.preemption_policy == "Never"


def num_candidates(num_nodes: int) -> int:
    """How many candidates the dry run looks for (upstream ``calculateNumCandidates``)."""
    wanted = max(num_nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE)
    return min(wanted, num_nodes)


def _dry_run(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    statuses: Mapping[str, Status],
    fits: FitsFunc,
    rng: random.Random | None,
) -> _DryRun:
    unschedulable = Code.UNSCHEDULABLE
    potential = [n for n in nodes if (s := statuses.get(n.name)) is not None and s.code is unschedulable]
    candidates: list[_Candidate] = []
    node_statuses: dict[str, Status] = {}
    if not potential:
        return _DryRun(candidates, node_statuses)
    wanted = num_candidates(len(potential))
    offset = rng.randrange(len(potential)) if rng is not None else 0
    priority = pod.priority
    for i in range(len(potential)):
        node = potential[(offset + i) % len(potential)]
        if not any(p.priority < priority for p in node.pods):
            node_statuses[node.name] = _NO_VICTIMS  # what select_victims_on_node says, without its copy
            continue
        victims, status = select_victims_on_node(pod, node, fits)
        if victims:
            candidates.append(_Candidate(node.name, victims, i))
            # Upstream stops once it has enough candidates, one of them without PDB violations.
            if len(candidates) >= wanted:
                break
        else:
            node_statuses[node.name] = status
    return _DryRun(candidates, node_statuses)


def _importance(pod: PodInfo) -> tuple[int, int]:
    # Higher priority first, then the pod that started earlier (creation order as a stand-in).
    return (-pod.priority, pod.order)


def select_victims_on_node(pod: PodInfo, node: NodeInfo, fits: FitsFunc) -> tuple[list[PodInfo], Status]:
    """The fewest lower-priority pods to evict from ``node`` (most important first), with SUCCESS;
    or no victims and the status that says why this node cannot help. ``node`` is not modified."""
    potential = sorted((p for p in node.pods if p.priority < pod.priority), key=_importance)
    if not potential:
        return [], unresolvable(NO_VICTIMS_REASON)
    trial = copy_node_info(node)
    for victim in potential:
        remove_pod(trial, victim)
    status = fits(pod, trial)
    if not status.ok:
        return [], status
    victims: list[PodInfo] = []
    for candidate in potential:
        add_pod(trial, candidate)
        if not fits(pod, trial).ok:
            remove_pod(trial, candidate)
            victims.append(candidate)
    if not victims:
        return [], Status(Code.ERROR, (f"expected at least one victim pod on node {node.name}",))
    return victims, SUCCESS


def _pick(candidates: list[_Candidate]) -> PreemptionResult:
    rules: list[tuple[str, Callable[[_Candidate], int]]] = [
        ("fewest PodDisruptionBudget violations", lambda c: -c.pdb_violations),
        ("lowest highest-victim priority", lambda c: -c.victims[0].priority),
        ("smallest sum of victim priorities", lambda c: -sum(v.priority + _INT32_OFFSET for v in c.victims)),
        ("fewest victims", lambda c: -len(c.victims)),
        ("latest start of its highest-priority victims", _latest_start_score),
    ]
    remaining = sorted(candidates, key=lambda c: c.index)
    if len(remaining) == 1:
        return _result(remaining[0], "only candidate")
    for reason, score in rules:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            return _result(remaining[0], reason)
    return _result(remaining[0], "first candidate in search order")


def _latest_start_score(candidate: _Candidate) -> int:
    # Upstream: the earliest start among the victims of the highest priority; later is better.
    top = candidate.victims[0].priority
    return min(v.order for v in candidate.victims if v.priority == top)


def _result(candidate: _Candidate, reason: str) -> PreemptionResult:
    return PreemptionResult(candidate.node, list(candidate.victims), reason)


__all__ = [
    "MIN_CANDIDATE_NODES_ABSOLUTE",
    "MIN_CANDIDATE_NODES_PERCENTAGE",
    "NEVER_MESSAGE",
    "NOT_HELPFUL_REASON",
    "NO_VICTIMS_REASON",
    "FitsFunc",
    "PreemptionResult",
    "counted_fit_error_message",
    "find_preemption",
    "fit_error_message",
    "no_victims_message",
    "num_candidates",
    "preempt_or_explain",
    "preemption_message",
    "select_victims_on_node",
    "why_no_preemption",
]

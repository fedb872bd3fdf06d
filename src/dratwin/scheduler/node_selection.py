"""How many nodes a scheduling cycle looks at, how raw scores become 0..100, and which node wins.

Mirrors ``pkg/scheduler/schedule_one.go`` (``numFeasibleNodesToFind``, ``selectHost``) and the score
plugins' ``helper.DefaultNormalizeScore``. All arithmetic is integer arithmetic with truncating
division, as in Go (the values are never negative, so ``//`` is the same). Randomness comes only from
the ``random.Random`` the caller passes, so a seeded run picks the same hosts every time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import compress, repeat
from operator import eq

from dratwin.scheduler.framework import MAX_NODE_SCORE

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """Stop filtering once this many feasible nodes are found.

    All nodes below 100; otherwise ``percentage`` (``percentageOfNodesToScore``) of them, where 0 means
    adaptive: ``50 - n/125`` percent, at least 5%; and never fewer than 100 nodes.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(scores: Sequence[tuple[str, int]], rng: random.Random) -> str:
    """The node with the highest total score; ties are broken uniformly at random (see
    :func:`select_index`). ValueError when there is no node to pick."""
    return scores[select_index([score for _, score in scores], rng)][0]


def select_index(totals: Sequence[int], rng: random.Random) -> int:
    """The position of the highest total; ties are broken uniformly at random.

    kube-scheduler draws once per tied node (reservoir sampling); one draw among the tied nodes gives
    the same uniform choice for a fraction of the cost when hundreds of nodes tie, as empty nodes do.
    ValueError when there is no node to pick."""
    if not totals:
        raise ValueError("select host: empty priority list (no feasible node was scored)")
    best = max(totals)
    tied = list(compress(range(len(totals)), map(eq, totals, repeat(best))))
    return tied[pick_tied(len(tied), rng)]


def pick_tied(count: int, rng: random.Random) -> int:
    """Which of ``count`` tied nodes wins: the only one, or one uniform draw."""
    return 0 if count == 1 else rng.randrange(count)


def default_normalize_score(scores: dict[str, int], max_priority: int = MAX_NODE_SCORE, reverse: bool = False) -> None:
    """Scale raw scores in place to ``0..max_priority`` by the highest raw score
    (``max_priority * score // highest``); ``reverse`` turns them into ``max_priority - that``. When
    every raw score is 0 they stay 0, or all become ``max_priority`` when reversed."""
    highest = max(scores.values(), default=0)
    if highest == 0:
        if reverse:
            for name in scores:
                scores[name] = max_priority
        return
    for name, score in scores.items():
        scaled = max_priority * score // highest
        scores[name] = max_priority - scaled if reverse else scaled


__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "default_normalize_score",
    "num_feasible_nodes_to_find",
    "pick_tied",
    "select_host",
    "select_index",
]

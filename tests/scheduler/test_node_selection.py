"""numFeasibleNodesToFind, selectHost's reservoir sampling, and DefaultNormalizeScore."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dratwin.scheduler.node_selection import default_normalize_score, num_feasible_nodes_to_find, select_host


@pytest.mark.parametrize(
    ("nodes", "percentage", "expect"),
    [
        (0, 0, 0),
        (50, 0, 50),
        (99, 0, 99),
        (100, 0, 100),  # 50% of 100 = 50, raised to the minimum of 100
        (199, 0, 100),  # 50% -> 99 -> 100
        (250, 0, 120),  # 50 - 2 = 48%
        (500, 0, 230),  # 50 - 4 = 46%
        (1000, 0, 420),  # 50 - 8 = 42%
        (5000, 0, 500),  # 50 - 40 = 10%
        (5624, 0, 337),  # 50 - 44 = 6%: 337.44
        (5625, 0, 281),  # 50 - 45 = 5%: 281.25
        (6000, 0, 300),  # 50 - 48 = 2%, raised to 5%
        (15000, 0, 750),  # 50 - 120 < 5: 5%
        (1000, 30, 300),
        (1000, 5, 100),  # 50 nodes, raised to 100
        (1000, 100, 1000),
        (50, 10, 50),  # below 100 nodes all are searched whatever the percentage
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expect: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == expect


class ScriptedRandom(random.Random):
    """A Random whose randrange answers come from a script, to pin the tie-breaking draw."""

    def __init__(self, answers: list[int]) -> None:
        super().__init__(0)
        self.answers = list(answers)
        self.asked: list[int] = []

    def randrange(self, *args: int, **kwargs: int) -> int:  # type: ignore[override]
        self.asked.append(args[0])
        return self.answers.pop(0)


@pytest.mark.parametrize(
    ("scores", "answers", "expect", "asked"),
    [
        ([("n1", 5)], [], "n1", []),
        ([("n1", 5), ("n2", 9), ("n3", 7)], [], "n2", []),
        # n1 and n3 tie at 9: one draw among the tied nodes, in the order given
        ([("n1", 9), ("n2", 3), ("n3", 9)], [1], "n3", [2]),
        ([("n1", 9), ("n2", 3), ("n3", 9)], [0], "n1", [2]),
        ([("n1", 4), ("n2", 4), ("n3", 4)], [1], "n2", [3]),
        # lower scores never take part in the draw
        ([("n1", 4), ("n2", 4), ("n3", 8), ("n4", 8)], [1], "n4", [2]),
    ],
    ids=["single", "highest", "tie-second", "tie-first", "three-way", "only-the-best-tie"],
)
def test_select_host_draws_once_among_ties(
    scores: list[tuple[str, int]], answers: list[int], expect: str, asked: list[int]
) -> None:
    rng = ScriptedRandom(answers)
    assert select_host(scores, rng) == expect
    assert rng.asked == asked


def test_select_host_is_deterministic_per_seed_and_fair() -> None:
    scores = [("a", 10), ("b", 30), ("c", 30), ("d", 30), ("e", 20)]
    first = [select_host(scores, random.Random(seed)) for seed in range(50)]
    assert first == [select_host(scores, random.Random(seed)) for seed in range(50)]
    rng = random.Random(42)
    picks = Counter(select_host(scores, rng) for _ in range(3000))
    assert set(picks) == {"b", "c", "d"}
    assert all(900 < n < 1100 for n in picks.values()), picks


def test_select_host_needs_a_node() -> None:
    with pytest.raises(ValueError, match="empty priority list"):
        select_host([], random.Random(0))


@pytest.mark.parametrize(
    ("raw", "reverse", "expect"),
    [
        ({"a": 8, "b": 5, "c": 0}, False, {"a": 100, "b": 62, "c": 0}),
        ({"a": 8, "b": 5, "c": 0}, True, {"a": 0, "b": 38, "c": 100}),
        ({"a": 0, "b": 0}, False, {"a": 0, "b": 0}),
        ({"a": 0, "b": 0}, True, {"a": 100, "b": 100}),
        ({}, True, {}),
    ],
)
def test_default_normalize_score(raw: dict[str, int], reverse: bool, expect: dict[str, int]) -> None:
    default_normalize_score(raw, reverse=reverse)
    assert raw == expect

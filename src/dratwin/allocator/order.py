"""Where upstream is random: the stable variant's pool order, probed instead of pretended.

Upstream's stable allocator copy visits a node's pools in Go map order, which changes from call to
call. dratwin answers for the pools in input order; :func:`probe_pool_orders` runs the same call
with the pools in other orders (every order for up to three pools, otherwise rotations and the
reverse) and says whether the answer depends on the order. The sorting variants (incubating,
experimental) are deterministic and are not probed.

Probing repeats the search, so it is bounded: an order is tried only while the steps it would take
(about as many as the first call's) keep the probe within ``PROBE_STEPS``. A long search is answered
once, with a note that the other orders were not tried, rather than taking eight times as long.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from dratwin.allocator.allocator import AllocationOutcome, Allocator
from dratwin.allocator.errors import AllocationTimeout
from dratwin.api.core import Node
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.errors import AllocationError

MAX_ORDERS = 8
PROBE_STEPS = 200_000  # search steps all other orders together may take (about a second in dratwin)


@dataclass(frozen=True)
class Answer:
    """One call's answer, comparable across pool orders: results, "unsatisfiable", an error or a timeout."""

    kind: str  # allocated | unsatisfiable | error | timeout
    results: list[AllocationResult] | None = None
    error: str = ""

    @property
    def identity(self) -> bytes:
        blanked = [_without_share_ids(r) for r in self.results or []]
        return msgspec.json.encode((self.kind, self.error, blanked))


@dataclass(frozen=True)
class OrderProbe:
    """How many pool orders were tried and the distinct answers they gave (the input order's first)."""

    orders: int
    answers: list[Answer] = field(default_factory=list)
    skipped: int = 0  # orders not tried because the search is too long to repeat
    steps: int = 0  # the first call's search steps

    @property
    def depends_on_order(self) -> bool:
        return len(self.answers) > 1

    def note(self) -> str:
        head = (
            "the stable allocator variant (picked because DRAConsumableCapacity and binding conditions are off) "
            "visits pools in Go map order, which is random on every call; this answer is for the pools in input order"
        )
        if self.depends_on_order:
            return f"{head}, and {len(self.answers)} different answers came from the {self.orders} orders tried"
        if self.skipped and self.orders == 1:
            return (f"{head}; the {self.skipped} other orders were not tried: the search took {self.steps:,} steps, "
                    f"too long to repeat (another order may give another answer)")
        tried = f"all {self.orders} orders tried give the same answer"
        if self.skipped:
            tried += f" ({self.skipped} more not tried: the search took {self.steps:,} steps)"
        return f"{head}; {tried}"


def answer_of(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim], order: Sequence[int]) -> Answer:
    try:
        outcome = allocator.allocate(node, claims, pool_order=order)
    except AllocationTimeout as timeout:
        return Answer("timeout", error=str(timeout))
    except AllocationError as error:
        return Answer("error", error=str(error))
    return from_outcome(outcome)


def from_outcome(outcome: AllocationOutcome) -> Answer:
    if outcome.results is None:
        return Answer("unsatisfiable")
    return Answer("allocated", outcome.results)


def probe_pool_orders(
    allocator: Allocator, node: Node, claims: Sequence[ResourceClaim], first: Answer, first_steps: int = 0
) -> OrderProbe | None:
    """Other pool orders for a call already answered (``first``, in input order, in ``first_steps``
    search steps); None when the variant's order is deterministic or there is only one usable pool
    with devices."""
    if allocator.variant.sorted_pools or not claims:
        return None
    pools = allocator.pools_for(node)
    if sum(1 for p in pools if p.usable and p.device_slices) < 2:
        return None
    seen = {first.identity: first}
    orders = other_orders(len(pools))
    affordable = len(orders) if first_steps <= 0 else min(len(orders), PROBE_STEPS // first_steps)
    for order in orders[:affordable]:
        answer = answer_of(allocator, node, claims, order)
        seen.setdefault(answer.identity, answer)
    return OrderProbe(affordable + 1, list(seen.values()), skipped=len(orders) - affordable, steps=first_steps)


def other_orders(count: int) -> list[tuple[int, ...]]:
    """Orders other than the identity: all of them for up to three pools, else rotations and the reverse."""
    identity = tuple(range(count))
    if count <= 3:
        return [p for p in itertools.permutations(identity) if p != identity][: MAX_ORDERS - 1]
    rotations = [identity[shift:] + identity[:shift] for shift in range(1, count)]
    return [*rotations, identity[::-1]][: MAX_ORDERS - 1]


def _without_share_ids(result: AllocationResult) -> object:
    plain = msgspec.to_builtins(result)
    for entry in plain.get("devices", {}).get("results", []):
        if "shareID" in entry:
            entry["shareID"] = "<generated>"
    return plain

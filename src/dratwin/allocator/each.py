"""Independent claims, allocated one by one, as the claims of independent pods would be.

kube-scheduler allocates the claims of one pod together (all or none), but claims of different pods
in different scheduling cycles, each cycle seeing the devices the earlier ones took. ``allocate_each``
does the latter for a list of claims on one node: in order, each with the allocations before it held.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dratwin.allocator.allocator import AllocationOutcome, Allocator
from dratwin.allocator.features import Features
from dratwin.allocator.state import AllocatedState
from dratwin.api.core import Node
from dratwin.api.resource import ResourceClaim
from dratwin.errors import AllocationError


@dataclass(frozen=True)
class EachOutcome:
    """One claim's own allocation call: its outcome, or the error upstream would return for it."""

    key: str
    allocator: Allocator
    outcome: AllocationOutcome | None
    error: AllocationError | None = None

    @property
    def allocated(self) -> bool:
        return self.outcome is not None and self.outcome.allocated


def allocate_each(
    build: Callable[[AllocatedState], Allocator],
    node: Node,
    claims: Sequence[tuple[str, ResourceClaim]],
    state: AllocatedState,
    features: Features,
) -> list[EachOutcome]:
    """``build`` makes the allocator for a state; ``state`` is not changed (a copy is built up)."""
    held = copy.deepcopy(state)
    found = []
    for key, claim in claims:
        allocator = build(held)
        try:
            outcome = allocator.allocate(node, [claim])
        except AllocationError as error:
            found.append(EachOutcome(key, allocator, None, error))
            continue
        if outcome.results is not None:
            held = copy.deepcopy(held)  # the allocator just used keeps the state it was built with
            held.hold(key, outcome.results[0], features)
        found.append(EachOutcome(key, allocator, outcome))
    return found

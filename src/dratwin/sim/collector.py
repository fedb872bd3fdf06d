"""How the run treats Python's cyclic garbage collector.

A long run holds millions of objects that live until it ends (the cluster as loaded, the records of every
pod created since), and its steps make millions of short-lived ones. The collector's young generations
catch what little cyclic garbage a step leaves; its full collections walk every live object (seconds each at
10,000 nodes) and find next to nothing, and each walks more as the run creates objects. During a run only
the young generations are collected; the full collections resume when it ends. (``dratwin schedule``
pauses the collector altogether, ``dratwin.twin.schedule.gc_paused``: a one-shot run is short.)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# A full collection is due after this many collections of the middle generation: never within a run.
NO_FULL_COLLECTIONS = 2**31 - 1
# The youngest generation is collected after this many allocations (Python's default: 700). Each collection
# of the middle generation walks what the young ones promoted, thousands of objects: collected 28 times less
# often, the first 300 s of the month's run spent 17.8 s instead of 26.4 s collecting, for the same memory.
YOUNG_COLLECTION_AFTER = 20_000


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """Within the block the collector collects its young generations (the youngest after at least
    ``YOUNG_COLLECTION_AFTER`` allocations) and never the oldest; the thresholds are as before afterwards
    (what became garbage meanwhile is found by the next full collection)."""
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION_AFTER), middle, NO_FULL_COLLECTIONS)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, oldest)

"""The run collects only the collector's young generations (the youngest less often), and leaves its thresholds
as they were."""

from __future__ import annotations

import gc

import pytest

from dratwin.benchmarks.simulate_bench import month_spec
from dratwin.sim.collector import NO_FULL_COLLECTIONS, YOUNG_COLLECTION_AFTER, young_collections_only
from dratwin.sim.engine import Engine
from dratwin.sim.run import SimOptions, simulate


def test_only_the_young_generations_within_the_block() -> None:
    before = gc.get_threshold()
    with young_collections_only():
        assert gc.get_threshold() == (max(before[0], YOUNG_COLLECTION_AFTER), before[1], NO_FULL_COLLECTIONS)
        assert gc.isenabled()
    assert gc.get_threshold() == before


def test_thresholds_restored_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), young_collections_only():
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before


def test_a_run_goes_without_full_collections(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []
    original = Engine.run

    def run(engine: Engine, until: float, *args: object, **kwargs: object) -> None:
        seen.append(gc.get_threshold())
        original(engine, until, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Engine, "run", run)
    before = gc.get_threshold()
    result = simulate(month_spec(nodes=20, pods=40, until=6 * 3600.0), SimOptions()).result
    assert result.pods_started > 0
    assert seen == [(max(before[0], YOUNG_COLLECTION_AFTER), before[1], NO_FULL_COLLECTIONS)]
    assert gc.get_threshold() == before

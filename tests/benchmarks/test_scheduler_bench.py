"""The scheduler benchmark shapes run end to end on small clusters (the full sizes are for `dratwin bench`)."""

from __future__ import annotations

from dratwin.benchmarks.scheduler_bench import SELECTOR, fill_up, shared_claims, steady_state


def test_fill_up_shapes_schedule_every_pod() -> None:
    assert fill_up(nodes=20, devices=4, pods=80, measured=40) > 0
    assert fill_up(nodes=20, devices=4, pods=80, measured=40, selector=SELECTOR) > 0
    assert fill_up(nodes=20, devices=4, pods=40, measured=20, requests=2, match=True) > 0


def test_steady_state_and_shared_claims() -> None:
    assert steady_state(40, nodes=20, devices=4, rounds=3, batch=5) > 0
    assert shared_claims(nodes=10, devices=2, pods=50, per_claim=5) > 0

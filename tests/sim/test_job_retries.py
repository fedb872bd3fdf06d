"""Job pods that fail (preempted) are replaced by the Job controller, up to its backoffLimit."""

from __future__ import annotations

import pytest
from tests.builders.manifests import manifest, node, priority_class
from tests.builders.sim import job, simulate_text, times

CLUSTER = [node("n1", cpu="4"), priority_class("low", 10), priority_class("high", 1000)]


def test_a_preempted_job_pod_is_replaced_after_the_failure_backoff() -> None:
    # The low Job's pod holds 3 of 4 CPUs; at 1 min a high-priority pod needs 3: the low pod is preempted.
    # The Job controller recreates it 10 s later; it waits until the high pod is done (at 1 min + 5 min).
    text = manifest(*CLUSTER, job("low", cpu="3", priority_class="low", run_for="10m"),
                    job("high", cpu="3", priority_class="high", at="1m", run_for="5m"))
    sim = simulate_text(text, until="1h")
    low_created = times(sim, "Added", "Pod", "default/low-")
    assert low_created == [0.0, 70.0]
    assert times(sim, "Preempted", "Pod", "default/low-") == [60.0]
    high_bound = [c.time for c in sim.events if c.type == "Scheduled" and c.key.startswith("default/high-")]
    assert high_bound and high_bound[0] >= 60.0
    low_bound = [c.time for c in sim.events if c.type == "Scheduled" and c.key.startswith("default/low-")]
    assert low_bound == [0.0, high_bound[0] + 300.0]
    assert sim.result.pods_succeeded == 2  # the replacement and the high pod; the victim failed


@pytest.mark.parametrize(
    ("name", "backoff_limit", "low_pods"),
    [
        ("backoffLimit 0: the first failure fails the Job", 0, 1),
        ("backoffLimit 1: one replacement", 1, 2),
    ],
)
def test_the_backoff_limit_stops_replacements(name: str, backoff_limit: int, low_pods: int) -> None:
    # High pods arrive every 2 minutes, each preempting whatever low pod runs.
    highs = [job(f"high{i}", cpu="3", priority_class="high", at=f"{1 + 2 * i}m", run_for="1m") for i in range(3)]
    text = manifest(*CLUSTER, job("low", cpu="3", priority_class="low", run_for="1h", backoff_limit=backoff_limit),
                    *highs)
    sim = simulate_text(text, until="2h")
    assert len(times(sim, "Added", "Pod", "default/low-")) == low_pods
    failed = [n for n in sim.result.notes if "BackoffLimitExceeded" in n]
    assert failed == [f"Job default/low: failed (BackoffLimitExceeded): {backoff_limit + 1} pods failed, "
                      f"backoffLimit {backoff_limit}"]

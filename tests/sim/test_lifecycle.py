"""Jobs and pods through time: they run, finish, free their devices; others wait for them."""

from __future__ import annotations

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node, resource_claim
from tests.builders.sim import bare_pod, bound_at, deployment, job, simulate_text, template, times

from dratwin.cluster.state import PodRecord

CLUSTER = [gpu_class(), node("n1"), gpu_slice("n1", 2), template("one", 1), template("two", 2)]


def test_a_job_runs_finishes_and_its_template_claims_are_deleted_and_devices_freed() -> None:
    sim = simulate_text(manifest(*CLUSTER, job("a", "two", at="10s", run_for="10m")), until="1h")
    state = sim.store.state
    assert bound_at(sim, "default/a-") == [10.0]
    assert times(sim, "Deleted", "Pod", "default/a-") == [610.0]
    assert times(sim, "Deleted", "ResourceClaim", "default/a-") == [610.0]
    assert state.claims == {} and state.pods == {}
    assert not state.allocated.exclusive
    result = sim.result
    assert (result.pods_created, result.pods_started, result.pods_succeeded) == (1, 1, 1)
    assert result.gpu_hours_allocated == pytest.approx(2 * 600 / 3600)
    assert result.gpu_hours_idle == pytest.approx(2 * 1.0 - 2 * 600 / 3600)
    assert sim.invariant_checks == result.events


@pytest.mark.parametrize(
    ("name", "second", "expected_bound"),
    [
        # the first job holds both GPUs for 10 min from 10 s: the second binds when its pod is gone
        ("whole node busy: waits for the first to finish", job("b", "two", at="20s", run_for="5m"), 610.0),
        ("one GPU needed, none free: waits too", job("b", "one", at="20s", run_for="5m"), 610.0),
    ],
)
def test_a_second_job_waits_until_the_first_finishes(name: str, second: dict[str, object],
                                                      expected_bound: float) -> None:
    sim = simulate_text(manifest(*CLUSTER, job("a", "two", at="10s", run_for="10m"), second), until="1h")
    assert bound_at(sim, "default/b-") == [expected_bound]
    assert sim.result.waiting_seconds.max == expected_bound - 20.0
    assert sim.result.pods_succeeded == 2


def test_job_completions_run_parallelism_at_a_time() -> None:
    sim = simulate_text(manifest(*CLUSTER, job("a", "one", completions=3, parallelism=2, run_for="10m")),
                        until="1h")
    assert bound_at(sim, "default/a-") == [0.0, 0.0, 600.0]
    assert sim.result.pods_succeeded == 3
    assert sim.result.gpu_hours_allocated == pytest.approx(3 * 600 / 3600)


def test_a_shared_claim_is_released_only_when_its_last_user_goes() -> None:
    shared = {"g": ("claim", "shared")}
    text = manifest(*CLUSTER, resource_claim("shared"),
                    bare_pod("short", shared, run_for="5m"), bare_pod("long", shared, run_for="20m"))
    half = simulate_text(text, until="10m")
    claim = half.store.state.claims["default/shared"].claim
    assert claim.status.allocation is not None
    assert [r.name for r in claim.status.reserved_for] == ["long"]
    done = simulate_text(text, until="30m")
    claim = done.store.state.claims["default/shared"].claim  # a claim someone created is never deleted
    assert claim.status.allocation is None and not claim.status.reserved_for
    assert not done.store.state.allocated.exclusive
    assert done.result.gpu_hours_allocated == pytest.approx(20 * 60 / 3600)


@pytest.mark.parametrize(
    ("name", "gang", "expected"),
    [
        # one GPU of two is busy until 10 min: a gang of two waits for it, single pods take what is free
        ("gang: both pods wait until both fit", True, [600.0, 600.0]),
        # without a gang the first pod takes the free GPU at 1 min and the second follows when it is done
        ("no gang: one pod now, the other when the first is done", False, [60.0, 360.0]),
    ],
)
def test_a_gang_waits_until_all_its_pods_fit(name: str, gang: bool, expected: list[float]) -> None:
    text = manifest(*CLUSTER, job("busy", "one", run_for="10m"),
                    job("g", "one", at="1m", completions=2, parallelism=2, indexed=True, gang=gang, run_for="5m"))
    sim = simulate_text(text, until="1h")
    assert sorted(bound_at(sim, "default/g-")) == expected
    assert sim.result.pods_succeeded == 3


def test_a_pod_that_never_fits_is_reported_with_the_schedulers_reason() -> None:
    text = manifest(gpu_class(), node("n1"), gpu_slice("n1", 1), template("two", 2), job("big", "two"))
    sim = simulate_text(text, until="1h")
    assert sim.result.pods_pending_at_end == 1
    [group] = sim.result.never_placed
    assert group.count == 1 and group.reason.startswith("0/1 nodes are available: 1 cannot allocate all claims")


def test_a_deployments_pods_run_until_the_end_whatever_run_for_says() -> None:
    text = manifest(*CLUSTER, deployment("serve", "one", 2, at="1m", run_for="5m"))
    sim = simulate_text(text, until="1h")
    result = sim.result
    assert (result.pods_started, result.pods_succeeded, result.pods_running_at_end) == (2, 0, 2)
    assert result.gpu_hours_allocated == pytest.approx(2 * 59 / 60, abs=1e-6)


def test_the_cold_start_hook_delays_the_containers_and_the_end() -> None:
    def image_pull(pod: PodRecord, node: str) -> float:
        return 45.0 if node == "n1" else 0.0

    sim = simulate_text(manifest(*CLUSTER, job("a", "one", at="10s", run_for="10m")), until="1h",
                        cold_start=image_pull)
    assert times(sim, "Started", "Pod", "default/a-") == [55.0]
    assert times(sim, "Deleted", "Pod", "default/a-") == [655.0]
    assert sim.result.startup_seconds.p50 == 45.0
    assert sim.result.gpu_hours_allocated == pytest.approx(645 / 3600, abs=1e-6)  # held from bind to the end

"""Inference services in the simulation: load over the ready replicas, DCGM utilization, the HPA and KEDA
cores deciding the replicas, SLO misses, determinism."""

from __future__ import annotations

import msgspec
import pytest
from tests.builders.autoscaling import autoscaler
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node, resource_claim
from tests.builders.sim import deployment, inference, mig_slice, shared_deployment, simulate_text, template

from dratwin.serving import Replica, ServingModel, ServingProfile
from dratwin.sim.outcomes import ReplicaCount, ServiceOutcome

CLUSTER = [gpu_class(), node("n1"), gpu_slice("n1", 8), template("one", 1)]
# 5 requests/s for a minute, then 25/s: one replica of 10/s is short from 59 s until the HPA adds replicas.
RISING = ((0.0, 5.0), (59.0, 5.0), (60.0, 25.0))


def outcome(sim_result_services: list[ServiceOutcome]) -> ServiceOutcome:
    assert len(sim_result_services) == 1
    return sim_result_services[0]


def test_an_hpa_on_gpu_util_scales_up_as_its_core_decides() -> None:
    service = inference("svc", *RISING, autoscaler=autoscaler(target=60))
    sim = simulate_text(manifest(*CLUSTER, deployment("svc", "one", 1)), until="3m", services=[service])
    result = outcome(sim.result.services)
    # Syncs every 15 s. Until 45 s: 50 % against 60 % → ceil(0.83) = 1. At 60 s the one replica is saturated
    # (100 %): ceil(1 × 100/60) = 2. At 75 s both are saturated (12.5/s each): 4. At 90 s 6.25/s each, 62.5 %:
    # within the 10 % tolerance.
    assert [(e.at_seconds, e.from_replicas, e.to_replicas, e.reason) for e in result.scale_events] == [
        (60.0, 1, 2, "MetricRatio"), (75.0, 2, 4, "MetricRatio")]
    # Observed at each sync, as the scale is decided: the new pods come (and are Ready, no cold start) after it.
    assert result.replicas_over_time == [ReplicaCount(15.0, 1, 1), ReplicaCount(60.0, 2, 1),
                                         ReplicaCount(75.0, 4, 2), ReplicaCount(90.0, 4, 4)]
    assert len(sim.store.state.pods) == 4
    # Misses: the one replica's from 59 s to 60 s (the ramp), then 5/s beyond two replicas' 20/s for 15 s.
    ramp = ServingModel.from_specs([service]).interval(0, 60, (Replica("a", "default/svc", "g"),))[0].missed
    assert result.slo_misses == pytest.approx(ramp + 75.0, rel=1e-6)
    assert result.requests == pytest.approx(5 * 59 + 15 + 25 * 120)
    assert sim.invariant_checks == sim.result.events


def test_slo_misses_when_capacity_is_short() -> None:
    sim = simulate_text(manifest(*CLUSTER, deployment("svc", "one", 1)), until="10m",
                        services=[inference("svc", (0.0, 15.0))])
    result = outcome(sim.result.services)
    assert result.served == pytest.approx(10 * 600)
    assert result.slo_misses == pytest.approx(5 * 600)
    assert result.mean_gpu_util == 100.0


@pytest.mark.parametrize(
    ("name", "on_rate", "replicas_at_end"),
    [
        # DCGM util is 0 without replicas: KEDA never activates again (kedacore/keda#7538)
        ("faithful: stays at zero", False, 0),
        ("activation on the request rate (option): back to one", True, 1),
    ],
)
def test_keda_scales_to_zero_after_its_cooldown(name: str, on_rate: bool, replicas_at_end: int) -> None:
    # Load until 100 s, none from 110 s to 1000 s, load again from 1010 s.
    rate = ((0.0, 5.0), (100.0, 5.0), (110.0, 0.0), (1000.0, 0.0), (1010.0, 5.0))
    service = inference("svc", *rate, autoscaler=autoscaler("keda", target=60, min_replicas=0))
    sim = simulate_text(manifest(*CLUSTER, deployment("svc", "one", 1)), until="20m", services=[service],
                        keda_on_rate=on_rate)
    result = outcome(sim.result.services)
    # Polls every 30 s: last active at 90 s; inactive from 120 s; 90 + 300 < 420.
    events = [(e.at_seconds, e.to_replicas, e.reason) for e in result.scale_events]
    assert events[0] == (420.0, 0, "ScaledToZero")
    assert events[1:] == ([(1020.0, 1, "ScaledFromZero")] if on_rate else [])
    assert len(sim.store.state.pods) == replicas_at_end
    if not on_rate:  # everything from 1000 s is missed: the ramp to 1010 s (2.5/s on average), then 5/s
        assert result.slo_misses == pytest.approx(2.5 * 10 + 5 * (1200 - 1010), rel=1e-6)


def test_mig_and_time_slicing_show_different_utilization() -> None:
    # 6 requests/s over two replicas of 10/s-per-GPU: 3/s each.
    service = inference("svc", (0.0, 6.0))
    sliced = simulate_text(manifest(*CLUSTER, resource_claim("shared", {"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com"}}), shared_deployment("svc", "shared", 2)), until="1m",
        services=[service])
    mig = simulate_text(manifest(gpu_class(), node("n1"), mig_slice("n1", "3g.40gb", 2), template("one", 1),
                                 deployment("svc", "one", 2)), until="1m", services=[service])
    sliced_samples = outcome(sliced.result.services).utilization
    mig_samples = outcome(mig.result.services).utilization
    # Time-sliced: both pods on one GPU, each 30 % busy, DCGM shows the GPU's 60 % for each.
    assert {s.gpu_util for s in sliced_samples} == {60.0}
    assert len({s.device for s in sliced_samples}) == 1
    # MIG 3g: 3/7 of a GPU each (4.29/s), 70 % busy; no GPU_UTIL on MIG, SM activity of the slice's own.
    assert {s.gpu_util for s in mig_samples} == {None}
    assert len({s.device for s in mig_samples}) == 2
    expected = ServingProfile().sm_active_per_busy * 3 / (10 * 3 / 7)
    assert [s.sm_active for s in mig_samples] == pytest.approx([expected] * len(mig_samples), abs=1e-6)
    assert outcome(mig.result.services).mean_gpu_util is None


def test_a_run_with_a_service_is_deterministic() -> None:
    service = inference("svc", *RISING, autoscaler=autoscaler(target=60))
    text = manifest(*CLUSTER, deployment("svc", "one", 1))
    first, second = (simulate_text(text, until="5m", services=[service], seed=3) for _ in range(2))
    assert msgspec.json.encode(first.result) == msgspec.json.encode(second.result)

"""The inference load model: throughput from a replica's share of a device, contention under time-slicing,
isolation under MIG, SLO misses beyond capacity, and the metrics DCGM shows.

Sources: NVIDIA's GPU sharing docs (k8s-device-plugin README "Shared Access to GPUs with CUDA Time-Slicing":
no memory or fault isolation, the GPU's time is shared; MIG user guide: slices are isolated, compute in
slices of 7); NVIDIA/dcgm-exporter#105 and #216 (no DCGM_FI_DEV_GPU_UTIL for MIG instances); kube-proxy's
random backend choice (kubernetes.io/docs/reference/networking/virtual-ips/); vLLM's engine arguments
(--gpu-memory-utilization 0.9).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from tests.builders.serving import GIB, flat, mig, model, service, sliced, whole

from dratwin.scenario.model import ServiceSpec
from dratwin.serving import LoadSnapshot, Replica, ServingProfile, ServingSpecError, mig_compute_fraction

SVC = service("svc", (0, 0))


def at_rate(rps: float, *replicas: Replica, per_gpu: float = 10.0) -> LoadSnapshot:
    return model(ServiceSpec("svc", flat(rps), per_gpu)).snapshot(0, replicas)


@dataclass(frozen=True)
class Case:
    name: str
    snapshot: Callable[[], LoadSnapshot]
    replica: str
    served: float
    busy: float
    dcgm_util: float | None


CASES = [
    # A whole GPU: 6 of its 10 requests/s → 60 % busy, and DCGM shows that.
    Case("whole-gpu-under-capacity", lambda: at_rate(6, whole("a")), "a", 6, 0.6, 60),
    # Beyond capacity the GPU serves what it can; the rest are misses.
    Case("whole-gpu-saturated", lambda: at_rate(15, whole("a")), "a", 10, 1.0, 100),
    # Two whole GPUs for one replica (tensor parallel) serve twice as much.
    Case("two-gpus-one-replica", lambda: at_rate(15, whole("a", gpus=2)), "a", 15, 0.75, 75),
    # A 3g MIG slice holds 3/7 of the compute: capacity 30/7; DCGM has no GPU_UTIL for it.
    Case("mig-slice-capacity", lambda: at_rate(2, mig("a", 3 / 7)), "a", 2, 2 / (30 / 7), None),
    # Time-slicing within capacity: each pod gets what it needs (3 of the 7 requests/s the other's 0.3 of the
    # time leaves it); DCGM shows the device's 60 % for each pod.
    Case(
        "time-sliced-within-capacity",
        lambda: at_rate(6, sliced("a", "gpu0"), sliced("b", "gpu0")),
        "a",
        3,
        3 / 7,
        60,
    ),
    # Time-slicing under contention: 16 requests/s over two pods (8 each) on one 10 requests/s GPU; each gets
    # half the time, 5 requests/s, its capacity halved by the other.
    Case("time-sliced-contention", lambda: at_rate(16, sliced("a", "gpu0"), sliced("b", "gpu0")), "a", 5, 1.0, 100),
    # Replicas not Ready get no traffic (they are not Service endpoints).
    Case("not-ready-gets-nothing", lambda: at_rate(6, whole("a"), whole("b", ready=False)), "a", 6, 0.6, 60),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_replica(case: Case) -> None:
    load = case.snapshot().replica(case.replica)
    assert load.served_rps == pytest.approx(case.served)
    assert load.busy == pytest.approx(case.busy)
    if case.dcgm_util is None:
        assert load.dcgm_gpu_util is None
    else:
        assert load.dcgm_gpu_util == pytest.approx(case.dcgm_util)


def test_time_slicing_is_max_min_fair() -> None:
    # Two services on one time-sliced GPU: the small one (2 of 10/s → 0.2 of the time) is served in full, the
    # large one (12 of 10/s) gets the 0.8 left; utilizations add up to 100 %.
    small, large = ServiceSpec("small", flat(2), 10), ServiceSpec("large", flat(12), 10)
    snap = model(small, large).snapshot(0, [sliced("s", "gpu0", "small"), sliced("l", "gpu0", "large")])
    assert (snap.replica("s").served_rps, snap.replica("l").served_rps) == pytest.approx((2, 8))
    assert snap.devices[0].busy == pytest.approx(1.0)
    assert snap.service("large").missed_rps == pytest.approx(4)


def test_mig_isolates_where_time_slicing_contends() -> None:
    # The same two services on one GPU: as 4g + 3g MIG slices the quiet one keeps its throughput whatever
    # the busy one does; time-sliced, the busy one takes all the time the quiet one leaves.
    quiet, busy = ServiceSpec("quiet", flat(1), 10), ServiceSpec("busy", flat(100), 10)
    twin = model(quiet, busy)
    isolated = twin.snapshot(0, [mig("q", 3 / 7, "quiet"), mig("b", 4 / 7, "busy")])
    shared = twin.snapshot(0, [sliced("q", "gpu0", "quiet"), sliced("b", "gpu0", "busy")])
    assert isolated.replica("q").served_rps == pytest.approx(1)
    assert isolated.replica("b").served_rps == pytest.approx(40 / 7)
    assert shared.replica("q").served_rps == pytest.approx(1)
    assert shared.replica("b").served_rps == pytest.approx(9)
    # DCGM: each MIG slice reports its own profiling metrics; the time-sliced pods both see the whole GPU.
    assert isolated.replica("q").dcgm_sm_active == pytest.approx(0.75 * (1 / (30 / 7)))
    assert shared.replica("q").dcgm_gpu_util == pytest.approx(100)


def test_slo_misses_beyond_capacity_per_interval() -> None:
    # A ramp from 0 to 20 requests/s over 100 s on one 10 requests/s GPU: the misses are the area above
    # capacity, 0.5 × 50 s × 10/s = 250 of 1000 requests.
    twin = model(service("svc", (0, 0), (100, 20)))
    (totals,) = twin.interval(0, 100, [whole("a")])
    assert (totals.offered, totals.served, totals.missed) == pytest.approx((1000, 750, 250))


def test_no_ready_replica_misses_everything() -> None:
    (totals,) = model(ServiceSpec("svc", flat(5), 10)).interval(0, 60, [whole("a", ready=False)])
    assert (totals.offered, totals.missed) == pytest.approx((300, 300))


BALANCING = [
    # An equal split sends a 1g slice as much as a whole GPU: it drops what its 10/7 requests/s cannot serve.
    ("equal-split", "equal", 4 - 10 / 7),
    # Splitting by capacity (opt-in) serves all 8.
    ("capacity-weighted", "capacity", 0.0),
]


@pytest.mark.parametrize(("balancing", "missed"), [c[1:] for c in BALANCING], ids=[c[0] for c in BALANCING])
def test_balancing(balancing: str, missed: float) -> None:
    twin = model(ServiceSpec("svc", flat(8), 10), balancing=balancing)
    assert twin.snapshot(0, [whole("a"), mig("b", 1 / 7)]).service("svc").missed_rps == pytest.approx(missed)


def test_framebuffer_and_cpu() -> None:
    profile = ServingProfile(model_bytes=16 * GIB)
    twin = model(ServiceSpec("svc", flat(5), 10), profile=profile)
    load = twin.snapshot(0, [whole("a", memory_bytes=80 * GIB)]).replica("a")
    # vLLM reserves 90 % of what it sees at start-up, whatever the load.
    assert load.dcgm_fb_used_mib == pytest.approx(0.9 * 80 * 1024, rel=1e-6)
    assert load.cpu_percent == pytest.approx(10 + 50 * 0.5)
    # Without pre-allocation the KV cache grows with the load: weights + busy × (reserve - weights).
    lazy = model(ServiceSpec("svc", flat(5), 10), profile=ServingProfile(16 * GIB, preallocate=False))
    grown = lazy.snapshot(0, [whole("a", memory_bytes=80 * GIB)]).replica("a").dcgm_fb_used_mib
    assert grown == pytest.approx((16 + 0.5 * (72 - 16)) * 1024, rel=1e-6)


def test_two_vllm_servers_on_one_time_sliced_gpu_overcommit_memory() -> None:
    # Time-slicing shares no memory limits: two servers each reserving 90 % of 80 GiB do not fit.
    twin = model(ServiceSpec("svc", flat(1), 10), profile=ServingProfile(model_bytes=16 * GIB))
    snap = twin.snapshot(0, [sliced("a", "gpu0", memory_bytes=80 * GIB), sliced("b", "gpu0", memory_bytes=80 * GIB)])
    assert snap.devices[0].overcommitted


MIG_PROFILES = [("1g.10gb", 7, 1 / 7), ("3g.40gb", 7, 3 / 7), ("7g.80gb", 7, 1.0), ("2g.12gb", 4, 0.5)]


@pytest.mark.parametrize(("profile", "slices", "fraction"), MIG_PROFILES, ids=[p[0] for p in MIG_PROFILES])
def test_mig_compute_fraction(profile: str, slices: int, fraction: float) -> None:
    assert mig_compute_fraction(profile, slices) == pytest.approx(fraction)


@pytest.mark.parametrize("profile", ["gpu", "8g.90gb"])
def test_mig_compute_fraction_rejects(profile: str) -> None:
    with pytest.raises(ValueError, match="MIG profile"):
        mig_compute_fraction(profile)


def test_a_service_without_throughput_is_refused() -> None:
    with pytest.raises(ServingSpecError, match="service svc: requests_per_second_per_gpu must be positive"):
        model(ServiceSpec("svc", flat(1), 0))


def _mixed_fleet() -> tuple[Replica, ...]:
    return (
        whole("w1", "chat"),
        whole("w2", "chat"),
        mig("m1", 3 / 7, "chat"),
        sliced("s1", "gpu-a", "chat"),
        sliced("s2", "gpu-a", "code"),
        sliced("s3", "gpu-b", "code"),
        sliced("s4", "gpu-b", "chat"),
        sliced("s5", "gpu-c", "code"),
        whole("idle", "code", ready=False),
    )


def test_interval_agrees_with_snapshots() -> None:
    # Identical replicas are evaluated once per class (gpu-a and gpu-b hold the same mix); the interval's
    # totals must equal the per-replica snapshot's rates times the duration on a flat load.
    twin = model(ServiceSpec("chat", flat(40), 10), ServiceSpec("code", flat(25), 8))
    fleet = _mixed_fleet()
    snap = twin.snapshot(0, fleet)
    totals = {t.service: t for t in twin.interval(0, 60, fleet)}
    for name in ("chat", "code"):
        assert totals[name].served == pytest.approx(snap.service(name).served_rps * 60)
        assert totals[name].offered == pytest.approx(snap.service(name).offered_rps * 60)
    # gpu-a and gpu-b are the same class: their chat pods serve the same.
    assert snap.replica("s1").served_rps == pytest.approx(snap.replica("s4").served_rps)


def test_a_passed_again_tuple_changes_no_answer() -> None:
    twin = model(ServiceSpec("chat", flat(40), 10), ServiceSpec("code", flat(25), 8))
    fleet = _mixed_fleet()
    twin.snapshot(0, fleet)
    other = fleet[:3]
    fresh = model(ServiceSpec("chat", flat(40), 10), ServiceSpec("code", flat(25), 8))
    assert twin.snapshot(0, other) == fresh.snapshot(0, other)
    assert twin.interval(0, 60, fleet) == fresh.interval(0, 60, fleet)

"""The autoscalers fed by the load model, as a simulation will feed them: what DCGM shows per pod.

Sources: NVIDIA/dcgm-exporter#105 and #216 (no DCGM_FI_DEV_GPU_UTIL for MIG instances), the HPA's handling
of pods without metrics (replica_calculator.go: no metric for any ready pod fails the metric, the count
stays), and kedacore/keda#7538 (GPU-utilization triggers cannot activate from zero).
"""

from __future__ import annotations

from tests.builders.autoscaling import autoscaler
from tests.builders.serving import flat, mig, model, sliced, whole

from dratwin.autoscaling import HorizontalPodAutoscaler, HpaConfig, KedaAutoscaler, KedaConfig, PodSample
from dratwin.scenario.model import ServiceSpec
from dratwin.serving import LoadSnapshot, Replica


def samples(snapshot: LoadSnapshot) -> list[PodSample]:
    return [PodSample(r.replica, r.dcgm_gpu_util, started_at=-3600.0) for r in snapshot.replicas]


def _sync(replicas: list[Replica], rps: float) -> tuple[int, str]:
    load = model(ServiceSpec("svc", flat(rps), 10)).snapshot(0, replicas)
    hpa = HorizontalPodAutoscaler(HpaConfig.from_spec(autoscaler(target=60)))
    decision = hpa.reconcile(0, len(replicas), pods=samples(load))
    return decision.desired_replicas, decision.reason


def test_whole_gpus_scale_on_their_utilization() -> None:
    # 18 requests/s over two 10/s GPUs: 90 % each against 60 % → ceil(2 × 1.5) = 3.
    assert _sync([whole("a"), whole("b")], 18) == (3, "MetricRatio")


def test_mig_replicas_have_no_gpu_util_so_the_hpa_cannot_scale() -> None:
    desired, reason = _sync([mig("a", 3 / 7), mig("b", 3 / 7)], 18)
    assert desired == 2
    assert reason.startswith("FailedGetPodsMetric")


def test_time_sliced_pods_see_the_device_total() -> None:
    # Two pods on one GPU, 3 requests/s each of 10/s: each is 30 % busy but DCGM shows both the GPU's 60 %.
    assert _sync([sliced("a", "gpu0"), sliced("b", "gpu0")], 6) == (2, "WithinTolerance")


def test_keda_on_gpu_util_stays_at_zero_without_another_activation_value() -> None:
    twin = model(ServiceSpec("svc", flat(5), 10))
    keda = KedaAutoscaler(KedaConfig.from_spec(autoscaler("keda", target=60, min_replicas=0)))
    nothing = twin.snapshot(0, [])
    total = sum(r.dcgm_gpu_util or 0.0 for r in nothing.replicas)
    assert keda.poll(0, 0, total).desired_replicas == 0
    assert nothing.service("svc").missed_rps == 5
    # Activity decided on the request rate instead: one replica.
    assert keda.poll(30, 0, total, activation_value=twin.rate_at("svc", 30)).desired_replicas == 1

"""The provisioner benchmarks run once on small inputs and report what they measure."""

from __future__ import annotations

from dratwin.benchmarks import provisioner_bench
from dratwin.benchmarks.runner import resolve


def test_provisioner_benchmark_is_registered() -> None:
    assert "provisioner" in resolve(None)


def test_shapes_are_karpenters_and_the_dra_mix() -> None:
    objects = provisioner_bench.karpenter_shape(10)
    pods = [o.raw for o in objects if o.kind == "Pod"]
    assert len(pods) == 10 and [o.kind for o in objects].count("NodePool") == 1
    assert sum("nodeSelector" in p["spec"] for p in pods) == 5
    dra = provisioner_bench.dra_shape(20)
    kinds = {o.kind for o in dra}
    assert {"DeviceClass", "ResourceClaimTemplate", "NodePool", "Pod"} <= kinds
    templates = {o.raw["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] for o in dra if o.kind == "Pod"}
    assert templates <= set(provisioner_bench.DRA_MIX)


def test_each_provisioner_benchmark_runs_once() -> None:
    results = provisioner_bench.run(
        repeats=1,
        sizes=(200,),
        dra_pods=20,
        cost_sets=(("dra_8pods", lambda: provisioner_bench.dra_shape(8)),),
        time_limit=5.0,
    )
    assert [r.name for r in results] == [
        "provisioner.karpenter_200pods",
        "provisioner.dra_20pods",
        "provisioner.cost_ratio.dra_8pods",
    ]
    timing, dra, ratio = results
    assert timing.unit == "s" and timing.value > 0 and "0 unprovisionable" in timing.detail
    assert dra.target == provisioner_bench.DRA_TARGET_S and "0 unprovisionable" in dra.detail
    assert ratio.unit == "x" and ratio.value >= 1.0 - 1e-9 and ratio.target == provisioner_bench.COST_RATIO_TARGET
    assert "MILP" in ratio.detail and "lower bound" in ratio.detail

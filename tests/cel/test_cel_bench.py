"""The CEL benchmark runs once, quickly, and reports its three figures."""

from __future__ import annotations

from dratwin.benchmarks import cel_bench


def test_cel_benchmark_runs_once() -> None:
    results = cel_bench.run(repeats=1, min_repeat_s=0.0)
    assert [r.name for r in results] == ["cel.matches_cached", "cel.matches_uncached", "cel.compile"]
    assert [r.target for r in results] == [2.0, None, None]
    assert all(r.unit == "µs" and r.value > 0 for r in results)
    assert "p5.48xlarge" in results[0].detail and "fresh content" in results[1].detail


def test_embedded_device_is_the_shared_one() -> None:
    device, _ = cel_bench.h100_device()
    assert device.capacity["memory"].value == "81559Mi"
    assert device.attributes["productName"].string == "NVIDIA H100 80GB HBM3"
    assert (
        cel_bench.msgspec.convert(cel_bench._EMBEDDED_H100, cel_bench.Device).attributes.keys()
        == device.attributes.keys()
    )

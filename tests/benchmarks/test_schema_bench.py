"""The structural-check benchmarks run once, quickly, on valid input."""

from __future__ import annotations

from dratwin.api.schema import builtin_schema, check_structure
from dratwin.benchmarks import schema_bench


def test_each_schema_benchmark_runs_once() -> None:
    results = schema_bench.run(repeats=1, min_repeat_s=0.0, dump_slices=2, dump_runs=1)
    assert [r.name for r in results] == ["schema.check_slice_128", "schema.per_value", "schema.intake_0k_devices"]
    assert [r.unit for r in results] == ["µs", "µs", "s"]
    assert results[1].target == schema_bench.TARGET_PER_VALUE_US
    assert all(r.value > 0 for r in results)


def test_the_benchmark_slices_are_valid_in_both_versions() -> None:
    for version, v1beta1 in (("v1", False), ("v1beta1", True)):
        raw = schema_bench.make_slice(0, v1beta1=v1beta1)
        root = builtin_schema().kind(f"resource.k8s.io/{version}", "ResourceSlice")
        assert root is not None and check_structure(raw, root) == []
        assert len(raw["spec"]["devices"]) == schema_bench.DEVICES_PER_SLICE

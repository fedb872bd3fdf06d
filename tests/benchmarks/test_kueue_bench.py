"""Kueue's performance shapes (test/performance/scheduler/configs/*/generator.yaml at Kueue ff69552), its
checker's figures (runner/recorder/recorder.go, checker/checker_test.go) and small shapes run through the
simulation's Kueue controller."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dratwin.benchmarks import kueue_bench, kueue_shapes
from dratwin.benchmarks.kueue_checker import UsageIntegral, WorkloadRecord, check, figures
from dratwin.benchmarks.kueue_shapes import BASELINE, LARGE_SCALE, TAS, Shape
from dratwin.benchmarks.runner import resolve


@dataclass(frozen=True)
class SizeCase:
    shape: Shape
    workloads: int
    cluster_queues: int
    nodes: int


SIZES = [SizeCase(BASELINE, 15_000, 30, 0), SizeCase(LARGE_SCALE, 50_000, 1_000, 0), SizeCase(TAS, 15_000, 30, 640)]


@pytest.mark.parametrize("case", SIZES, ids=lambda c: c.shape.name)
def test_each_shape_has_kueues_counts(case: SizeCase) -> None:
    # benchmarks.md 3.1: baseline 5 x 6 CQs x 500, large-scale 10 x 100 x 50, tas 1 x 10 x 64 nodes
    assert (case.shape.workload_count, case.shape.cluster_queue_count, case.shape.node_count) == (
        case.workloads, case.cluster_queues, case.nodes)


def test_the_baseline_is_named_and_timed_as_kueues_generator_makes_it() -> None:
    # generator.go: CQ {class}-{set}-{index}-{cohort}; Workload {class}-{set}-{k}-{template}, created
    # after (k + 1) waits of its set's creationIntervalMs
    objects = kueue_shapes.generate(BASELINE)
    cqs = [o for o in objects.cluster if o["kind"] == "ClusterQueue"]
    assert cqs[0]["metadata"]["name"] == "cq-0-0-cohort-0" and cqs[0]["spec"]["cohortName"] == "cohort-0"
    assert cqs[0]["spec"]["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    quota = cqs[0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert (quota["nominalQuota"], quota["borrowingLimit"]) == ("20", "100")
    mine = {a.workload["metadata"]["name"]: a for a in objects.arrivals if a.cluster_queue == "cq-0-0-cohort-0"}
    assert len(mine) == 500
    assert (mine["small-0-4-0"].at_seconds, mine["large-2-0-0"].at_seconds) == (0.5, 1.2)
    assert mine["medium-1-99-0"].at_seconds == 50.0 and mine["medium-1-99-0"].runtime_seconds == 0.5
    large = mine["large-2-0-0"].workload
    assert large["spec"]["priority"] == 200 and large["spec"]["queueName"] == "cq-0-0-cohort-0"
    assert large["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "20"}}
    assert [a.at_seconds for a in objects.arrivals] == sorted(a.at_seconds for a in objects.arrivals)


def test_the_tas_shape_makes_gangs_with_topology_requests_over_labelled_nodes() -> None:
    # topology_generator.go: node-b0-r2-n15 labelled with each level's value; generator.go: podCount pods
    objects = kueue_shapes.generate(TAS)
    nodes = {o["metadata"]["name"]: o for o in objects.cluster if o["kind"] == "Node"}
    labels = nodes["node-b0-r2-n15"]["metadata"]["labels"]
    assert labels["cloud.provider.com/topology-rack"] == "rack-2" and labels["kubernetes.io/hostname"] == "node-15"
    [flavor] = [o for o in objects.cluster if o["kind"] == "ResourceFlavor"]
    assert flavor["spec"] == {"nodeLabels": {"tas-node-group": "tas"}, "topologyName": "default-topology"}
    by_class = {a.class_name: a.workload["spec"]["podSets"][0] for a in objects.arrivals}
    assert by_class["large-balanced-rack"]["count"] == 8
    assert by_class["large-balanced-rack"]["topologyRequest"] == {
        "podSetSliceRequiredTopology": "cloud.provider.com/topology-rack", "podSetSliceSize": 4}
    assert by_class["small-preferred-rack"]["topologyRequest"] == {"preferred": "cloud.provider.com/topology-rack"}


def test_the_checker_counts_a_workload_never_admitted_with_zero_and_keeps_the_last_admission() -> None:
    # recorder.go: TimeToAdmitMs set at each admission (the last one stays); refreshAverage over Count
    records = [WorkloadRecord("small", 0.0, admitted=4.0), WorkloadRecord("small", 1.0, admitted=9.0, evictions=1),
               WorkloadRecord("small", 2.0)]
    found = figures(records, [])
    assert found.admission["small"].mean_seconds == pytest.approx((4 + 8 + 0) / 3)
    assert (found.admission["small"].not_admitted, found.admission["small"].evictions) == (1, 1)


def test_the_usage_is_the_integral_over_the_summed_nominal_quota_and_the_span() -> None:
    # checker_test.go: CPUUsed * 100 / (NominalQuota * (LastEventTime - FirstEventTime))
    first, second = UsageIntegral("cq", 20, 0.0), UsageIntegral("cq", 20, 0.0)
    first.record(2.0, 40)  # borrowing: twice its nominal from 2 s
    first.record(4.0, 0)
    second.record(10.0, 0)
    found = figures([], [first, second])
    assert found.usage_pct["cq"] == pytest.approx(100 * 80 / (40 * 10))
    # the bound is the published mean less 7 points
    [(figure, twin, kueue, within)] = check(found, {}, published_usage_pct=26.0).lines
    assert (figure, kueue, within) == ("cq usage (%)", 26.0, True) and twin == pytest.approx(20.0)
    assert check(found, {}, published_usage_pct=28.0).lines[0][3] is False


def test_a_small_baseline_runs_to_the_end_with_every_workload_admitted_and_finished() -> None:
    shape = kueue_shapes.scaled(BASELINE, cohorts=2, queues=2, workloads=0.05)
    run = kueue_bench.run_shape(shape)
    assert len(run.workloads) == shape.workload_count
    assert all(r.admitted is not None and r.finished is not None for r in run.workloads.values())
    assert all(r.created <= r.admitted <= r.finished for r in run.workloads.values())  # type: ignore[operator]
    assert run.figures().usage_pct["cq"] > 0
    names = [r.name for r in kueue_bench.results(shape, run)]
    assert names[0] == "kueue.baseline-scaled.wall_s" and "kueue.baseline-scaled.admission.small" in names


def test_a_lone_queue_never_goes_past_its_nominal_quota_and_its_workloads_wait() -> None:
    # a cohort of one ClusterQueue has nobody to borrow from: 20 CPU at most, the 20-CPU Workloads queue
    shape = kueue_shapes.scaled(BASELINE, cohorts=1, queues=1, workloads=0.2)
    run = kueue_bench.run_shape(shape)
    [usage] = run.usage.values()
    assert usage.peak == 20_000  # millicores
    found = run.figures()
    assert found.admission["medium"].mean_seconds > 0 and found.admission["small"].not_admitted == 0


def test_the_baseline_preempts_within_its_cluster_queue_and_the_victim_runs_its_whole_time_again() -> None:
    # baseline generator.yaml: withinClusterQueue LowerPriority; the large (priority 200) Workload arriving at
    # 1.2 s takes the quota of a medium (priority 100) one admitted before it, which is admitted again later
    # and finishes runtimeMs (500 ms) after that last admission (runner.go finishes it after its runtime)
    shape = kueue_shapes.scaled(BASELINE, cohorts=1, queues=2, workloads=0.05)
    run = kueue_bench.run_shape(shape)
    assert run.preemptions > 0
    evicted = [r for r in run.workloads.values() if r.evictions]
    assert evicted and {r.class_name for r in evicted} <= {"small", "medium"}
    for record in evicted:
        assert record.admitted is not None and record.finished == pytest.approx(
            record.admitted + (0.5 if record.class_name == "medium" else 0.2))
    assert sum(c.evictions for c in run.figures().admission.values()) == run.preemptions


def test_the_benchmark_is_registered() -> None:
    assert "kueue" in resolve(None)

"""TAS in flavor assignment and the scheduling cycle (pkg/scheduler/flavorassigner/tas_flavorassigner.go,
flavorassigner.go assignFlavors, scheduler.go updateAssignmentIfNeeded at Kueue ff69552; the semantics of
pkg/scheduler/scheduler_tas_test.go), and what a started Job carries (pkg/podset FromAssignment)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.kueue import (
    cluster_queue,
    container,
    flavor_quotas,
    group,
    job,
    pod_set,
    pod_spec,
    quota,
    resource_flavor,
    workload,
)
from tests.builders.kueue_tas import HOST, RACK, TWO_LEVELS, default_tree, node_views, tas_flavor, topology
from tests.builders.manifests import load, manifest, pod

from dratwin.api.kueue import ClusterQueue, Configuration, ResourceFlavor, Topology, Workload
from dratwin.kueue.cycle import NO_LONGER_FITS, Entry, Snapshot, scheduling_cycle
from dratwin.kueue.jobs import NotQueued, admitted_job, workload_for_job
from dratwin.kueue.quota import QuotaTree
from dratwin.kueue.tas.admission import TasContext, tas_context
from dratwin.kueue.tas.encoding import decode, gated, node_selectors, ungated
from dratwin.kueue.usage import WorkloadUsage, workload_usage
from dratwin.scheduler.profile import Options
from dratwin.sim.one_shot import OneShot

Wire = dict[str, Any]
FLAVORS = [tas_flavor("tas"), tas_flavor("plain", topology_name=None), resource_flavor("gpu", {"pool": "gpu"})]


def _cq(*flavors: str, name: str = "cq", cpu: Any = 100) -> Wire:
    return cluster_queue(name, group(["cpu"], *(flavor_quotas(f, quota("cpu", cpu)) for f in flavors)))


def _workload(name: str, count: int, request: Wire | None = None, cpu: str = "1") -> Wire:
    extra = {"topologyRequest": request} if request is not None else {}
    return workload(name, pod_set(count=count, spec=pod_spec(container({"cpu": cpu})), **extra))


def _context(levels: Sequence[str] = TWO_LEVELS, config: Wire | None = None) -> TasContext | None:
    return tas_context([msgspec.convert(f, ResourceFlavor) for f in FLAVORS],
                       [msgspec.convert(topology(levels), Topology)], node_views(default_tree()),
                       config=msgspec.convert(config, Configuration) if config else None)


def _snapshot(queues: Sequence[Wire], tas: TasContext | None) -> Snapshot:
    cqs = [msgspec.convert(q, ClusterQueue) for q in queues]
    return Snapshot({cq.metadata.name: cq for cq in cqs},
                    {f["metadata"]["name"]: msgspec.convert(f, ResourceFlavor) for f in FLAVORS},
                    QuotaTree.build(cqs, []), topology=tas)


def _entry(wire: Wire, cq: str = "cq", timestamp: float = 0.0) -> Entry:
    wl = msgspec.convert(wire, Workload)
    usage = workload_usage(wl)
    assert isinstance(usage, WorkloadUsage)
    return Entry(wl, cq, usage, timestamp)


@dataclass(frozen=True)
class Case:
    name: str
    cite: str
    queue: Wire
    workload: Wire
    booked: dict[str, dict[str, int]] = field(default_factory=dict)  # TAS usage already on leaves of "tas"
    flavor: str = ""  # admitted with this cpu flavor ...
    placed: list[tuple[tuple[str, ...], int]] | None = None  # ... and this topology assignment (None: no TAS)
    reason: str = ""  # or pending with this reason and message
    message: str = ""


CASES = [
    Case("required rack: quota and topology both fit",
         "scheduler_tas_test.go (workload required TAS gets scheduled)",
         _cq("tas"), _workload("w", 2, {"required": RACK}), flavor="tas", placed=[(("b2", "r2"), 2)]),
    Case("topology full now, not in an empty cluster: Preempt, so it waits for quota with the TAS message",
         "flavorassigner.go assignFlavors (TAS failure in Fit mode turns the PodSet to Preempt, then the "
         "empty-cluster check passes)",
         _cq("tas"), _workload("w", 2, {"required": RACK}),
         booked={"b1,r2": {"cpu": 3000, "pods": 3}, "b2,r2": {"cpu": 2000, "pods": 2}},
         reason="WaitingForQuota",
         message='couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of 2 pod(s). '
                 'Total nodes: 4; excluded: resource "cpu": 2'),
    Case("no rack holds the pods even in an empty cluster: NoFit, TopologyPlacementFailed",
         "flavorassigner.go assignFlavors (WithSimulateEmpty fails: NoFit, TopologyPlacementFailed)",
         _cq("tas"), _workload("w", 4, {"required": RACK}), reason="TopologyPlacementFailed",
         message='couldn\'t assign flavors to pod set main: topology "default" allows to fit only 3 out of 4 pod(s)'),
    Case("quota short: the topology is not looked at",
         "flavorassigner.go assignFlavors (NoFit returns before TAS)",
         _cq("tas", cpu=1), _workload("w", 2, {"required": RACK}), reason="ExceedsMaxQuota",
         message="couldn't assign flavors to pod set main: insufficient quota for cpu in flavor tas, previously "
                 "considered podsets requests (0) + current podset request (2) > maximum capacity (1)"),
    Case("a TAS-only ClusterQueue places a PodSet that asks nothing, unconstrained: the least free leaf that fits",
         "tas_flavorassigner.go isTASImplied; tas_cache_test.go 'no annotation; implied default to unconstrained'",
         _cq("tas"), _workload("w", 3), flavor="tas", placed=[(("b1", "r2"), 3)]),
    Case("a flavor without topology is skipped for a PodSet that asks for TAS",
         "tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS",
         _cq("plain", "tas"), _workload("w", 1, {"required": RACK}), flavor="tas", placed=[(("b1", "r1"), 1)]),
    Case("a PodSet that asks nothing cannot use a TAS flavor in a mixed ClusterQueue",
         "tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS ('supports only TopologyAwareScheduling')",
         _cq("tas", "plain"), _workload("w", 1), flavor="plain"),
    Case("no flavor for the PodSet: each says why",
         "tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS",
         _cq("plain", "tas"), _workload("w", 1, {"required": "zone"}), reason="NoMatchingFlavor",
         message='couldn\'t assign flavors to pod set main: Flavor "plain" does not support TopologyAwareScheduling, '
                 'Flavor "tas" does not contain the requested level'),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_admission(case: Case) -> None:
    tas = _context()
    assert tas is not None
    tas.flavors["tas"].add_usage(case.booked)
    result = scheduling_cycle(_snapshot([case.queue], tas), [_entry(case.workload)])
    if case.reason:
        [pending] = result.pending
        assert (pending.reason, pending.message) == (case.reason, case.message)
        assert not result.admitted
        return
    [admitted] = result.admitted
    [assigned] = admitted.admission_status()["podSetAssignments"]  # type: ignore[index]
    assert assigned["flavors"] == {"cpu": case.flavor}
    if case.placed is None:
        assert "topologyAssignment" not in assigned
        return
    stored = decode(assigned["topologyAssignment"])
    assert stored.levels == TWO_LEVELS
    assert [(d.values, d.count) for d in stored.domains] == case.placed


def test_the_cycle_books_each_admission_and_recomputes_the_next() -> None:
    """scheduler.go updateAssignmentIfNeeded: an assignment a previous admission of the cycle made stale is
    computed again (TASRecomputeAssignmentWithinSchedulingCycle, beta, on); when nothing is left the
    Workload 'no longer fits'."""
    tas = _context()
    assert tas is not None
    queues = [_cq("tas", name="a"), _cq("tas", name="b"), _cq("tas", name="c")]
    heads = [_entry(_workload(n, 2, {"required": RACK}), cq, t) for n, cq, t in (("w1", "a", 0), ("w2", "b", 1),
                                                                                 ("w3", "c", 2))]
    result = scheduling_cycle(_snapshot(queues, tas), heads)
    placed = {a.entry.workload.metadata.name: a.assignment.pod_sets[0].topology for a in result.admitted}
    assert {n: [(d.values, d.count) for d in t.domains] for n, t in placed.items() if t} == {
        "w1": [(("b2", "r2"), 2)], "w2": [(("b1", "r2"), 2)]}
    [pending] = result.pending
    assert (pending.entry.workload.metadata.name, pending.message, pending.retry_now) == ("w3", NO_LONGER_FITS, True)
    assert tas.flavors["tas"].tas_usage["b2,r2"] == {"cpu": 2000, "pods": 2}


def test_the_gate_off_or_no_topology_means_no_tas() -> None:
    """features TopologyAwareScheduling (beta, on since 0.14): off, flavors are matched on quota alone."""
    assert _context(config={"featureGates": {"TopologyAwareScheduling": False}}) is None
    assert tas_context([msgspec.convert(FLAVORS[1], ResourceFlavor)], [], []) is None


def test_a_started_job_is_gated_and_carries_its_request() -> None:
    """jobs/job PodSets (topology request with the completion index label) and podset.FromAssignment (the
    kueue.x-k8s.io/topology gate; the unconstrained annotation when TAS was implied)."""
    annotated = job(spec=pod_spec(container({"cpu": "1"})))
    annotated["spec"]["template"]["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-required-topology": RACK}}
    made = workload_for_job(annotated)
    assert isinstance(made, dict)
    assert made["spec"]["podSets"][0]["topologyRequest"] == {
        "required": RACK, "podIndexLabel": "batch.kubernetes.io/job-completion-index"}
    started = admitted_job(job(), [msgspec.convert(FLAVORS[0], ResourceFlavor)], topology=True)
    assert isinstance(started, dict)
    template = started["spec"]["template"]
    assert template["spec"]["schedulingGates"] == [{"name": "kueue.x-k8s.io/topology"}]
    assert template["metadata"]["annotations"] == {"kueue.x-k8s.io/podset-unconstrained-topology": "true"}
    plain = admitted_job(job(), [msgspec.convert(FLAVORS[1], ResourceFlavor)])
    assert isinstance(plain, dict) and "schedulingGates" not in plain["spec"]["template"]["spec"]


def test_the_scheduler_twin_places_each_pod_on_its_assigned_host() -> None:
    """topology_ungater.go: each pod of the PodSet gets its domain's nodeSelector; kube-scheduler then binds
    it there (the twin's one-shot run over the same nodes)."""
    tas = _context(levels=(*TWO_LEVELS, HOST))
    assert tas is not None
    result = scheduling_cycle(_snapshot([_cq("tas")], tas), [_entry(_workload("w", 3, {"required": RACK}))])
    [admitted] = result.admitted
    topology = admitted.assignment.pod_sets[0].topology
    assert topology is not None
    selectors = list(node_selectors(topology))
    pods = [ungated(gated_pod(f"w-{i}"), selector) for i, selector in enumerate(selectors)]
    loaded = load(manifest(*default_tree(), *pods))
    OneShot(loaded, Options()).run(loaded.pending)
    assert [loaded.state.pods[f"default/w-{i}"].pod.spec.node_name for i in range(3)] == \
        [s[HOST] for s in selectors] == ["x1", "x5", "x6"]


def gated_pod(name: str) -> Wire:
    raw = pod(name, cpu="1")
    raw["spec"] = gated(raw["spec"])  # type: ignore[arg-type]
    return raw


def test_workloads_admitted_before_take_their_domains() -> None:
    """tas_flavor.go addUsage: an admitted Workload's stored topologyAssignment is booked on its leaves."""
    tas = _context()
    assert tas is not None
    first = scheduling_cycle(_snapshot([_cq("tas")], tas), [_entry(_workload("w", 2, {"required": RACK}))])
    stored = _workload("w", 2, {"required": RACK})
    stored["status"] = {"admission": first.admitted[0].admission_status()}
    fresh = _context()
    assert fresh is not None
    fresh.book_admitted(msgspec.convert(stored, Workload))
    assert fresh.flavors["tas"].tas_usage == {"b2,r2": {"cpu": 2000, "pods": 2}}


def test_kueue_s_webhook_refuses_bad_topology_annotations() -> None:
    """job_webhook.go ValidateTASPodSetRequest: the Job is refused, so no Workload is made."""
    refused = job(parallelism=2)
    refused["spec"]["template"]["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-slice-required-topology": RACK}}
    made = workload_for_job(refused)
    assert isinstance(made, NotQueued)
    assert made.reason == ("Kueue's webhook refuses the Job: spec.template.metadata.annotations"
                           "[kueue.x-k8s.io/podset-slice-size]: must be set when "
                           "'kueue.x-k8s.io/podset-slice-required-topology' is specified")


def test_a_pod_set_group_is_placed_together() -> None:
    """tas_flavor_snapshot.go FindTopologyAssignmentsForFlavor: PodSets of one podSetGroupName are one unit,
    the one-pod PodSet leading (findLeaderAndWorkers); both land in the one rack that holds them all."""
    grouped = {"required": RACK, "podSetGroupName": "g"}
    wire = workload("lws", pod_set("leader", 1, pod_spec(container({"cpu": "1"})), topologyRequest=grouped),
                    pod_set("workers", 2, pod_spec(container({"cpu": "1"})), topologyRequest=grouped))
    tas = _context()
    assert tas is not None
    result = scheduling_cycle(_snapshot([_cq("tas")], tas), [_entry(wire)])
    [admitted] = result.admitted
    placed = {p.name: [(d.values, d.count) for d in p.topology.domains] for p in admitted.assignment.pod_sets
              if p.topology is not None}
    assert placed == {"leader": [(("b1", "r2"), 1)], "workers": [(("b1", "r2"), 2)]}
    assert tas.flavors["tas"].tas_usage["b1,r2"] == {"cpu": 3000, "pods": 3}

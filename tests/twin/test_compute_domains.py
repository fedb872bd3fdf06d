"""NVIDIA ComputeDomains in the twin: the controller's templates, the workload pods on their channels, the IMEX
daemons that follow them, and what ``explain`` says when a channel claim fits nowhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from tests.builders.compute_domains import (
    channel_pod,
    compute_domain,
    compute_domain_classes,
    gb200_node,
    gb200_nodes,
)
from tests.builders.manifests import devices_of, generated_claims, manifest, node, run

from dratwin.twin.explain import explain_pod
from dratwin.twin.report import objects as objects_of
from dratwin.twin.schedule import ScheduleReport

Raw = dict[str, Any]
DRIVER_NS = "nvidia-dra-driver-gpu"
UID = "11111111-2222-3333-4444-555555555555"
DAEMONS = f"computedomain-daemon-{UID}"


def _domain(**kwargs: Any) -> Raw:
    return compute_domain(uid=UID, **kwargs)


@dataclass(frozen=True)
class Case:
    name: str
    objects: list[Raw]
    placed: dict[str, str | None]  # workload pod -> node (None: pending); "*": any node not taken by another
    daemons_on: list[str] = field(default_factory=list)  # nodes that get an IMEX daemon
    warning: str = ""  # a fragment of one of the run's warnings
    note: str = ""  # a fragment of one of the run's notes


TWO_NODES = gb200_nodes("gb-1", "gb-2")
CASES = [
    Case("nvidia-demo-two-pods-two-nodes",
         [*compute_domain_classes(), *TWO_NODES, _domain(num_nodes=2), channel_pod("w-0"), channel_pod("w-1")],
         {"ml/w-0": "*", "ml/w-1": "*"}, ["gb-1", "gb-2"],
         note="turns Ready once 2 daemon(s) are Ready (numNodes 2)"),
    Case("one-channel-per-node",
         [*compute_domain_classes(), *gb200_nodes("gb-1"), _domain(num_nodes=2), channel_pod("w-0"),
          channel_pod("w-1")],
         {"ml/w-0": "gb-1", "ml/w-1": None}, ["gb-1"], note="with 1 of numNodes 2 it stays NotReady"),
    Case("nodes-without-compute-domain-devices",
         [*compute_domain_classes(), node("p5-1", labels={"node.kubernetes.io/instance-type": "p5.48xlarge"}),
          _domain(), channel_pod("w-0")],
         {"ml/w-0": None}, [], note="no pod holds a channel of it yet"),
    Case("pods-in-two-cliques",
         [*compute_domain_classes(), *gb200_nodes("gb-1", clique="cluster-a.1"),
          *gb200_nodes("gb-2", clique="cluster-b.7"), _domain(),
          channel_pod("w-0", node_selector={"kubernetes.io/hostname": "gb-1"}),
          channel_pod("w-1", node_selector={"kubernetes.io/hostname": "gb-2"})],
         {"ml/w-0": "gb-1", "ml/w-1": "gb-2"}, ["gb-1", "gb-2"], warning="spans 2 NVLink cliques"),
    Case("node-outside-any-clique",
         [*compute_domain_classes(), gb200_node("gb-1", clique=""),
          *[o for o in gb200_nodes("gb-1") if o["kind"] == "ResourceSlice"], _domain(), channel_pod("w-0")],
         {"ml/w-0": "gb-1"}, ["gb-1"], warning="have no nvidia.com/gpu.clique"),
    Case("template-written-by-hand-too",
         [*compute_domain_classes(), *TWO_NODES, _domain(),
          {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "imex-channel-0", "namespace": "ml"},
           "spec": {"spec": {"devices": {"requests": [{"name": "channel", "exactly": {
               "deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}}}},
          channel_pod("w-0")],
         {"ml/w-0": "*"}, [], warning="the controller's create fails (AlreadyExists)",
         note="no pod holds a channel of it yet"),
]


def _report(case: Case) -> ScheduleReport:
    return run(manifest(case.objects))


def _daemons(report: ScheduleReport) -> dict[str, str | None]:
    return {a.pod: a.node for a in report.attempts if a.pod.startswith(f"{DRIVER_NS}/{DAEMONS}-")}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compute_domain_pods_and_daemons(case: Case) -> None:
    report = _report(case)
    workloads = {a.pod: a.node for a in report.attempts if a.pod.startswith("ml/")}
    assert workloads.keys() == case.placed.keys()
    for pod, expected in case.placed.items():
        assert workloads[pod] == expected or (expected == "*" and workloads[pod] is not None), workloads
    used = [n for n in workloads.values() if n]
    assert len(used) == len(set(used))  # one channel per node: never two of these pods on one node
    daemons = _daemons(report)
    assert sorted(n for n in daemons.values() if n) == case.daemons_on
    assert all(daemons.values()), daemons  # every daemon is placed on its node
    for name in case.daemons_on:
        assert report.state.nodes[name].node.metadata.labels["resource.nvidia.com/computeDomain"] == UID
    if case.warning:
        assert any(case.warning in w for w in report.loaded.unmodelled), report.loaded.unmodelled
    if case.note:
        assert any(case.note in n for n in report.loaded.notes), report.loaded.notes


def test_the_controller_writes_the_channel_template_the_domain_names() -> None:
    report = run(manifest(_domain(allocation_mode="All")))
    template = report.state.templates["ml/imex-channel-0"]
    assert template.metadata.labels == {"resource.nvidia.com/computeDomain": UID,
                                        "resource.nvidia.com/computeDomainTarget": "Workload"}
    [request] = template.spec.spec.devices.requests
    assert request.name == "channel"
    assert request.exactly is not None
    assert request.exactly.device_class_name == "compute-domain-default-channel.nvidia.com"
    [config] = template.spec.spec.devices.config
    assert config.opaque is not None
    assert config.opaque.driver == "compute-domain.nvidia.com"
    assert config.opaque.parameters == {"apiVersion": "resource.nvidia.com/v1beta1",
                                        "kind": "ComputeDomainChannelConfig", "allocationMode": "All",
                                        "domainID": UID}
    daemon = report.state.templates[f"{DRIVER_NS}/{DAEMONS}"]
    assert daemon.spec.spec.devices.requests[0].exactly is not None
    assert daemon.spec.spec.devices.requests[0].exactly.device_class_name == "compute-domain-daemon.nvidia.com"


def test_a_workload_claim_gets_channel_0_and_the_daemon_gets_daemon_0() -> None:
    report = run(manifest(*compute_domain_classes(), *gb200_nodes("gb-1"), _domain(), channel_pod("w-0")))
    [claim] = generated_claims(report, "ml/w-0")
    assert devices_of(claim) == ["compute-domain.nvidia.com/gb-1/channel-0"]
    [daemon] = [key for key in _daemons(report)]
    record = report.state.pods[daemon]
    spec = record.raw["spec"]
    assert spec["nodeName"] == "gb-1"
    assert spec["nodeSelector"] == {"resource.nvidia.com/computeDomain": UID}
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gb-1"]}]}]}
    assert record.raw["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    [daemon_claim] = generated_claims(report, daemon)
    assert devices_of(daemon_claim) == ["compute-domain.nvidia.com/gb-1/daemon-0"]


def test_a_domain_the_api_server_refuses_leaves_its_pods_waiting_for_the_template() -> None:
    report = run(manifest(*compute_domain_classes(), *TWO_NODES, _domain(allocation_mode="single"),
                          channel_pod("w-0")))
    assert any("spec.channel.allocationMode" in r for r in report.loaded.rejections)
    assert [b.pod for b in report.loaded.blocked] == ["ml/w-0"]
    assert "imex-channel-0" in report.loaded.blocked[0].reason


def test_two_domains_naming_one_template_leave_the_second_without_it() -> None:
    other = compute_domain(name="imex-2", uid="99999999-2222-3333-4444-555555555555")
    report = run(manifest(_domain(), other))
    template = report.state.templates["ml/imex-channel-0"]
    assert template.metadata.labels["resource.nvidia.com/computeDomain"] == UID  # the first domain's
    [warning] = [w for w in report.loaded.unmodelled if "AlreadyExists" in w]
    assert warning.startswith("ComputeDomain ml/imex-2: ResourceClaimTemplate ml/imex-channel-0 exists")


def test_a_domain_without_a_uid_gets_the_same_one_every_run() -> None:
    first, second = (run(manifest(compute_domain())).loaded.compute_domains.domains for _ in range(2))
    assert [d.uid for d in first] == [d.uid for d in second]


def test_explain_says_why_a_channel_claim_fits_no_node() -> None:
    case = next(c for c in CASES if c.name == "nodes-without-compute-domain-devices")
    lines = explain_pod(_report(case), "ml/w-0").lines()
    assert any("p5-1 (p5.48xlarge): no compute-domain.nvidia.com devices" in line for line in lines), lines


def test_explain_names_the_pod_holding_the_nodes_channel() -> None:
    case = next(c for c in CASES if c.name == "one-channel-per-node")
    lines = explain_pod(_report(case), "ml/w-1").lines()
    held = [line for line in lines if "its one IMEX channel (channel-0) is held by" in line]
    assert len(held) == 1 and "ComputeDomain ml/imex (pod w-0)" in held[0], lines


def test_explain_of_a_placed_pod_names_its_clique() -> None:
    case = next(c for c in CASES if c.name == "nvidia-demo-two-pods-two-nodes")
    report = _report(case)
    node = report.state.pods["ml/w-0"].pod.spec.node_name
    notes = explain_pod(report, "ml/w-0").notes
    assert any(f"holds the IMEX channel of node {node} (NVLink clique cluster-a.1)" in n for n in notes), notes


def test_a_dump_of_the_result_is_read_back_as_it_is() -> None:
    """``kubectl get -A -o yaml`` after the run: the controller's templates, the bound pods, their claims and the
    daemons are there, so nothing is created twice."""
    objects = [*compute_domain_classes(), *TWO_NODES, _domain(num_nodes=2), channel_pod("w-0"), channel_pod("w-1")]
    first = run(manifest(objects))
    templates = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                  **msgspec.to_builtins(t)} for t in first.state.templates.values()]
    labelled = [{**n, "metadata": {**n["metadata"], "labels": first.state.nodes[n["metadata"]["name"]]
                                   .node.metadata.labels}} if n["kind"] == "Node" else n for n in TWO_NODES]
    dump = [*compute_domain_classes(), *labelled, _domain(num_nodes=2), *templates, *objects_of(first)]
    second = run(manifest(dump))
    assert second.attempts == []  # every pod is bound already
    assert not [w for w in second.loaded.unmodelled if "AlreadyExists" in w]
    daemons = [k for k in second.state.pods if k.startswith(f"{DRIVER_NS}/")]
    assert len(daemons) == 2

"""The life of pods and claims through ``load_cluster`` + ``schedule``: what the resourceclaim controller
creates, what kube-scheduler writes back, why pods stay Pending, and preemption (for cpu, never for DRA
devices in Kubernetes 1.36).

Every case is a small inline manifest (see ``tests/twin/manifests.py``), loaded with ``load_text`` as
``dratwin schedule -f`` would load it.

Tests marked ``xfail(strict=True)`` pin down a known divergence from upstream 1.36 (see each reason):
they fail today by design and turn into an XPASS failure once the twin is fixed, so the marker must then
be removed. ``pytest --runxfail tests/twin`` shows them as plain failures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.manifests import (
    GPU_DRIVER,
    bound_pod_with_claim,
    claim_raw,
    claim_template,
    condition,
    devices_of,
    generated_claims,
    gpu_class,
    gpu_request,
    gpu_slice,
    manifest,
    messages,
    node,
    placements,
    pod,
    pod_raw,
    priority_class,
    resource_claim,
    run,
)

from dratwin.twin.explain import DRA_PREEMPTION_NOTE, explain_pod

FINALIZER = "resource.kubernetes.io/delete-protection"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"  # the API server's generateName alphabet
NOT_HELPFUL = "Preemption is not helpful for scheduling"


def gpu_nodes(count: int, gpus: int, *, cpu: str = "8") -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for i in range(count):
        objects += [node(f"n{i}", cpu=cpu), gpu_slice(f"n{i}", gpus)]
    return objects


# ---- ResourceClaimTemplate: one generated claim per pod ------------------------------------------


@pytest.fixture(scope="module")
def templated():
    """Three pods from one template on two nodes with two GPUs each."""
    text = manifest(
        gpu_class(),
        gpu_nodes(2, 2),
        claim_template("one-gpu"),
        [pod(f"worker-{i}", cpu="1", templates={"gpu": "one-gpu"}) for i in range(3)],
    )
    return run(text)


@pytest.mark.parametrize("name", ["worker-0", "worker-1", "worker-2"])
def test_template_generates_one_owned_claim_per_pod(templated, name: str) -> None:
    key = f"default/{name}"
    claims = generated_claims(templated, key)
    assert len(claims) == 1, f"{key}: expected one generated claim, got {[c['metadata']['name'] for c in claims]}"
    claim = claims[0]
    meta = claim["metadata"]
    assert re.fullmatch(f"{name}-gpu-{SUFFIX}", meta["name"]), meta["name"]
    assert meta["generateName"] == f"{name}-gpu-"
    assert meta["namespace"] == "default"
    assert meta["annotations"][POD_CLAIM_ANNOTATION] == "gpu"
    pod_object = pod_raw(templated, key)
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": name,
            "uid": pod_object["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    # The claim's spec is the template's spec.
    assert claim["spec"] == {
        "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                             "allocationMode": "ExactCount", "count": 1}}]}
    }
    # The pod records which claim was generated for its pod claim.
    assert pod_object["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": meta["name"]}]


@pytest.mark.parametrize("name", ["worker-0", "worker-1", "worker-2"])
def test_scheduler_writes_allocation_reservation_finalizer_and_binding(templated, name: str) -> None:
    key = f"default/{name}"
    pod_object = pod_raw(templated, key)
    node_name = pod_object["spec"]["nodeName"]
    assert node_name in ("n0", "n1")
    assert condition(pod_object) == {"type": "PodScheduled", "status": "True"}

    claim = generated_claims(templated, key)[0]
    assert FINALIZER in claim["metadata"]["finalizers"]
    allocation = claim["status"]["allocation"]
    [result] = allocation["devices"]["results"]
    assert result["request"] == "gpu"
    assert (result["driver"], result["pool"]) == (GPU_DRIVER, node_name)
    assert allocation["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
    }
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": name, "uid": pod_object["metadata"]["uid"]}
    ]


def test_generated_claims_get_distinct_devices(templated) -> None:
    devices = [d for i in range(3) for d in devices_of(generated_claims(templated, f"default/worker-{i}")[0])]
    assert len(devices) == len(set(devices)) == 3
    # The report's allocations are the ones written into the claims.
    for attempt in templated.attempts:
        for claim_key, allocation in attempt.allocations.items():
            assert devices_of(claim_raw(templated, claim_key)) == [
                f"{r.driver}/{r.pool}/{r.device}" for r in allocation.devices.results
            ]


def test_unschedulable_pod_keeps_unallocated_claim_and_gets_condition() -> None:
    text = manifest(gpu_class(), gpu_nodes(2, 2), claim_template("three", gpu_request(count=3)),
                    pod("big", cpu="1", templates={"gpu": "three"}))
    report = run(text)
    message = (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert messages(report) == {"default/big": message}
    pod_object = pod_raw(report, "default/big")
    assert "nodeName" not in pod_object["spec"]
    assert pod_object["status"]["phase"] == "Pending"
    assert condition(pod_object) == {
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
    }
    [claim] = generated_claims(report, "default/big")
    assert "allocation" not in (claim.get("status") or {})
    assert FINALIZER not in (claim["metadata"].get("finalizers") or [])


# ---- a claim shared by name ------------------------------------------------------------------------


def test_shared_claim_binds_every_consumer_to_the_node_of_its_allocation() -> None:
    # Three nodes with one GPU each; after the first pod, LeastAllocated alone would send the others to the
    # emptier nodes: only the allocation's node selector keeps them together.
    text = manifest(
        gpu_class(),
        gpu_nodes(3, 1),
        resource_claim("shared-gpu"),
        [pod(f"reader-{i}", cpu="2", claims={"gpu": "shared-gpu"}) for i in range(3)],
    )
    report = run(text)
    nodes = set(placements(report).values())
    assert len(nodes) == 1 and None not in nodes, placements(report)
    [node_name] = nodes
    claim = claim_raw(report, "default/shared-gpu")
    assert devices_of(claim) == [f"{GPU_DRIVER}/{node_name}/gpu-0"]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        node_name
    ]
    assert [(r["resource"], r["name"]) for r in claim["status"]["reservedFor"]] == [
        ("pods", "reader-0"), ("pods", "reader-1"), ("pods", "reader-2"),
    ]
    uids = {pod_raw(report, f"default/reader-{i}")["metadata"]["uid"] for i in range(3)}
    assert {r["uid"] for r in claim["status"]["reservedFor"]} == uids
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    # A claim referenced by name gets no resourceClaimStatuses entry and no owner.
    assert "resourceClaimStatuses" not in pod_raw(report, "default/reader-1")["status"]
    assert "ownerReferences" not in claim["metadata"]
    # Only the one device is in use.
    assert len(report.state.allocated.exclusive) == 1


def test_claim_allocated_in_the_input_pins_new_pods_to_its_node() -> None:
    claim = resource_claim("pinned")
    claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": "n2", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
            ]},
        }
    }
    consumers = [pod(f"p{i}", cpu="1", claims={"gpu": "pinned"}) for i in range(2)]
    text = manifest(gpu_class(), gpu_nodes(3, 1), claim, consumers)
    report = run(text)
    assert placements(report) == {"default/p0": "n2", "default/p1": "n2"}
    # No new allocation: the devices of the input stay, the other nodes' GPUs stay free.
    assert devices_of(claim_raw(report, "default/pinned")) == [f"{GPU_DRIVER}/n2/gpu-0"]
    assert len(report.state.allocated.exclusive) == 1


def test_pod_whose_claim_is_allocated_elsewhere_is_not_available_on_other_nodes() -> None:
    # The claim sits on n2, the pod's nodeSelector wants n0: no node has both.
    claim = resource_claim("pinned")
    claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": "n2", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
            ]},
        }
    }
    text = manifest(gpu_class(), gpu_nodes(3, 1), claim,
                    pod("p", cpu="1", claims={"gpu": "pinned"}, node_selector={"kubernetes.io/hostname": "n0"}))
    report = run(text)
    assert placements(report) == {"default/p": None}
    assert messages(report)["default/p"].startswith(
        "0/3 nodes are available: 1 resourceclaim not available on the node, "
        "2 node(s) didn't match Pod's node affinity/selector."
    )


# ---- what keeps a pod Pending before any node is looked at ------------------------------------------


@dataclass
class MissingCase:
    id: str
    objects: list[dict[str, Any]]
    reason: str  # what the twin reports as the root cause (blocked reason or FailedScheduling text)


MISSING_CASES = [
    MissingCase(
        "missing-template",
        [gpu_class(), pod("p", templates={"gpu": "no-such-template"})],
        'resource claim template "no-such-template": '
        'resourceclaimtemplate.resource.k8s.io "no-such-template" not found',
    ),
    MissingCase(
        "missing-claim",
        [gpu_class(), pod("p", claims={"gpu": "no-such-claim"})],
        'could not find ResourceClaim "default/no-such-claim"',
    ),
    MissingCase(
        "missing-class-in-template",
        [claim_template("t", gpu_request(device_class_name="x")), pod("p", templates={"gpu": "t"})],
        "request gpu: device class x does not exist",
    ),
    MissingCase(
        "missing-class-in-claim",
        [gpu_class(), resource_claim("c", gpu_request(device_class_name="x")), pod("p", claims={"gpu": "c"})],
        "request gpu: device class x does not exist",
    ),
]


def _root_causes(report) -> list[str]:
    return [b.reason for b in report.loaded.blocked] + list(messages(report).values())


@pytest.mark.parametrize("case", MISSING_CASES, ids=lambda c: c.id)
def test_missing_object_keeps_pod_pending_with_its_reason(case: MissingCase) -> None:
    report = run(manifest(gpu_nodes(2, 2), case.objects))
    pod_object = pod_raw(report, "default/p")
    assert "nodeName" not in pod_object["spec"]
    assert pod_object["status"]["phase"] == "Pending"
    assert any(case.reason in text for text in _root_causes(report)), _root_causes(report)
    assert not report.state.allocated.exclusive


@pytest.mark.parametrize("claim_ref", ["template", "claim"])
def test_missing_class_is_a_prefilter_rejection_on_every_node(claim_ref: str) -> None:
    objects: list[dict[str, Any]] = [gpu_class()]
    if claim_ref == "template":
        objects += [claim_template("t", gpu_request(device_class_name="x")), pod("p", templates={"gpu": "t"})]
    else:
        objects += [resource_claim("c", gpu_request(device_class_name="x")), pod("p", claims={"gpu": "c"})]
    report = run(manifest(gpu_nodes(2, 2), objects))
    message = messages(report)["default/p"]
    assert message.startswith("0/2 nodes are available: request gpu: device class x does not exist.")
    assert condition(pod_raw(report, "default/p"))["message"] == message
    # The claim exists (created by the controller or by the user) but is never allocated.
    claims = generated_claims(report, "default/p") if claim_ref == "template" else [claim_raw(report, "default/c")]
    assert len(claims) == 1 and "allocation" not in (claims[0].get("status") or {})


def test_missing_class_message_has_the_postfilter_part() -> None:
    objects = [claim_template("t", gpu_request(device_class_name="x")), pod("p", templates={"gpu": "t"})]
    message = messages(run(manifest(gpu_nodes(2, 2), objects)))["default/p"]
    assert re.fullmatch(
        r"0/2 nodes are available: request gpu: device class x does not exist\. "
        r"(no new claims to deallocate|still not schedulable), "
        r"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling\.",
        message,
    ), message


@pytest.mark.parametrize("case", MISSING_CASES[:2], ids=lambda c: c.id)
def test_missing_claim_pod_is_gated_not_failed(case: MissingCase) -> None:
    report = run(manifest(gpu_nodes(2, 2), case.objects))
    assert condition(pod_raw(report, "default/p")) is None


# ---- preemption ------------------------------------------------------------------------------------


PRIORITIES = [priority_class("low", 10), priority_class("medium", 50), priority_class("high", 1000)]


def test_preemption_for_cpu_evicts_victims_and_frees_their_devices() -> None:
    # n0 (4 cpu, 2 GPUs) runs two low-priority pods with a GPU each; "high" needs 3 cpu and no GPU.
    text = manifest(
        PRIORITIES,
        gpu_class(),
        node("n0", cpu="4"),
        gpu_slice("n0", 2),
        claim_template("one-gpu"),
        bound_pod_with_claim("low-0", "n0", ["gpu-0"], cpu="2", priority_class="low"),
        bound_pod_with_claim("low-1", "n0", ["gpu-1"], cpu="2", priority_class="low"),
        pod("high", cpu="3", priority_class="high"),
        # Tried after "high" (lower priority): it can only run if the victims' GPUs were freed.
        pod("medium", cpu="1", priority_class="medium", templates={"gpu": "one-gpu"}),
    )
    report = run(text)
    assert placements(report) == {"default/high": "n0", "default/medium": "n0"}
    # Both victims are gone, and with them the claims generated for them.
    assert "default/low-0" not in report.state.pods and "default/low-1" not in report.state.pods
    assert not any(k.startswith("default/low-") for k in report.state.claims)
    deleted = [(e.kind, e.key) for e in report.state.events if e.type == "Deleted"]
    assert ("Pod", "default/low-0") in deleted and ("ResourceClaim", "default/low-0-gpu-x7k2q") in deleted
    # Their devices were freed: the medium pod got one of them, and only that one is in use.
    [medium_claim] = generated_claims(report, "default/medium")
    assert devices_of(medium_claim)[0] in (f"{GPU_DRIVER}/n0/gpu-0", f"{GPU_DRIVER}/n0/gpu-1")
    assert len(report.state.allocated.exclusive) == 1
    assert report.state.nodes["n0"].requested["cpu"] == 4000


def test_preemption_takes_only_the_victims_it_needs() -> None:
    text = manifest(
        PRIORITIES,
        gpu_class(),
        node("n0", cpu="4"),
        gpu_slice("n0", 2),
        claim_template("one-gpu"),
        bound_pod_with_claim("low-0", "n0", ["gpu-0"], cpu="2", priority_class="low"),
        bound_pod_with_claim("medium-0", "n0", ["gpu-1"], cpu="2", priority_class="medium"),
        pod("high", cpu="2", priority_class="high"),
    )
    report = run(text)
    assert placements(report) == {"default/high": "n0"}
    assert "default/low-0" not in report.state.pods
    assert "default/medium-0" in report.state.pods
    assert "default/medium-0-gpu-x7k2q" in report.state.claims
    assert devices_of(claim_raw(report, "default/medium-0-gpu-x7k2q")) == [f"{GPU_DRIVER}/n0/gpu-1"]


def test_no_preemption_to_free_dra_devices() -> None:
    text = manifest(
        PRIORITIES,
        gpu_class(),
        node("n0", cpu="8"),
        gpu_slice("n0", 2),
        claim_template("one-gpu"),
        bound_pod_with_claim("low-0", "n0", ["gpu-0"], priority_class="low"),
        bound_pod_with_claim("low-1", "n0", ["gpu-1"], priority_class="low"),
        pod("high", cpu="1", priority_class="high", templates={"gpu": "one-gpu"}),
    )
    report = run(text)
    assert placements(report) == {"default/high": None}
    message = messages(report)["default/high"]
    assert message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}."
    )
    # Nothing was evicted, nothing deallocated, no node nominated.
    assert {"default/low-0", "default/low-1"} <= set(report.state.pods)
    assert len(report.state.allocated.exclusive) == 2
    assert "nominatedNodeName" not in pod_raw(report, "default/high")["status"]
    assert report.attempt_of("default/high").victims == []
    notes = explain_pod(report, "default/high").notes
    assert any(n.startswith(DRA_PREEMPTION_NOTE) and "default/low-0" in n for n in notes), notes


def test_preemption_that_would_also_need_devices_finds_no_victims() -> None:
    # "high" lacks cpu (preemption might help) and GPUs (it cannot): evicting the low pods would free both,
    # but the DRA filter in the dry run still sees their devices allocated, so the node has no victims.
    text = manifest(
        PRIORITIES,
        gpu_class(),
        node("n0", cpu="2"),
        gpu_slice("n0", 2),
        claim_template("one-gpu"),
        bound_pod_with_claim("low-0", "n0", ["gpu-0"], priority_class="low"),
        bound_pod_with_claim("low-1", "n0", ["gpu-1"], priority_class="low"),
        pod("high", cpu="1", priority_class="high", templates={"gpu": "one-gpu"}),
    )
    report = run(text)
    assert placements(report) == {"default/high": None}
    assert messages(report)["default/high"] == (
        "0/1 nodes are available: 1 Insufficient cpu. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 cannot allocate all claims."
    )
    assert {"default/low-0", "default/low-1"} <= set(report.state.pods)


def _never_case():
    running = pod("low-0", cpu="2", priority_class="low")
    running["spec"]["nodeName"] = "n0"
    text = manifest(
        priority_class("low", 10),
        priority_class("polite", 1000, preemption_policy="Never"),
        node("n0", cpu="2"),
        running,
        pod("polite", cpu="2", priority_class="polite"),
    )
    return run(text)


def test_preemption_policy_never_does_not_evict() -> None:
    report = _never_case()
    assert placements(report) == {"default/polite": None}
    assert "default/low-0" in report.state.pods
    assert pod_raw(report, "default/polite")["spec"]["preemptionPolicy"] == "Never"
    assert messages(report)["default/polite"].startswith("0/1 nodes are available: 1 Insufficient cpu. ")


def test_preemption_policy_never_message_is_consistent_with_one_upstream_version() -> None:
    message = messages(_never_case())["default/polite"]
    assert message in (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: Preemptor couldn't preempt other victims because of preemptionPolicy: never",
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
    ), message

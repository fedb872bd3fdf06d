"""Extended resources (device plugins, time-slicing), extended resources backed by DRA
(DRAExtendedResource), which manager serves each device family on a node, and the oversubscription that
follows when both do.

Tests marked ``xfail(strict=True)`` pin down a known divergence from upstream 1.36; see each reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from tests.builders.manifests import (
    GPU_CLASS,
    condition,
    devices_of,
    generated_claims,
    gpu_class,
    gpu_slice,
    manifest,
    messages,
    node,
    placements,
    pod,
    pod_raw,
    run,
)

from dratwin.api.core import Node
from dratwin.api.resource import ResourceSlice
from dratwin.cli.main import main
from dratwin.cluster.roles import BOTH, DEVICE_PLUGIN, DRA, node_roles

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GPU = "nvidia.com/gpu"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def one_gpu_pods(count: int, prefix: str = "p") -> list[dict[str, Any]]:
    return [pod(f"{prefix}{i}", cpu="100m", extended={GPU: "1"}) for i in range(count)]


# ---- device plugins ---------------------------------------------------------------------------------


def test_device_plugin_node_fits_as_many_pods_as_it_advertises() -> None:
    report = run(manifest(node("dp", extended={GPU: "4"}), one_gpu_pods(5)))
    assert placements(report) == {f"default/p{i}": ("dp" if i < 4 else None) for i in range(5)}
    assert messages(report) == {
        "default/p4": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    }
    assert report.state.nodes["dp"].requested[GPU] == 4
    assert not report.state.claims  # a device plugin hands out no ResourceClaims


@pytest.mark.parametrize(
    ("gpus", "replicas"),
    [(4, 4), (1, 4), (8, 2), (2, 10)],
    ids=lambda v: str(v),
)
def test_time_slicing_multiplies_the_advertised_count(gpus: int, replicas: int) -> None:
    # The NVIDIA device plugin with time-slicing advertises GPUs x replicas and labels the node.
    allocatable = gpus * replicas
    labels = {"nvidia.com/gpu.replicas": str(replicas), "nvidia.com/gpu.count": str(gpus)}
    time_sliced = node("ts", extended={GPU: str(allocatable)}, labels=labels, cpu="64")
    text = manifest(time_sliced, one_gpu_pods(allocatable + 1))
    report = run(text)
    placed = [p for p, n in placements(report).items() if n == "ts"]
    assert len(placed) == allocatable
    assert placements(report)[f"default/p{allocatable}"] is None
    assert "1 Insufficient nvidia.com/gpu" in messages(report)[f"default/p{allocatable}"]


def test_a_pod_larger_than_the_node_cannot_preempt() -> None:
    report = run(manifest(node("dp", extended={GPU: "4"}), pod("huge", extended={GPU: "8"})))
    assert messages(report)["default/huge"] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


# ---- extended resources backed by DRA ---------------------------------------------------------------


def dra_node(name: str = "dra", gpus: int = 4) -> list[dict[str, Any]]:
    return [node(name), gpu_slice(name, gpus)]


@pytest.fixture(scope="module")
def dra_backed():
    text = manifest(gpu_class(extended_resource=GPU), dra_node(), pod("trainer", cpu="1", extended={GPU: "2"}))
    return run(text)


def test_dra_backed_extended_resource_gets_a_special_claim(dra_backed) -> None:
    assert placements(dra_backed) == {"default/trainer": "dra"}
    [claim] = generated_claims(dra_backed, "default/trainer")
    meta = claim["metadata"]
    assert re.fullmatch(f"trainer-extended-resources-{SUFFIX}", meta["name"]), meta["name"]
    assert meta["generateName"] == "trainer-extended-resources-"
    assert meta["annotations"] == {EXTENDED_CLAIM_ANNOTATION: "true"}
    owner = meta["ownerReferences"][0]
    trainer = pod_raw(dra_backed, "default/trainer")
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Pod", "trainer", trainer["metadata"]["uid"], True,
    )
    # cpu sorts before nvidia.com/gpu in the container's requests: the GPU is request index 1.
    assert claim["spec"] == {
        "devices": {
            "requests": [
                {"name": "container-0-request-1",
                 "exactly": {"deviceClassName": GPU_CLASS, "allocationMode": "ExactCount", "count": 2}}
            ]
        }
    }
    assert len(devices_of(claim)) == 2
    assert all(d.startswith("gpu.example.com/dra/gpu-") for d in devices_of(claim))
    uid = trainer["metadata"]["uid"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": uid}]
    assert "resource.kubernetes.io/delete-protection" in meta["finalizers"]


def test_dra_backed_extended_resource_is_recorded_in_the_pod_status(dra_backed) -> None:
    trainer = pod_raw(dra_backed, "default/trainer")
    [claim] = generated_claims(dra_backed, "default/trainer")
    assert trainer["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": GPU, "requestName": "container-0-request-1"}],
        "resourceClaimName": claim["metadata"]["name"],
    }
    assert "resourceClaimStatuses" not in trainer["status"]
    assert condition(trainer) == {"type": "PodScheduled", "status": "True"}
    assert len(dra_backed.state.allocated.exclusive) == 2


def test_request_name_is_container_index_and_sorted_resource_index() -> None:
    # Only the GPU is requested: container-0-request-0 (the example in the KEP).
    report = run(manifest(gpu_class(extended_resource=GPU), dra_node(), pod("solo", extended={GPU: "2"})))
    [claim] = generated_claims(report, "default/solo")
    [request] = claim["spec"]["devices"]["requests"]
    assert (request["name"], request["exactly"]["count"]) == ("container-0-request-0", 2)


def test_two_containers_get_one_request_each() -> None:
    report = run(manifest(gpu_class(extended_resource=GPU), dra_node(),
                          pod("pair", extended={GPU: "1"}, containers=2)))
    [claim] = generated_claims(report, "default/pair")
    assert [(r["name"], r["exactly"]["count"]) for r in claim["spec"]["devices"]["requests"]] == [
        ("container-0-request-0", 1), ("container-1-request-0", 1),
    ]
    mappings = pod_raw(report, "default/pair")["status"]["extendedResourceClaimStatus"]["requestMappings"]
    assert [(m["containerName"], m["requestName"]) for m in mappings] == [
        ("c0", "container-0-request-0"), ("c1", "container-1-request-0"),
    ]
    assert len(devices_of(claim)) == 2


def test_an_extended_resource_given_only_as_a_limit_is_requested() -> None:
    # The API server defaults each missing request to its limit: a container with requests {cpu} and
    # limits {GPU} requests the GPU too (request index 1: cpu sorts first).
    gpu_pod = pod("lim", extended={GPU: "2"})
    container = gpu_pod["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": "1"}, "limits": {GPU: "2"}}
    report = run(manifest(gpu_class(extended_resource=GPU), dra_node(), gpu_pod))
    [claim] = generated_claims(report, "default/lim")
    [request] = claim["spec"]["devices"]["requests"]
    assert (request["name"], request["exactly"]["count"]) == ("container-0-request-1", 2)
    assert len(devices_of(claim)) == 2


def test_implicit_extended_resource_name_of_a_device_class() -> None:
    # Every class also backs deviceclass.resource.kubernetes.io/<class>, without extendedResourceName.
    implicit = f"deviceclass.resource.kubernetes.io/{GPU_CLASS}"
    report = run(manifest(gpu_class(), dra_node(), pod("p", extended={implicit: "3"})))
    assert placements(report) == {"default/p": "dra"}
    [claim] = generated_claims(report, "default/p")
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 3


@dataclass
class PlacementCase:
    id: str
    nodes: list[dict[str, Any]]
    gates: str
    expect_node: str | None
    expect_claim: bool
    expect_message: str = ""  # a regular expression for the whole FailedScheduling message


PLACEMENT_CASES = [
    PlacementCase("dra-only-node", dra_node(), "", "dra", True),
    PlacementCase("device-plugin-node", [node("dp", extended={GPU: "4"})], "", "dp", False),
    PlacementCase(
        "gate-off-dra-only-node",
        dra_node(),
        "DRAExtendedResource=false",
        None,
        False,
        r"0/1 nodes are available: 1 Insufficient nvidia\.com/gpu\. no new claims to deallocate, "
        r"preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling\.",
    ),
    PlacementCase("gate-off-device-plugin-node", [node("dp", extended={GPU: "4"})], "DRAExtendedResource=false",
                  "dp", False),
    PlacementCase(
        "dra-node-too-small",
        dra_node(gpus=1),
        "",
        None,
        False,
        # The DRA PostFilter part depends on whether the special claim counts as "a claim": either reads.
        r"0/1 nodes are available: 1 cannot allocate all claims\. (no new claims to deallocate|still not "
        r"schedulable), preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling\.",
    ),
]


@pytest.mark.parametrize("case", PLACEMENT_CASES, ids=lambda c: c.id)
def test_extended_resource_is_served_by_the_plugin_or_by_dra(case: PlacementCase) -> None:
    text = manifest(gpu_class(extended_resource=GPU), case.nodes, pod("p", extended={GPU: "2"}))
    report = run(text, gates=case.gates)
    assert placements(report) == {"default/p": case.expect_node}
    claims = generated_claims(report, "default/p")
    if case.expect_claim:
        assert len(claims) == 1 and len(devices_of(claims[0])) == 2
    else:
        assert [c for c in claims if (c.get("status") or {}).get("allocation")] == []
    if case.expect_node == "dp":
        assert report.state.nodes["dp"].requested[GPU] == 2
        assert "extendedResourceClaimStatus" not in pod_raw(report, "default/p")["status"]
    if case.expect_message:
        assert re.fullmatch(case.expect_message, messages(report)["default/p"]), messages(report)["default/p"]


SCORE_CRASH = (
    "bug: DynamicResources.score zips found.pending with outcome.results (strict=True), but the outcome also "
    "holds the special extended-resource claim, so scoring two or more feasible nodes raises "
    "'ValueError: zip() argument 2 is longer than argument 1' and `dratwin schedule` dies with a traceback"
)


def test_dra_backed_extended_resource_with_two_feasible_nodes() -> None:
    text = manifest(gpu_class(extended_resource=GPU), dra_node("dra-a"), dra_node("dra-b"), one_gpu_pods(1))
    report = run(text)
    assert placements(report)["default/p0"] in ("dra-a", "dra-b")


def test_mixed_cluster_uses_each_node_its_way() -> None:
    # A device-plugin node with 2 GPUs and a DRA node with 2: four 1-GPU pods fill both.
    text = manifest(gpu_class(extended_resource=GPU), node("dp", extended={GPU: "2"}), dra_node(gpus=2),
                    one_gpu_pods(5))
    report = run(text)
    by_node: dict[str | None, list[str]] = {}
    for key, node_name in placements(report).items():
        by_node.setdefault(node_name, []).append(key)
    assert sorted(len(v) for k, v in by_node.items() if k is not None) == [2, 2]
    assert len(by_node.get(None, [])) == 1
    for key in by_node["dra"]:
        assert len(generated_claims(report, key)) == 1
    for key in by_node["dp"]:
        assert generated_claims(report, key) == []
    assert report.state.nodes["dp"].requested[GPU] == 2


def test_request_name_counts_init_containers_once() -> None:
    raw = pod("side", extended={GPU: "1"})
    raw["spec"]["initContainers"] = [
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}
    ]
    report = run(manifest(gpu_class(extended_resource=GPU), dra_node(), raw))
    [claim] = generated_claims(report, "default/side")
    assert [r["name"] for r in claim["spec"]["devices"]["requests"]] == ["container-1-request-0"]


def test_init_container_extended_resource_is_allocated() -> None:
    raw = pod("warmup", cpu="1")
    raw["spec"]["initContainers"] = [
        {"name": "warm", "image": "x", "resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}}}
    ]
    report = run(manifest(gpu_class(extended_resource=GPU), dra_node(), raw))
    [claim] = generated_claims(report, "default/warmup")
    assert claim["spec"]["devices"]["requests"][0]["name"] == "container-0-request-0"
    assert len(devices_of(claim)) == 1


# ---- node roles ---------------------------------------------------------------------------------------


NVIDIA_LABEL = "eks.amazonaws.com/device-manager-nvidia"


def nvidia_slice(node_name: str, count: int) -> dict[str, Any]:
    return gpu_slice(node_name, count, driver="gpu.nvidia.com")


def efa_slice(node_name: str, rdma: list[bool]) -> dict[str, Any]:
    devices = [{"name": f"nic-{i}", "attributes": {"dra.net/rdma": {"bool": r}}} for i, r in enumerate(rdma)]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-dra.net"},
        "spec": {"driver": "dra.net", "nodeName": node_name,
                 "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


@dataclass
class RoleCase:
    id: str
    node: dict[str, Any]
    slices: list[dict[str, Any]]
    expect: list[tuple[str, str, str, int, int]]  # family, manager, declared, dra devices, plugin devices
    conflict: bool = False
    mismatch: bool = False


ROLE_CASES = [
    RoleCase("no-devices", node("cpu"), [], []),
    RoleCase("label-only-dra", node("a", labels={NVIDIA_LABEL: "dra"}), [], [("nvidia", DRA, DRA, 0, 0)]),
    RoleCase("label-only-plugin", node("a", labels={NVIDIA_LABEL: "device-plugin"}), [],
             [("nvidia", DEVICE_PLUGIN, DEVICE_PLUGIN, 0, 0)]),
    RoleCase("inferred-dra", node("a"), [nvidia_slice("a", 8)], [("nvidia", DRA, "", 8, 0)]),
    RoleCase("inferred-device-plugin", node("a", extended={GPU: "4"}), [], [("nvidia", DEVICE_PLUGIN, "", 0, 4)]),
    RoleCase("both-conflict", node("a", extended={GPU: "4"}), [nvidia_slice("a", 4)], [("nvidia", BOTH, "", 4, 4)],
             conflict=True),
    RoleCase("label-matches-slices", node("a", labels={NVIDIA_LABEL: "dra"}), [nvidia_slice("a", 2)],
             [("nvidia", DRA, DRA, 2, 0)]),
    RoleCase("label-mismatch", node("a", labels={NVIDIA_LABEL: "device-plugin"}), [nvidia_slice("a", 2)],
             [("nvidia", DRA, DEVICE_PLUGIN, 2, 0)], mismatch=True),
    RoleCase("other-node-slices-do-not-count", node("a"), [nvidia_slice("b", 2)], []),
    RoleCase("other-driver-does-not-count", node("a"), [gpu_slice("a", 2)], []),
    # DRANET publishes every NIC; only RDMA-capable ones are EFA devices.
    RoleCase("efa-rdma-only", node("a"), [efa_slice("a", [True, True, False])], [("efa", DRA, "", 2, 0)]),
    RoleCase("efa-plugin", node("a", extended={"vpc.amazonaws.com/efa": "32"}), [],
             [("efa", DEVICE_PLUGIN, "", 0, 32)]),
    RoleCase("neuron-plugin", node("a", extended={"aws.amazon.com/neuron": "16"}), [],
             [("neuron", DEVICE_PLUGIN, "", 0, 16)]),
    RoleCase(
        "two-families",
        node("a", extended={"vpc.amazonaws.com/efa": "4"}),
        [nvidia_slice("a", 8)],
        [("nvidia", DRA, "", 8, 0), ("efa", DEVICE_PLUGIN, "", 0, 4)],
    ),
]


@pytest.mark.parametrize("case", ROLE_CASES, ids=lambda c: c.id)
def test_node_roles(case: RoleCase) -> None:
    nodes = [msgspec.convert(case.node, Node, strict=False)]
    slices = [msgspec.convert(s, ResourceSlice, strict=False) for s in case.slices]
    roles = node_roles(nodes, slices)
    assert [(r.family, r.manager, r.declared, r.dra_devices, r.plugin_devices) for r in roles] == case.expect
    assert any(r.conflict for r in roles) is case.conflict
    assert any(r.label_mismatch for r in roles) is case.mismatch
    warnings = [r.warning() for r in roles if r.warning()]
    if case.conflict:
        assert "silent oversubscription" in warnings[0]
    elif case.mismatch:
        assert warnings == [
            "node a: label says nvidia devices are managed by 'device-plugin', but the node publishes them "
            "through 'dra'"
        ]
    else:
        assert warnings == []


def test_roles_reach_the_loaded_cluster() -> None:
    report = run(manifest(node("a", extended={GPU: "4"}), nvidia_slice("a", 4), node("b"), nvidia_slice("b", 2)))
    assert [(r.node, r.manager) for r in report.loaded.roles] == [("a", BOTH), ("b", DRA)]


# ---- the oversubscription example --------------------------------------------------------------------


def test_oversubscribed_node_example(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", "-f", str(EXAMPLES / "oversubscribed-node"), "-f", str(EXAMPLES / "deviceclasses.yaml")])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("2 of 2 pending pod(s) scheduled on 1 node(s)\n")
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith("default/")}
    assert rows == {"default/plugin-trainer": "g6e-mixed-1", "default/dra-trainer": "g6e-mixed-1"}
    # The DRA pod got all four GPUs, the plugin pod four more "nvidia.com/gpu": eight on a four-GPU node.
    assert out.count("gpu.nvidia.com/g6e-mixed-1/gpu-") == 4
    warning = (
        "WARNING: node g6e-mixed-1: nvidia devices are served by both the DRA driver (4 devices in ResourceSlices) "
        "and the device plugin (4 in allocatable): both hand out the same devices, so pods can be given the same "
        "GPU twice (silent oversubscription); run one manager per family and node"
    )
    assert warning in out.splitlines()


def test_oversubscribed_node_example_books_both(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", "-o", "yaml", "-f", str(EXAMPLES / "oversubscribed-node"),
               "-f", str(EXAMPLES / "deviceclasses.yaml")])
    items = yaml.safe_load(capsys.readouterr().out)["items"]
    assert rc == 0
    pods = {i["metadata"]["name"]: i for i in items if i["kind"] == "Pod"}
    assert {p["spec"]["nodeName"] for p in pods.values()} == {"g6e-mixed-1"}
    claims = [i for i in items if i["kind"] == "ResourceClaim"]
    assert len(claims) == 1
    assert len(claims[0]["status"]["allocation"]["devices"]["results"]) == 4
    # The plugin pod asks nvidia.com/gpu on a node that advertises it: the plugin serves it, no special claim.
    assert "extendedResourceClaimStatus" not in pods["plugin-trainer"]["status"]

"""What `dratwin plan` prints: the YAML objects are coherent (claims' pools are printed slices' pools, bound claims
carry reservedFor and the finalizer), and drifted nodes are reported in the table, JSON and YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.builders.plan import CLASSES, nodepool, pod, template_from_shared

from dratwin.cli.main import main

Raw = dict[str, Any]
G5 = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}]
G6 = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6"]}]


def run(capsys: pytest.CaptureFixture[str], tmp_path: Path, objects: list[Raw], *args: str,
        existing: str | None = None) -> tuple[int, str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    more = ["--existing", existing] if existing else []
    status = main(["plan", "-f", str(CLASSES), "-f", str(path), *more, *args])
    return status, capsys.readouterr().out


def test_yaml_claims_name_printed_pools_and_are_reserved_and_protected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    workload = [template_from_shared("gpu-efa-aligned"), pod("a", template="gpu-efa-aligned"),
                pod("b", template="gpu-efa-aligned")]
    status, out = run(capsys, tmp_path, [nodepool(), *workload], "-o", "yaml")
    assert status == 0
    items = yaml.safe_load(out)["items"]
    pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in items if s["kind"] == "ResourceSlice"}
    nodes = {n["metadata"]["name"]: n for n in items if n["kind"] == "Node"}
    for resource_slice in (s for s in items if s["kind"] == "ResourceSlice"):
        (owner,) = resource_slice["metadata"]["ownerReferences"]
        node = nodes[resource_slice["spec"]["nodeName"]]
        assert (owner["name"], owner["uid"]) == (node["metadata"]["name"], node["metadata"]["uid"])
    pods = {p["metadata"]["name"]: p for p in items if p["kind"] == "Pod"}
    claims = [c for c in items if c["kind"] == "ResourceClaim"]
    assert len(claims) == 2 and len(pods) == 2
    for claim in claims:
        results = claim["status"]["allocation"]["devices"]["results"]
        assert results and all((r["driver"], r["pool"]) in pools for r in results)
        assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        (reserved,) = claim["status"]["reservedFor"]
        user = pods[reserved["name"]]
        assert (reserved["resource"], reserved["uid"]) == ("pods", user["metadata"]["uid"])
        assert user["spec"]["nodeName"] in nodes
        selector = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
        assert selector["values"] == [user["spec"]["nodeName"]]
    assert all(p["status"]["conditions"][-1] == {"type": "PodScheduled", "status": "True"} for p in pods.values())


@pytest.fixture
def drifted_cluster(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """Two g5.xlarge nodes of NodePool gpu, one with a pod; the NodePool now asks for g6 (requirements drift)."""
    assert main(["cluster", "generate", "-t", "g5.xlarge=2", "--nodepool", "gpu", "--name-prefix", "gpu"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    busy = pod("busy", cpu="1")
    busy["spec"]["nodeName"] = "gpu-1"
    path = tmp_path / "existing.yaml"
    path.write_text(yaml.safe_dump_all([*docs, busy], sort_keys=False))
    return str(path)


def test_drifted_nodes_in_table_json_and_yaml(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, drifted_cluster: str
) -> None:
    pool = nodepool(requirements=G6)
    status, table = run(capsys, tmp_path, [pool], existing=drifted_cluster)
    # the default budget (10% of 2 nodes: 1) lets emptiness take gpu-2 and holds gpu-1 back
    assert "keep gpu-1: drifted (RequirementsDrifted), but the disruption budgets of NodePool gpu allow no more " \
        "Drifted disruptions now" in table
    pool["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]}
    pools = [pool]
    status, table = run(capsys, tmp_path, pools, existing=drifted_cluster)
    assert status == 0
    assert "DRIFTED (2)\ngpu-1 (NodePool gpu, g5.xlarge, $1.0060/hour): RequirementsDrifted: the node no" in table
    assert "Karpenter replaces drifted nodes one by one as the NodePools' Drifted budgets allow" in table
    # emptiness deletes the empty one first; drift replaces the busy one with a g6 (its price from the catalog)
    assert "delete gpu-2 (g5.xlarge, $1.01/h): empty" in table
    assert "replace drifted gpu-1 (g5.xlarge, $1.01/h) with g6.xlarge ($0.8048/h): RequirementsDrifted" in table
    assert "$0.00/h" not in table and "$0.0000/hour)" not in table

    status, out = run(capsys, tmp_path, pools, "-o", "json", existing=drifted_cluster)
    consolidation = json.loads(out)["consolidation"]
    assert [(d["node"], d["reason"], d["pricePerHour"]) for d in consolidation["drifted"]] == [
        ("gpu-1", "RequirementsDrifted", 1.006), ("gpu-2", "RequirementsDrifted", 1.006)]
    assert consolidation["savingsPerHour"] == pytest.approx(1.006 + 1.006 - 0.8048)

    status, out = run(capsys, tmp_path, pools, "-o", "yaml", existing=drifted_cluster)
    node_claims = [o for o in yaml.safe_load(out)["items"] if o["kind"] == "NodeClaim"]
    drifted = {
        c["status"]["nodeName"]: (c["metadata"]["labels"]["karpenter.sh/nodepool"], condition["reason"])
        for c in node_claims
        for condition in c["status"].get("conditions") or []
        if condition["type"] == "Drifted" and condition["status"] == "True"
    }
    assert drifted == {"gpu-1": ("gpu", "RequirementsDrifted"), "gpu-2": ("gpu", "RequirementsDrifted")}


def test_nodes_that_still_meet_their_nodepool_are_not_drifted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, drifted_cluster: str
) -> None:
    status, table = run(capsys, tmp_path, [nodepool(requirements=G5)], existing=drifted_cluster)
    assert status == 0 and "DRIFTED" not in table


def test_a_repriced_p3_serves_device_plugin_pods_but_never_dra_claims(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prices = tmp_path / "p3.yaml"
    prices.write_text("prices:\n  p3.2xlarge: {on-demand: 3.06}\n")
    pool = nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p3"]}])
    status, out = run(capsys, tmp_path, [pool, pod("plugin", gpus=1)], "-o", "json", "--catalog", str(prices))
    assert status == 0
    assert [c["instanceType"] for c in json.loads(out)["nodeClaims"]] == ["p3.2xlarge"]
    workload = [template_from_shared("single-gpu"), pod("dra", template="single-gpu")]
    status, out = run(capsys, tmp_path, [pool, *workload], "--catalog", str(prices))
    assert status == 1
    assert "1 type(s) (p3.2xlarge): no DRA device metadata: Karpenter cannot launch it for DRA claims" in out
    assert main(["plan", "-f", str(CLASSES), "-f", str(tmp_path / "in.yaml")]) == 2  # without the price: not offered
    assert "p3.2xlarge, p3.8xlarge, p3.16xlarge: not offered since 2026-06" in capsys.readouterr().err

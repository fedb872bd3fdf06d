"""``dratwin schedule -f examples/`` end to end, through ``dratwin.cli.main.main``: where every pod of
the bundled examples lands, which devices it gets (checked against the ResourceSlices of the folder), the
``-o yaml`` and ``-o json`` forms, and the exit status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dratwin.api.quantity import Quantity
from dratwin.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MISSING_CLASS = EXAMPLES / "missing-deviceclass"

Raw = dict[str, Any]


def schedule(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(["schedule", *args])
    captured = capsys.readouterr()
    assert captured.err == ""
    return rc, captured.out


def slice_devices() -> dict[tuple[str, str, str], Raw]:
    """(driver, pool, device) -> device, for every ResourceSlice of examples/."""
    found: dict[tuple[str, str, str], Raw] = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ResourceSlice":
                spec = doc["spec"]
                for device in spec["devices"]:
                    found[(spec["driver"], spec["pool"]["name"], device["name"])] = device
    return found


def attribute(device: Raw, name: str, driver: str) -> Any:
    """A device attribute by qualified or bare name (bare names are in the driver's domain)."""
    attributes = device.get("attributes") or {}
    value = attributes.get(name)
    if value is None and name.startswith(driver + "/"):
        value = attributes.get(name[len(driver) + 1:])
    assert value is not None, f"{device['name']} has no attribute {name}"
    return next(iter(value.values()))


@pytest.fixture(scope="module")
def devices() -> dict[tuple[str, str, str], Raw]:
    return slice_devices()


@pytest.fixture(scope="module")
def objects() -> list[Raw]:
    """The ``-o yaml`` output of ``dratwin schedule -f examples/`` (run once for the module)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["schedule", "-f", str(EXAMPLES), "-o", "yaml"])
    assert rc == 0
    document = yaml.safe_load(out.getvalue())
    assert document["apiVersion"] == "v1" and document["kind"] == "List"
    return document["items"]


def pods_of(items: list[Raw], app: str) -> list[Raw]:
    return [i for i in items if i["kind"] == "Pod" and i["metadata"]["labels"]["app.kubernetes.io/name"] == app]


def claims_of(items: list[Raw], pod: Raw) -> Iterator[Raw]:
    names = {s["resourceClaimName"] for s in pod["status"]["resourceClaimStatuses"]}
    for item in items:
        if item["kind"] == "ResourceClaim" and item["metadata"]["name"] in names:
            yield item


def results(claim: Raw) -> list[Raw]:
    return claim["status"]["allocation"]["devices"]["results"]


# ---- where the example pods land -----------------------------------------------------------------------


def test_every_example_pod_is_scheduled(objects: list[Raw]) -> None:
    pods = [i for i in objects if i["kind"] == "Pod"]
    assert len(pods) == 6
    for pod in pods:
        assert pod["spec"]["nodeName"], pod["metadata"]["name"]
        assert {"type": "PodScheduled", "status": "True"} in pod["status"]["conditions"]


def test_vllm_pods_get_h100s_with_more_than_40gi(objects: list[Raw], devices) -> None:
    pods = pods_of(objects, "vllm")
    assert len(pods) == 2
    seen = set()
    for pod in pods:
        assert pod["spec"]["nodeName"] == "p5-node-1"
        [claim] = claims_of(objects, pod)
        [result] = results(claim)
        key = (result["driver"], result["pool"], result["device"])
        assert key[:2] == ("gpu.nvidia.com", "p5-node-1")
        device = devices[key]
        assert attribute(device, "productName", "gpu.nvidia.com").startswith("NVIDIA H100")
        memory = Quantity.parse(device["capacity"]["memory"]["value"])
        assert memory.value > Quantity.parse("40Gi").value
        seen.add(key)
    assert len(seen) == 2  # two different GPUs


def test_training_pods_get_one_gpu_and_four_efas_on_the_same_pcie_root(objects: list[Raw], devices) -> None:
    pods = pods_of(objects, "trainer")
    assert sorted(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in pods) == ["0", "1"]
    roots = []
    for pod in pods:
        assert pod["spec"]["nodeName"] == "p5-node-1"
        [claim] = claims_of(objects, pod)
        by_request: dict[str, list[Raw]] = {}
        for result in results(claim):
            by_request.setdefault(result["request"], []).append(result)
        assert {k: len(v) for k, v in by_request.items()} == {"gpu": 1, "efa": 4}
        [gpu] = by_request["gpu"]
        assert gpu["driver"] == "gpu.nvidia.com"
        gpu_root = attribute(devices[("gpu.nvidia.com", gpu["pool"], gpu["device"])],
                             "resource.kubernetes.io/pcieRoot", "gpu.nvidia.com")
        for efa in by_request["efa"]:
            assert efa["driver"] == "dra.net"
            device = devices[("dra.net", efa["pool"], efa["device"])]
            assert attribute(device, "resource.kubernetes.io/pcieRoot", "dra.net") == gpu_root
            assert attribute(device, "dra.net/rdma", "dra.net") is True
        roots.append(gpu_root)
    assert len(set(roots)) == 2  # two GPUs, two roots


def test_notebook_pods_get_two_1g_mig_slices_of_one_gpu(objects: list[Raw], devices) -> None:
    pods = pods_of(objects, "notebooks")
    assert len(pods) == 2
    used: set[tuple[str, str, str]] = set()
    for pod in pods:
        assert pod["spec"]["nodeName"] == "p4d-node-1"
        [claim] = claims_of(objects, pod)
        keys = [(r["driver"], r["pool"], r["device"]) for r in results(claim)]
        assert len(keys) == 2 and all(k[:2] == ("gpu.nvidia.com", "p4d-node-1") for k in keys)
        migs = [devices[k] for k in keys]
        assert [attribute(d, "profile", "gpu.nvidia.com") for d in migs] == ["1g.5gb", "1g.5gb"]
        assert [attribute(d, "type", "gpu.nvidia.com") for d in migs] == ["mig", "mig"]
        parents = {attribute(d, "gpu.nvidia.com/parentUUID", "gpu.nvidia.com") for d in migs}
        assert len(parents) == 1
        used.update(keys)
    assert len(used) == 4


def test_example_claims_have_the_api_server_fields(objects: list[Raw]) -> None:
    claims = [i for i in objects if i["kind"] == "ResourceClaim"]
    generated = [c for c in claims if c["metadata"].get("ownerReferences")]
    standalone = [c for c in claims if not c["metadata"].get("ownerReferences")]
    assert sorted(c["metadata"]["name"] for c in standalone) == [
        "llama-70b-fp16-gpu", "mig-1g", "train-gpu-efa", "vllm-gpu",
    ]
    assert all("status" not in c for c in standalone)  # no pod uses them: nothing allocates them
    assert len(generated) == 6
    pod_uids = {i["metadata"]["uid"]: i["metadata"]["name"] for i in objects if i["kind"] == "Pod"}
    for claim in generated:
        meta = claim["metadata"]
        [owner] = meta["ownerReferences"]
        assert owner["kind"] == "Pod" and pod_uids[owner["uid"]] == owner["name"]
        assert meta["name"].startswith(owner["name"] + "-")
        assert meta["annotations"]["resource.kubernetes.io/pod-claim-name"] in ("gpu", "gpu-efa", "mig")
        assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": owner["name"], "uid": owner["uid"]}]
        selector = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
        assert selector["key"] == "metadata.name" and selector["operator"] == "In"


def test_example_pods_have_the_controller_fields(objects: list[Raw]) -> None:
    for pod in (i for i in objects if i["kind"] == "Pod"):
        meta = pod["metadata"]
        [owner] = meta["ownerReferences"]
        assert owner["kind"] in ("ReplicaSet", "Job")
        assert meta["namespace"] == "ml"
        assert pod["spec"]["priority"] == 0
        [status] = pod["status"]["resourceClaimStatuses"]
        assert status["resourceClaimName"].startswith(f"{meta['name']}-{status['name']}-")


# ---- the table, JSON and exit status ---------------------------------------------------------------------


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = schedule(capsys, "-f", str(EXAMPLES))
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "6 of 6 pending pod(s) scheduled on 2 node(s)"
    assert "UNSCHEDULABLE" not in out
    assert [line.split() for line in lines if line.startswith(("NODE ", "p5-node-1 ", "p4d-node-1 "))] == [
        ["NODE", "DEVICE", "CLASS", "USED", "TOTAL"],
        ["p5-node-1", "efa.networking.k8s.aws", "8", "32"],
        ["p5-node-1", "gpu.nvidia.com", "4", "8"],
        ["p4d-node-1", "mig.nvidia.com", "4", "32"],
    ]


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = schedule(capsys, "-f", str(EXAMPLES), "-o", "json")
    assert rc == 0
    body = json.loads(out)
    assert list(body) == [
        "apiVersion", "kind", "scheduled", "unschedulable", "nodes", "notPending", "warnings", "notes", "objects"
    ]
    assert (body["apiVersion"], body["kind"]) == ("dratwin/v1", "ScheduleReport")
    assert len(body["scheduled"]) == 6 and body["unschedulable"] == []
    for entry in body["scheduled"]:
        assert set(entry) == {"pod", "node", "devices"}
        assert entry["pod"].startswith("ml/") and entry["node"] in ("p5-node-1", "p4d-node-1")
        assert all(": " in d and d.count("/") >= 4 for d in entry["devices"])
    assert {(n["node"], n["deviceClass"]): (n["used"], n["total"]) for n in body["nodes"]} == {
        ("p5-node-1", "efa.networking.k8s.aws"): (8, 32),
        ("p5-node-1", "gpu.nvidia.com"): (4, 8),
        ("p4d-node-1", "mig.nvidia.com"): (4, 32),
    }
    kinds = [o["kind"] for o in body["objects"]]
    assert kinds.count("Pod") == 6 and kinds.count("ResourceClaim") == 10


def test_missing_device_class_keeps_the_h200_pod_pending(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = schedule(capsys, "-f", str(EXAMPLES), "-f", str(MISSING_CLASS))
    assert rc == 1
    assert out.splitlines()[0] == "6 of 7 pending pod(s) scheduled on 2 node(s)"
    reason = "request gpu: device class h200.nvidia.com does not exist"
    [line] = [line for line in out.splitlines() if line.startswith("ml/llm-h200: ")]
    assert line.startswith(f"ml/llm-h200: 0/2 nodes are available: {reason}.")
    # The other pods are placed exactly as without it.
    assert "UNSCHEDULABLE (1)" in out


def test_missing_device_class_in_yaml_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = schedule(capsys, "-f", str(EXAMPLES), "-f", str(MISSING_CLASS), "-o", "yaml")
    assert rc == 1
    items = yaml.safe_load(out)["items"]
    [pod] = [i for i in items if i["kind"] == "Pod" and i["metadata"]["name"] == "llm-h200"]
    assert "nodeName" not in pod["spec"]
    [cond] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert "device class h200.nvidia.com does not exist" in cond["message"]
    [claim] = [i for i in items if i["kind"] == "ResourceClaim" and i["metadata"]["name"].startswith("llm-h200-gpu-")]
    assert "allocation" not in (claim.get("status") or {})

    rc, out = schedule(capsys, "-f", str(EXAMPLES), "-f", str(MISSING_CLASS), "-o", "json")
    assert rc == 1
    body = json.loads(out)
    assert [u["pod"] for u in body["unschedulable"]] == ["ml/llm-h200"]
    assert body["unschedulable"][0]["error"] is None
    assert "does not exist" in body["unschedulable"][0]["message"]


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        ([EXAMPLES], 0),
        ([EXAMPLES, MISSING_CLASS], 1),
        ([EXAMPLES / "deviceclasses.yaml", EXAMPLES / "oversubscribed-node"], 0),
        ([EXAMPLES / "nodes.yaml", MISSING_CLASS], 1),
    ],
    ids=["all-scheduled", "one-pending", "oversubscribed", "no-slices"],
)
def test_exit_status(capsys: pytest.CaptureFixture[str], paths: list[Path], expected: int) -> None:
    args = [a for p in paths for a in ("-f", str(p))]
    for output in ("table", "json"):
        rc, _ = schedule(capsys, *args, "-o", output)
        assert rc == expected, output


def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["schedule", "-f", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err
    assert main(["schedule", "-f", str(EXAMPLES), "--feature-gates", "DRANope=true"]) == 2
    assert "unknown feature gate" in capsys.readouterr().err


def test_pod_rejected_at_admission_is_not_success(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
        "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {priorityClassName: typo, containers: [{name: c, image: busybox}]}\n"
    )
    rc, out = schedule(capsys, "-f", str(cluster))
    assert "no PriorityClass with name typo was found" in out
    assert rc == 1

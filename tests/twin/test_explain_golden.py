"""Golden-file tests of ``dratwin explain pod/NS/NAME``: the exact text a platform engineer reads.

Each case builds its cluster (the bundled ``examples/`` or a small generated one, written to a temporary
file), runs ``dratwin explain`` through ``dratwin.cli.main.main`` and compares standard output with
``tests/golden/<case>.out``, byte for byte, and the exit status with the case's.

When the explanation changes on purpose, regenerate the files and review the diff before committing::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/twin/test_explain_golden.py

With ``DRATWIN_UPDATE_GOLDEN=1`` the test rewrites the golden files instead of comparing (the exit status
is still checked); without it a missing or different file fails the test with a unified diff.

The generated clusters pre-bind the pods that fill them (``spec.nodeName`` and allocated claims, as in a
``kubectl get -o yaml`` dump), so that the text depends on ``explain`` and the allocator's diagnosis, not on
where the scheduler would have put those pods. To look at a case's input, print ``case.build()``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.builders.compute_domains import channel_pod, compute_domain, compute_domain_classes, gb200_nodes
from tests.builders.manifests import (
    bound_pod_with_claim,
    claim_template,
    device_class,
    device_taint_rule,
    gpu_class,
    gpu_request,
    gpu_slice,
    manifest,
    node,
    pod,
    taint,
)

from dratwin.cli.main import main
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import GenerateOptions, NodeGroup

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"


def full_gpus() -> str:
    """Six nodes with two GPUs each, every GPU held by a running pod; one more pod wants one GPU."""
    objects: list[Any] = [gpu_class(), claim_template("one-gpu")]
    for i in range(6):
        name = f"node-{i}"
        objects += [node(name, cpu="16"), gpu_slice(name, 2)]
        for g in range(2):
            objects += bound_pod_with_claim(f"filler-{2 * i + g}", name, [f"gpu-{g}"])
    objects.append(pod("late", cpu="1", templates={"gpu": "one-gpu"}))
    return manifest(objects)


def cpu_or_devices() -> str:
    """Five nodes with two GPUs each: two are out of cpu, two have one GPU left, one is tainted; the pod
    wants 4 cpu and two GPUs."""
    objects: list[Any] = [gpu_class(), claim_template("one-gpu"), claim_template("two-gpus", gpu_request(count=2))]
    for i in range(5):
        name = f"node-{i}"
        taints = [taint("dedicated", "inference")] if i == 4 else []
        objects += [node(name, cpu="16", taints=taints), gpu_slice(name, 2)]
    for i in (0, 1):
        hog = pod(f"cpu-hog-{i}", cpu="14")
        hog["spec"]["nodeName"] = f"node-{i}"
        objects.append(hog)
    for i in (2, 3):
        objects += bound_pod_with_claim(f"gpu-user-{i}", f"node-{i}", ["gpu-0"])
    objects.append(pod("trainer", cpu="4", templates={"gpus": "two-gpus"}))
    return manifest(objects)


def device_plugin_nodes() -> str:
    """Two nodes whose GPUs the NVIDIA device plugin serves and one with the DRA driver whose GPUs are
    taken; the pod asks for a GPU through a claim."""
    nvidia = device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com'")
    objects: list[Any] = [nvidia, claim_template("one-gpu", gpu_request(device_class_name="gpu.nvidia.com"))]
    objects += [node(f"g6-plugin-{i}", cpu="16", extended={"nvidia.com/gpu": "4"}) for i in range(2)]
    objects += [node("p5-dra", cpu="16"), gpu_slice("p5-dra", 1, driver="gpu.nvidia.com")]
    objects += bound_pod_with_claim("filler", "p5-dra", ["gpu-0"], driver="gpu.nvidia.com")
    objects.append(pod("trainer", cpu="1", templates={"gpu": "one-gpu"}))
    return manifest(objects)


def taint_rule_maintenance() -> str:
    """Three nodes with two GPUs each; a DeviceTaintRule per node puts two of them in maintenance (NoSchedule),
    the third node's GPUs are taken; the pod's claim tolerates nothing."""
    objects: list[Any] = [gpu_class(), claim_template("two-gpus", gpu_request(count=2))]
    for i in range(3):
        objects += [node(f"node-{i}", cpu="16"), gpu_slice(f"node-{i}", 2)]
    objects += [device_taint_rule(f"drain-{p}", pool=p) for p in ("node-0", "node-1")]
    objects += bound_pod_with_claim("filler", "node-2", ["gpu-0", "gpu-1"])
    objects.append(pod("trainer", cpu="1", templates={"gpus": "two-gpus"}))
    return manifest(objects)


def channel_claim_on_p5() -> str:
    """NVIDIA's channel-injection demo on two generated p5.48xlarge nodes: no ComputeDomain devices there."""
    return (manifest(generate(GenerateOptions(groups=(NodeGroup("p5.48xlarge", 2),), name_prefix="p5")).objects,
                     compute_domain_classes())
            + "---\n" + (EXAMPLES / "compute-domain" / "channel-injection.yaml").read_text())


def channel_taken() -> str:
    """One GB200 node, two pods of one ComputeDomain: the node has one IMEX channel."""
    return manifest(compute_domain_classes(), gb200_nodes("gb200-1"), compute_domain(num_nodes=2),
                    channel_pod("worker-0"), channel_pod("worker-1"))


@dataclass(frozen=True)
class GoldenCase:
    name: str
    target: str
    paths: tuple[Path, ...] = ()
    build: Callable[[], str] | None = None
    exit_status: int = 1
    args: tuple[str, ...] = ()


CASES = [
    GoldenCase("missing-deviceclass", "pod/ml/llm-h200", (EXAMPLES, EXAMPLES / "missing-deviceclass")),
    GoldenCase("gpus-taken-everywhere", "pod/default/late", build=full_gpus),
    GoldenCase("cpu-or-devices", "pod/default/trainer", build=cpu_or_devices),
    GoldenCase("scheduled", "pod/ml/train-0-mtpxj", (EXAMPLES,), exit_status=0),
    GoldenCase("device-plugin-nodes", "pod/default/trainer", build=device_plugin_nodes),
    GoldenCase("device-taint-rule", "pod/default/trainer", build=taint_rule_maintenance,
               args=("--feature-gates", "DRADeviceTaintRules=true")),
    GoldenCase("compute-domain-no-channels", "pod/default/imex-channel-injection", build=channel_claim_on_p5),
    GoldenCase("compute-domain-channel-taken", "pod/ml/worker-1", build=channel_taken),
    GoldenCase("compute-domain-scheduled", "pod/default/nvbandwidth-test-1-worker-1",
               (EXAMPLES / "compute-domain",), exit_status=0),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_explain_golden(case: GoldenCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = list(case.paths)
    if case.build is not None:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(case.build())
        paths.append(cluster)
    rc = main(["explain", case.target, *(a for p in paths for a in ("-f", str(p))), *case.args])
    captured = capsys.readouterr()
    assert captured.err == ""
    assert rc == case.exit_status
    golden = GOLDEN / f"{case.name}.out"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(captured.out)
        return
    assert golden.exists(), f"{golden} is missing: run with DRATWIN_UPDATE_GOLDEN=1 to create it"
    expected = golden.read_text()
    if captured.out != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                captured.out.splitlines(keepends=True),
                f"tests/golden/{case.name}.out",
                "dratwin explain",
            )
        )
        pytest.fail(f"explain output differs from the golden file (DRATWIN_UPDATE_GOLDEN=1 to accept):\n{diff}")


def test_every_golden_file_has_a_case() -> None:
    """A golden file whose case was removed would silently stop being checked."""
    explain_files = [p.stem for p in GOLDEN.glob("*.out")
                     if not p.stem.startswith(("plan-", "schedule-"))]  # plan's and schedule's: their own tests
    assert sorted(explain_files) == sorted(c.name for c in CASES)


def test_prefilter_rejection_counts_every_node(capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", "pod/ml/llm-h200", "-f", str(EXAMPLES), "-f", str(EXAMPLES / "missing-deviceclass")])
    group = capsys.readouterr().out.splitlines()[2]
    assert group.startswith("  2 node(s) [DynamicResources] "), group

"""``examples/compute-domain``: NVIDIA's ComputeDomain demos on one generated P6e-GB200 UltraServer, end to end
through ``dratwin schedule``: the table (a golden file, read), where each pod lands, the IMEX daemons that
follow, the objects ``-o yaml`` prints.

Regenerate the golden file on purpose, then review the diff::

    DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/twin/test_compute_domain_example.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "compute-domain"
GOLDEN = REPO / "tests" / "golden" / "schedule-compute-domain.out"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"
DOMAIN_LABEL = "resource.nvidia.com/computeDomain"


def _schedule(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["schedule", "-f", str(EXAMPLE), *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_the_table_matches_the_golden_file(capsys: pytest.CaptureFixture[str]) -> None:
    out = _schedule(capsys)
    if UPDATE:
        GOLDEN.write_text(out)
        return
    expected = GOLDEN.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True), str(GOLDEN), "actual"))
    assert out == expected, diff


def _objects(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = yaml.safe_load(_schedule(capsys, "-o", "yaml"))["items"]  # a kind: List
    return listed


def test_every_workload_pod_has_a_channel_of_its_own_node_and_an_imex_daemon_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    objects = _objects(capsys)
    pods = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Pod"}
    claims = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ResourceClaim"}
    listed = yaml.safe_load((EXAMPLE / "gb200-nodes.yaml").read_text())["items"]  # a kind: List
    cliques = {o["metadata"]["labels"]["nvidia.com/gpu.clique"] for o in listed if o["kind"] == "Node"}
    assert len(cliques) == 1  # one UltraServer, one NVLink domain
    workloads = [p for p in pods.values() if p["metadata"].get("namespace", "default") == "default"]
    daemons = [p for p in pods.values() if p["metadata"]["namespace"] == "nvidia-dra-driver-gpu"]
    assert len(workloads) == 3 and len(daemons) == 3
    on = [p["spec"]["nodeName"] for p in workloads]
    assert len(set(on)) == 3  # one IMEX channel per node
    for pod in workloads:
        [status] = pod["status"]["resourceClaimStatuses"]
        claim = claims[status["resourceClaimName"]]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (
            "compute-domain.nvidia.com", pod["spec"]["nodeName"], "channel-0")
        [config] = claim["spec"]["devices"]["config"]
        domain = config["opaque"]["parameters"]["domainID"]
        [daemon] = [d for d in daemons if d["spec"]["nodeName"] == pod["spec"]["nodeName"]]
        assert daemon["metadata"]["labels"][DOMAIN_LABEL] == domain
        assert daemon["spec"]["nodeSelector"] == {DOMAIN_LABEL: domain}

"""examples/neuron and examples/dranet: the Neuron docs' claims and DRANET's demo, scheduled on generated nodes.

The schedule output is compared with ``tests/golden/examples/<case>.out`` (regenerate on purpose with
``DRATWIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/twin/test_device_examples.py`` and review the diff); the tests
below it check what the docs say of each claim: which devices, which EFAs.
"""

from __future__ import annotations

import difflib
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from tests.builders.generated import gen

from dratwin.allocator import Features
from dratwin.api.loader import load_paths
from dratwin.api.resource import Device, ResourceSlice
from dratwin.cli.main import main
from dratwin.cluster.load import load_cluster
from dratwin.twin.schedule import Options, ScheduleReport, schedule

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOLDEN = REPO / "tests" / "golden" / "examples"
UPDATE = os.environ.get("DRATWIN_UPDATE_GOLDEN") == "1"
NEURON = EXAMPLES / "neuron"
ULTRASERVER = [NEURON / "deviceclasses.yaml", NEURON / "ultraserver"]
DRANET = EXAMPLES / "dranet"

CASES = {
    "neuron-schedule": [str(NEURON)],
    "neuron-ultraserver-schedule": [str(p) for p in ULTRASERVER],
    "dranet-schedule": [str(DRANET)],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_schedule_output_matches_golden(case: str, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    arguments = [a for path in CASES[case] for a in ("-f", str(Path(path).relative_to(REPO)))]
    assert main(["schedule", *arguments]) == 0
    out = capsys.readouterr().out
    golden = GOLDEN / f"{case}.out"
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(out)
        return
    assert golden.exists(), f"{golden} is missing: run with DRATWIN_UPDATE_GOLDEN=1 and review it"
    expected = golden.read_text()
    assert out == expected, "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True)))


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.out")) == sorted(CASES)


@pytest.mark.parametrize(
    ("path", "groups", "prefix"),
    [(NEURON / "cluster.yaml", ["trn2.48xlarge=2"], "trn2-node"),
     (NEURON / "ultraserver" / "cluster.yaml", ["trn2u.48xlarge=4"], "trn2u-node"),
     (DRANET / "cluster.yaml", ["p4d.24xlarge=2"], "p4d-node")],
)
def test_the_example_clusters_are_what_cluster_generate_prints(path: Path, groups: list[str], prefix: str) -> None:
    [written] = [d for d in yaml.safe_load_all(path.read_text()) if d]  # a List, as kubectl prints one
    assert written["kind"] == "List"
    assert written["items"] == gen(*groups, name_prefix=prefix).objects


def _report(*paths: Path) -> ScheduleReport:
    loaded = load_cluster(load_paths([str(p) for p in paths]), Features(), random.Random(0))
    return schedule(loaded, Options())


def _devices(report: ScheduleReport, pod: str) -> dict[str, list[tuple[str, Device]]]:
    """request -> (node, device) of the pod's claims."""
    found: dict[str, list[tuple[str, Device]]] = {}
    slices = [msgspec.convert(s, ResourceSlice, strict=False) for s in _raw_slices(report)]
    by_id = {(s.spec.driver, s.spec.pool.name, d.name): d for s in slices for d in s.spec.devices}
    attempt = report.attempt_of(pod)
    assert attempt is not None and attempt.scheduled, pod
    for line in report.devices_of(attempt):
        claim_request, _, device = line.partition(": ")
        request = claim_request.rsplit("/", 1)[1]
        driver, pool, name = device.split("/")
        found.setdefault(request, []).append((pool, by_id[(driver, pool, name)]))
    return found


def _raw_slices(report: ScheduleReport) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(s) for s in report.state.slices]


def _attr(device: Device, name: str) -> Any:
    value = device.attributes[name]
    return value.string if value.string is not None else value.int_value


@dataclass(frozen=True)
class NeuronCase:
    id: str
    pod: str
    devices: list[str]  # neurondevice names, in order
    group: str  # the devicegroup attribute they all share
    efas: tuple[str, ...] = ()


NEURON_CASES = [
    NeuronCase("1x4-connected-devices: the docs' neurondevice0..3", "default/connected-4",
               [f"neurondevice{i}" for i in range(4)], "resource.aws.com/devicegroup4_id"),
    NeuronCase("l-trn2: a whole group of 8", "default/large-8", [f"neurondevice{i}" for i in range(8, 16)],
               "resource.aws.com/devicegroup8_id"),
    NeuronCase("aligned-efa-neuron: the EFAs of the same group", "default/neurons-and-efas",
               [f"neurondevice{i}" for i in range(4, 8)], "resource.aws.com/devicegroup4_id",
               ("pci-0000-6c-00-0", "pci-0000-57-00-0", "pci-0000-56-00-0", "pci-0000-6d-00-0")),
    NeuronCase("all-neurons-lnc-1: every device of a node", "default/all-neurons-lnc-1",
               [f"neurondevice{i}" for i in range(16)], "resource.aws.com/devicegroup16_id"),
]


@pytest.mark.parametrize("case", NEURON_CASES, ids=lambda c: c.id)
def test_neuron_claims_get_connected_devices(case: NeuronCase) -> None:
    found = _devices(_report(NEURON), case.pod)
    neurons = [d for request, devices in found.items() if "efa" not in request for _, d in devices]
    assert [d.name for d in neurons] == case.devices
    efas = [d for request, devices in found.items() if "efa" in request for _, d in devices]
    assert [d.name for d in efas] == list(case.efas)
    assert len({_attr(d, case.group) for d in neurons + efas}) == 1
    assert len({node for devices in found.values() for node, _ in devices}) == 1


def test_each_ultraserver_pod_takes_one_node() -> None:
    report = _report(*ULTRASERVER)
    nodes = []
    for pod in ("default/vllm-0", "default/vllm-0-1", "default/vllm-0-2", "default/vllm-0-3"):
        [(node, device)] = _devices(report, pod)["neurons"]
        assert _attr(device, "resourceType") == "neuron_node"
        nodes.append(node)
    assert sorted(nodes) == [f"trn2u-node-{i}" for i in range(1, 5)]


def test_dranet_demo_aligned_pairs_share_a_root_unaligned_ones_may_not() -> None:
    report = _report(DRANET)
    root = "resource.kubernetes.io/pcieRoot"
    for pod in ("default/nccl-test-dra-worker-0", "default/nccl-test-dra-worker-1"):
        found = _devices(report, pod)
        [(_, gpu)], [(_, efa)] = found["gpu"], found["efa"]
        assert _attr(gpu, root) == _attr(efa, root), pod
    found = _devices(report, "default/nccl-test-unaligned-worker-1")
    [(_, gpu)], [(_, efa)] = found["gpu"], found["efa"]
    assert (gpu.name, efa.name) == ("gpu-1", "pci-0000-90-1b-0")
    assert _attr(gpu, root) != _attr(efa, root)

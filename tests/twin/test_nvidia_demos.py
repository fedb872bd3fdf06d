"""NVIDIA's DRA driver quickstart and MIG demos (``tests/data/nvidia-demos``, written from the driver's
``demo/specs/quickstart``) validate and schedule on nodes of ``cluster generate`` as the driver's docs say."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders.manifests import manifest, run
from tests.conftest import DRIVERS

from dratwin.api.loader import load_paths, load_text
from dratwin.api.validation import validate_objects
from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import GenerateOptions, MigRequest, NodeGroup
from dratwin.twin.schedule import ScheduleReport

DEMOS = Path(__file__).resolve().parents[1] / "data" / "nvidia-demos"
P4D = GenerateOptions(groups=(NodeGroup("p4d.24xlarge", 1),), name_prefix="p4d")
# mig-parted's half-balanced layout of the quickstart, on every A100-40GB of the node
P4D_MIG = GenerateOptions(groups=(NodeGroup("p4d.24xlarge", 1),), name_prefix="p4d",
                          mig=(MigRequest("1g.5gb", 2), MigRequest("2g.10gb", 1), MigRequest("3g.20gb", 1)))


def _devices(report: ScheduleReport) -> dict[str, list[str]]:
    """pod -> the devices of its claims (``driver/pool/device``), for every scheduled pod."""
    found = {}
    for attempt in report.attempts:
        if attempt.scheduled:
            found[attempt.pod] = [line.split(": ", 1)[1] for line in report.devices_of(attempt)]
    return found


def _one_distinct_gpu_each(devices: dict[str, list[str]]) -> None:
    assert len(devices) == 2 and all(len(d) == 1 for d in devices.values())
    assert len({d[0] for d in devices.values()}) == 2


def _one_gpu(devices: dict[str, list[str]]) -> None:
    [got] = devices.values()
    assert len(got) == 1 and got[0].startswith("gpu.nvidia.com/p4d-1/gpu-")


def _the_same_gpu(devices: dict[str, list[str]]) -> None:
    assert len(devices) == 2
    assert len({tuple(d) for d in devices.values()}) == 1


def _one_gpu_of_mig_devices_each(devices: dict[str, list[str]]) -> None:
    assert len(devices) == 4
    parents = []
    for got in devices.values():
        assert len(got) == 4
        gpus = {d.split("/")[2].split("-mig-")[0] for d in got}
        assert len(gpus) == 1  # matchAttribute gpu.nvidia.com/parentUUID: all four from one GPU
        parents += gpus
    assert len(set(parents)) == 4


def _two_gpus(devices: dict[str, list[str]]) -> None:
    [got] = devices.values()
    assert len(got) == 2 and len(set(got)) == 2


@dataclass(frozen=True)
class Case:
    demo: str
    nodes: GenerateOptions
    pods: int  # pods the demo creates
    check: Callable[[dict[str, list[str]]], None] | None  # on the scheduled pods' devices
    pending: str = ""  # a fragment of every pending pod's message, when the demo cannot run


CASES = [
    Case("gpu-test1", P4D, 2, _one_distinct_gpu_each),
    Case("gpu-test2", P4D, 1, _one_gpu),
    Case("gpu-test3", P4D, 2, _the_same_gpu),
    Case("gpu-test4", P4D_MIG, 4, _one_gpu_of_mig_devices_each),
    Case("gpu-test5", P4D, 1, _two_gpus),
    # The demo selects on `index`, which the driver stopped publishing in v25.8: the selector fails at run time.
    Case("gpu-test6", P4D, 4, None, 'CEL runtime error: device has no attribute "index"'),
    # imex.nvidia.com is the IMEX class of drivers before ComputeDomains; the charts no longer create it.
    Case("imex-test1", P4D, 2, None, "device class imex.nvidia.com does not exist"),
]


def _input(case: Case) -> str:
    return manifest(generate(case.nodes).objects) + "---\n" + (DEMOS / f"{case.demo}.yaml").read_text()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.demo)
def test_demo_schedules_as_the_docs_say(case: Case) -> None:
    report = run((DRIVERS / "deviceclasses.yaml").read_text() + "---\n" + _input(case))
    assert len(report.attempts) == case.pods
    pending = [a for a in report.attempts if not a.scheduled]
    if case.pending:
        assert len(pending) == case.pods and all(case.pending in a.message for a in pending), pending
    else:
        assert pending == []
    if case.check is not None:
        case.check(_devices(report))


@pytest.mark.parametrize("case", [c for c in CASES if c.demo != "imex-test1"], ids=lambda c: c.demo)
def test_demo_validates(case: Case) -> None:
    objects = load_paths([str(DRIVERS / "deviceclasses.yaml")]) + load_text(_input(case), f"{case.demo}.yaml")
    assert [str(p) for p in validate_objects(objects, SelectorCompiler()) if p.is_error] == []


def test_the_pre_compute_domain_imex_class_is_reported_by_validate() -> None:
    objects = load_paths([str(DRIVERS / "deviceclasses.yaml"), str(DEMOS / "imex-test1.yaml")])
    [error] = [p for p in validate_objects(objects, SelectorCompiler()) if p.is_error]
    assert 'no DeviceClass "imex.nvidia.com" in the input' in error.message

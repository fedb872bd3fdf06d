"""The bundled scenario (examples/simulate/): it reads without a problem, and its variants make sense to the
scheduler: the first arrivals of each variant, scheduled at time 0, land with the devices the variant means."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.conftest import EXAMPLES

from dratwin.cli.main import main
from dratwin.scenario.document import check

SCENARIO = str(EXAMPLES / "simulate" / "eks-gpu-fleet.yaml")


def test_the_example_reads_without_problems() -> None:
    scenario, runs, problems = check(SCENARIO)
    assert scenario is not None and problems == []
    assert [(r.variant, r.seed) for r in runs][:4] == [("device-plugin", 1), ("device-plugin", 2),
                                                        ("device-plugin", 3), ("dra", 1)]
    assert {r.variant for r in runs} == {"device-plugin", "dra", "dra-mig", "dra-hpa-cpu"}
    assert {r.services[0].autoscaler.metric for r in runs if r.services[0].autoscaler} == {"DCGM_FI_DEV_GPU_UTIL",
                                                                                          "cpu"}


@pytest.mark.parametrize(("variant", "device"), [("device-plugin", None), ("dra", "/gpu-0"),
                                                 ("dra-mig", "/gpu-0-mig-3g20gb-")])
def test_first_arrivals_schedule_with_the_variants_devices(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           variant: str, device: str | None) -> None:
    runs = check(SCENARIO, seeds=[1])[1]
    (run,) = [r for r in runs if r.variant == variant]
    objects = [o.raw for o in run.objects] + [o.raw for a in run.arrivals[:3] for o in a.objects]
    path = tmp_path / "time-0.yaml"
    path.write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    capsys.readouterr()
    assert main(["schedule", "-f", str(path), "-o", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["unschedulable"] == []
    serving = [p for p in result["scheduled"] if p["pod"].startswith("inference/vllm-")]
    assert len(serving) == 2
    p4d = {o.name for o in run.objects if o.kind == "Node"
           and o.raw["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p4d.24xlarge"}
    for placed in serving:
        assert placed["node"] in p4d
        if device is None:  # the device plugin's GPUs are counted in allocatable, not allocated as devices
            assert placed["devices"] == []
        else:
            assert len(placed["devices"]) == 1 and device in json.dumps(placed["devices"]), placed

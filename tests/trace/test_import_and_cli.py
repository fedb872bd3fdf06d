"""``dratwin trace import`` and ``dratwin trace replay`` on the repository's small trace.

The goldens under tests/data/trace/golden/ were read when written: one DeviceClass, each Node with its
ResourceSlice of 1000-milli GPUs that allow multiple allocations, one claim template per GPU shape (the
share as a capacity request, gpu_spec as a CEL selector on the model), then the Pods; the device-plugin
variant advertises time-slicing replicas and asks for them.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import DATA

from dratwin.cli.main import main
from dratwin.cli.trace_cmd import parse_seeds
from dratwin.errors import InputError

TRACE = DATA / "trace"
GOLDEN = TRACE / "golden"


@pytest.mark.parametrize("manager", ["dra", "device-plugin"])
def test_import_matches_its_golden(manager: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "import", "alibaba-v2023", str(TRACE), "--gpu-manager", manager]) == 0
    assert capsys.readouterr().out == (GOLDEN / f"import-{manager}.yaml").read_text()


def test_imported_manifests_validate_and_schedule_with_shared_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", str(GOLDEN / "import-dra.yaml")]) == 0
    assert "no problems" in capsys.readouterr().out
    assert main(["schedule", "-f", str(GOLDEN / "import-dra.yaml"), "-o", "json"]) == 1  # some stay pending
    report = json.loads(capsys.readouterr().out)
    assert len(report["scheduled"]) == 45 and len(report["unschedulable"]) == 15
    devices = Counter(d.split(": ", 1)[1] for placed in report["scheduled"] for d in placed["devices"])
    assert devices and max(devices.values()) >= 2  # GPU shares: two pods on one GPU


def test_import_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "import", "alibaba-v2023", str(TRACE), "-o", "json"]) == 0
    kinds = Counter(item["kind"] for item in json.loads(capsys.readouterr().out)["items"])
    assert kinds == {"DeviceClass": 1, "Node": 8, "ResourceSlice": 6, "ResourceClaimTemplate": 16, "Pod": 60}


@dataclass(frozen=True)
class BadImport:
    name: str
    files: dict[str, str]
    args: tuple[str, ...]
    message: str


NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,8000,1024,1,T4\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-0,1000,1024,1,500\n"
BAD_IMPORTS = [
    BadImport("a name Kubernetes refuses", {"node_list.csv": NODES.replace("n-0", "Node_0"), "pod_list.csv": PODS},
              (), "node_list.csv: data row 1: column sn: 'Node_0' is not a valid Kubernetes name"),
    BadImport("two pod lists", {"node_list.csv": NODES, "a_pod_list.csv": PODS, "b_pod_list.csv": PODS}, (),
              "2 pod lists; choose one with --workload (a_pod_list, b_pod_list)"),
    BadImport("an unknown workload", {"node_list.csv": NODES, "pod_list.csv": PODS}, ("--workload", "x"),
              "--workload x: not in"),
    BadImport("no node list", {"pod_list.csv": PODS}, (), "expected one node list"),
    BadImport("no pod list", {"node_list.csv": NODES}, (), "no pod list"),
    BadImport("a bad value", {"node_list.csv": NODES, "pod_list.csv": PODS.replace(",500", ",half")}, (),
              "pod_list.csv:2: column gpu_milli: 'half' is not a whole number"),
]


@pytest.mark.parametrize("case", BAD_IMPORTS, ids=lambda c: c.name)
def test_bad_imports_say_where_without_a_traceback(
    case: BadImport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, text in case.files.items():
        (tmp_path / name).write_text(text)
    assert main(["trace", "import", "alibaba-v2023", str(tmp_path), *case.args]) == 2
    err = capsys.readouterr().err
    assert case.message in err and "Traceback" not in err


def test_replay_prints_each_policy_beside_the_published_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "csv"
    trace.mkdir()
    for name in ("node_list.csv", "pod_list.csv"):
        (trace / name).write_text((TRACE / name).read_text())
    expected = tmp_path / "fgd-expected-results"
    expected.mkdir()
    columns = ",".join(str(i) for i in range(131))
    values = ",".join(["90.0"] * 131)
    (expected / "analysis_allo_discrete.csv").write_text(
        f"workload,sc_policy,tune,seed,total_gpus,{columns}\n"
        f"openb_pod_list_pod_list,06-FGD,1.3,42,25,{values}\n"
        f"openb_pod_list_pod_list,06-FGD,1.3,43,25,{values}\n"
    )
    assert main(["trace", "replay", str(trace), "--policy", "fgd", "--seeds", "42-43", "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [cell] = report["results"]
    assert cell["workload"] == "pod_list" and cell["policy"] == "fgd"
    assert cell["publishedMean"] == 10.0 and cell["publishedSeeds"] == {"42": 10.0, "43": 10.0}
    assert set(cell["seeds"]) <= {"42", "43"} and cell["mean"] is not None
    assert cell["difference"] == round(cell["mean"] - 10.0, 2)
    assert main(["trace", "replay", str(trace), "--policy", "fgd", "--policy", "bestfit", "--seeds", "42"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["WORKLOAD", "POLICY", "SEEDS", "MEAN", "PUBLISHED", "DIFF", "PER", "SEED"]
    assert [line.split()[1] for line in table[1:]] == ["fgd", "bestfit"]
    assert all(line.split()[-1].startswith("42:") or line.split()[2] == "0" for line in table[1:])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "tetris"], "--policy tetris: unknown"),
        (["--seeds", "a-b"], "--seeds 'a-b': expected A-B"),
        (["--workload", "nope"], "--workload nope: not in"),
        (["--expected", "/nonexistent"], "no analysis_allo_discrete.csv there"),
    ],
)
def test_bad_replay_arguments(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "replay", str(TRACE), *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "seeds"), [("42-51", list(range(42, 52))), ("42", [42]), ("1,5-6", [1, 5, 6])]
)
def test_parse_seeds(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


def test_an_empty_seed_range_is_refused() -> None:
    with pytest.raises(InputError, match="no seed"):
        parse_seeds("51-42")


@pytest.mark.parametrize("argv", [["trace", "--help"], ["trace", "import", "--help"], ["trace", "replay", "--help"]])
def test_help_teaches(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    assert "examples:" in capsys.readouterr().out or argv == ["trace", "--help"]

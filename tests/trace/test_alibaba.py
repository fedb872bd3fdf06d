"""Reading GPU traces in the Alibaba format: the repository's small trace, bad files, and the published trace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import DATA

from dratwin.errors import InputError
from dratwin.trace import AlibabaNode, AlibabaPod, read_nodes, read_pods

TRACE = DATA / "trace"


def test_the_small_trace_reads_whole() -> None:
    nodes = read_nodes(TRACE / "node_list.csv")
    pods = read_pods(TRACE / "pod_list.csv")
    assert len(nodes) == 8 and len(pods) == 60
    assert nodes[0] == AlibabaNode("trace-node-00", 96000, 786432, 8, "V100M32")
    assert [n.name for n in nodes if not n.model] == ["trace-node-06", "trace-node-07"]
    assert sum(n.gpus for n in nodes) == 25
    assert pods[1] == AlibabaPod(
        "trace-pod-001", 12000, 24576, 1, 460, ("T4", "P100"), "Burstable", "Running", 2450, 26208, 2567
    )
    pending = [p for p in pods if p.phase == "Pending"]
    assert pending and all(p.scheduled_time is None for p in pending)
    assert {p.is_gpu_sharing for p in pods} == {True, False}
    assert all(p.creation_time is not None and p.deletion_time is not None for p in pods)
    assert [p.creation_time for p in pods] == sorted(p.creation_time or 0 for p in pods)


def test_five_column_pod_lists_have_no_times(tmp_path: Path) -> None:
    path = tmp_path / "multigpu.csv"
    path.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-0,8000,16384,2,1000\n")
    assert read_pods(path) == [AlibabaPod("p-0", 8000, 16384, 2, 1000)]


@dataclass(frozen=True)
class BadFile:
    name: str
    text: str
    message: str


HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
BAD_FILES = [
    BadFile("missing column", "name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n", "missing column(s) gpu_milli"),
    BadFile("unknown column", f"{HEADER},gpus\np,1,1,0,0,0\n", "unknown column(s) gpus"),
    BadFile("not a number", f"{HEADER}\np,1.5,1,0,0\n", ":2: column cpu_milli: '1.5'"),
    BadFile("short row", f"{HEADER}\np,1,1\n", ":2: 3 values, the header has 5"),
    BadFile("empty file", "", "missing column(s) name"),
]


@pytest.mark.parametrize("case", BAD_FILES, ids=lambda c: c.name)
def test_bad_files_say_where(case: BadFile, tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(case.text)
    with pytest.raises(InputError) as raised:
        read_pods(path)
    assert case.message in str(raised.value) and str(path) in str(raised.value)


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the trace"):
        read_nodes(tmp_path / "absent.csv")

"""Fuzzing every command with hostile text, arbitrary object shapes, mutated real manifests and CEL selectors.

Each input must keep the contract of ``tests/fuzz/harness.py``: an exit status and a message, never a
traceback or a hang. ``make test`` runs a few derandomized examples of each; ``make fuzz`` runs a campaign.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzz.conftest import FUZZ
from tests.fuzz.harness import FuzzInput, run
from tests.fuzz.strategies import (
    REPO,
    cel_expressions,
    cli_inputs,
    hostile_texts,
    mutated,
    objects,
    render_all,
    scheduling_scenarios,
    trace_folders,
)

P5 = (REPO / "examples" / "p5-slices.yaml").read_text()
NODES = (REPO / "examples" / "nodes.yaml").read_text()


@FUZZ
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace"))),
       st.sampled_from(["validate", "schedule", "plan", "allocate", "simulate"]))
def test_any_text(text: str, command: str) -> None:
    argv = [command, "-f", "{in.yaml}"] + (["--node", "n1"] if command == "allocate" else [])
    if command == "simulate":
        argv = ["simulate", "{in.yaml}", "--until", "1h"]
    run(FuzzInput(tuple(argv), {"in.yaml": text}))


@FUZZ
@given(hostile_texts(), st.sampled_from(["validate", "validate-json", "schedule", "plan", "explain"]))
def test_hostile_text(text: str, command: str) -> None:
    argv = {"validate-json": ["validate", "-f", "{in.yaml}", "-o", "json"],
            "explain": ["explain", "pod/default/p", "-f", "{in.yaml}"]}.get(command, [command, "-f", "{in.yaml}"])
    run(FuzzInput(tuple(argv), {"in.yaml": text}), time_limit=60)


@FUZZ
@given(cli_inputs(objects()))
def test_object_shapes(case: FuzzInput) -> None:
    run(case)


@FUZZ
@given(cli_inputs(mutated()))
def test_mutated_manifests(case: FuzzInput) -> None:
    run(case)


def _selector_files(expression: str, in_claim: bool) -> dict[str, str]:
    selector = [{"cel": {"expression": expression}}]
    device_class: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                    "metadata": {"name": "c"}, "spec": {} if in_claim else {"selectors": selector}}
    exactly: dict[str, Any] = {"deviceClassName": "c"}
    if in_claim:
        exactly["selectors"] = selector
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x", "namespace": "ml"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}}
    return {"objects.yaml": render_all([device_class, claim], False), "p5.yaml": P5, "nodes.yaml": NODES}


@FUZZ
@given(cel_expressions(), st.booleans(), st.sampled_from(["validate", "allocate"]))
def test_cel_selectors(expression: str, in_claim: bool, command: str) -> None:
    argv = [command, "-f", "{objects.yaml}", "-f", "{p5.yaml}", "-f", "{nodes.yaml}"]
    if command == "allocate":
        argv += ["--node", "p5-node-1", "-o", "json"]
    run(FuzzInput(tuple(argv), _selector_files(expression, in_claim)))


CASES = sorted((REPO / "conformance").glob("*/*.yaml"))


@st.composite
def allocator_cases(draw: st.DrawFn) -> FuzzInput:
    """A conformance case with its objects mutated, run as the conformance runner runs it."""
    case = yaml.safe_load(draw(st.sampled_from(CASES)).read_text())
    docs = copy.deepcopy(case["objects"])
    for _ in range(draw(st.integers(0, 3))):
        index = draw(st.integers(0, len(docs) - 1)) if docs else 0
        if docs:
            docs[index] = draw(mutated().map(lambda _m, d=docs[index]: d) | st.just(docs[index]))
    gates = draw(st.lists(st.sampled_from(["DRAConsumableCapacity", "DRAPartitionableDevices", "DRADeviceTaints",
                                           "DRAPrioritizedList", "DRAAdminAccess", "DRADeviceBindingConditions"]),
                          unique=True))
    argv = ["allocate", "-f", "{case.yaml}", "--node", str(case["node"])]
    for claim in case.get("allocate") or []:
        argv += ["--claim", f"default/{claim}"]
    if gates:
        argv += ["--feature-gates", ",".join(f"{g}={draw(st.booleans())}".lower().replace(g.lower(), g) for g in gates)]
    argv += draw(st.sampled_from([["--skip-validation", "-o", "json"], ["-o", "json"], []]))
    return FuzzInput(tuple(argv), {"case.yaml": render_all(docs, False)})


@FUZZ
@given(allocator_cases())
def test_allocator_cases(case: FuzzInput) -> None:
    run(case)


@FUZZ
@given(scheduling_scenarios(), st.sampled_from(["schedule", "explain"]))
def test_scheduling_scenarios(docs: list[Any], command: str) -> None:
    """Valid clusters of partitionable GPUs with shared counters: every one is answered, none searches forever."""
    argv = ["schedule", "-f", "{in.yaml}", "-o", "json"] if command == "schedule" else \
        ["explain", "pod/default/p0", "-f", "{in.yaml}"]
    run(FuzzInput(tuple(argv), {"in.yaml": render_all(docs, False)}), time_limit=60)


@FUZZ
@given(trace_folders(), st.sampled_from(["import", "import-json", "import-plugin", "replay"]))
def test_trace_folders(files: dict[str, str], command: str) -> None:
    argv = {"import": ["trace", "import", "alibaba-v2023", "{dir}"],
            "import-json": ["trace", "import", "alibaba-v2023", "{dir}", "-o", "json"],
            "import-plugin": ["trace", "import", "alibaba-v2023", "{dir}", "--gpu-manager", "device-plugin"],
            "replay": ["trace", "replay", "{dir}", "--seeds", "42", "-o", "json"]}[command]
    run(FuzzInput(tuple(argv), files))

"""The disagreement writer: a case file per disagreement that reproduces it on its own, and the summary."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.builders import answer, result

from dratwin.api.loader import load_paths
from dratwin.cli.allocate_cmd import json_answer
from dratwin.differential.casefile import CASE_KEYS, dump_case, feature_gates, load_case
from dratwin.differential.compare import compare
from dratwin.differential.generator import generate_case
from dratwin.differential.judge import judge
from dratwin.differential.report import Tally, summary_lines, write_finding, write_summary

MODULE = "k8s.io/dynamic-resource-allocation v0.36.2"
OTHER_DEVICE = answer(claims={"claim-0": [result("req-0", "driver-z", "pool-z", "dev-z")]})


def run_case_file(path: Path, tmp_path: Path) -> dict[str, object]:
    """What `dratwin allocate -o json` answers for a case file, as the conformance runner runs it."""
    case = load_case(path)
    objects_file = tmp_path / "objects.yaml"
    objects_file.write_text(yaml.safe_dump_all(case["objects"], sort_keys=False), encoding="utf-8")
    objects = load_paths([str(objects_file)])
    claims = [f"default/{name}" for name in case["allocate"]]
    return json_answer(objects, case["node"], claims, feature_gates(case["features"]), explain_failure=False)


def test_a_disagreement_file_reproduces_the_disagreement(tmp_path: Path) -> None:
    case = generate_case(5, 1)
    dratwin = run_case_file_from_case(case, tmp_path)
    # Upstream "allocates" a device that is in no slice: dratwin can never agree.
    judgement = judge({"name": case["name"], "variant": "incubating", "answers": {"incubating": OTHER_DEVICE}}, dratwin)
    assert judgement.is_disagreement
    path = write_finding(tmp_path / "out", case, judgement, dratwin, MODULE)
    assert path is not None
    assert path.parent == tmp_path / "out" / "disagreements" / judgement.category.replace(" ", "-")
    written = load_case(path)
    assert list(written) == list(CASE_KEYS)
    assert {k: v for k, v in written.items() if k != "expect"} == case
    header = path.read_text(encoding="utf-8").split("\nname:")[0]
    assert judgement.category in header and MODULE in header and "dratwin (" in header
    again = run_case_file(path, tmp_path)
    assert compare(written["expect"], again).category == judgement.category


def run_case_file_from_case(case: dict[str, object], tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "case.yaml"
    path.write_text(dump_case(case), encoding="utf-8")
    return run_case_file(path, tmp_path)


def test_agreements_write_nothing_and_order_dependent_cases_go_apart(tmp_path: Path) -> None:
    case = generate_case(5, 2)
    agree = judge({"name": "c", "variant": "stable", "answers": {"stable": OTHER_DEVICE}}, OTHER_DEVICE)
    assert write_finding(tmp_path, case, agree, OTHER_DEVICE, MODULE) is None
    varying = {**OTHER_DEVICE, "alternatives": [OTHER_DEVICE, answer("unsatisfiable")], "runs": 8}
    order = judge({"name": "c", "variant": "stable", "answers": {"stable": varying}}, answer("unsatisfiable"))
    path = write_finding(tmp_path, case, order, answer("unsatisfiable"), MODULE)
    assert path == tmp_path / "order-dependent" / f"{case['name']}.yaml"
    assert "dratwin's answer is one of them" in path.read_text(encoding="utf-8")


def test_summary_counts_by_category(tmp_path: Path) -> None:
    tally = Tally()
    agree = judge({"name": "a", "variant": "stable", "answers": {"stable": OTHER_DEVICE}}, OTHER_DEVICE)
    upstream = {"name": "b", "variant": "incubating", "answers": {"incubating": OTHER_DEVICE}}
    differ = judge(upstream, answer("unsatisfiable"))
    tally.add("a", agree, {**OTHER_DEVICE, "seconds": 0.5})
    tally.add("b", differ, {"result": "unsatisfiable", "seconds": 1.5})
    assert tally.disagreements == 1
    text = "\n".join(summary_lines(tally, "header", tmp_path))
    assert "agree                 1" in text and "outcome differs       1" in text
    assert "slowest for dratwin: b 1.50 s" in text and text.endswith(f"written to {tmp_path}/disagreements/")
    write_summary(tmp_path / "summary.json", tally, {"seed": 1})
    body = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert body["counts"] == {"agree": 1, "outcome differs": 1}
    assert body["cases"] == {"outcome differs": ["b"]} and body["seed"] == 1

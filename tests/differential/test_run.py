"""The differential run's dratwin side: the `dratwin allocate -o json` code path in-process, bounded in time."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dratwin.cli.main import main
from dratwin.differential import run as differential
from dratwin.differential.casefile import feature_gates
from dratwin.differential.generator import generate_case


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5])
def test_in_process_answers_are_the_commands(index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = generate_case(21, index)
    objects = tmp_path / "objects.json"  # JSON: in YAML, kubectl's reader types plain "y" and "n" as booleans
    objects.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case["objects"]}), encoding="utf-8")
    argv = ["allocate", "-f", str(objects), "--node", case["node"], "--skip-validation", "-o", "json",
            "--feature-gates", feature_gates(case["features"])]
    for name in case["allocate"]:
        argv += ["--claim", f"default/{name}"]
    main(argv)
    printed = json.loads(capsys.readouterr().out)
    printed.pop("explanation", None)
    in_process = differential.answer_with_dratwin(case, timeout_s=30)
    assert in_process.pop("seconds") >= 0
    # An error names where the object was written: the file and line there, the case's name in-process.
    if "error" in printed:
        printed["error"] = printed["error"].removeprefix(f"{objects}:").split(": ", 1)[1]
        in_process["error"] = in_process["error"].removeprefix(f"{case['name']}: ")
    assert in_process == printed


def test_an_allocation_past_its_time_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def endless(*args: Any, **kwargs: Any) -> dict[str, Any]:
        while True:
            pass

    monkeypatch.setattr(differential, "json_answer", endless)
    got = differential.answer_with_dratwin(generate_case(21, 0), timeout_s=0.05)
    assert got["result"] == "timeout" and got["error"] == "no answer in 0.05 s"


def test_without_go_the_run_says_what_it_needs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.setattr(differential.oracle, "locate", lambda explicit=None: None)
    assert differential.main(["-n", "3", "--out", str(tmp_path)]) == 2
    assert "go is not installed" in capsys.readouterr().err


def test_a_missing_oracle_binary_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert differential.main(["-n", "3", "--oracle", str(tmp_path / "nothing")]) == 2
    assert "no oracle binary there" in capsys.readouterr().err


FAKE_ORACLE = '''\
import json, sys
args = sys.argv[1:]
if args == ["-version"]:
    print("k8s.io/dynamic-resource-allocation v0.0.0-fake")
    sys.exit(0)
runs = int(args[args.index("-stable-runs") + 1])
unsatisfiable = {"result": "unsatisfiable", "steps": 1, "seconds": 0.0}
with open(args[args.index("-jsonl") + 1]) as cases:
    for line in cases:
        stable = dict(unsatisfiable)
        if runs >= 100:  # only many pool orders find the rarer answer
            stable["orderDependent"] = True
            stable["alternatives"] = [unsatisfiable, {"result": "error", "error": "rare", "steps": 1, "seconds": 0.0}]
        print(json.dumps({"name": json.loads(line)["name"], "variant": "stable", "answers": {"stable": stable}}))
'''


def _fake_oracle(tmp_path: Path) -> Path:
    binary = tmp_path / "oracle"
    binary.write_text(f"#!{sys.executable}\n{FAKE_ORACLE}", encoding="utf-8")
    binary.chmod(0o755)
    return binary


def test_stable_cases_that_disagree_are_asked_again_with_more_pool_orders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle = str(_fake_oracle(tmp_path))
    common = ["-n", "6", "--seed", "21", "--oracle", oracle, "--stable-runs", "8"]
    # Without the second look, dratwin's allocations disagree with the fake's "unsatisfiable".
    assert differential.main([*common, "--out", str(tmp_path / "once"), "--recheck-runs", "0"]) == 1
    once = json.loads((tmp_path / "once" / "summary.json").read_text(encoding="utf-8"))
    doubtful = once["disagreements"]
    assert doubtful > 0
    capsys.readouterr()
    assert differential.main([*common, "--out", str(tmp_path / "again"), "--recheck-runs", "1024"]) == 0
    assert f"{doubtful} stable cases that disagree asked again with 1024 pool orders" in capsys.readouterr().err

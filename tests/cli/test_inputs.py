"""Every command reads -f the same way: a directory's non-manifest files are skipped with a warning, a
repeated object replaces the earlier one with a warning, and an input without objects is an error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n"
RELABELLED = NAMESPACE + "  labels: {team: a}\n"

# (command line after the files, the exit status the bundled examples give)
COMMANDS: list[tuple[str, list[str], int]] = [
    ("validate", ["validate"], 0),
    ("schedule", ["schedule"], 0),
    ("explain", ["explain", "pod/ml/train-0-mtpxj"], 0),
    ("allocate", ["allocate", "--node", "p5-node-1", "--claim", "ml/vllm-gpu"], 0),
]


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(REPO / "examples", target, ignore=shutil.ignore_patterns("missing-deviceclass", "plan",
                                                                             "oversubscribed-node"))
    (target / "values.yaml").write_text("replicas: 2\n")
    (target / "zz-namespace.yaml").write_text(NAMESPACE + "---\n" + RELABELLED)
    return target


@pytest.mark.parametrize(("args", "status"), [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_commands_skip_non_manifests_and_resolve_repeats(examples: Path, capsys: pytest.CaptureFixture[str],
                                                         args: list[str], status: int) -> None:
    assert main([*args, "-f", str(examples)]) == status
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert f"{examples / 'values.yaml'}: warning: skipped: Helm chart values, not Kubernetes objects" in output
    assert f"{examples / 'zz-namespace.yaml'}:" in output
    assert "the same Namespace is defined at" in output
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("command", [c[1] for c in COMMANDS if c[0] != "validate"],
                         ids=[c[0] for c in COMMANDS if c[0] != "validate"])
def test_an_input_without_objects_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              command: list[str]) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    assert main([*command, "-f", str(empty)]) == 2
    assert f"no Kubernetes objects found in {empty}" in capsys.readouterr().err

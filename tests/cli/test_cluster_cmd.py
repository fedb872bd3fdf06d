"""``dratwin cluster generate`` end to end: output as kubectl prints it, warnings, exit codes, help."""

from __future__ import annotations

import argparse
import json

import pytest
import yaml

from dratwin.cli import cluster_cmd, main


def run(argv: list[str]) -> int:
    """Run through the real ``dratwin`` parser when cluster_cmd is wired into main, else a parser of its own."""
    if cluster_cmd.register in main._command_registrars():
        parser = main.build_parser()
    else:
        parser = argparse.ArgumentParser(prog="dratwin")
        cluster_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_yaml_list_of_nodes_then_slices(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cluster", "generate", "--instance-type", "p5.48xlarge=2", "--instance-type", "g6e.12xlarge"]) == 0
    out, err = capsys.readouterr()
    document = yaml.safe_load(out)
    assert (document["apiVersion"], document["kind"], document["metadata"]) == ("v1", "List", {"resourceVersion": ""})
    kinds = [item["kind"] for item in document["items"]]
    assert kinds == ["Node"] * 3 + ["ResourceSlice"] * 6
    assert err == ""


def test_json_output_and_a_single_object_is_still_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cluster", "generate", "-t", "g6e.xlarge", "--gpu-manager", "device-plugin", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "List"
    [node] = document["items"]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "1"


def test_same_arguments_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cluster", "generate", "-t", "p4d.24xlarge=2", "--mig", "3g.20gb", "--zone", "us-east-1b"]
    run(argv)
    first = capsys.readouterr().out
    run(argv)
    assert capsys.readouterr().out == first


def test_warnings_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cluster", "generate", "-t", "g7e.48xlarge"]) == 0
    out, err = capsys.readouterr()
    assert "dratwin cluster generate: warning: g7e.48xlarge: no Karpenter DRA device metadata" in err
    assert "topology unknown" in err
    assert yaml.safe_load(out)["kind"] == "List"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-t", "p5.48xl"], "unknown instance type 'p5.48xl' (did you mean p5.48xlarge"),
        (["-t", "p5.48xlarge=zero"], "expected TYPE=COUNT"),
        (["-t", "p5.48xlarge", "--mig", "1g5gb"], "expected PROFILE or PROFILE=COUNT"),
        (["-t", "p5.48xlarge", "--gpu-manager", "plugin"], "invalid choice: 'plugin'"),
        (["-t", "p5.48xlarge", "--taint", "nvidia.com/gpu"], "expected KEY[=VALUE]:EFFECT"),
        ([], "the following arguments are required: -t/--instance-type"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(["cluster", "generate", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-t", "p5.48xlarge", "--mig", "1g.5gb"],
         "error: p5.48xlarge: MIG profile '1g.5gb' does not exist on NVIDIA H100 80GB HBM3; valid profiles: 1g.10gb"),
        (["-t", "g6e.12xlarge", "--mig", "1g.10gb"], "none of g6e.12xlarge has a MIG-capable GPU"),
        (["-t", "p5.48xlarge", "--zone", "us-east-1a", "--zone", "eu-west-1a"], "several regions"),
        (["-t", "trn2.3xlarge"], "cannot be modelled as a node"),
    ],
)
def test_semantic_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cluster", "generate", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(["cluster", "generate", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "--instance-type p5.48xlarge=4 --instance-type g6e.12xlarge=10" in out
    assert "--mig" in out and "exit status" in out


def test_cluster_without_subcommand_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cluster"]) == 2
    assert "generate" in capsys.readouterr().err

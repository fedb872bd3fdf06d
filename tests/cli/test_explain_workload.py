"""``dratwin explain workload/...``, ``job/...`` and ``pod/...`` of a queued Job: what each target maps to,
and the errors a platform engineer meets (a misspelt Workload, an input without Kueue). A suspended Job has
no pods (Kueue's jobframework suspends it until admission: pkg/controller/jobframework/reconciler.go), so
its pod names are mapped to its Workload."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
TEAM_QUOTA = ("-f", str(EXAMPLES / "deviceclasses.yaml"), "-f", str(EXAMPLES / "queues" / "cluster.yaml"),
              "-f", str(EXAMPLES / "queues" / "team-quota"))


@dataclass(frozen=True)
class Case:
    name: str
    target: str
    exit_status: int
    out: str = ""  # the first line of standard output
    err: str = ""  # found in standard error
    paths: tuple[str, ...] = TEAM_QUOTA


CASES = [
    Case("workload-by-name", "workload/team-a/job-finetune-2abf7", 1,
         out="workload team-a/job-finetune-2abf7 (of Job team-a/finetune): Pending"),
    Case("job-maps-to-its-workload", "job/team-a/pretrain", 0,
         out="job team-a/pretrain: queued as workload team-a/job-pretrain-53bbe"),
    Case("pod-of-a-suspended-job", "pod/team-a/finetune-x7k2q", 1,
         out="pod team-a/finetune-x7k2q: queued as workload team-a/job-finetune-2abf7"),
    Case("misspelt-workload", "workload/team-a/job-finetune-2abf8", 2,
         err="did you mean team-a/job-finetune-2abf7?"),
    Case("unknown-job", "job/team-a/eval", 2, err="job team-a/eval is not queued by Kueue in the input"),
    Case("no-kueue-objects", "workload/ml/train", 2, err="the input holds no Kueue ClusterQueue or LocalQueue",
         paths=("-f", str(EXAMPLES))),
    Case("unknown-kind", "deployment/ml/train", 2, err="workload/NAMESPACE/NAME or job/NAMESPACE/NAME"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_explain_target(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", case.target, *case.paths])
    captured = capsys.readouterr()
    assert rc == case.exit_status, captured.err
    if case.out:
        assert captured.out.splitlines()[0] == case.out
    assert case.err in captured.err
    assert "Traceback" not in captured.err


def test_pod_of_an_admitted_job_says_which_workload(capsys: pytest.CaptureFixture[str]) -> None:
    """An admitted Job runs: its pod is explained as any pod, with the Workload that admitted it."""
    main(["explain", "job/team-a/pretrain", *TEAM_QUOTA, "-o", "json"])
    pod = json.loads(capsys.readouterr().out)["placement"]["pods"][0]
    rc = main(["explain", f"pod/{pod}", *TEAM_QUOTA])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith(f"pod {pod}: Scheduled")
    assert "admitted by Kueue as workload team-a/job-pretrain-53bbe in ClusterQueue team-a" in out

"""``dratwin simulate`` on scenario files, for the tests: a small seeded scenario and a way to run the command."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from tests.builders.scenarios import write

from dratwin.cli.main import main

REPO = Path(__file__).resolve().parents[2]

# Two p5.48xlarge nodes and training Jobs of four GPUs arriving faster than they finish, so that some wait
# and some are never placed; two variants x two seeds of twelve hours, a second or two in all.
SMALL = f"""\
apiVersion: dratwin.io/v1alpha1
kind: Scenario
metadata:
  name: small
spec:
  duration: 12h
  seeds: [7, 8]
  cluster:
    files: [{REPO / "examples" / "deviceclasses.yaml"}]
    generate:
    - {{instanceType: p5.48xlarge, count: 2}}
  workloads:
  - name: train
    arrival: {{poisson: {{rate: 4/h}}}}
    runFor: {{exponential: {{mean: 40m}}}}
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: train, namespace: ml}}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: c
              image: pytorch
              resources:
                limits: {{nvidia.com/gpu: 4}}
  variants:
  - name: dra
  - name: device-plugin
    overrides: {{gpuManager: device-plugin}}
"""


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def simulate(*args: str) -> Outcome:
    return dratwin("simulate", *args)


def dratwin(*args: str) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Outcome(code, out.getvalue(), err.getvalue())


def small_scenario(folder: Path, text: str = SMALL) -> str:
    return write(folder, text)

"""Kueue in a scenario file: its objects and Configuration in ``spec.cluster``, validated like any manifest
(file, line, field), and the bundled example (examples/simulate/kueue-queues.yaml) run through time.

Kueue at ff69552: config/components/crd (the CRDs' structure), pkg/webhooks (the rules), and for the run
the controllers cited in test_kueue*.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import EXAMPLES

from dratwin.scenario.document import check, load
from dratwin.sim.run import SimOptions, simulate

EXAMPLE = str(EXAMPLES / "simulate" / "kueue-queues.yaml")


def test_the_example_reads_without_problems() -> None:
    scenario, runs, problems = check(EXAMPLE)
    assert scenario is not None and problems == []
    kinds = {o.kind for o in runs[0].objects}
    assert {"ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "Configuration"} <= kinds


def test_the_example_runs_its_queues() -> None:
    """Admissions through time with the invariants checked after every event (no ClusterQueue over its
    limits, no pod running without its Workload admitted); team b's first Workload waits for its 40 GiB model
    (40 s at 1 GiB/s) between quota reservation and admission (the dratwin.io/model-cache check)."""
    _, runs = load(EXAMPLE, until_seconds=4 * 3600.0)
    sim = simulate(runs[0], SimOptions(check_invariants=True))
    assert sim.kueue is not None
    view = sim.kueue.view()
    finished = [w for w in view.workloads if w.finished_at is not None]
    assert len(finished) >= 5
    first_b = next(w for w in view.workloads if w.queue == "team-b")
    assert first_b.reserved_at is not None and first_b.admitted_at == pytest.approx(first_b.reserved_at + 40.0)
    assert sim.result.pods_succeeded == len(finished)


@dataclass(frozen=True)
class BadCase:
    name: str
    objects: str  # YAML of spec.cluster.objects, indented for the file below
    line: int
    field: str
    message: str


HEADER = """\
apiVersion: dratwin.io/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  duration: 1h
  cluster:
    objects:
"""
BAD_CASES = [
    BadCase("cluster-queue-quota", """\
    - apiVersion: kueue.x-k8s.io/v1beta2
      kind: ClusterQueue
      metadata: {name: cq}
      spec:
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: default
            resources:
            - {name: cpu, nominalQuota: lots}
""", 17, "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "quantity"),
    BadCase("configuration-unknown-field", """\
    - apiVersion: config.kueue.x-k8s.io/v1beta2
      kind: Configuration
      waitForPodsReady: {timeout: 5m, retries: 3}
""", 10, "waitForPodsReady.retries", "unknown field"),
]


@pytest.mark.parametrize("case", BAD_CASES, ids=lambda c: c.name)
def test_kueue_objects_in_a_scenario_are_validated(tmp_path: Path, case: BadCase) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(HEADER + case.objects, encoding="utf-8")
    _, _, problems = check(str(path))
    found = [p for p in problems if p.field == case.field]
    assert found, [str(p) for p in problems]
    assert (found[0].file, found[0].line) == (str(path), case.line)
    assert case.message in str(found[0]).lower()

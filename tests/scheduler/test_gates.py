"""Scheduling gates: a pod with ``spec.schedulingGates`` is not tried until its last gate is removed.

Follows Kubernetes' SchedulingGates plugin (``pkg/scheduler/framework/plugins/schedulinggates``, PreEnqueue:
"waiting for scheduling gates") and the API server's ``SchedulingGated`` condition
(``pkg/registry/core/pod/strategy.go`` applySchedulingGatedCondition)."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pytest
from tests.builders.manifests import condition, load, manifest, node, pod, pod_raw, run

from dratwin.api.core import Pod
from dratwin.cel import SelectorCompiler
from dratwin.scheduler.gates import GATED_MESSAGE, GATED_REASON, pre_enqueue_message, scheduling_gates
from dratwin.scheduler.profile import Options
from dratwin.sim.one_shot import OneShot
from dratwin.twin.explain import explain_pod
from dratwin.twin.report import render_table

Raw = dict[str, object]


def gated(raw: Raw, *gates: str) -> Raw:
    spec = dict(raw["spec"])  # type: ignore[arg-type]
    spec["schedulingGates"] = [{"name": g} for g in gates]
    return {**raw, "spec": spec}


@dataclass
class GateCase:
    name: str
    gates: tuple[str, ...]
    placed: bool


CASES = [
    GateCase("no-gates", (), True),
    GateCase("one-gate", ("example.com/wait",), False),
    GateCase("two-gates", ("example.com/a", "example.com/b"), False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_gated_pod_is_never_tried(case: GateCase) -> None:
    report = run(manifest(node("n1", cpu="2"), gated(pod("p", cpu="1"), *case.gates)))
    raw = pod_raw(report, "default/p")
    assert bool(raw["spec"].get("nodeName")) == case.placed
    assert (report.attempt_of("default/p") is not None) == case.placed
    if not case.placed:
        assert condition(raw) == {"type": "PodScheduled", "status": "False", "reason": GATED_REASON,
                                  "message": GATED_MESSAGE}
        assert raw["status"]["phase"] == "Pending"
        listed = f"default/p: waiting for scheduling gates: [{' '.join(case.gates)}]"
        assert listed in render_table(report, SelectorCompiler()).splitlines()
        explained = explain_pod(report, "default/p")
        assert explained.summary == f"not tried by kube-scheduler: {pre_enqueue_message(list(case.gates))} " \
                                    "(SchedulingGated)"


def test_removing_the_last_gate_queues_the_pod() -> None:
    loaded = load(manifest(node("n1", cpu="2"), gated(pod("p", cpu="1"), "a", "b")))
    one_shot = OneShot(loaded, Options())
    one_shot.run(loaded.pending)
    state = loaded.state
    assert one_shot.scheduling.attempts == 0
    for remaining in (["b"], []):
        raw = gated(state.pods["default/p"].raw, *remaining)
        state.update_pod("default/p", raw, msgspec.convert(raw, Pod, strict=False))
        one_shot.store.dispatch()
        one_shot.engine.run(0.0)
        assert scheduling_gates(state.pods["default/p"].raw) == remaining
        assert bool(state.pods["default/p"].pod.spec.node_name) == (not remaining)
    assert one_shot.scheduling.attempts == 1

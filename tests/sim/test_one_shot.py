"""The one-shot run behind ``dratwin schedule``: kube-scheduler's queue order, one final attempt per pod, a
preemptor tried again right after its victims are gone, and ``until`` stopping the run."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from tests.builders.manifests import load, manifest, node, pod, priority_class

from dratwin.scheduler.profile import Options
from dratwin.sim.one_shot import OneShot

Raw = dict[str, object]


@dataclass
class OneShotCase:
    name: str
    objects: list[Raw]
    placed: dict[str, str | None]  # pod key -> node, None: not placed
    tries: int  # scheduling cycles in all
    until: str | None = None
    not_tried: list[str] = field(default_factory=list)


CLASSES = [priority_class("high", 1000), priority_class("low", 10)]
CASES = [
    # activeQ pops by priority first: the high pod takes the only room although it was created last
    OneShotCase("priority-then-queue-time",
                [*CLASSES, node("n1", cpu="1"), pod("a", cpu="1", priority_class="low"),
                 pod("b", cpu="1", priority_class="low"), pod("c", cpu="1", priority_class="high")],
                {"default/a": None, "default/b": None, "default/c": "n1"}, 3),
    # equal priority: the one queued first
    OneShotCase("queue-time-among-equals",
                [node("n1", cpu="1"), pod("a", cpu="1"), pod("b", cpu="1")],
                {"default/a": "n1", "default/b": None}, 2),
    # a pod that does not fit has one attempt, even after a later pod frees nothing
    OneShotCase("no-retry-without-room",
                [node("n1", cpu="1"), pod("big", cpu="2"), pod("small", cpu="1")],
                {"default/big": None, "default/small": "n1"}, 2),
    # the preemptor evicts the running low pod and lands on the next cycle, before the pod queued after it
    OneShotCase("preemptor-tried-next",
                [*CLASSES, node("n1", cpu="1"),
                 {**pod("running", cpu="1", priority_class="low"),
                  "spec": {**pod("running", cpu="1", priority_class="low")["spec"], "nodeName": "n1"}},  # type: ignore[dict-item]
                 pod("urgent", cpu="1", priority_class="high"), pod("later", cpu="1", priority_class="high")],
                {"default/urgent": "n1", "default/later": None}, 3),
    OneShotCase("until-stops-after-that-pod",
                [node("n1", cpu="2"), pod("a", cpu="1"), pod("b", cpu="1"), pod("c", cpu="1")],
                {"default/a": "n1", "default/b": "n1"}, 2, until="default/b", not_tried=["default/c"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_one_shot_run(case: OneShotCase) -> None:
    loaded = load(manifest(*case.objects))
    one_shot = OneShot(loaded, Options(), until=case.until)
    run = one_shot.run(loaded.pending)
    state = loaded.state
    for key, node_name in case.placed.items():
        assert (state.pods[key].pod.spec.node_name or None) == node_name, key
    assert one_shot.scheduling.attempts == case.tries
    assert run.reached_until == (case.until is not None)
    tried = {a.pod for a in run.attempts}
    assert not tried & set(case.not_tried)
    assert [a.pod for a in run.attempts] == [p.key for p in loaded.pending if p.key in tried]  # creation order

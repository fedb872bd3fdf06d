"""``plan`` and ComputeDomain pods: Karpenter and EKS Auto Mode never launch nodes for their claims (the EKS
UltraServer guide), so they are reported with that reason and the UltraServers that would serve them; pods
without channel claims are planned as before, and existing UltraServer nodes take ComputeDomain pods."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.compute_domains import channel_pod, compute_domain, gb200_nodes
from tests.builders.plan import launched, nodepool, pod, run_plan, template_from_shared

from dratwin.provisioner.solver import ANY_POOL

GB200_OR_P5 = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p6e-gb200", "p5"]}]


@dataclass(frozen=True)
class Case:
    name: str
    objects: list[dict[str, Any]]
    auto_mode: bool = False
    unplaced: list[str] = field(default_factory=list)  # pods with the ComputeDomain reason
    launched_for: list[str] = field(default_factory=list)  # pods planned on new nodes
    on_existing: list[str] = field(default_factory=list)  # pods the scheduler placed on nodes of the input


CASES = [
    Case("karpenter-never-launches-for-a-channel-claim",
         [nodepool(requirements=GB200_OR_P5), compute_domain(), channel_pod("imex-channel-injection")],
         unplaced=["ml/imex-channel-injection"]),
    Case("auto-mode-never-launches-for-a-channel-claim",
         [nodepool(auto_mode=True), compute_domain(), channel_pod("imex-channel-injection")], auto_mode=True,
         unplaced=["ml/imex-channel-injection"]),
    Case("other-pods-are-still-planned",
         [nodepool(requirements=GB200_OR_P5), compute_domain(), channel_pod("w-0"),
          template_from_shared("single-gpu"), pod("llm", "single-gpu")],
         unplaced=["ml/w-0"], launched_for=["ml/llm"]),
    Case("an-existing-node-group-serves-them",
         [nodepool(requirements=GB200_OR_P5), *gb200_nodes("gb-1", "gb-2"), compute_domain(num_nodes=2),
          channel_pod("w-0"), channel_pod("w-1")],
         on_existing=["ml/w-0", "ml/w-1"]),
    Case("more-pods-than-the-node-group-has-channels",
         [nodepool(requirements=GB200_OR_P5), *gb200_nodes("gb-1"), compute_domain(),
          channel_pod("w-0"), channel_pod("w-1")],
         unplaced=["ml/w-1"], on_existing=["ml/w-0"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compute_domain_claims_need_static_capacity(case: Case) -> None:
    report = run_plan(*case.objects, auto_mode=case.auto_mode)
    stuck = {u.pod: u.reasons for u in report.plan.unplaced}
    assert sorted(stuck) == case.unplaced
    for reasons in stuck.values():
        [rejection] = reasons[ANY_POOL]
        assert rejection.reason.startswith("ComputeDomain claims need static capacity: Karpenter and EKS Auto Mode "
                                           "never launch nodes for them")
        assert "managed or self-managed node groups" in rejection.reason
        assert "u-p6e-gb200x72 (18 x p6e-gb200.36xlarge, $761.904/h)" in rejection.reason
    assert sorted(p for _, pods in launched(report) for p in pods) == case.launched_for
    placed = sorted(a.pod for a in report.scheduled.attempts if a.scheduled and a.pod.startswith("ml/"))
    assert placed == case.on_existing

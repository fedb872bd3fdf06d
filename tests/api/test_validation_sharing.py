"""validate: a ResourceClaim with EFA devices that several pods share (DRANET gives the EFAs to one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.efa import claim_user, efa_claim, efa_class
from tests.builders.validation import GPU_CLASS, validate

from dratwin.api.validation import Severity

Raw = dict[str, Any]


@dataclass(frozen=True)
class SharingCase:
    id: str
    objects: list[Raw]
    shared_by: str  # what the warning names; "" when there is none


CASES = [
    SharingCase("the EKS guide's two pods", [efa_class(), efa_claim(), claim_user("training-worker"),
                                            claim_user("training-monitor")],
                "shared by 2 pods (pod training-worker, pod training-monitor)"),
    SharingCase("a Deployment of 3 replicas", [efa_class(), efa_claim(), claim_user("web", kind="Deployment",
                                                                                   replicas=3)],
                "shared by 3 pods (the 3 pods of Deployment web)"),
    SharingCase("the chart's class without its definition in the input", [efa_claim(), claim_user("a"),
                                                                          claim_user("b")],
                "shared by 2 pods"),
    SharingCase("one pod: nothing to say", [efa_class(), efa_claim(), claim_user("training-worker")], ""),
    SharingCase("a Deployment of 1 replica", [efa_class(), efa_claim(), claim_user("web", kind="Deployment",
                                                                                  replicas=1)], ""),
    SharingCase("a shared GPU claim is not about EFAs",
                [GPU_CLASS, efa_claim(device_class="gpu.example.com"), claim_user("a"), claim_user("b")], ""),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_shared_efa_claims(case: SharingCase) -> None:
    problems = validate(*case.objects)
    found = [p for p in problems if "holds EFA devices" in p.message]
    if not case.shared_by:
        assert found == []
        return
    [problem] = found
    assert problem.severity is Severity.WARNING
    assert problem.object == "ResourceClaim default/shared-efa" and problem.field == "spec.devices"
    assert case.shared_by in problem.message
    assert "DRANET v1.2.0" in problem.message and "driver only supports one pod per claim" in problem.message
    assert problem.message.endswith("give each pod its own claim with a ResourceClaimTemplate")

"""schedule and explain: a claim with EFAs that several pods share is scheduled as upstream does, and flagged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.efa import claim_user, efa_claim, efa_class
from tests.builders.generated import gen
from tests.builders.manifests import manifest, placements, run

from dratwin.twin.explain import explain_pod
from dratwin.twin.report import warnings

Raw = dict[str, Any]


def _cluster(instance_type: str) -> list[Raw]:
    return gen(instance_type).objects


@dataclass(frozen=True)
class ScheduleCase:
    id: str
    instance_type: str
    objects: list[Raw]
    flagged: bool


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-efa", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "efa", "exactly": {
                "deviceClassName": "efa.networking.k8s.aws", "count": 4}}]}}}}


def _template_user(name: str) -> Raw:
    user = claim_user(name)
    user["spec"]["resourceClaims"] = [{"name": "efa-devices", "resourceClaimTemplateName": "one-efa"}]
    return user


CASES = [
    ScheduleCase("p5: the guide's two pods share 4 EFAs", "p5.48xlarge",
                 [efa_class(), efa_claim(), claim_user("training-worker"), claim_user("training-monitor")], True),
    ScheduleCase("trn2: the same on Trainium", "trn2.48xlarge",
                 [efa_class(), efa_claim(), claim_user("training-worker"), claim_user("training-monitor")], True),
    ScheduleCase("one claim per pod from a template", "p5.48xlarge",
                 [efa_class(), TEMPLATE, _template_user("training-worker"), _template_user("training-monitor")],
                 False),
    ScheduleCase("one pod", "p5.48xlarge", [efa_class(), efa_claim(), claim_user("training-worker")], False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_schedule_places_sharing_pods_together_and_warns(case: ScheduleCase) -> None:
    report = run(manifest(_cluster(case.instance_type), *case.objects))
    node = gen(case.instance_type).nodes[0]["metadata"]["name"]
    assert set(placements(report).values()) == {node}  # upstream schedules them: the claim's node
    found = [w for w in warnings(report) if "holds EFA devices" in w]
    assert bool(found) == case.flagged
    if case.flagged:
        [warning] = found
        assert "shared by 2 pods (training-worker, training-monitor)" in warning
        assert "runs without the EFAs" in warning


def test_explain_notes_it_on_the_pod_that_joins_the_claim() -> None:
    text = manifest(_cluster("p5.48xlarge"), efa_class(), efa_claim(), claim_user("training-worker"),
                    claim_user("training-monitor"))
    report = run(text)
    second = explain_pod(report, "default/training-monitor")
    assert second.status == "Scheduled"
    assert any("ResourceClaim default/shared-efa holds EFA devices" in n for n in second.notes)
    first = explain_pod(run(text, until="default/training-worker"), "default/training-worker")
    assert not any("holds EFA devices" in n for n in first.notes)  # reserved for it alone when it was scheduled

"""After loading (the workload and resourceclaim controllers included) and after scheduling, every pod's and
claim's typed view is its stored object decoded: the views updated in place of a second decode agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from tests.builders.manifests import (
    claim_template,
    device_class,
    gpu_class,
    gpu_request,
    gpu_slice,
    load,
    manifest,
    node,
    pod,
    resource_claim,
    stateful_set,
)

from dratwin.api.core import Pod
from dratwin.api.resource import ResourceClaim
from dratwin.cluster.load import LoadedCluster
from dratwin.twin.schedule import Options, schedule

Raw = dict[str, Any]


def without_namespace(raw: Raw) -> Raw:
    del raw["metadata"]["namespace"]
    return raw


@dataclass
class Case:
    id: str
    objects: list[Raw]


CASES = [
    Case("pod-with-a-template-claim", [pod("p", templates={"gpu": "one"})]),
    Case("pod-with-a-shared-claim", [resource_claim("shared"), pod("p", claims={"gpu": "shared"}),
                                     pod("q", claims={"gpu": "shared"})]),
    Case("pod-without-namespace", [without_namespace(pod("p", templates={"gpu": "one"}))]),
    Case("stateful-set-pods", [stateful_set("web", 2, policy="Parallel", templates={"gpu": "one"})]),
    Case("pod-without-claims", [pod("p", cpu="1")]),
    Case("extended-resource-backed-by-a-class", [device_class("big", extended_resource="example.com/gpu"),
                                                 pod("p", extended={"example.com/gpu": "1"})]),
]


def typed_views_match(loaded: LoadedCluster) -> None:
    for record in loaded.state.pods.values():
        pod_view = msgspec.convert(record.raw, Pod, strict=False)
        pod_view.metadata.namespace = pod_view.metadata.namespace or "default"
        assert record.pod == pod_view, record.info.key
        assert record.info.pod == record.pod
    for key, claim in loaded.state.claims.items():
        claim_view = msgspec.convert(claim.raw, ResourceClaim, strict=False)
        claim_view.metadata.namespace = claim_view.metadata.namespace or "default"
        assert claim.claim == claim_view, key


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_typed_views_are_the_stored_objects_decoded(case: Case) -> None:
    objects = [gpu_class(), node("n1"), gpu_slice("n1", 4), claim_template("one", gpu_request()), *case.objects]
    loaded = load(manifest(objects))
    assert loaded.state.pods
    typed_views_match(loaded)
    report = schedule(loaded, Options())
    assert any(a.scheduled for a in report.attempts)
    typed_views_match(loaded)

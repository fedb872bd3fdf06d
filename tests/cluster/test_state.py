"""The cluster state keeps each claim's typed view equal to its object, after an allocation, a reservation
and a deallocation (which update the typed view without decoding the whole claim again); a deallocation
leaves the old object as it was (forks share it)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from tests.builders.manifests import gpu_class, gpu_slice, load, manifest, node, pod, resource_claim

from dratwin.allocator.state import DeviceID
from dratwin.api.resource import AllocationResult, ResourceClaim
from dratwin.cluster.state import ClusterState

Raw = dict[str, Any]


def allocation(node_name: str, device: str) -> AllocationResult:
    return msgspec.convert({
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": node_name, "device": device}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
    }, AllocationResult)


def decoded(raw: Raw) -> ResourceClaim:
    claim = msgspec.convert(raw, ResourceClaim, strict=False)
    claim.metadata.namespace = claim.metadata.namespace or "default"
    return claim


@dataclass
class Case:
    id: str
    reserve_for: list[str]  # pods, in order (a name twice: reserved again)
    namespace: str = "default"


CASES = [
    Case("one-pod", ["a"]),
    Case("shared-by-two-pods", ["a", "b"]),
    Case("reserved-again-for-the-same-pod", ["a", "a"]),
    Case("claim-without-namespace-field", ["a"], namespace=""),
]


def state_with_claim(namespace: str) -> ClusterState:
    claim = resource_claim("shared")
    if not namespace:
        del claim["metadata"]["namespace"]
    objects = [gpu_class(), node("n1"), gpu_slice("n1", 2), claim,
               pod("a", claims={"gpu": "shared"}), pod("b", claims={"gpu": "shared"})]
    return load(manifest(objects)).state


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_typed_claim_stays_the_decoded_object(case: Case) -> None:
    state = state_with_claim(case.namespace)
    key = "default/shared"
    state.allocate_claim(key, allocation("n1", "gpu-0"))
    assert state.claims[key].claim == decoded(state.claims[key].raw)
    for name in case.reserve_for:
        state.reserve_claim(key, state.pods[f"default/{name}"].raw)
        assert state.claims[key].claim == decoded(state.claims[key].raw)
    names = [r.name for r in state.claims[key].claim.status.reserved_for]
    assert names == list(dict.fromkeys(case.reserve_for))
    assert state.claims[key].claim.status.allocation is not None


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_deallocation_clears_the_allocation_and_leaves_the_old_object_alone(case: Case) -> None:
    state = state_with_claim(case.namespace)
    key = "default/shared"
    state.allocate_claim(key, allocation("n1", "gpu-0"))
    for name in case.reserve_for:
        state.reserve_claim(key, state.pods[f"default/{name}"].raw)
    assert state.allocated.is_allocated(DeviceID("gpu.example.com", "n1", "gpu-0"))
    old = state.claims[key].raw
    old_copy = copy.deepcopy(old)
    state.deallocate_claim(key)
    raw = state.claims[key].raw
    assert old == old_copy  # copy on write: the object before it is unchanged
    assert "allocation" not in raw["status"] and "reservedFor" not in raw["status"]
    assert raw["metadata"] == old["metadata"] and raw["spec"] == old["spec"]
    assert state.claims[key].claim == decoded(raw)
    assert not state.allocated.is_allocated(DeviceID("gpu.example.com", "n1", "gpu-0"))


def test_a_deallocation_keeps_the_other_status_fields() -> None:
    state = state_with_claim("default")
    key = "default/shared"
    state.allocate_claim(key, allocation("n1", "gpu-0"))
    record = state.claims[key]
    devices = [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "conditions": []}]
    state.update_claim(key, {**record.raw, "status": {**record.raw["status"], "devices": devices}})
    state.deallocate_claim(key)
    assert state.claims[key].raw["status"] == {"devices": devices}
    assert state.claims[key].claim == decoded(state.claims[key].raw)

"""The resourceclaim controller's pod sync and the claim lifecycle: whole claims, names, problems, releases."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

import pytest

from dratwin.cluster.claims import (
    CLAIM_FINALIZER,
    RESERVED_FOR_MAX_SIZE,
    ClaimProblem,
    ClaimRelease,
    PodClaims,
    ReservedForFullError,
    claim_generate_name,
    claims_for_pod,
    is_generated_for,
    is_reserved_for,
    owning_pod,
    release_after_pod_deletion,
    reservation_refusal,
    reserve,
    unreserve,
)
from dratwin.cluster.naming import object_uid
from dratwin.cluster.workloads import SIMULATION_EPOCH

Raw = dict[str, Any]
Key = tuple[str, str]
SUFFIXES = ["bcdfg", "hjklm", "npqrs", "tvwxz"]


class AlphabetRng(random.Random):
    """``choice`` returns the alphabet's characters in order: names end in bcdfg, hjklm, npqrs, ..."""

    def __init__(self) -> None:
        super().__init__(0)
        self.calls = 0

    def choice(self, seq: Any) -> Any:
        value = seq[self.calls % len(seq)]
        self.calls += 1
        return value


def pod(name: str = "train-0", uid: str = "pod-uid-1", namespace: str = "ml", claims: Sequence[Raw] = (),
        statuses: Sequence[Raw] | None = None, phase: str = "Pending") -> Raw:
    obj: Raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": uid},
                "spec": {"containers": [{"name": "c"}], "resourceClaims": list(claims)}, "status": {"phase": phase}}
    if statuses is not None:
        obj["status"]["resourceClaimStatuses"] = list(statuses)
    return obj


def from_template(name: str, template: str) -> Raw:
    return {"name": name, "resourceClaimTemplateName": template}


def direct(name: str, claim: str) -> Raw:
    return {"name": name, "resourceClaimName": claim}


CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


def template(name: str = "one-gpu", namespace: str = "ml", labels: Raw | None = None,
             annotations: Raw | None = None) -> Raw:
    meta: Raw = {}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"metadata": meta, "spec": copy.deepcopy(CLAIM_SPEC)}}


def claim(name: str, namespace: str = "ml", owner: tuple[str, str] | None = None, pod_claim: str | None = None,
          reserved: Sequence[tuple[str, str]] = (), allocated: bool = False, finalizer: bool = False,
          deleting: bool = False) -> Raw:
    meta: Raw = {"name": name, "namespace": namespace}
    if pod_claim is not None:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": pod_claim}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner[0], "uid": owner[1],
                                    "controller": True, "blockOwnerDeletion": True}]
    if finalizer:
        meta["finalizers"] = [CLAIM_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:05:00Z"
    obj: Raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                "spec": copy.deepcopy(CLAIM_SPEC)}
    status: Raw = {}
    if allocated:
        status["allocation"] = {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved]
    if status:
        obj["status"] = status
    return obj


def keyed(*objects: Raw) -> dict[Key, Raw]:
    return {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}


def sync(the_pod: Raw, templates: Sequence[Raw] = (), claims: Sequence[Raw] = (), rng: random.Random | None = None
         ) -> PodClaims:
    """One controller sync, checking on the way that no input was modified."""
    inputs = (the_pod, keyed(*templates), keyed(*claims))
    before = copy.deepcopy(inputs)
    result = claims_for_pod(inputs[0], inputs[1], inputs[2], rng or AlphabetRng())
    assert inputs == before, "claims_for_pod mutated its input"
    return result


def owner_ref(name: str = "train-0", uid: str = "pod-uid-1") -> Raw:
    return {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid, "controller": True,
            "blockOwnerDeletion": True}


# ---- generated claims ----------------------------------------------------------------------------


def test_a_template_claim_is_created_for_the_pod() -> None:
    tpl = template(labels={"team": "ml"}, annotations={"note": "from template"})
    result = sync(pod(claims=[from_template("gpu", "one-gpu")]), [tpl])
    name = f"train-0-gpu-{SUFFIXES[0]}"
    assert list(result.created) == [{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {
            "name": name, "generateName": "train-0-gpu-", "namespace": "ml",
            "uid": object_uid("resource.k8s.io/v1", "ResourceClaim", "ml", name),
            "creationTimestamp": SIMULATION_EPOCH, "labels": {"team": "ml"},
            "annotations": {"note": "from template", "resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [owner_ref()],
        },
        "spec": CLAIM_SPEC,
    }]
    assert list(result.statuses) == [{"name": "gpu", "resourceClaimName": name}]
    assert dict(result.claim_names) == {"gpu": name}
    assert result.problems == () and result.ready


def test_direct_and_template_claims_together() -> None:
    shared = claim("shared-nic")
    the_pod = pod(claims=[direct("nic", "shared-nic"), from_template("gpu", "one-gpu"),
                          from_template("mem", "one-gpu")])
    result = sync(the_pod, [template()], [shared])
    gpu, mem = f"train-0-gpu-{SUFFIXES[0]}", f"train-0-mem-{SUFFIXES[1]}"
    assert [c["metadata"]["name"] for c in result.created] == [gpu, mem]
    # a resourceClaimName reference gets no status entry, as upstream; the scheduler reads it from the spec
    assert list(result.statuses) == [{"name": "gpu", "resourceClaimName": gpu},
                                     {"name": "mem", "resourceClaimName": mem}]
    assert list(result.claim_names.items()) == [("nic", "shared-nic"), ("gpu", gpu), ("mem", mem)]
    assert result.apply_to(the_pod)["status"] == {
        "phase": "Pending", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": gpu},
                                                      {"name": "mem", "resourceClaimName": mem}]}


@pytest.mark.parametrize(("pod_name", "claim_name", "expected"), [
    ("train-0", "gpu", "train-0-gpu-"),
    # exactly 57 characters: kept as is
    ("p" * 45, "c" * 10, "p" * 45 + "-" + "c" * 10 + "-"),
    # 58 characters: both parts cut in proportion (45*57//58 = 44, 11*57//58 = 10), no trailing hyphen
    ("p" * 45, "c" * 11, "p" * 44 + "-" + "c" * 10),
    ("p" * 63, "gpu", "p" * 52 + "-" + "gp"),  # 63*57//68 = 52, 3*57//68 = 2
    ("p" * 63, "c" * 63, "p" * 28 + "-" + "c" * 28),
])
def test_generate_name_truncation_keeps_both_parts(pod_name: str, claim_name: str, expected: str) -> None:
    assert claim_generate_name(pod_name, claim_name) == expected
    tpl = template()
    result = sync(pod(name=pod_name, claims=[from_template(claim_name, "one-gpu")]), [tpl])
    (created,) = result.created
    assert created["metadata"]["generateName"] == expected
    assert created["metadata"]["name"] == expected + SUFFIXES[0]
    assert len(created["metadata"]["name"]) <= 63


def test_generated_names_avoid_existing_claims() -> None:
    taken = claim(f"train-0-gpu-{SUFFIXES[0]}")
    result = sync(pod(claims=[from_template("gpu", "one-gpu")]), [template()], [taken])
    assert [c["metadata"]["name"] for c in result.created] == [f"train-0-gpu-{SUFFIXES[1]}"]


def test_a_second_sync_creates_nothing_new() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu"), direct("nic", "shared-nic")])
    first = sync(the_pod, [template()], [claim("shared-nic")])
    second = sync(first.apply_to(the_pod), [template()], [claim("shared-nic"), *first.created])
    assert second.created == ()
    assert second.statuses == first.statuses
    assert second.claim_names == first.claim_names
    assert second.ready


def test_an_orphaned_claim_of_the_pod_is_adopted_not_duplicated() -> None:
    # Created by an earlier sync that failed before it could update the pod status.
    orphan = claim("train-0-gpu-zzzzz", owner=("train-0", "pod-uid-1"), pod_claim="gpu")
    other_pods = claim("train-1-gpu-yyyyy", owner=("train-1", "pod-uid-2"), pod_claim="gpu")
    result = sync(pod(claims=[from_template("gpu", "one-gpu")]), [template()], [other_pods, orphan])
    assert result.created == ()
    assert list(result.statuses) == [{"name": "gpu", "resourceClaimName": "train-0-gpu-zzzzz"}]


def test_a_recorded_claim_that_belongs_to_another_pod_is_replaced() -> None:
    foreign = claim("train-0-gpu-zzzzz", owner=("train-0", "old-uid"), pod_claim="gpu")
    the_pod = pod(claims=[from_template("gpu", "one-gpu")],
                  statuses=[{"name": "gpu", "resourceClaimName": "train-0-gpu-zzzzz"}])
    result = sync(the_pod, [template()], [foreign])
    new = f"train-0-gpu-{SUFFIXES[0]}"
    assert [c["metadata"]["name"] for c in result.created] == [new]
    assert list(result.statuses) == [{"name": "gpu", "resourceClaimName": new}]


def test_a_recorded_claim_that_was_deleted_is_created_again() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu")],
                  statuses=[{"name": "gpu", "resourceClaimName": "train-0-gpu-zzzzz"}])
    result = sync(the_pod, [template()])
    assert [c["metadata"]["name"] for c in result.created] == [f"train-0-gpu-{SUFFIXES[0]}"]


def test_seeded_rng_gives_the_same_claims() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu")])
    first = claims_for_pod(the_pod, keyed(template()), {}, random.Random(5))
    again = claims_for_pod(the_pod, keyed(template()), {}, random.Random(5))
    assert first == again


# ---- problems ------------------------------------------------------------------------------------


def test_missing_template_reason_and_what_the_controller_leaves_behind() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu"), from_template("nic", "fast-nic"),
                          from_template("mem", "one-gpu")])
    result = sync(the_pod, [template()])
    # syncPod stops at the first failing claim: the claim before it exists, the one after does not,
    # and the pod status is not updated, so the scheduler knows none of them yet.
    assert [c["metadata"]["name"] for c in result.created] == [f"train-0-gpu-{SUFFIXES[0]}"]
    assert result.statuses == ()
    assert dict(result.claim_names) == {}
    assert list(result.problems) == [ClaimProblem(
        pod="ml/train-0", pod_claim="nic", component="resourceclaim-controller",
        reason="FailedResourceClaimCreation",
        message='PodResourceClaim nic: resource claim template "fast-nic": '
                'resourceclaimtemplate.resource.k8s.io "fast-nic" not found',
        scheduler_status='pod "ml/train-0": ResourceClaim not created yet',
        hint="create ResourceClaimTemplate fast-nic in namespace ml",
    )]
    assert not result.ready
    assert str(result.problems[0]).startswith('pod ml/train-0, claim nic: PodResourceClaim nic: resource claim')


def test_the_next_sync_after_the_template_appears_adopts_and_completes() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu"), from_template("nic", "fast-nic")])
    first = sync(the_pod, [template()])
    second = sync(the_pod, [template(), template("fast-nic")], list(first.created))
    gpu = first.created[0]["metadata"]["name"]
    assert [c["metadata"]["name"] for c in second.created] == [f"train-0-nic-{SUFFIXES[0]}"]
    assert list(second.statuses) == [{"name": "gpu", "resourceClaimName": gpu},
                                     {"name": "nic", "resourceClaimName": f"train-0-nic-{SUFFIXES[0]}"}]


def test_template_in_another_namespace_does_not_count() -> None:
    result = sync(pod(claims=[from_template("gpu", "one-gpu")]), [template(namespace="default")])
    assert [p.component for p in result.problems] == ["resourceclaim-controller"]


@pytest.mark.parametrize(("claims", "message", "hint"), [
    ([], 'could not find ResourceClaim "ml/shared-nic"',
     "create ResourceClaim shared-nic in namespace ml, or use resourceClaimTemplateName for a claim per pod"),
    ([claim("shared-nic", deleting=True)], 'resourceclaim "shared-nic" is being deleted',
     "the claim is going away; create it again once it is gone"),
    ([claim("shared-nic", namespace="default")], 'could not find ResourceClaim "ml/shared-nic"',
     "create ResourceClaim shared-nic in namespace ml, or use resourceClaimTemplateName for a claim per pod"),
])
def test_direct_claim_problems(claims: list[Raw], message: str, hint: str) -> None:
    result = sync(pod(claims=[direct("nic", "shared-nic")]), claims=claims)
    assert list(result.problems) == [ClaimProblem("ml/train-0", "nic", "kube-scheduler", "PreEnqueue", message,
                                                  message, hint)]
    assert dict(result.claim_names) == {"nic": "shared-nic"}


def test_every_problem_is_reported_not_only_the_first() -> None:
    the_pod = pod(claims=[direct("a", "missing-a"), from_template("b", "missing-b"), {"name": "c"}])
    result = sync(the_pod)
    assert [(p.pod_claim, p.component, p.message) for p in result.problems] == [
        ("a", "kube-scheduler", 'could not find ResourceClaim "ml/missing-a"'),
        ("b", "resourceclaim-controller", 'PodResourceClaim b: resource claim template "missing-b": '
                                          'resourceclaimtemplate.resource.k8s.io "missing-b" not found'),
        ("c", "kube-scheduler", 'pod "ml/train-0", spec.resourceClaim "c": none of the supported fields are set'),
    ]


def test_pod_without_claims_needs_nothing() -> None:
    assert sync(pod()) == PodClaims()


# ---- ownership -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("the_claim", "expected"), [
    (claim("c", owner=("train-0", "pod-uid-1")), True),
    (claim("c", owner=("train-0", "another-uid")), False),  # a pod of the same name, recreated
    (claim("c", namespace="default", owner=("train-0", "pod-uid-1")), False),
    (claim("c"), False),
])
def test_is_generated_for(the_claim: Raw, expected: bool) -> None:
    assert is_generated_for(the_claim, pod()) is expected


def test_an_owner_reference_that_is_not_the_controller_does_not_count() -> None:
    the_claim = claim("c", owner=("train-0", "pod-uid-1"))
    the_claim["metadata"]["ownerReferences"][0]["controller"] = False
    assert owning_pod(the_claim) is None
    assert not is_generated_for(the_claim, pod())


def test_a_created_claim_is_generated_for_its_pod() -> None:
    the_pod = pod(claims=[from_template("gpu", "one-gpu")])
    (created,) = sync(the_pod, [template()]).created
    assert is_generated_for(created, the_pod)
    assert not is_generated_for(created, pod(name="train-1", uid="pod-uid-2"))


# ---- reserve / unreserve -------------------------------------------------------------------------


def test_reserve_appends_the_pod_once() -> None:
    base = claim("shared", reserved=[("a", "uid-a")], allocated=True)
    before = copy.deepcopy(base)
    reserved = reserve(base, pod())
    assert base == before
    assert reserved["status"]["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "uid-a"},
                                                 {"resource": "pods", "name": "train-0", "uid": "pod-uid-1"}]
    assert reserve(reserved, pod()) == reserved
    assert is_reserved_for(reserved, pod()) and not is_reserved_for(base, pod())


def test_reserve_refuses_the_257th_consumer() -> None:
    full = claim("shared", reserved=[(f"p{i}", f"uid-{i}") for i in range(RESERVED_FOR_MAX_SIZE)])
    expected = ('ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: '
                "must have at most 256 items")
    assert reservation_refusal(full, pod()) == expected
    with pytest.raises(ReservedForFullError, match="pod ml/train-0: cannot reserve the claim: ResourceClaim"):
        reserve(full, pod())
    # a pod already among the 256 is fine
    assert reservation_refusal(full, pod(name="p3", uid="uid-3")) is None
    almost = claim("shared", reserved=[(f"p{i}", f"uid-{i}") for i in range(RESERVED_FOR_MAX_SIZE - 1)])
    assert len(reserve(almost, pod())["status"]["reservedFor"]) == RESERVED_FOR_MAX_SIZE


@pytest.mark.parametrize(("reserved", "expected_status"), [
    ([("train-0", "pod-uid-1"), ("b", "uid-b")], {"reservedFor": [{"resource": "pods", "name": "b", "uid": "uid-b"}]}),
    ([("train-0", "pod-uid-1")], {}),
    ([("b", "uid-b")], {"reservedFor": [{"resource": "pods", "name": "b", "uid": "uid-b"}]}),
    # matched by uid: a pod of the same name with another uid stays
    ([("train-0", "old-uid")], {"reservedFor": [{"resource": "pods", "name": "train-0", "uid": "old-uid"}]}),
])
def test_unreserve(reserved: list[tuple[str, str]], expected_status: Raw) -> None:
    base = claim("shared", reserved=reserved)
    before = copy.deepcopy(base)
    assert unreserve(base, pod()).get("status", {}) == expected_status
    assert base == before


# ---- release after a pod is deleted --------------------------------------------------------------

GONE = pod()  # train-0, pod-uid-1
OTHER = pod(name="other", uid="uid-o")


@pytest.mark.parametrize(("the_claim", "alive", "expected"), [
    # a shared claim with another consumer: only the gone pod's entry leaves
    (claim("shared", reserved=[("train-0", "pod-uid-1"), ("other", "uid-o")], allocated=True, finalizer=True),
     [OTHER],
     ClaimRelease(claim("shared", reserved=[("other", "uid-o")], allocated=True, finalizer=True), False, False,
                  ("train-0",))),
    # the last consumer of a shared claim: deallocated, finalizer removed, the claim stays
    (claim("shared", reserved=[("train-0", "pod-uid-1")], allocated=True, finalizer=True), [OTHER],
     ClaimRelease(claim("shared"), True, False, ("train-0",))),
    # stale consumers (gone, done) leave together with the deleted pod
    (claim("shared", reserved=[("train-0", "pod-uid-1"), ("done", "uid-d"), ("vanished", "uid-v")], allocated=True,
           finalizer=True),
     [pod(name="done", uid="uid-d", phase="Succeeded")],
     ClaimRelease(claim("shared"), True, False, ("train-0", "done", "vanished"))),
    # a consumer listed as alive but deleted is gone all the same
    (claim("shared", reserved=[("train-0", "pod-uid-1")], allocated=True, finalizer=True), [GONE],
     ClaimRelease(claim("shared"), True, False, ("train-0",))),
    # the generated claim of the deleted pod: deleted, and its devices freed
    (claim("train-0-gpu-bcdfg", owner=("train-0", "pod-uid-1"), pod_claim="gpu", reserved=[("train-0", "pod-uid-1")],
           allocated=True, finalizer=True), [OTHER],
     ClaimRelease(claim("train-0-gpu-bcdfg", owner=("train-0", "pod-uid-1"), pod_claim="gpu"), True, True,
                  ("train-0",))),
    # a generated claim that was never allocated is deleted too
    (claim("train-0-gpu-bcdfg", owner=("train-0", "pod-uid-1"), pod_claim="gpu"), [],
     ClaimRelease(claim("train-0-gpu-bcdfg", owner=("train-0", "pod-uid-1"), pod_claim="gpu"), False, True)),
    # the claim of a pod that is still there is not touched by another pod going
    (claim("other-gpu", owner=("other", "uid-o"), reserved=[("other", "uid-o")], allocated=True, finalizer=True),
     [OTHER],
     ClaimRelease(claim("other-gpu", owner=("other", "uid-o"), reserved=[("other", "uid-o")], allocated=True,
                        finalizer=True), False, False)),
    # allocated but never reserved: no consumer went away, so it stays allocated (upstream's transition rule)
    (claim("shared", allocated=True, finalizer=True), [OTHER],
     ClaimRelease(claim("shared", allocated=True, finalizer=True), False, False)),
])
def test_release_after_pod_deletion(the_claim: Raw, alive: list[Raw], expected: ClaimRelease) -> None:
    inputs = (the_claim, GONE, alive)
    before = copy.deepcopy(inputs)
    assert release_after_pod_deletion(the_claim, GONE, alive) == expected
    assert inputs == before


def test_release_without_the_finalizer_keeps_the_allocation_and_says_why() -> None:
    the_claim = claim("shared", reserved=[("train-0", "pod-uid-1")], allocated=True)
    release = release_after_pod_deletion(the_claim, GONE, [])
    assert (release.deallocate, release.delete, release.removed) == (False, False, ("train-0",))
    assert "allocation" in release.claim["status"] and "reservedFor" not in release.claim["status"]
    assert CLAIM_FINALIZER in release.note


def test_generated_claim_of_a_done_pod_is_deleted_once_unreserved() -> None:
    done = pod(phase="Failed")
    the_claim = claim("train-0-gpu-bcdfg", owner=("train-0", "pod-uid-1"), reserved=[("train-0", "pod-uid-1")],
                      allocated=True, finalizer=True)
    # another pod was deleted; the owner still exists but has failed
    release = release_after_pod_deletion(the_claim, OTHER, [done])
    assert (release.deallocate, release.delete, release.removed) == (True, True, ("train-0",))

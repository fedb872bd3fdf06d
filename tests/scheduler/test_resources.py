"""Pod requests, node allocatable and a node's books, checked against upstream's formulas.

The builders (``make_pod``, ``container``, ``make_node``, ``info``, ``node_info``) live in
``tests/builders/scheduler.py``.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import pytest
from tests.builders.scheduler import STANDARD, busy, container, info, make_node, make_pod, node_info

from dratwin.api.core import Node, Pod
from dratwin.errors import QuantityError
from dratwin.scheduler.framework import PodInfo, Resources
from dratwin.scheduler.resources import (
    add_pod,
    copy_node_info,
    defaulted_requests,
    is_extended_resource_name,
    is_scalar_resource_name,
    make_pod_info,
    node_allocatable,
    non_zero_requested,
    pod_requests,
    pod_requests_for_scoring,
    remove_pod,
)

Mi = 1024**2
Gi = 1024**3

# ---- pod requests ---------------------------------------------------------------------------------


@dataclass
class RequestCase:
    name: str
    pod: Pod
    expect: Resources
    expect_scoring: Resources | None = None  # None: not checked in this case


REQUEST_CASES = [
    RequestCase("no-containers", make_pod("p"), {"pods": 1}, {"pods": 1}),
    RequestCase(
        "one-container",
        make_pod("p", container({"cpu": "500m", "memory": "1Gi"})),
        {"cpu": 500, "memory": Gi, "pods": 1},
        {"cpu": 500, "memory": Gi, "pods": 1},
    ),
    RequestCase(
        "containers-are-summed",
        make_pod("p", container({"cpu": "250m"}, name="a"), container({"cpu": "0.25", "memory": "1G"}, name="b")),
        {"cpu": 500, "memory": 10**9, "pods": 1},
        # a has no memory request: it counts 200Mi when scoring
        {"cpu": 500, "memory": 10**9 + 200 * Mi, "pods": 1},
    ),
    RequestCase(
        "init-container-larger-than-sum",
        make_pod("p", container({"cpu": "1", "memory": "1Gi"}), init=[container({"cpu": "2", "memory": "512Mi"})]),
        {"cpu": 2000, "memory": Gi, "pods": 1},
    ),
    RequestCase(
        # upstream's computePodResourceRequest doc example: CPU 3, Memory 3G
        "upstream-doc-example",
        make_pod(
            "p",
            container({"cpu": "2", "memory": "1G"}, name="c1"),
            container({"cpu": "1", "memory": "1G"}, name="c2"),
            init=[
                container({"cpu": "2", "memory": "1G"}, name="ic1"),
                container({"cpu": "2", "memory": "3G"}, name="ic2"),
            ],
        ),
        {"cpu": 3000, "memory": 3 * 10**9, "pods": 1},
    ),
    RequestCase(
        # sidecar s (1) runs beside init i (5): peak 6; it also adds to the running sum 1 + 1 = 2
        "sidecar-adds-to-later-init-containers",
        make_pod(
            "p",
            container({"cpu": "1"}),
            init=[container({"cpu": "1"}, name="s", sidecar=True), container({"cpu": "5"}, name="i")],
        ),
        {"cpu": 6000, "pods": 1},
    ),
    RequestCase(
        # init i runs before sidecar s starts: peak 5; the running sum is 1 + 2 = 3
        "sidecar-after-init-container",
        make_pod(
            "p",
            container({"cpu": "1"}),
            init=[container({"cpu": "5"}, name="i"), container({"cpu": "2"}, name="s", sidecar=True)],
        ),
        {"cpu": 5000, "pods": 1},
    ),
    RequestCase(
        "sidecars-accumulate-into-the-sum",
        make_pod(
            "p",
            container({"cpu": "1"}),
            init=[
                container({"cpu": "1"}, name="s1", sidecar=True),
                container({"cpu": "1"}, name="s2", sidecar=True),
                container({"cpu": "2"}, name="i"),
            ],
        ),
        {"cpu": 4000, "pods": 1},  # i with s1+s2 = 4 > containers 1 + sidecars 2 = 3
    ),
    RequestCase(
        "overhead-is-added",
        make_pod("p", container({"cpu": "1", "memory": "1Gi"}), overhead={"cpu": "250m", "memory": "120Mi"}),
        {"cpu": 1250, "memory": Gi + 120 * Mi, "pods": 1},
        {"cpu": 1250, "memory": Gi + 120 * Mi, "pods": 1},
    ),
    RequestCase(
        "overhead-after-init-maximum",
        make_pod("p", container({"cpu": "1"}), init=[container({"cpu": "3"})], overhead={"cpu": "100m"}),
        {"cpu": 3100, "pods": 1},
    ),
    RequestCase(
        "extended-resources-in-units",
        make_pod(
            "p",
            container({"nvidia.com/gpu": 2, "example.com/nic": "1"}),
            init=[container({"nvidia.com/gpu": "1"})],
        ),
        {"example.com/nic": 1, "nvidia.com/gpu": 2, "pods": 1},
        {"cpu": 100, "example.com/nic": 1, "memory": 200 * Mi, "nvidia.com/gpu": 2, "pods": 1},
    ),
    RequestCase(
        "limits-default-the-requests",
        make_pod("p", container(limits={"cpu": "2", "nvidia.com/gpu": "1"})),
        {"cpu": 2000, "nvidia.com/gpu": 1, "pods": 1},
        {"cpu": 2000, "memory": 200 * Mi, "nvidia.com/gpu": 1, "pods": 1},
    ),
    RequestCase(
        "request-wins-over-limit",
        make_pod("p", container({"cpu": "500m"}, {"cpu": "2"})),
        {"cpu": 500, "pods": 1},
    ),
    RequestCase(
        # 0.1m + 0.1m = 0.2m, rounded up once: 1m (not 2m)
        "cpu-sum-rounded-up-once",
        make_pod("p", container({"cpu": "0.0001"}, name="a"), container({"cpu": "0.0001"}, name="b")),
        {"cpu": 1, "pods": 1},
    ),
    RequestCase(
        "memory-rounded-up-to-bytes",
        make_pod("p", container({"memory": "1500m"})),
        {"memory": 2, "pods": 1},
    ),
    RequestCase(
        "uncounted-names-dropped",
        make_pod("p", container({"storage": "1Gi", "hugepages-2Mi": "4Mi", "ephemeral-storage": "1Gi"})),
        {"ephemeral-storage": Gi, "hugepages-2Mi": 4 * Mi, "pods": 1},
    ),
    RequestCase(
        "no-requests-score-as-defaults",
        make_pod("p", container(name="a"), container(name="b")),
        {"pods": 1},
        {"cpu": 200, "memory": 400 * Mi, "pods": 1},
    ),
    RequestCase(
        "explicit-zero-is-not-missing",
        make_pod("p", container({"cpu": "0", "memory": "0"})),
        {"pods": 1},
        {"pods": 1},
    ),
    RequestCase(
        "init-container-defaults-too",
        make_pod("p", container({"cpu": "50m", "memory": "10Mi"}), init=[container()]),
        {"cpu": 50, "memory": 10 * Mi, "pods": 1},
        {"cpu": 100, "memory": 200 * Mi, "pods": 1},
    ),
]


@pytest.mark.parametrize("case", REQUEST_CASES, ids=lambda c: c.name)
def test_pod_requests(case: RequestCase) -> None:
    before = copy.deepcopy(case.pod)
    assert pod_requests(case.pod) == case.expect
    if case.expect_scoring is not None:
        assert pod_requests_for_scoring(case.pod) == case.expect_scoring
    assert case.pod == before, "the pod must not be modified"


@dataclass
class BadQuantityCase:
    name: str
    pod: Pod
    where: str  # the field the error names


BAD_QUANTITY_CASES = [
    BadQuantityCase("in-a-request", make_pod("p", container({"memory": "1gi"}, name="main")),
                    "pod default/p, container main: resources.requests[memory]"),
    # a limit that stands in for a missing request is named as the limit the user wrote
    BadQuantityCase("in-a-defaulting-limit", make_pod("p", container(limits={"memory": "1gi"}, name="main")),
                    "pod default/p, container main: resources.limits[memory]"),
]


@pytest.mark.parametrize("case", BAD_QUANTITY_CASES, ids=lambda c: c.name)
def test_bad_quantity_names_pod_container_and_field(case: BadQuantityCase) -> None:
    with pytest.raises(QuantityError, match=re.escape(case.where)):
        pod_requests(case.pod)


@dataclass
class DefaultingCase:
    name: str
    requests: dict[str, str]
    limits: dict[str, str]
    expect: dict[str, str]


DEFAULTING_CASES = [
    DefaultingCase("none", {}, {}, {}),
    DefaultingCase("limit-only", {}, {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}),
    DefaultingCase("request-wins", {"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}),
]


@pytest.mark.parametrize("case", DEFAULTING_CASES, ids=lambda c: c.name)
def test_defaulted_requests_are_what_the_api_server_stores(case: DefaultingCase) -> None:
    pod = make_pod("p", container(case.requests, case.limits))
    assert dict(defaulted_requests(pod.spec.containers[0])) == case.expect


def test_make_pod_info() -> None:
    pod = make_pod("p", container({"cpu": "1"}), namespace="ml", priority=7)
    scoring = {"cpu": 1000, "memory": 200 * 1024 * 1024, "pods": 1}
    assert make_pod_info(pod, order=3) == PodInfo(pod, "ml/p", 7, {"cpu": 1000, "pods": 1}, 3, scoring)
    assert make_pod_info(make_pod("q")).priority == 0


def test_pods_of_one_shape_get_equal_and_independent_requests() -> None:
    first = make_pod_info(make_pod("a", container({"cpu": "1"}, {"example.com/x": "2"})))
    second = make_pod_info(make_pod("b", container({"cpu": "1"}, {"example.com/x": "2"})))
    assert (second.requests, second.scoring_requests) == (first.requests, first.scoring_requests)
    first.requests["cpu"] += 1
    first.scoring_requests.clear()
    third = make_pod_info(make_pod("c", container({"cpu": "1"}, {"example.com/x": "2"})))
    assert third.requests == second.requests == {"cpu": 1000, "example.com/x": 2, "pods": 1}
    assert third.scoring_requests == second.scoring_requests != {}


def test_a_bad_quantity_names_its_pod_after_others_of_the_same_layout() -> None:
    make_pod_info(make_pod("good", container({"memory": "1Gi"}, name="main")))
    with pytest.raises(QuantityError, match=r"pod default/bad, container main"):
        make_pod_info(make_pod("bad", container({"memory": "1gi"}, name="main")))


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("ephemeral-storage", False, False),
        ("pods", False, False),
        ("storage", False, False),
        ("nvidia.com/gpu", True, True),
        ("example.com/foo", True, True),
        ("requests.example.com/foo", False, False),
        ("kubernetes.io/something", False, True),
        ("deviceclass.resource.kubernetes.io/gpu", False, True),
        ("hugepages-1Gi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
    ],
)
def test_resource_names(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


# ---- node allocatable -----------------------------------------------------------------------------


@dataclass
class AllocatableCase:
    name: str
    node: Node
    expect: Resources = field(default_factory=dict)
    expect_error: str | None = None


ALLOCATABLE_CASES = [
    AllocatableCase(
        "allocatable",
        make_node(
            "n",
            {"cpu": "3500m", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "8", "ephemeral-storage": "100Gi"},
            capacity={"cpu": "4"},
        ),
        {"cpu": 3500, "ephemeral-storage": 100 * Gi, "memory": 16 * Gi, "nvidia.com/gpu": 8, "pods": 110},
    ),
    AllocatableCase(
        "capacity-when-allocatable-absent",
        make_node("n", capacity={"cpu": "2", "pods": 10}),
        {"cpu": 2000, "pods": 10},
    ),
    AllocatableCase("pods-absent-means-none", make_node("n", {"cpu": "2"}), {"cpu": 2000}),
    AllocatableCase("zero-kept", make_node("n", {"hugepages-1Gi": "0", "cpu": "1"}), {"cpu": 1000, "hugepages-1Gi": 0}),
    AllocatableCase("uncounted-dropped", make_node("n", {"storage": "1Ti", "cpu": 1}), {"cpu": 1000}),
    AllocatableCase("empty", make_node("n"), {}),
    AllocatableCase(
        "bad-quantity", make_node("n", {"cpu": "four"}), expect_error=r"node n: status.allocatable\[cpu\]: 'four'"
    ),
]


@pytest.mark.parametrize("case", ALLOCATABLE_CASES, ids=lambda c: c.name)
def test_node_allocatable(case: AllocatableCase) -> None:
    if case.expect_error is not None:
        with pytest.raises(QuantityError, match=case.expect_error):
            node_allocatable(case.node)
        return
    assert node_allocatable(case.node) == case.expect


# ---- a node's books -------------------------------------------------------------------------------


def test_add_and_remove_pods_keep_the_books() -> None:
    a = info(make_pod("a", container({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 1})))
    b = info(make_pod("b", container({"cpu": "500m"})))
    a_requests = dict(a.requests)
    node = node_info(make_node("n1", STANDARD))
    assert (node.requested, node.generation) == ({}, 0)

    add_pod(node, a)
    add_pod(node, b)
    assert node.requested == {"cpu": 1500, "memory": Gi, "nvidia.com/gpu": 1, "pods": 2}
    assert [p.key for p in node.pods] == ["default/a", "default/b"]
    assert node.generation == 2

    remove_pod(node, a)
    assert node.requested == {"cpu": 500, "pods": 1}
    assert [p.key for p in node.pods] == ["default/b"]
    assert node.generation == 3
    assert a.requests == a_requests, "the pod's requests must not be modified"

    with pytest.raises(KeyError, match="node n1: pod default/a is not bound or assumed there"):
        remove_pod(node, a)
    assert node.generation == 3


def test_copy_node_info_is_independent() -> None:
    original = node_info(make_node("n1", STANDARD), busy("a", "1"))
    clone = copy_node_info(original)
    remove_pod(clone, original.pods[0])
    assert (original.requested, len(original.pods), original.generation) == ({"cpu": 1000, "pods": 1}, 1, 1)
    assert (clone.requested, clone.pods, clone.generation) == ({}, [], 2)


def test_non_zero_requested_counts_defaults_for_missing_requests() -> None:
    node = node_info(
        make_node("n1", STANDARD),
        info(make_pod("best-effort", container())),
        info(make_pod("cpu-only", container({"cpu": "1"}))),
        info(make_pod("zero", container({"cpu": "0", "memory": "0"}))),
    )
    assert non_zero_requested(node) == {"cpu": 100 + 1000, "memory": 200 * Mi * 2}
    assert node.requested == {"cpu": 1000, "pods": 3}

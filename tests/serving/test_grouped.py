"""The load evaluated once per group of replicas that see the same values: how replicas group, and that each
replica's values are those of its group."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from tests.builders.serving import GIB, flat, mig, model, service, sliced, whole

from dratwin.scenario.model import ServiceSpec
from dratwin.serving import Replica, ServingModel

ONE = model(ServiceSpec("svc", flat(25.0), 10.0))
TWO = model(ServiceSpec("svc", flat(25.0), 10.0), ServiceSpec("other", flat(4.0), 10.0))


@dataclass(frozen=True)
class Case:
    name: str
    model: ServingModel
    replicas: Callable[[], tuple[Replica, ...]]
    groups: int


CASES = [
    # Forty whole GPUs of one service: one evaluation.
    Case("identical-whole-gpus", ONE, lambda: tuple(whole(f"r{i}") for i in range(40)), 1),
    # Not-ready replicas get no traffic and are in no group.
    Case("not-ready-left-out", ONE, lambda: (whole("a"), whole("b", ready=False), whole("c")), 1),
    # Memory differs: the framebuffer differs, so do the groups.
    Case("memory-splits", ONE, lambda: (whole("a", memory_bytes=80 * GIB), whole("b", memory_bytes=40 * GIB)), 2),
    # A MIG slice and a whole GPU: other capacities.
    Case("mig-and-whole", ONE, lambda: (whole("a"), mig("b", 3 / 7), mig("c", 3 / 7)), 2),
    # Time-sliced replicas are a group each; two services' whole GPUs a group each.
    Case("time-sliced-apart", TWO, lambda: (sliced("a", "g0"), sliced("b", "g0", service="other"), whole("c"),
                                            whole("d", service="other"), whole("e")), 4),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_replica_reads_its_groups_values(case: Case) -> None:
    replicas = case.replicas()
    grouped = case.model.grouped(0.0, replicas)
    assert len(grouped.loads) == case.groups
    snapshot = case.model.snapshot(0.0, replicas)
    ready = [r.name for r in replicas if r.ready]
    assert [load.replica for load in snapshot.replicas] == ready
    for i, load in enumerate(snapshot.replicas):
        assert dataclasses.replace(grouped.load_of(i), replica=load.replica) == load


def test_a_group_is_offered_its_share() -> None:
    # 25 requests/s over five whole GPUs of 10/s: 5 each, 50 % busy.
    grouped = model(service("svc", (0, 25.0))).grouped(0.0, tuple(whole(f"r{i}") for i in range(5)))
    (load,) = grouped.loads
    assert (load.offered_rps, load.served_rps, load.dcgm_gpu_util) == (5.0, 5.0, 50.0)

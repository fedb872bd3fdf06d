"""DynamicResources remembers each pending pod's PreFilter and checks the claims it read only when the cluster's
claim feed names one of them: it must answer as the rule does that compares every claim it read with the
cluster's, whatever changed in between (the pod's own claims or others', a claim deleted and made again, more
changes than the feed holds)."""

from __future__ import annotations

import random
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.builders.manifests import claim_template, gpu_class, gpu_request, gpu_slice, load, manifest, node, pod

from dratwin.cluster.state import ClusterState
from dratwin.scheduler.framework import PodInfo
from dratwin.scheduler.plugins.dynamic_resources import DynamicResources
from dratwin.scheduler.scheduler import Scheduler
from dratwin.twin.schedule import Options, StateBinder, default_profile

WAITING = ("b", "c", "d")


def _cluster(feed: int) -> tuple[ClusterState, Scheduler, list[str]]:
    """One GPU, taken by pod a; pods b, c and d wait for it, each with its claim from a template."""
    objects = [gpu_class(), node("n0"), gpu_slice("n0", 1), claim_template("one", gpu_request())]
    objects += [pod(name, templates={"gpu": "one"}) for name in ("a", *WAITING)]
    loaded = load(manifest(objects), seed=0)
    state = loaded.state
    state._claim_feed = deque(maxlen=feed)  # a short feed: a reader falls behind it within a few changes
    run = Scheduler(state, default_profile(state, Options(0)), random.Random(0), StateBinder(state))
    first, *waiting = loaded.pending
    assert run.schedule_one(first).node == "n0"
    for info in waiting:
        assert run.schedule_one(info).node is None
    return state, run, [info.key for info in waiting]


def _by_every_claim(dra: DynamicResources, state: ClusterState, info: PodInfo) -> bool:
    """The rule itself: the same pod object, as many classes, each claim read still the cluster's record
    with the same claim object."""
    known = dra._pre_filtered.get(info.key)
    if known is None or known.pod is not info.pod or known.classes != len(state.classes):
        return False
    return all(state.claims.get(key) is record and record.claim is claim for key, record, claim in known.claims)


def _claim_of(state: ClusterState, pod_key: str) -> str:
    name = pod_key.split("/")[1]
    [key] = [key for key in state.claims if key.startswith(f"default/{name}-")]
    return key


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["touch", "recreate", "retry", "touch-other"]), st.integers(0, len(WAITING) - 1),
              st.integers(1, 4)),
    max_size=12,
)


@given(operations=OPERATIONS, feed=st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_the_memo_answers_as_comparing_every_claim_does(operations: list[tuple[str, int, int]], feed: int) -> None:
    state, run, waiting = _cluster(feed)
    dra = run.profile.dra
    for operation, which, times in operations:
        key = waiting[which]
        for _ in range(times):
            if operation == "touch":  # the same content, a new object
                claim = _claim_of(state, key)
                state.update_claim(claim, state.claims[claim].raw)
            elif operation == "recreate":  # gone and made again under its name: a new record
                claim = _claim_of(state, key)
                raw = state.claims[claim].raw
                state.delete_claim(claim)
                state.add_claim(raw)
            elif operation == "touch-other":  # the running pod's claim: nothing the waiting pods read
                claim = _claim_of(state, "default/a")
                state.update_claim(claim, state.claims[claim].raw)
        if operation == "retry":
            run.schedule_one(state.pods[key].info)
        for other in waiting:
            info = state.pods[other].info
            assert dra.pre_filters_unchanged([info]) == int(_by_every_claim(dra, state, info)), (operation, other)


def test_a_change_to_a_waiting_pods_claim_is_seen_once_the_feed_has_moved_on() -> None:
    state, run, waiting = _cluster(feed=2)
    dra = run.profile.dra
    infos = [state.pods[key].info for key in waiting]
    assert dra.pre_filters_unchanged(infos) == 3
    claim = _claim_of(state, waiting[0])
    state.update_claim(claim, state.claims[claim].raw)
    other = _claim_of(state, "default/a")
    for _ in range(5):  # the change to b's claim is no longer in the feed
        state.update_claim(other, state.claims[other].raw)
    assert state.claims_changed_since(state.claim_changes - 6) is None
    assert dra.pre_filters_unchanged(infos) == 0
    run.schedule_one(infos[0])
    assert dra.pre_filters_unchanged(infos) == 3


def test_the_feed_names_each_changed_claim_since_a_count() -> None:
    state, _, waiting = _cluster(feed=4)
    start = state.claim_changes
    first, second = _claim_of(state, waiting[0]), _claim_of(state, waiting[1])
    state.update_claim(first, state.claims[first].raw)
    state.update_claim(second, state.claims[second].raw)
    assert sorted(state.claims_changed_since(start) or []) == sorted([first, second])
    assert state.claims_changed_since(state.claim_changes) == []

"""The random case generator: deterministic per seed, cases in the conformance format, every feature covered."""

from __future__ import annotations

from collections import Counter
from functools import cache

import msgspec
import pytest

from dratwin.api.core import Node
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.differential.casefile import CASE_KEYS, Case, dump_case, feature_gates, variant_for
from dratwin.differential.coverage import TAGS, count, coverage
from dratwin.differential.generator import generate, generate_case
from dratwin.differential.themes import FEATURE_ODDS

SAMPLE = 400
KINDS = {"Node": Node, "DeviceClass": DeviceClass, "ResourceSlice": ResourceSlice, "ResourceClaim": ResourceClaim}


@cache
def sample() -> tuple[Case, ...]:
    return tuple(generate(seed=11, count=SAMPLE))


@cache
def counts() -> Counter[str]:
    return count(sample())


def test_a_case_depends_only_on_seed_and_index() -> None:
    assert generate_case(3, 17) == generate_case(3, 17)
    assert list(generate(3, 2, start=17)) == [generate_case(3, 17), generate_case(3, 18)]
    assert generate_case(3, 17) != generate_case(4, 17)
    assert generate_case(3, 17)["name"] == "random-3-00017"


def test_different_seeds_give_different_cases() -> None:
    first = [c["objects"] for c in generate(1, 50)]
    second = [c["objects"] for c in generate(2, 50)]
    assert sum(a == b for a, b in zip(first, second, strict=True)) < 5


@pytest.mark.parametrize("index", range(0, SAMPLE, 40))
def test_cases_are_in_the_conformance_format(index: int) -> None:
    case = sample()[index]
    assert set(case) == set(CASE_KEYS) - {"expect"}
    feature_gates(case["features"])  # raises on an unknown feature name
    by_kind: dict[str, list[str]] = {}
    for obj in case["objects"]:
        msgspec.convert(obj, KINDS[obj["kind"]], strict=False)  # dratwin can read every object
        by_kind.setdefault(obj["kind"], []).append(obj["metadata"]["name"])
    for kind, names in by_kind.items():
        assert len(names) == len(set(names)), f"duplicate {kind} names in {case['name']}"
    assert case["node"] in by_kind["Node"]
    claims = {o["metadata"]["name"]: o for o in case["objects"] if o["kind"] == "ResourceClaim"}
    assert case["allocate"], "every case allocates at least one claim"
    for name in case["allocate"]:
        assert "status" not in claims[name], f"{name} is to be allocated, so it has no status"


def test_cases_survive_a_yaml_round_trip() -> None:
    import yaml

    for case in sample()[:50]:
        assert yaml.safe_load(dump_case(case, ["a comment"])) == case


def test_every_request_has_the_api_servers_defaults() -> None:
    """The allocator does not default allocationMode; stored claims always have it."""
    for case in sample():
        for obj in case["objects"]:
            if obj["kind"] != "ResourceClaim" or obj["metadata"]["name"] not in case["allocate"]:
                continue
            for request in obj["spec"]["devices"]["requests"]:
                for one in request.get("firstAvailable") or [request.get("exactly")]:
                    assert one["allocationMode"] in ("ExactCount", "All")
                    assert ("count" in one) == (one["allocationMode"] == "ExactCount")


# At least this share of the cases exercises each feature (the generator's odds are well above).
MINIMUM_SHARE = {tag: 0.02 for tag in TAGS} | {"list-type-attributes": 0.01, "unknown-class": 0.01,
                                                 "invalid-pool-unknown-counter-set": 0.01}


@pytest.mark.parametrize("tag", TAGS)
def test_every_feature_is_covered(tag: str) -> None:
    assert counts()[tag] >= MINIMUM_SHARE[tag] * SAMPLE, f"{tag}: {counts()[tag]} of {SAMPLE} cases"


@pytest.mark.parametrize("feature", FEATURE_ODDS)
def test_every_feature_gate_is_on_in_some_cases_and_off_in_others(feature: str) -> None:
    on = counts()[f"feature:{feature}"]
    assert 0 < on < SAMPLE


@pytest.mark.parametrize(("variant", "share"), [("stable", 0.25), ("incubating", 0.25), ("experimental", 0.01)])
def test_upstream_picks_each_variant_for_some_cases(variant: str, share: float) -> None:
    assert counts()[f"variant:{variant}"] >= share * SAMPLE


def test_coverage_reads_the_case_not_the_generator() -> None:
    case = generate_case(11, 0)
    tags = coverage(case)
    assert f"variant:{variant_for(case['features'])}" in tags
    stripped = {**case, "objects": [o for o in case["objects"] if o["kind"] == "Node"], "allocate": []}
    assert coverage(stripped) <= {t for t in tags if t.startswith(("feature:", "variant:", "several-nodes"))}

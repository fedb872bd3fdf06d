"""Offerings of the packaged catalog and Karpenter's price ordering (cheapest compatible available offering first)."""

from __future__ import annotations

import pytest

from dratwin.catalog import Candidate, InstanceType, Offering, cheapest, load_catalog
from dratwin.catalog.instances import with_offerings
from dratwin.catalog.offerings import (
    CAPACITY_TYPE_LABEL,
    DEFAULT_REGION,
    DEFAULT_ZONES,
    ON_DEMAND,
    REGION_LABEL,
    SPOT,
    ZONE_LABEL,
    compile_requirements,
)

FAMILY = "karpenter.k8s.aws/instance-family"
CPU = "karpenter.k8s.aws/instance-cpu"


def test_default_offerings_are_on_demand_in_the_default_zones() -> None:
    p5 = load_catalog().get("p5.48xlarge")
    assert p5.offerings == tuple(Offering(zone, ON_DEMAND, 55.04) for zone in DEFAULT_ZONES)
    assert p5.region == DEFAULT_REGION == "us-east-1"
    assert p5.spot_price("us-east-1a") is None
    assert load_catalog().zones == DEFAULT_ZONES and len(DEFAULT_ZONES) == 5


def test_types_without_an_on_demand_price_have_no_offerings() -> None:
    catalog = load_catalog()
    unpriced = [it.name for it in catalog if it.price_usd_per_hour is None]
    assert "p5e.48xlarge" in unpriced and "trn2.48xlarge" in unpriced
    for name in unpriced:
        assert catalog.get(name).offerings == ()
        assert catalog.get(name).cheapest_offering() is None
    assert not set(unpriced) & {c.name for c in catalog.cheapest()}
    assert len(catalog.cheapest()) == len(catalog) - len(unpriced)


def test_cheapest_orders_by_price_then_name() -> None:
    ordered = load_catalog().cheapest()
    keys = [(c.price, c.name) for c in ordered]
    assert keys == sorted(keys)
    assert ordered[0].name == "t4g.nano" and ordered[0].price == 0.0042
    # Equal prices: c5.24xlarge and c5.metal are both 4.08, m7i.48xlarge and m7i.metal-48xl both 9.6768.
    names = [c.name for c in ordered]
    assert names.index("c5.24xlarge") + 1 == names.index("c5.metal")
    assert names.index("m7i.48xlarge") + 1 == names.index("m7i.metal-48xl")


def test_cheapest_with_label_requirements() -> None:
    catalog = load_catalog()
    found = catalog.cheapest({FAMILY: ["m7i", "m7g", "m6i"], CPU: "4"})
    assert [(c.name, c.price) for c in found] == [("m7g.xlarge", 0.1632), ("m6i.xlarge", 0.192),
                                                  ("m7i.xlarge", 0.2016)]
    assert found[0].offering == Offering("us-east-1a", ON_DEMAND, 0.1632)
    assert isinstance(found[0], Candidate) and found[0].instance_type is catalog.get("m7g.xlarge")


def test_node_selector_requirements_as_in_a_nodepool() -> None:
    requirements = [
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["6"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": CPU, "operator": "Lt", "values": ["3"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"},
        {"key": FAMILY, "operator": "NotIn", "values": ["m7i-flex", "c7i-flex"]},
        {"key": ZONE_LABEL, "operator": "In", "values": ["us-east-1c"]},
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["spot", "on-demand"]},
        {"key": REGION_LABEL, "operator": "Exists"},
    ]
    found = load_catalog().cheapest(requirements)
    assert found[0].name == "c7a.medium" and found[0].offering.zone == "us-east-1c"
    for candidate in found:
        it = candidate.instance_type
        assert it.family[0] in "cmr" and int(it.family[1]) > 6 and it.arch == "amd64" and (it.vcpu or 0) < 3
    assert "m7i-flex.large" not in {c.name for c in found}
    assert "c7i.large" in {c.name for c in found}


def test_gpu_requirements_select_accelerated_types_only() -> None:
    found = load_catalog().cheapest([{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In",
                                      "values": ["l40s"]}])
    assert [c.name for c in found][:2] == ["g6e.xlarge", "g6e.2xlarge"]
    assert all(c.instance_type.gpus is not None for c in found)
    exists = load_catalog().cheapest([{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Exists"}])
    assert exists and all(c.instance_type.accelerated for c in exists)


def test_spot_only_requirements_find_nothing_without_spot_prices() -> None:
    assert load_catalog().cheapest({CAPACITY_TYPE_LABEL: SPOT}) == []


def test_a_zone_outside_the_catalog_finds_nothing() -> None:
    assert load_catalog().cheapest({ZONE_LABEL: "us-east-1e"}) == []


def test_callable_filter() -> None:
    found = cheapest(load_catalog(), lambda it, of: it.family == "r7g" and of.zone == "us-east-1d")
    assert [c.name for c in found][:2] == ["r7g.medium", "r7g.large"]
    assert {c.offering.zone for c in found} == {"us-east-1d"}


def test_unavailable_and_spot_offerings_take_part_in_the_order() -> None:
    catalog = load_catalog()
    base = catalog.get("m7i.large")
    it = with_offerings(base, ("us-east-1a", "us-east-1b"), on_demand=0.1008,
                        spot={"us-east-1a": 0.03, "us-east-1b": 0.02}, unavailable={("us-east-1b", SPOT)})
    assert it.offerings == (
        Offering("us-east-1a", ON_DEMAND, 0.1008), Offering("us-east-1a", SPOT, 0.03),
        Offering("us-east-1b", ON_DEMAND, 0.1008), Offering("us-east-1b", SPOT, 0.02, available=False),
    )
    assert it.cheapest_offering() == Offering("us-east-1a", SPOT, 0.03)
    assert it.cheapest_offering({CAPACITY_TYPE_LABEL: ON_DEMAND}) == Offering("us-east-1a", ON_DEMAND, 0.1008)
    other: InstanceType = catalog.get("m7g.large")  # 0.0816 on demand, cheaper than m7i.large's on-demand
    assert [c.name for c in cheapest([other, it])] == ["m7i.large", "m7g.large"]
    assert [c.name for c in cheapest([other, it], {CAPACITY_TYPE_LABEL: ON_DEMAND})] == ["m7g.large", "m7i.large"]
    assert cheapest([it], {CAPACITY_TYPE_LABEL: SPOT, ZONE_LABEL: "us-east-1b"}) == []


def test_types_for() -> None:
    catalog = load_catalog()
    arm = catalog.types_for(arch="arm64")
    assert arm and all(t.arch == "arm64" for t in arm)
    assert {"m7g.large", "c7g.large", "r7g.large", "t4g.nano", "g5g.xlarge"} <= {t.name for t in arm}
    amd = catalog.types_for("amd64")
    assert len(arm) + len(amd) + sum(1 for t in catalog if t.arch is None) == len(catalog)
    assert len(catalog.types_for()) == len(catalog)
    assert catalog.types_for(os="windows") == []


def test_bad_requirements() -> None:
    with pytest.raises(ValueError, match="unknown operator 'Matches'"):
        compile_requirements([{"key": CPU, "operator": "Matches", "values": ["4"]}])
    with pytest.raises(ValueError, match="requirement 0"):
        compile_requirements(["cpu=4"])  # type: ignore[list-item]

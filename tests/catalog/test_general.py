"""The general-purpose / compute / memory / burstable types: counts, values against the sources, Karpenter's model.

Spot-checked numbers are copied from aws/karpenter-provider-aws @ 1d927085: the instance-types page
(website/content/en/preview/reference/instance-types.md) and the us-east-1 price table
(pkg/providers/pricing/zz_generated.pricing_aws.go, generated 2026-07-20).
"""

from __future__ import annotations

import pytest

from dratwin.catalog import load_catalog
from dratwin.catalog._data import data_yaml
from dratwin.catalog.instances import GENERAL_FILE
from dratwin.catalog.offerings import DEFAULT_ZONES, ON_DEMAND
from dratwin.catalog.refresh import FAMILIES, build, generated_at, parse_instance_types_page, parse_pricing

GENERAL = data_yaml(GENERAL_FILE)["instance_types"]

# Sizes per family on Karpenter's instance-types page (metal sizes included).
FAMILY_SIZES = {
    "c5": 9, "c5a": 8, "c6a": 11, "c6g": 9, "c6i": 10, "c7a": 12, "c7g": 9, "c7i": 11, "c7i-flex": 7, "c8g": 12,
    "c8i": 13, "m5": 9, "m5a": 8, "m6a": 11, "m6g": 9, "m6i": 10, "m7a": 12, "m7g": 9, "m7i": 11, "m7i-flex": 7,
    "m8g": 12, "m8i": 13, "r5": 9, "r5a": 8, "r6a": 11, "r6g": 9, "r6i": 10, "r7a": 12, "r7g": 9, "r7i": 11,
    "r8g": 12, "r8i": 13, "t3": 7, "t3a": 7, "t4g": 7,
}  # fmt: skip
REQUIRED = ("m7i", "c7i", "r7i", "m7g", "c7g", "r7g", "m6i", "c6i", "r6i", "m5", "c5", "r5", "t3")


def general_types() -> list[str]:
    return [it.name for it in load_catalog() if it.source == GENERAL_FILE]


def test_counts_per_family() -> None:
    catalog = load_catalog()
    counts: dict[str, int] = {}
    for name in general_types():
        family = catalog.get(name).family
        counts[family] = counts.get(family, 0) + 1
    assert counts == FAMILY_SIZES
    assert set(REQUIRED) <= set(counts)
    assert len(general_types()) == 347 == data_yaml(GENERAL_FILE)["metadata"]["instance_type_count"]
    assert len(catalog) == 81 + 347 + 10  # accelerated, general, previous GPU families
    assert tuple(sorted(FAMILY_SIZES)) == FAMILIES


def test_t3_sizes() -> None:
    sizes = [load_catalog().get(n).size for n in general_types() if n.startswith("t3.")]
    assert sizes == ["nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"]


@pytest.mark.parametrize(
    ("name", "vcpu", "memory_mib", "arch", "price", "manufacturer", "bandwidth", "hypervisor", "pods", "efa",
     "allocatable_cpu", "allocatable_memory"),
    [
        ("m7i.large", 2, 8192, "amd64", 0.1008, "intel", "781", "nitro", 29, 0, "1930m", "6903Mi"),
        ("m7i.48xlarge", 192, 786432, "amd64", 9.6768, "intel", "50000", "nitro", 737, 1, "191450m", "718987Mi"),
        ("m7i.metal-24xl", 96, 393216, "amd64", 5.32224, "intel", "37500", "", 737, 0, "95690m", "355262Mi"),
        ("m7g.large", 2, 8192, "arm64", 0.0816, "aws", None, "nitro", None, 0, None, None),
        ("c7g.16xlarge", 64, 131072, "arm64", 2.32, "aws", "30000", "nitro", 737, 1, "63770m", "112720Mi"),
        ("r7g.medium", 1, 8192, "arm64", 0.0536, "aws", "520", "nitro", 8, 0, "940m", "7075Mi"),
        ("c6i.32xlarge", 128, 262144, "amd64", 5.44, "intel", "50000", "nitro", 737, 1, "127610m", "234021Mi"),
        ("r5.24xlarge", 96, 786432, "amd64", 6.048, "intel", "25000", "nitro", 737, 0, "95690m", "718987Mi"),
        ("m5.large", 2, 8192, "amd64", 0.096, None, None, None, None, 0, None, None),
        ("c5.large", 2, None, "amd64", 0.085, None, None, None, None, 0, None, None),
        ("t3.nano", 2, 512, "amd64", 0.0052, "intel", "32", "nitro", 4, 0, "1930m", "74Mi"),
        ("t4g.nano", 2, 512, "arm64", 0.0042, "aws", "32", "nitro", 4, 0, "1930m", "15Mi"),
        ("c7i.metal-48xl", None, None, "amd64", 8.568, None, None, "", None, None, None, None),
        ("r8i.96xlarge", None, None, "amd64", 26.67264, None, None, None, None, None, None, None),
    ],
)
def test_spot_checks_against_the_sources(
    name: str, vcpu: int | None, memory_mib: int | None, arch: str, price: float, manufacturer: str | None,
    bandwidth: str | None, hypervisor: str | None, pods: int | None, efa: int | None, allocatable_cpu: str | None,
    allocatable_memory: str | None,
) -> None:
    it = load_catalog().get(name)
    labels = it.well_known_labels()
    assert it.arch == labels["kubernetes.io/arch"] == arch
    assert it.price_usd_per_hour == price
    assert it.gpus is None and it.neuron is None and it.dra is None and not it.accelerated
    expected = {
        "vcpu": (it.vcpu, vcpu), "memory": (it.memory_mib, memory_mib), "pods": (it.max_pods, pods),
        "efa": (it.efa_count, efa),
        "manufacturer": (labels["karpenter.k8s.aws/instance-cpu-manufacturer"], manufacturer),
        "bandwidth": (labels["karpenter.k8s.aws/instance-network-bandwidth"], bandwidth),
        "hypervisor": (labels["karpenter.k8s.aws/instance-hypervisor"], hypervisor),
        "allocatable cpu": (it.node_resources().allocatable["cpu"], allocatable_cpu),
        "allocatable memory": (it.node_resources().allocatable["memory"], allocatable_memory),
    }
    for what, (got, want) in expected.items():
        if want is not None:
            assert got == want, what
    if vcpu is not None:
        assert labels["karpenter.k8s.aws/instance-cpu"] == str(vcpu)
    if memory_mib is not None:
        assert labels["karpenter.k8s.aws/instance-memory"] == str(memory_mib)


def test_labels_are_karpenters_page_unchanged() -> None:
    catalog = load_catalog()
    for name, entry in GENERAL.items():
        it = catalog.get(name)
        labels = it.well_known_labels()
        assert labels == entry["labels"], name
        family, size = name.split(".", 1)
        assert (it.family, it.size) == (family, size)
        assert labels["karpenter.k8s.aws/instance-family"] == family
        assert labels["karpenter.k8s.aws/instance-category"] == family[0]
        assert labels["node.kubernetes.io/instance-type"] == name
        assert labels["kubernetes.io/os"] == "linux"
        for key in ("instance-generation", "instance-cpu-manufacturer", "instance-hypervisor",
                    "instance-network-bandwidth", "instance-size", "instance-cpu", "instance-memory"):
            assert f"karpenter.k8s.aws/{key}" in labels, (name, key)


def test_graviton_families_are_arm64_and_the_rest_amd64() -> None:
    catalog = load_catalog()
    for name in general_types():
        it = catalog.get(name)
        graviton = it.family.endswith("g") or it.family == "t4g"
        assert it.arch == ("arm64" if graviton else "amd64"), name
        assert (it.well_known_labels()["karpenter.k8s.aws/instance-cpu-manufacturer"] == "aws") == graviton, name


@pytest.mark.parametrize("name", sorted(GENERAL))
def test_overhead_model_reproduces_karpenters_allocatable(name: str) -> None:
    it = load_catalog().get(name)
    computed = it.node_resources().allocatable
    page = GENERAL[name]["allocatable"]
    for resource in ("cpu", "memory", "pods", "ephemeral-storage"):
        assert computed[resource] == page[resource], (name, resource)


def test_every_general_type_is_priced_and_offered_on_demand_in_every_default_zone() -> None:
    catalog = load_catalog()
    for name in general_types():
        it = catalog.get(name)
        assert it.price_usd_per_hour is not None and it.price_usd_per_hour > 0, name
        assert [o.zone for o in it.offerings] == list(DEFAULT_ZONES), name
        assert {(o.capacity_type, o.price, o.available) for o in it.offerings} == {
            (ON_DEMAND, it.price_usd_per_hour, True)
        }, name


def test_prices_grow_with_size_within_a_family() -> None:
    catalog = load_catalog()
    for family in FAMILY_SIZES:
        types = [catalog.get(n) for n in general_types() if catalog.get(n).family == family]
        ordered = sorted(types, key=lambda t: (t.vcpu or 0, t.price_usd_per_hour or 0))
        prices = [t.price_usd_per_hour or 0 for t in ordered]
        assert prices == sorted(prices), family


# ---- the generator ------------------------------------------------------------------------------------------------

PAGE = """\
## m7i Family
### `m7i.large`
#### Labels
 | Label | Value |
 |--|--|
 |karpenter.k8s.aws/instance-cpu|2|
 |karpenter.k8s.aws/instance-hypervisor||
 |kubernetes.io/arch|amd64|
#### Resources
 | Resource | Quantity |
 |--|--|
 |cpu|1930m|
 |pods|29|
## x1 Family
### `x1.16xlarge`
#### Labels
 | Label | Value |
 |--|--|
 |karpenter.k8s.aws/instance-cpu|64|
"""

PRICING = """\
// generated at 2026-07-20T13:44:30Z for us-east-1
var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{
\t// us-east-1
\t"us-east-1": {
\t\t// m7i family
\t\t"m7i.12xlarge": 2.419200, "m7i.large": 0.100800,
\t},
\t"us-west-2": {
\t\t"m7i.large": 0.200000,
\t},
}
"""


def test_refresh_parsers() -> None:
    page = parse_instance_types_page(PAGE)
    assert page["m7i.large"] == {
        "labels": {"karpenter.k8s.aws/instance-cpu": "2", "karpenter.k8s.aws/instance-hypervisor": "",
                   "kubernetes.io/arch": "amd64"},
        "allocatable": {"cpu": "1930m", "pods": "29"},
    }
    prices = parse_pricing(PRICING)
    assert prices == {"us-east-1": {"m7i.12xlarge": 2.4192, "m7i.large": 0.1008}, "us-west-2": {"m7i.large": 0.2}}
    assert generated_at(PRICING) == "2026-07-20T13:44:30Z"
    types = build(page, prices["us-east-1"], ("m7i",))
    assert list(types) == ["m7i.large"] and types["m7i.large"]["price_usd_per_hour"] == 0.1008
    with pytest.raises(ValueError, match="family c7i"):
        build(page, prices["us-east-1"], ("c7i",))

"""User catalogs merged over the packaged one: prices, spot, discount, zones, region, whole types, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dratwin.catalog import CatalogFileError, Offering, load_catalog
from dratwin.catalog.offerings import CAPACITY_TYPE_LABEL, ON_DEMAND, REGION_LABEL, SPOT, ZONE_LABEL
from dratwin.errors import InputError

DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "example-catalog.yaml"
EU = DATA / "eu-west-1.yaml"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def write(tmp_path: Path, text: str, name: str = "catalog.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_example_catalog_zones_discount_and_spot() -> None:
    catalog = load_catalog([EXAMPLE])
    assert (catalog.zones, catalog.discount, catalog.files, catalog.region) == (ZONES, 0.2, (str(EXAMPLE),),
                                                                               "us-east-1")
    m5 = catalog.get("m5.large")  # only the discount: 0.096 x 0.8
    assert m5.price_usd_per_hour == pytest.approx(0.0768)
    assert m5.offerings == tuple(Offering(z, ON_DEMAND, m5.price_usd_per_hour) for z in ZONES)
    large = catalog.get("m7i.large")  # 0.1008 x 0.8 on demand, spot 0.04 everywhere, us-east-1c unavailable
    assert [(o.zone, o.capacity_type, o.price, o.available) for o in large.offerings] == [
        ("us-east-1a", ON_DEMAND, pytest.approx(0.08064), True), ("us-east-1a", SPOT, 0.04, True),
        ("us-east-1b", ON_DEMAND, pytest.approx(0.08064), True), ("us-east-1b", SPOT, 0.04, True),
        ("us-east-1c", ON_DEMAND, pytest.approx(0.08064), False), ("us-east-1c", SPOT, 0.04, False),
    ]
    xlarge = catalog.get("m7i.xlarge")  # on-demand overridden (then discounted), spot in two zones only
    assert xlarge.price_usd_per_hour == pytest.approx(0.152)
    assert xlarge.spot_price("us-east-1a") == 0.07 and xlarge.spot_price("us-east-1c") is None
    assert [o.capacity_type for o in xlarge.offerings].count(SPOT) == 2
    c7g = catalog.get("c7g.large")  # on-demand: null
    assert c7g.price_usd_per_hour is None and {o.capacity_type for o in c7g.offerings} == {SPOT}
    p5 = catalog.get("p5.48xlarge")
    assert [o.available for o in p5.offerings] == [False, True, True]
    assert p5.cheapest_offering() == Offering("us-east-1b", ON_DEMAND, pytest.approx(55.04 * 0.8))


def test_example_catalog_adds_a_whole_instance_type() -> None:
    catalog = load_catalog([EXAMPLE])
    m8a = catalog.get("m8a.large")
    assert (m8a.vcpu, m8a.memory_mib, m8a.arch, m8a.max_pods, m8a.family, m8a.size) == (2, 8192, "amd64", 59, "m8a",
                                                                                        "large")
    assert m8a.source == str(EXAMPLE) and "m8a.large" not in load_catalog()
    assert m8a.price_usd_per_hour == pytest.approx(0.12172 * 0.8)
    assert m8a.node_resources().allocatable["memory"] == "6573Mi"  # Karpenter's page, reproduced by the formula
    assert m8a.well_known_labels()["karpenter.k8s.aws/instance-network-bandwidth"] == "937"
    assert len(catalog) == len(load_catalog()) + 1 and catalog.names()[-1] == "m8a.large"


def test_spot_prices_change_what_is_cheapest() -> None:
    catalog = load_catalog([EXAMPLE])
    requirements = {"karpenter.k8s.aws/instance-family": ["m7i", "c7g"], "karpenter.k8s.aws/instance-cpu": "2"}
    first = catalog.cheapest(requirements)[0]
    assert (first.name, first.offering.capacity_type, first.price) == ("c7g.large", SPOT, 0.03)
    on_demand = catalog.cheapest({**requirements, CAPACITY_TYPE_LABEL: ON_DEMAND})
    # c7g.large is not sold on demand in this catalog; m7i.large's us-east-1c offerings are unavailable.
    assert [(c.name, c.offering.zone, c.offering.capacity_type) for c in on_demand] == [
        ("m7i.large", "us-east-1a", ON_DEMAND)]


def test_packaged_catalog_is_not_changed_by_user_catalogs() -> None:
    load_catalog([EXAMPLE])
    packaged = load_catalog()
    assert packaged.get("m7i.large").price_usd_per_hour == 0.1008
    assert len(packaged.get("m7i.large").offerings) == 5 and packaged.discount == 0.0
    assert load_catalog() is packaged and load_catalog(()) is packaged


def test_another_region() -> None:
    catalog = load_catalog([str(EU)])
    assert (catalog.region, catalog.zones) == ("eu-west-1", ("eu-west-1a", "eu-west-1b", "eu-west-1c"))
    priced = {c.name for c in catalog.cheapest()}
    assert priced == {"m7i.large", "m7g.large", "g6e.xlarge"}
    assert catalog.get("m5.large").price_usd_per_hour is None and catalog.get("m5.large").offerings == ()
    m7g = catalog.get("m7g.large")
    assert m7g.region == "eu-west-1" and m7g.spot_price("eu-west-1b") == 0.035
    assert catalog.cheapest({REGION_LABEL: "us-east-1"}) == []
    assert [c.name for c in catalog.cheapest({REGION_LABEL: "eu-west-1", ZONE_LABEL: "eu-west-1b"})] == [
        "m7g.large", "m7i.large", "g6e.xlarge"]
    assert catalog.get("g6e.xlarge").gpus is not None  # the hardware stays; only prices and zones are regional


def test_later_files_win(tmp_path: Path) -> None:
    first = write(tmp_path, "discount: 0.1\nprices: {m7i.large: {on-demand: 0.2, spot: 0.05}}\n", "a.yaml")
    second = write(tmp_path, "discount: 0.5\nprices: {m7i.large: {spot: null}}\n", "b.yaml")
    catalog = load_catalog([first, second])
    it = catalog.get("m7i.large")
    assert catalog.discount == 0.5 and it.price_usd_per_hour == pytest.approx(0.1)
    assert {o.capacity_type for o in it.offerings} == {ON_DEMAND}
    assert catalog.files == (str(first), str(second))


def test_a_whole_type_replaces_the_packaged_one_and_keeps_its_dra_metadata(tmp_path: Path) -> None:
    path = write(tmp_path, """\
instance_types:
  g6e.xlarge:
    labels:
      karpenter.k8s.aws/instance-cpu: '4'
      karpenter.k8s.aws/instance-memory: '32768'
      kubernetes.io/arch: amd64
      karpenter.k8s.aws/instance-gpu-count: '1'
      karpenter.k8s.aws/instance-gpu-name: l40s
      karpenter.k8s.aws/instance-gpu-manufacturer: nvidia
    allocatable: {pods: '58'}
    zones: [us-east-1b]
""")
    it = load_catalog([path]).get("g6e.xlarge")
    assert it.max_pods == 58 and it.gpus is not None and (it.gpus.count, it.gpus.name) == (1, "l40s")
    assert it.dra is load_catalog().get("g6e.xlarge").dra is not None
    # No price in the file: the packaged us-east-1 price stays.
    assert it.offerings == (Offering("us-east-1b", ON_DEMAND, load_catalog().get("g6e.xlarge").price_usd_per_hour
                                     or 0.0),)
    labels = it.well_known_labels()
    assert labels["karpenter.k8s.aws/instance-family"] == "g6e"
    assert labels["karpenter.k8s.aws/instance-size"] == "xlarge"
    assert labels["node.kubernetes.io/instance-type"] == "g6e.xlarge" and labels["kubernetes.io/os"] == "linux"


LABELS = ("labels: {karpenter.k8s.aws/instance-cpu: '2', karpenter.k8s.aws/instance-memory: '4096', "
          "kubernetes.io/arch: amd64}")


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("prices: {m7i.large: [\n", "", "line 2, column 1: not valid YAML"),
        ("- m7i.large\n", "", "expected a mapping with some of the keys region, zones, discount, prices"),
        ("price: {}\n", "price", "unknown key (did you mean prices?)"),
        ("discount: 20\n", "discount", "expected the fraction taken off on-demand prices"),
        ("discount: true\n", "discount", "0.2 for 20 %"),
        ("prices: {m7i.lrage: {on-demand: 1}}\n", "prices.m7i.lrage",
         "unknown instance type 'm7i.lrage' (did you mean m7i.large"),
        ("prices: {m7i.large: {reserved: 0.05}}\n", "prices.m7i.large.reserved", "unknown capacity type"),
        ("prices: {m7i.large: {on-demand: cheap}}\n", "prices.m7i.large.on-demand",
         "expected a non-negative price in USD per hour (or null: not sold on demand), got 'cheap'"),
        ("prices: {m7i.large: {spot: -1}}\n", "prices.m7i.large.spot", "non-negative price"),
        ("prices: {m7i.large: 0.1}\n", "prices.m7i.large", "expected {on-demand: <USD/h>"),
        ("prices: {m7i.large: {spot: {us-east-1e: 0.03}}}\n", "prices.m7i.large.spot.us-east-1e",
         "zone 'us-east-1e' is not one of the zones of m7i.large"),
        ("zones: us-east-1a\n", "zones", "expected a non-empty list of zone names"),
        ("zones: [us-east-1a, us-east-1a]\n", "zones", "lists a zone twice"),
        ("region: eu-west-1\n", "region", "'eu-west-1' needs its zones too"),
        ("region: eu-west-1\nzones: [us-east-1a]\n", "zones", "zone 'us-east-1a' is not in region 'eu-west-1'"),
        ("region: eu-west-1\nmetadata: {region: us-east-1}\n", "region", "differ; keep one"),
        ("instance_types: [x1.large]\n", "instance_types", "expected a mapping of instance type name"),
        ("instance_types: {x9.large: {labels: {kubernetes.io/arch: amd64}}}\n", "instance_types.x9.large.labels",
         "needs karpenter.k8s.aws/instance-cpu"),
        ("instance_types: {x9.large: {labels: {karpenter.k8s.aws/instance-cpu: two}}}\n",
         "instance_types.x9.large.labels.karpenter.k8s.aws/instance-cpu", "expected an integer, got 'two'"),
        ("instance_types: {x9.large: {labels: {karpenter.k8s.aws/instance-cpu: '2', "
         "karpenter.k8s.aws/instance-memory: '4096', kubernetes.io/arch: x86_64}}}\n",
         "instance_types.x9.large.labels.kubernetes.io/arch", "expected one of amd64, arm64, got 'x86_64'"),
        (f"instance_types: {{x9.large: {{{LABELS}, allocatable: {{pods: many}}}}}}\n",
         "instance_types.x9.large.allocatable.pods", "expected the max pods as an integer"),
        (f"instance_types: {{x9.large: {{{LABELS}, allocatable: {{vpc.amazonaws.com/efa: one}}}}}}\n",
         "instance_types.x9.large.allocatable.vpc.amazonaws.com/efa", "expected the EFA count as an integer"),
        ("instance_types: {x9.large: {labels: {karpenter.k8s.aws/instance-cpu: '2', karpenter.k8s.aws/instance-memory: "
         "'4096', kubernetes.io/arch: amd64, karpenter.k8s.aws/instance-gpu-count: some}}}\n",
         "instance_types.x9.large.labels", "must be integers"),
        (f"instance_types: {{x9.large: {{{LABELS}, price_usd_per_hour: free}}}}\n",
         "instance_types.x9.large.price_usd_per_hour", "expected a non-negative number of USD per hour"),
        (f"instance_types: {{x9.large: {{{LABELS}, price: 1}}}}\n", "instance_types.x9.large.price",
         "unknown key; an instance type has labels"),
        (f"instance_types: {{x9large: {{{LABELS}}}}}\n", "instance_types.x9large", "<family>.<size>"),
        (f"instance_types: {{x9.large: {{{LABELS}, zones: [us-east-1a, eu-west-1a]}}}}\n",
         "instance_types.x9.large.zones", "zone 'eu-west-1a' is not in region 'us-east-1'"),
        ("unavailable: {instance_type: m7i.large}\n", "unavailable", "expected a list"),
        ("unavailable: [{instance_type: m7i.large, capacity_type: reserved}]\n", "unavailable[0].capacity_type",
         "expected on-demand or spot"),
        ("unavailable: [{instance_type: m7i.large, zone: us-east-1e}]\n", "unavailable[0].zone",
         "zone 'us-east-1e' is not one of the zones of m7i.large"),
        ("unavailable: [{type: m7i.large}]\n", "unavailable[0]", "expected {instance_type: <name>"),
    ],
)
def test_errors_name_the_file_the_key_and_the_fix(tmp_path: Path, text: str, key: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CatalogFileError) as info:
        load_catalog([path])
    error = info.value
    assert isinstance(error, InputError)
    assert (error.file, error.key) == (str(path), key)
    assert str(error).startswith(f"{path}: {key + ': ' if key else ''}")
    assert message in str(error)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogFileError, match=r"missing\.yaml: cannot be read"):
        load_catalog([tmp_path / "missing.yaml"])


def test_conflicting_regions_across_files(tmp_path: Path) -> None:
    first = write(tmp_path, "region: eu-west-1\nzones: [eu-west-1a]\n", "a.yaml")
    second = write(tmp_path, "region: us-west-2\nzones: [us-west-2a]\n", "b.yaml")
    with pytest.raises(CatalogFileError) as info:
        load_catalog([first, second])
    assert info.value.file == str(second) and f"conflicts with region 'eu-west-1' of {first}" in str(info.value)


def test_prices_for_a_type_defined_in_a_later_file_are_an_error(tmp_path: Path) -> None:
    prices = write(tmp_path, "prices: {x9.large: {on-demand: 1.0}}\n", "a.yaml")
    types = write(tmp_path, f"instance_types: {{x9.large: {{{LABELS}}}}}\n", "b.yaml")
    with pytest.raises(CatalogFileError, match="define it under instance_types"):
        load_catalog([prices, types])
    catalog = load_catalog([types, prices])
    assert catalog.get("x9.large").price_usd_per_hour == 1.0 and catalog.get("x9.large").max_pods is None

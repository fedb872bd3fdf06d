"""Every NVIDIA GPU family of Karpenter's and EKS's instance lists is in the catalog; the ones EC2 no longer
offers have specs, a list price and notes but no offering; types without DRA device metadata say so; EKS Auto
Mode's supported instance types."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from dratwin.catalog import load_catalog
from dratwin.catalog._data import data_yaml
from dratwin.catalog.auto_mode import auto_mode_refusal

PREVIOUS_FILE = "aws-previous-gpu-instances.yaml"
PREVIOUS = data_yaml(PREVIOUS_FILE)["instance_types"]
# Karpenter's instance-types pages (preview, v1.12 for p3, v1.0 for p2/g3/g3s) and EKS Auto Mode's supported
# accelerated families, NVIDIA only.
KARPENTER_PAGES = (
    "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "g7", "g7e", "gr6", "gr6f", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en",
    "p6-b200", "p6-b300", "p3", "p2", "g3", "g3s",
)  # fmt: skip
EKS_AUTO_MODE = ("p6-b200", "p6-b300", "p5", "p5e", "p5en", "p4d", "p4de", "p3dn", "g7e", "g6", "gr6", "g6e", "g5g",
                 "g5", "g4dn")  # fmt: skip
OTHER_EKS = ["p6e-gb200"]  # the EKS UltraServer guide


def test_every_nvidia_family_of_the_lists_is_in_the_catalog() -> None:
    nvidia = {t.family for t in load_catalog() if t.gpus is not None and t.gpus.manufacturer == "nvidia"}
    assert sorted(set(KARPENTER_PAGES) | set(EKS_AUTO_MODE) | set(OTHER_EKS)) == sorted(nvidia)


def test_previous_families_have_specs_a_list_price_and_no_offering() -> None:
    catalog = load_catalog()
    assert sorted(PREVIOUS) == sorted(t.name for t in catalog if t.source == PREVIOUS_FILE)
    assert len(PREVIOUS) == 10 == data_yaml(PREVIOUS_FILE)["metadata"]["instance_type_count"]
    for name in PREVIOUS:
        it = catalog.get(name)
        assert it.offerings == () and it.price_usd_per_hour is None, name
        assert it.list_price_usd_per_hour is not None and it.list_price_usd_per_hour > 0, name
        assert it.gpus is not None and it.gpus.count >= 1 and it.dra is None, name
        assert it.notes[0].startswith("not offered since"), name
        assert it.notes[1] == "no DRA device metadata: Karpenter cannot launch it for DRA claims"


@dataclass(frozen=True)
class SpecCase:
    name: str
    vcpu: int
    memory_mib: int
    model: str
    count: int
    gpu_memory_mib: int
    list_price: float


SPECS = [
    SpecCase("p3.2xlarge", 8, 62464, "Tesla V100-SXM2-16GB", 1, 16384, 3.06),
    SpecCase("p3.8xlarge", 32, 249856, "Tesla V100-SXM2-16GB", 4, 16384, 12.24),
    SpecCase("p3.16xlarge", 64, 499712, "Tesla V100-SXM2-16GB", 8, 16384, 24.48),
    SpecCase("p2.8xlarge", 32, 499712, "Tesla K80", 8, 12288, 7.2),
    SpecCase("g3s.xlarge", 4, 31232, "Tesla M60", 1, 8192, 0.75),
]


@pytest.mark.parametrize("case", SPECS, ids=lambda c: c.name)
def test_previous_family_specs(case: SpecCase) -> None:
    it = load_catalog().get(case.name)
    assert it.gpus is not None
    got = (it.vcpu, it.memory_mib, it.gpus.model, it.gpus.count, it.gpus.memory_mib, it.list_price_usd_per_hour)
    assert got == (case.vcpu, case.memory_mib, case.model, case.count, case.gpu_memory_mib, case.list_price)
    assert it.well_known_labels()["karpenter.k8s.aws/instance-gpu-name"] in ("v100", "k80", "m60")


@pytest.mark.parametrize("name", sorted(PREVIOUS))
def test_overhead_model_reproduces_the_pages_allocatable(name: str) -> None:
    it = load_catalog().get(name)
    computed = it.node_resources().allocatable
    for resource in ("cpu", "memory", "pods", "ephemeral-storage"):
        assert computed[resource] == PREVIOUS[name]["allocatable"][resource], (name, resource)


def test_a_user_price_offers_a_previous_type_again(tmp_path: Path) -> None:
    prices = tmp_path / "p3.yaml"
    prices.write_text("prices:\n  p3.2xlarge: {on-demand: 3.06}\n")
    it = load_catalog([prices]).get("p3.2xlarge")
    assert {(o.capacity_type, o.price) for o in it.offerings} == {("on-demand", 3.06)}
    assert len(it.offerings) == 5  # every default zone
    # a user catalog that prices something else leaves it unoffered
    other = tmp_path / "m7i.yaml"
    other.write_text("prices:\n  m7i.large: {spot: 0.04}\n")
    assert load_catalog([other]).get("p3.2xlarge").offerings == ()


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("p3.2xlarge", "no DRA device metadata for p3.2xlarge: Karpenter cannot launch it for DRA claims"),
        ("g7e.2xlarge", "no DRA device metadata for g7e.2xlarge: Karpenter cannot launch it for DRA claims"),
        ("p5.48xlarge", None),
        ("g4ad.xlarge", None),  # AMD: not a DRA driver Karpenter knows at all
        ("m7i.large", None),
    ],
)
def test_dra_note(name: str, note: str | None) -> None:
    assert load_catalog().get(name).dra_note == note


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        ("g6e.2xlarge", None),
        ("p5.48xlarge", None),
        ("m7i.large", None),
        ("g6f.large", "EKS Auto Mode does not support the g6f family"),
        ("g7.2xlarge", "EKS Auto Mode does not support the g7 family"),
        ("p6e-gb200.36xlarge", "EKS Auto Mode does not support the p6e-gb200 family"),
        ("t3.small", "EKS Auto Mode launches no small instances"),
        ("t3.micro", "EKS Auto Mode launches no micro instances"),
        ("r7g.medium", "EKS Auto Mode launches only instances with more than 1 vCPU"),
    ],
)
def test_auto_mode_supported_instances(name: str, refusal: str | None) -> None:
    assert auto_mode_refusal(load_catalog().get(name)) == refusal

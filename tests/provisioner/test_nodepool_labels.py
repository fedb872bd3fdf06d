"""NodePools in self-managed Karpenter's and EKS Auto Mode's label sets: which types they allow, what a key of the
other set (or a typo) does, which NodePools each provisioner manages, and why a NodePool allows nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.plan import launched, nodepool, pod, run_plan

from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import GenerateOptions, NodeGroup
from dratwin.provisioner.labels import AUTO_MODE, KARPENTER, KeyKind, LabelSet, foreign_key_hint
from dratwin.twin.plan import PlanError, PlanReport

Raw = dict[str, Any]


def req(key: str, operator: str, *values: str) -> Raw:
    return {"key": key, "operator": operator, "values": list(values)}


def family(*values: str, domain: str = "karpenter.k8s.aws") -> Raw:
    return req(f"{domain}/instance-family", "In", *values)


def families(report: PlanReport) -> set[str]:
    return {t.instance_type.family for p in report.pools for t in p.templates}


# ---- which types a NodePool allows ---------------------------------------------------------------------


@dataclass
class PoolCase:
    name: str
    requirements: list[Raw]
    auto_mode: bool
    check: Callable[[PlanReport], bool]
    note: str | None = None  # a phrase one of the plan's notes has


POOL_CASES = [
    PoolCase(
        "auto mode: eks.amazonaws.com/instance-family selects the families (EKS guide's GPU NodePool)",
        [req("karpenter.sh/capacity-type", "In", "on-demand"), req("kubernetes.io/arch", "In", "amd64"),
         family("g6e", "g6", domain="eks.amazonaws.com")],
        True,
        lambda r: families(r) == {"g6", "g6e"},
    ),
    PoolCase(
        "auto mode: category and cpu of the EKS guide's sample NodePool",
        [req("eks.amazonaws.com/instance-category", "In", "c", "m", "r"),
         req("eks.amazonaws.com/instance-cpu", "In", "4", "8", "16", "32")],
        True,
        lambda r: {t.instance_type.vcpu for p in r.pools for t in p.templates} == {4, 8, 16, 32}
        and {t.instance_type.family[0] for p in r.pools for t in p.templates} == {"c", "m", "r"},
    ),
    PoolCase(
        "auto mode: size and gpu-manufacturer; Auto Mode launches no g6f, g7 or small sizes",
        [req("eks.amazonaws.com/instance-gpu-manufacturer", "In", "nvidia")],
        True,
        lambda r: not families(r) & {"g6f", "gr6f", "g7", "p6e-gb200"} and {"g6", "p5"} <= families(r),
    ),
    PoolCase(
        "self-managed: the same gpu-manufacturer key of Karpenter's set",
        [req("karpenter.k8s.aws/instance-gpu-manufacturer", "In", "nvidia")],
        False,
        lambda r: {"g6f", "g7", "g6"} <= families(r) and "m7i" not in families(r),
    ),
    PoolCase(
        "auto mode: a Karpenter key is a custom label there: it narrows nothing, the nodes carry it",
        [family("g6e")],
        True,
        lambda r: len(families(r)) > 20
        and all(t.node.metadata.labels["karpenter.k8s.aws/instance-family"] == "g6e" for t in r.pools[0].templates),
        'requirement key "karpenter.k8s.aws/instance-family" is a label of self-managed Karpenter, not of EKS Auto '
        'Mode; EKS Auto Mode\'s is "eks.amazonaws.com/instance-family": EKS Auto Mode takes it as a custom label',
    ),
    PoolCase(
        "self-managed: an Auto Mode key narrows nothing either",
        [family("g6e", domain="eks.amazonaws.com")],
        False,
        lambda r: len(families(r)) > 20,
        "is a label of EKS Auto Mode, not of self-managed Karpenter",
    ),
    PoolCase(
        "a typo of a well-known key (node.kubernetes.io/instance-family) is a custom label with a hint",
        [req("node.kubernetes.io/instance-family", "In", "g5")],
        False,
        lambda r: len(families(r)) > 20,
        'is not a label self-managed Karpenter knows (typo of "karpenter.k8s.aws/instance-family"?)',
    ),
    PoolCase(
        "an ordinary custom label narrows nothing and gets no note",
        [req("example.com/team", "In", "ml")],
        False,
        lambda r: len(families(r)) > 20
        and r.pools[0].templates[0].node.metadata.labels["example.com/team"] == "ml"
        and not any("example.com/team" in n for n in r.notes),
    ),
    PoolCase(
        "region, tenancy and Gte/Lte requirements are understood",
        [req("topology.kubernetes.io/region", "In", "us-east-1"), req("karpenter.k8s.aws/instance-tenancy", "In",
         "default"), req("karpenter.k8s.aws/instance-cpu", "Gte", "96"), req("karpenter.k8s.aws/instance-cpu", "Lte",
         "96"), family("p4d", "p5")],
        False,
        lambda r: {t.instance_type.name for p in r.pools for t in p.templates} == {"p4d.24xlarge"},
    ),
    PoolCase(
        "a GPU requirement excludes the types without GPUs (DoesNotExist), NotIn keeps them",
        [req("karpenter.k8s.aws/instance-gpu-name", "NotIn", "t4"), family("m7i", "g4dn", "g5")],
        False,
        lambda r: families(r) == {"m7i", "g5"},
    ),
    PoolCase(
        "zone IDs are not modelled: the plan says it ignores them",
        [req("topology.k8s.aws/zone-id", "In", "use1-az1"), family("g5")],
        False,
        lambda r: families(r) == {"g5"},
        "the requirement topology.k8s.aws/zone-id In [use1-az1] is not modelled",
    ),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: c.name)
def test_nodepool_allows(case: PoolCase) -> None:
    report = run_plan(nodepool(requirements=case.requirements, auto_mode=case.auto_mode), pod("p"),
                      auto_mode=case.auto_mode)
    assert case.check(report)
    if case.note is not None:
        assert any(case.note in n for n in report.notes), report.notes


# ---- why a NodePool allows nothing -------------------------------------------------------------------------


@dataclass
class NothingCase:
    name: str
    requirements: list[Raw]
    expect: list[str]  # phrases of the error, in this order
    auto_mode: bool = False
    absent: list[str] = field(default_factory=list)  # phrases it must not have (the wrong culprit)


NOTHING_CASES = [
    NothingCase(
        "a family not in the catalog: the families it has, closest first",
        [family("p9")],
        ["no instance type of the catalog has karpenter.k8s.aws/instance-family p9; its values in the catalog, "
         "closest first: p2, p3, p5,"],
        absent=["spot", "region"],
    ),
    NothingCase(
        "a family EC2 no longer offers: the catalog's note",
        [family("p3")],
        ["the 3 types they allow have no offering (p3.2xlarge, p3.8xlarge, p3.16xlarge: not offered since 2026-06"],
        absent=["spot"],
    ),
    NothingCase(
        "a foreign key comes first, then the requirement no type meets",
        [family("g6e"), family("p9", domain="eks.amazonaws.com")],
        ['"karpenter.k8s.aws/instance-family" is a label of self-managed Karpenter, not of EKS Auto Mode; EKS Auto '
         'Mode\'s is "eks.amazonaws.com/instance-family", so it narrows nothing',
         "no instance type of the catalog has eks.amazonaws.com/instance-family p9"],
        auto_mode=True,
    ),
    NothingCase(
        "a number out of the catalog's range",
        [req("karpenter.k8s.aws/instance-gpu-count", "Gt", "16")],
        ["no instance type of the catalog meets karpenter.k8s.aws/instance-gpu-count Exists >=17 (the catalog's "
         "values run from 0 to 16)"],
    ),
    NothingCase(
        "requirements met one by one, never together",
        [family("g5"), req("karpenter.k8s.aws/instance-gpu-name", "In", "h100")],
        ["no instance type of the catalog meets all of karpenter.k8s.aws/instance-family In [g5], "
         "karpenter.k8s.aws/instance-gpu-name In [h100] together"],
    ),
    NothingCase(
        "two requirements on one key that exclude each other",
        [family("g5"), family("g6")],
        ["its requirements on karpenter.k8s.aws/instance-family allow no value together"],
    ),
    NothingCase(
        "EKS Auto Mode's supported types",
        [req("node.kubernetes.io/instance-type", "In", "t3.small", "g6f.large")],
        ["EKS Auto Mode launches none of the 2 types they allow (g6f.large: EKS Auto Mode does not support the g6f "
         "family; t3.small: EKS Auto Mode launches no small instances)"],
        auto_mode=True,
    ),
    NothingCase(
        "spot, only when the types exist and only spot is wanted",
        [req("karpenter.sh/capacity-type", "In", "spot"), family("g5")],
        ["karpenter.sh/capacity-type In [spot] is not offered: the catalog sells these types as on-demand only",
         "give your prices with --catalog"],
        absent=["no offering", "zone"],
    ),
    NothingCase(
        "a zone of another region",
        [req("topology.kubernetes.io/zone", "In", "us-west-2a"), family("g5")],
        ["zone us-west-2a is not a zone of the catalog (us-east-1: us-east-1a,"],
        absent=["spot"],
    ),
]


@pytest.mark.parametrize("case", NOTHING_CASES, ids=lambda c: c.name)
def test_why_a_nodepool_allows_nothing(case: NothingCase) -> None:
    with pytest.raises(PlanError) as info:
        run_plan(nodepool(requirements=case.requirements, auto_mode=case.auto_mode), pod("p"),
                 auto_mode=case.auto_mode)
    message = str(info.value)
    assert message.startswith("NodePool gpu: its requirements allow no instance type of the catalog")
    positions = [message.find(phrase) for phrase in case.expect]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), message
    for phrase in case.absent:
        assert phrase not in message, message


# ---- managed NodePools, pods, the labels cluster generate writes ---------------------------------------------


@pytest.mark.parametrize("auto_mode", [False, True], ids=["karpenter-skips-auto-mode", "auto-mode-skips-karpenter"])
def test_each_provisioner_manages_only_nodepools_of_its_node_class(auto_mode: bool) -> None:
    theirs = nodepool("theirs", requirements=[family("g5")], auto_mode=not auto_mode)
    ours = nodepool("ours", requirements=[family("g6", domain="eks.amazonaws.com" if auto_mode else
                                                 "karpenter.k8s.aws")], auto_mode=auto_mode)
    report = run_plan(theirs, ours, pod("p", gpus=1), auto_mode=auto_mode)
    assert [p.name for p in report.pools] == ["ours"]
    assert [t for t, _ in launched(report)] == ["g6.xlarge"]
    owner = "without --auto-mode" if auto_mode else "with --auto-mode"
    assert any(n.startswith("NodePool theirs is not managed by") and owner in n for n in report.notes)
    with pytest.raises(PlanError, match=f"NodePool theirs is not managed by .*plan it {owner}"):
        run_plan(theirs, pod("p"), auto_mode=auto_mode)


def test_auto_mode_launches_what_the_eks_guide_shows() -> None:
    """The EKS guide's accelerated workload: 30Gi and 3.5 CPUs on an L40S: a g6e.2xlarge, not a g6e.xlarge."""
    gpu_pool = nodepool(requirements=[family("g6e", "g6", domain="eks.amazonaws.com")], auto_mode=True)
    smi = pod("nvidia-smi", gpus=1, cpu="3500m",
              node_selector={"eks.amazonaws.com/instance-gpu-name": "l40s", "eks.amazonaws.com/compute-type": "auto"})
    smi["spec"]["containers"][0]["resources"]["requests"]["memory"] = "30Gi"
    report = run_plan(gpu_pool, smi, auto_mode=True)
    assert launched(report) == [("g6e.2xlarge", ["ml/nvidia-smi"])]


@pytest.mark.parametrize(
    ("auto_mode", "key", "meant"),
    [
        (False, "eks.amazonaws.com/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-name"),
        (True, "karpenter.k8s.aws/instance-gpu-name", "eks.amazonaws.com/instance-gpu-name"),
    ],
    ids=["auto-mode-key-in-karpenter", "karpenter-key-in-auto-mode"],
)
def test_a_pod_that_selects_the_other_label_set_gets_karpenters_reason(auto_mode: bool, key: str, meant: str) -> None:
    report = run_plan(nodepool(auto_mode=auto_mode), pod("p", gpus=1, node_selector={key: "l40s"}), auto_mode=auto_mode)
    assert launched(report) == []
    reasons = {r.reason for r in report.plan.unplaced[0].reasons["gpu"]}
    assert reasons == {f'incompatible requirements, label "{key}" does not have known values (typo of "{meant}"?)'}


def test_every_instance_label_cluster_generate_writes_for_auto_mode_selects_types() -> None:
    node = generate(GenerateOptions(groups=(NodeGroup("g6e.2xlarge", 1),), provisioner="auto-mode")).nodes[0]
    eks = [k for k in node["metadata"]["labels"] if k.startswith("eks.amazonaws.com/instance-")]
    assert len(eks) >= 12
    assert all(AUTO_MODE.key_kind(k) is KeyKind.INSTANCE for k in eks)
    assert all(KARPENTER.key_kind(k) is KeyKind.CUSTOM for k in eks)
    pool = nodepool(requirements=[req(k, "In", node["metadata"]["labels"][k]) for k in eks], auto_mode=True)
    report = run_plan(pool, pod("p", gpus=1), auto_mode=True)
    assert {t.instance_type.name for t in report.pools[0].templates} == {"g6e.2xlarge"}
    assert not report.notes


@pytest.mark.parametrize(
    ("key", "labels", "hint"),
    [
        ("example.com/team", KARPENTER, None),
        ("eks.amazonaws.com/compute-type", KARPENTER,
         "is a label of EKS Auto Mode, not of self-managed Karpenter; self-managed Karpenter has no such label"),
        ("karpenter.k8s.aws/instance-accelerator-name", AUTO_MODE,
         "is a label of self-managed Karpenter, not of EKS Auto Mode; EKS Auto Mode has no such label"),
        ("eks.amazonaws.com/instance-familly", AUTO_MODE,
         'is not a label EKS Auto Mode knows (typo of "eks.amazonaws.com/instance-family"?)'),
    ],
)
def test_foreign_key_hint(key: str, labels: LabelSet, hint: str | None) -> None:
    assert labels.key_kind(key) is KeyKind.CUSTOM
    assert foreign_key_hint(key, labels) == hint

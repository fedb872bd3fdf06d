"""Static NodePools (``spec.replicas``): a fixed node count, never launched for pending pods."""

from __future__ import annotations

from typing import Any

import yaml
from tests.builders.plan import CLASSES, launched, nodepool, pod, run_plan, template_from_shared

from dratwin.allocator import Features
from dratwin.api.loader import load_paths, load_text
from dratwin.provisioner.solver import STATIC_POOL
from dratwin.twin.plan import PlanOptions, plan
from dratwin.twin.plan_report import render_table

G6 = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g6.2xlarge"]}]


def static_pool(replicas: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    raw = nodepool("static", weight=None, requirements=G6, labels=labels)
    raw["spec"]["replicas"] = replicas
    return raw


def test_static_replicas_launch_the_cheapest_allowed_type_with_nothing_pending() -> None:
    report = run_plan(static_pool(2))
    assert launched(report) == [("g6.xlarge", []), ("g6.xlarge", [])]
    assert report.plan.cost_per_hour == 2 * report.plan.claims[0].offering().price  # type: ignore[union-attr]


def test_pending_pods_land_on_static_nodes_but_never_trigger_them() -> None:
    report = run_plan(
        static_pool(1),
        template_from_shared("single-gpu"),
        pod("fits", template="single-gpu", cpu="1"),
        pod("too-big", cpu="64"),
    )
    assert launched(report) == [("g6.xlarge", ["ml/fits"])]
    (unplaced,) = report.plan.unplaced
    assert unplaced.pod == "ml/too-big"
    assert unplaced.reasons == {"static": [unplaced.reasons["static"][0]]}
    assert unplaced.reasons["static"][0].reason == STATIC_POOL
    assert f"NodePool static: {STATIC_POOL}" in render_table(report)


def test_dynamic_pool_serves_what_the_static_nodes_cannot() -> None:
    report = run_plan(static_pool(1), nodepool("dynamic", weight=None), pod("big", cpu="20", gpus=1))
    pools = sorted((c.pool.name, [p.info.key for p in c.pods]) for c in report.plan.claims)
    assert pools == [("dynamic", ["ml/big"]), ("static", [])]


def test_auto_mode_static_nodes_need_the_dra_label_for_claims() -> None:
    without = run_plan(
        static_pool(1), template_from_shared("single-gpu"), pod("p", template="single-gpu"), auto_mode=True
    )
    assert launched(without) == [("g6.xlarge", [])]
    role = without.plan.claims[0].chosen().node.metadata.labels["eks.amazonaws.com/device-manager-nvidia"]
    assert role == "device-plugin"
    assert any("eks.amazonaws.com/device-manager-nvidia: dra" in n for n in without.notes)

    labelled = static_pool(1, labels={"eks.amazonaws.com/device-manager-nvidia": "dra"})
    with_label = run_plan(labelled, template_from_shared("single-gpu"), pod("p", template="single-gpu"), auto_mode=True)
    assert launched(with_label) == [("g6.xlarge", ["ml/p"])]
    assert with_label.plan.unplaced == []


def test_existing_nodes_of_the_pool_count_towards_its_replicas() -> None:
    existing = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "static-node-1",
            "labels": {"karpenter.sh/nodepool": "static", "node.kubernetes.io/instance-type": "g6.xlarge"},
        },
        "status": {"allocatable": {"cpu": "3", "memory": "14Gi", "pods": "58"}},
    }
    report = run_plan(static_pool(3), existing)
    assert launched(report) == [("g6.xlarge", []), ("g6.xlarge", [])]


def test_optimal_comparison_leaves_static_nodes_aside() -> None:

    objects = [static_pool(1), nodepool("dynamic", weight=None), pod("small", cpu="1"), pod("big", cpu="20", gpus=1)]
    loaded = load_paths([str(CLASSES)]) + load_text(yaml.safe_dump_all(objects))
    report = plan(loaded, Features(), PlanOptions(optimal_time_limit=10))
    assert report.optimal is not None
    dynamic = [c for c in report.plan.claims if c.pool.name == "dynamic"]
    assert report.optimal.karpenter_cost == dynamic[0].offering().price  # type: ignore[union-attr]
    assert sum(report.optimal.fleet.nodes.values()) == 1  # only "big": "small" is on the static node

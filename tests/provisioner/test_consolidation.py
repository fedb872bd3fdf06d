"""Karpenter's consolidation on small clusters built with the twin (load_text -> load_cluster).

Every cluster is a NodePool or two, nodes as ``cluster generate`` makes them (Karpenter's labels, the
DRA drivers' ResourceSlices), pods bound with ``spec.nodeName`` and, for DRA pods, claims whose
``status.allocation`` holds devices of their node. Prices are the catalog's (us-east-1 on-demand).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from dratwin.allocator.features import Features
from dratwin.api.loader import load_text
from dratwin.catalog import load_catalog
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import GenerateOptions, MigRequest, NodeGroup
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.provisioner.budgets import Budget, Cron, NodePoolPolicy, go_duration
from dratwin.provisioner.consolidation import (
    DELETE,
    DRIFT,
    EMPTINESS,
    MULTI_NODE,
    REPLACE,
    SINGLE_NODE,
    ConsolidationPlan,
    consolidate,
)
from dratwin.twin.plan import PlanOptions, read_pool

Raw = dict[str, Any]

CATALOG = load_catalog()
NOW = datetime(2026, 9, 21, 12, 0, tzinfo=UTC)


def device_class(name: str, device_type: str) -> Raw:
    """The NVIDIA DRA driver chart's classes: the driver, then the device's type (gpu or mig)."""
    selector = f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{device_type}'"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": selector}}]},
    }


GPU_CLASS = device_class("gpu.nvidia.com", "gpu")
MIG_CLASS = device_class("mig.nvidia.com", "mig")
GENERAL = ("m5.large", "m5.xlarge", "m5.2xlarge")
GPUS = ("g6e.xlarge", "g6e.12xlarge", "p5.48xlarge", "p4d.24xlarge")


# ---- builders --------------------------------------------------------------------------------------


def nodepool(
    name: str,
    types: Sequence[str],
    *,
    policy: str = "WhenEmptyOrUnderutilized",
    after: str = "0s",
    budgets: list[Raw] | None = None,
    capacity_types: Sequence[str] = ("on-demand",),
) -> Raw:
    disruption: Raw = {"consolidationPolicy": policy, "consolidateAfter": after}
    if budgets is not None:
        disruption["budgets"] = budgets
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity_types)},
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)},
                    ],
                }
            },
            "disruption": disruption,
        },
    }


def nodes(pool: str, *types: str, mig: str | None = None, annotations: Mapping[str, str] | None = None) -> list[Raw]:
    """Nodes ``<pool>-1``, ``<pool>-2``, ... of these types (and their DRA ResourceSlices)."""
    generated = generate(
        GenerateOptions(
            groups=tuple(NodeGroup(t, 1) for t in types),
            nodepool=pool,
            name_prefix=pool,
            mig=(MigRequest(mig, None),) if mig else (),
        )
    )
    for node in generated.nodes:
        node["metadata"]["annotations"] = dict(annotations or {})
    return [*generated.nodes, *generated.slices]


def pod(
    name: str,
    node: str,
    *,
    cpu: str = "500m",
    memory: str = "1Gi",
    claim: str | None = None,
    annotations: Mapping[str, str] | None = None,
    owner: tuple[str, str] | None = None,
) -> Raw:
    meta: Raw = {"name": name, "namespace": "ml", "uid": f"uid-{name}", "annotations": dict(annotations or {})}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": "owner", "uid": "uid-owner"}]
    spec: Raw = {
        "nodeName": node,
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if claim is not None:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


def claim(name: str, node: str, device: str, user: str, *, device_class: str = "gpu.nvidia.com") -> Raw:
    """A claim for one device of ``device_class``, allocated on ``node`` and reserved for pod ``user``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": device}]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": user, "uid": f"uid-{user}"}],
        },
    }


def gpu_pod(name: str, node: str, device: str = "gpu-0", *, device_class: str = "gpu.nvidia.com") -> list[Raw]:
    return [
        pod(name, node, cpu="1", memory="4Gi", claim=f"{name}-gpu"),
        claim(f"{name}-gpu", node, device, name, device_class=device_class),
    ]


def load(objects: Sequence[Raw]) -> LoadedCluster:
    text = yaml.safe_dump_all([GPU_CLASS, MIG_CLASS, *objects], sort_keys=False)
    loaded = load_cluster(load_text(text), Features(), random.Random(0))
    assert not loaded.rejections and not loaded.blocked
    assert all(o.get("spec", {}).get("nodeName") for o in objects if o["kind"] == "Pod") == (not loaded.pending)
    return loaded


def run(objects: Sequence[Raw], *, now: datetime | None = NOW) -> ConsolidationPlan:
    loaded = load(objects)
    raws = [o for o in objects if o.get("kind") == "NodePool"]
    pools = [read_pool(raw, CATALOG, loaded, PlanOptions()) for raw in raws]
    state = loaded.state
    return consolidate(state, pools, raws, state.features, state.classes, None, now)


def price(instance_type: str) -> float:
    found = next(t for t in CATALOG if t.name == instance_type).price_usd_per_hour
    assert found is not None
    return found


# ---- the table ---------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    objects: Callable[[], list[Raw]]
    actions: list[tuple[str, str, tuple[str, ...], str | None]]  # (method, decision, nodes, replacement type)
    blocked: dict[str, str] = field(default_factory=dict)  # node -> a phrase of why it stays
    now: datetime | None = NOW


ALL = [{"nodes": "100%"}]

CASES = [
    Case(
        "an empty node is deleted (a DaemonSet pod does not count)",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("ds", "web-1", owner=("apps/v1", "DaemonSet")),
            pod("app", "web-2", cpu="3"),
        ],
        [(EMPTINESS, DELETE, ("web-1",), None)],
        {"web-2": "can't replace with a cheaper node"},
    ),
    Case(
        "WhenEmpty deletes empty nodes only: the busy node is not replaced by a cheaper one",
        lambda: [
            nodepool("web", GENERAL, policy="WhenEmpty", budgets=ALL),
            *nodes("web", "m5.2xlarge", "m5.xlarge"),
            pod("small", "web-1", cpu="250m"),
        ],
        [(EMPTINESS, DELETE, ("web-2",), None)],
        {"web-1": "consolidation policy WhenEmpty, but node is not empty"},
    ),
    Case(
        "the same busy node under WhenEmptyOrUnderutilized is replaced by a cheaper one",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            pod("small", "web-1", cpu="250m"),
        ],
        [(SINGLE_NODE, REPLACE, ("web-1",), "m5.large")],
    ),
    Case(
        "a node whose pods fit on another node is deleted (default budget: 10% of 2 nodes = 1)",
        lambda: [
            nodepool("web", GENERAL),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="500m"),
            pod("b", "web-2", cpu="2"),
        ],
        [(SINGLE_NODE, DELETE, ("web-1",), None)],
        {"web-2": "allow no more Underutilized disruptions"},
    ),
    Case(
        "pods that fit nowhere else keep their node",
        lambda: [
            nodepool("web", ("m5.xlarge",), budgets=ALL),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="3"),
            pod("b", "web-2", cpu="3"),
        ],
        [],
        {"web-1": "can't replace with a cheaper node", "web-2": "can't replace with a cheaper node"},
    ),
    Case(
        "a GPU node is replaced by a cheaper type whose devices the claims can have",
        lambda: [
            nodepool("gpu", GPUS, budgets=ALL),
            *nodes("gpu", "p5.48xlarge"),
            *gpu_pod("train-0", "gpu-1", "gpu-0"),
            *gpu_pod("train-1", "gpu-1", "gpu-3"),
        ],
        [(SINGLE_NODE, REPLACE, ("gpu-1",), "g6e.12xlarge")],
    ),
    Case(
        "a DRA pod whose claim can be allocated on no other node nor on any type keeps its node (MIG)",
        lambda: [
            nodepool("gpu", GPUS, budgets=ALL),
            *nodes("gpu", "p4d.24xlarge", mig="1g.5gb"),
            *gpu_pod("infer", "gpu-1", "gpu-0-mig-1g5gb-19-0", device_class="mig.nvidia.com"),
        ],
        [],
        {"gpu-1": "pod ml/infer fits on no other node and on no new node"},
    ),
    Case(
        "the same node with a whole-GPU claim is replaced",
        lambda: [
            nodepool("gpu", GPUS, budgets=ALL),
            *nodes("gpu", "p4d.24xlarge"),
            *gpu_pod("infer", "gpu-1", "gpu-0"),
        ],
        [(SINGLE_NODE, REPLACE, ("gpu-1",), "g6e.xlarge")],
    ),
    Case(
        "a DRA pod moves to a GPU left free on another node; the device it held is freed",
        lambda: [
            nodepool("gpu", ("g6e.12xlarge",), budgets=ALL),
            *nodes("gpu", "g6e.12xlarge", "g6e.12xlarge"),
            *gpu_pod("a", "gpu-1", "gpu-0"),
            *gpu_pod("b", "gpu-2", "gpu-0"),
            *gpu_pod("c", "gpu-2", "gpu-1"),
        ],
        [(SINGLE_NODE, DELETE, ("gpu-1",), None)],
        {"gpu-2": "can't replace with a cheaper node"},
    ),
    Case(
        "a DRA pod does not move to a node whose GPUs are all taken",
        lambda: [
            nodepool("gpu", ("g6e.xlarge",), budgets=ALL),
            *nodes("gpu", "g6e.xlarge", "g6e.xlarge"),
            *gpu_pod("a", "gpu-1"),
            *gpu_pod("b", "gpu-2"),
        ],
        [],
        {"gpu-1": "can't replace with a cheaper node", "gpu-2": "can't replace with a cheaper node"},
    ),
    Case(
        "do-not-disrupt on a pod keeps its node",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            pod("x", "web-1", cpu="250m", annotations={"karpenter.sh/do-not-disrupt": "true"}),
        ],
        [],
        {"web-1": "pod ml/x has karpenter.sh/do-not-disrupt"},
    ),
    Case(
        "do-not-disrupt for a duration that has passed no longer protects",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            {
                **pod("x", "web-1", cpu="250m", annotations={"karpenter.sh/do-not-disrupt": "1h"}),
                "status": {"phase": "Running", "startTime": "2026-09-21T10:00:00Z"},
            },
        ],
        [(SINGLE_NODE, REPLACE, ("web-1",), "m5.large")],
    ),
    Case(
        "do-not-disrupt on the node keeps it, even empty",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.2xlarge", annotations={"karpenter.sh/do-not-disrupt": "true"}),
        ],
        [],
        {"web-1": "do-not-disrupt"},
    ),
    Case(
        'budget nodes: "0" blocks every disruption',
        lambda: [
            nodepool("web", GENERAL, budgets=[{"nodes": "0"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1"),
            pod("b", "web-2"),
            pod("c", "web-3"),
        ],
        [],
        {n: 'budget nodes: "0": 0 of 3 nodes' for n in ("web-1", "web-2", "web-3")},
    ),
    Case(
        "budget nodes: 1 allows one node",
        lambda: [
            nodepool("web", GENERAL, budgets=[{"nodes": "1"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1"),
            pod("b", "web-2"),
            pod("c", "web-3"),
        ],
        [(SINGLE_NODE, DELETE, ("web-1",), None)],
        {"web-2": "1 already disrupting", "web-3": "1 already disrupting"},
    ),
    Case(
        "a budget for other reasons does not limit consolidation",
        lambda: [
            nodepool("web", GENERAL, budgets=[{"nodes": "0", "reasons": ["Drifted", "Empty"]}, {"nodes": "100%"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="1"),
            pod("b", "web-2", cpu="1"),
            pod("c", "web-3", cpu="1"),
        ],
        [(MULTI_NODE, DELETE, ("web-1", "web-2"), None)],
    ),
    Case(
        "a scheduled budget blocks only inside its window",
        lambda: [
            nodepool("web", GENERAL, budgets=[{"nodes": "0", "schedule": "0 9 * * 1-5", "duration": "8h"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1"),
            pod("b", "web-2"),
        ],
        [],
        {"web-1": 'schedule "0 9 * * 1-5" for 8h', "web-2": 'schedule "0 9 * * 1-5" for 8h'},
        now=datetime(2026, 9, 21, 12, 0, tzinfo=UTC),  # a Monday, 12:00 UTC
    ),
    Case(
        "... and not outside it",
        lambda: [
            nodepool("web", GENERAL, budgets=[{"nodes": "0", "schedule": "0 9 * * 1-5", "duration": "8h"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1"),
            pod("b", "web-2"),
        ],
        [(MULTI_NODE, REPLACE, ("web-1", "web-2"), "m5.large")],
        now=datetime(2026, 9, 20, 12, 0, tzinfo=UTC),  # a Sunday
    ),
    Case(
        "multi-node: two nodes deleted in one command, where single-node would take two",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="1"),
            pod("b", "web-2", cpu="1"),
            pod("c", "web-3", cpu="1"),
        ],
        [(MULTI_NODE, DELETE, ("web-1", "web-2"), None)],
        {"web-3": "can't replace with a cheaper node"},
    ),
    Case(
        "multi-node replaces several nodes with one cheaper node",
        lambda: [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("web", "m5.2xlarge", "m5.2xlarge"),
            pod("a", "web-1", cpu="500m"),
            pod("b", "web-2", cpu="500m"),
        ],
        [(MULTI_NODE, REPLACE, ("web-1", "web-2"), "m5.large")],
    ),
    Case(
        "consolidateAfter: a node with a recent pod event waits",
        lambda: [
            nodepool("web", GENERAL, after="1h", budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            {
                **pod("new", "web-1", cpu="250m"),
                "status": {"phase": "Running", "startTime": "2026-09-21T11:30:00Z"},
            },
        ],
        [],
        {"web-1": "consolidateAfter 1h has not passed since its last pod event"},
    ),
    Case(
        "consolidateAfter: Never disables consolidation",
        lambda: [
            nodepool("web", GENERAL, after="Never", budgets=ALL),
            *nodes("web", "m5.2xlarge", "m5.xlarge"),
            pod("small", "web-1", cpu="250m"),
        ],
        [],
        {"web-1": "consolidation disabled", "web-2": "consolidation disabled"},
    ),
]


def annotated(raw: Raw, annotations: Mapping[str, str]) -> Raw:
    raw["metadata"]["annotations"] = dict(annotations)
    return raw


HASH = {"karpenter.sh/nodepool-hash": "111", "karpenter.sh/nodepool-hash-version": "v3"}
DRIFT_CASES = [
    Case(
        "a node whose type the NodePool no longer allows is drifted and replaced, priced from the catalog",
        lambda: [
            nodepool("web", ("m5.large", "m5.xlarge"), budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            pod("small", "web-1", cpu="250m"),
        ],
        [(DRIFT, REPLACE, ("web-1",), "m5.large")],
    ),
    Case(
        "drift replaces even with a dearer node (it is not a price decision)",
        lambda: [
            nodepool("web", ("m5.2xlarge",), budgets=ALL),
            *nodes("web", "m5.xlarge"),
            pod("app", "web-1", cpu="3"),
        ],
        [(DRIFT, REPLACE, ("web-1",), "m5.2xlarge")],
    ),
    Case(
        "an empty drifted node is deleted by drift even when consolidation is off",
        lambda: [nodepool("web", ("m5.large",), after="Never", budgets=ALL), *nodes("web", "m5.2xlarge")],
        [(DRIFT, DELETE, ("web-1",), None)],
    ),
    Case(
        "the Drifted budget holds drift back; consolidation still replaces the node with a cheaper one",
        lambda: [
            nodepool("web", ("m5.large", "m5.xlarge"),
                     budgets=[{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "100%"}]),
            *nodes("web", "m5.2xlarge"),
            pod("small", "web-1", cpu="250m"),
        ],
        [(SINGLE_NODE, REPLACE, ("web-1",), "m5.large")],
    ),
    Case(
        "the default budget (10% of 2 nodes = 1) takes one drifted node per round",
        lambda: [
            nodepool("web", ("m5.large",), after="Never"),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="250m"),
            pod("b", "web-2", cpu="250m"),
        ],
        [(DRIFT, DELETE, ("web-1",), None)],  # its pod fits on web-2, drifted or not
        {"web-2": "drifted (RequirementsDrifted), but the disruption budgets of NodePool web allow no more Drifted"},
    ),
    Case(
        "requirements widened to still hold the node's type: not drifted",
        lambda: [
            nodepool("web", ("m5.xlarge", "m5.2xlarge"), after="Never", budgets=ALL),
            *nodes("web", "m5.xlarge"),
            pod("a", "web-1", cpu="250m"),
        ],
        [],
        {"web-1": "consolidation disabled"},
    ),
    Case(
        "a NodePool whose template hash changed (same hash version): NodePoolDrifted",
        lambda: [
            annotated(nodepool("web", GENERAL, after="Never", budgets=ALL),
                      {**HASH, "karpenter.sh/nodepool-hash": "2"}),
            *nodes("web", "m5.xlarge", annotations=HASH),
            pod("a", "web-1", cpu="250m"),
        ],
        [(DRIFT, REPLACE, ("web-1",), "m5.large")],
    ),
    Case(
        "a different hash version is not compared",
        lambda: [
            annotated(nodepool("web", GENERAL, after="Never", budgets=ALL),
                      {"karpenter.sh/nodepool-hash": "2", "karpenter.sh/nodepool-hash-version": "v4"}),
            *nodes("web", "m5.xlarge", annotations=HASH),
            pod("a", "web-1", cpu="250m"),
        ],
        [],
    ),
    Case(
        "do-not-disrupt keeps a drifted node",
        lambda: [
            nodepool("web", ("m5.large",), budgets=ALL),
            *nodes("web", "m5.2xlarge"),
            pod("x", "web-1", cpu="250m", annotations={"karpenter.sh/do-not-disrupt": "true"}),
        ],
        [],
        {"web-1": "pod ml/x has karpenter.sh/do-not-disrupt"},
    ),
]
CASES += DRIFT_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_consolidation(case: Case) -> None:
    plan = run(case.objects(), now=case.now)
    got = [
        (a.method, a.decision, tuple(n.name for n in a.nodes), a.replacement.instance_type if a.replacement else None)
        for a in plan.actions
    ]
    assert got == case.actions, plan.lines()
    blocked = dict(plan.blocked)
    for node, phrase in case.blocked.items():
        assert phrase in blocked.get(node, ""), plan.lines()
    acted = {n.name for a in plan.actions for n in a.nodes}
    assert not acted & blocked.keys()


# ---- sentences, savings, destinations ------------------------------------------------------------------


def test_replace_sentence_names_both_types_and_the_savings() -> None:
    plan = run(
        [
            nodepool("gpu", GPUS, budgets=ALL),
            *nodes("gpu", "p5.48xlarge"),
            *gpu_pod("train-0", "gpu-1", "gpu-0"),
            *gpu_pod("train-1", "gpu-1", "gpu-3"),
        ]
    )
    (action,) = plan.actions
    saved = price("p5.48xlarge") - price("g6e.12xlarge")
    assert action.sentence == (
        f"replace gpu-1 (p5.48xlarge, ${price('p5.48xlarge'):.2f}/h) with g6e.12xlarge "
        f"(${price('g6e.12xlarge'):.2f}/h): its 2 pods fit; saves ${saved:.2f}/h"
    )
    assert action.reason == "Underutilized"
    assert action.savings_per_hour == pytest.approx(saved)
    assert plan.savings_per_hour == pytest.approx(saved)
    assert action.destinations == {"ml/train-0": "new g6e.12xlarge", "ml/train-1": "new g6e.12xlarge"}
    assert action.replacement is not None
    assert all(price(t) < price("p5.48xlarge") for t in action.replacement.options)


def test_delete_sentence_and_keep_lines() -> None:
    plan = run(
        [
            nodepool("web", GENERAL),
            *nodes("web", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-1", cpu="500m"),
            pod("b", "web-2", cpu="2"),
        ]
    )
    assert plan.lines()[0] == "delete web-1 (m5.xlarge, $0.192/h): its 1 pod fits on web-2; saves $0.192/h"
    assert plan.lines()[1].startswith("keep web-2: the disruption budgets of NodePool web allow no more")
    assert plan.actions[0].destinations == {"ml/a": "web-2"}


def test_empty_nodes_go_before_consolidation_and_count_against_the_budget() -> None:
    plan = run(
        [
            nodepool("web", GENERAL, budgets=[{"nodes": "1"}]),
            *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
            pod("a", "web-2", cpu="500m"),
            pod("b", "web-3", cpu="500m"),
        ]
    )
    assert [(a.method, a.reason, [n.name for n in a.nodes]) for a in plan.actions] == [(EMPTINESS, "Empty", ["web-1"])]
    assert "1 already disrupting" in dict(plan.blocked)["web-2"]


def test_budget_per_reason_empty_blocked_underutilized_allowed() -> None:
    plan = run(
        [
            nodepool("web", GENERAL, budgets=[{"nodes": "0", "reasons": ["Empty"]}, {"nodes": "100%"}]),
            *nodes("web", "m5.large", "m5.2xlarge"),
            pod("a", "web-2", cpu="2500m"),  # too big for web-1: it needs a new m5.xlarge
        ]
    )
    assert [
        (a.method, a.reason, a.nodes[0].name, a.replacement and a.replacement.instance_type) for a in plan.actions
    ] == [(SINGLE_NODE, "Underutilized", "web-2", "m5.xlarge")]
    blocked = dict(plan.blocked)
    assert "empty, but the disruption budgets of NodePool web allow no more Empty" in blocked["web-1"]


def test_moved_pods_make_their_destination_wait_for_consolidate_after() -> None:
    """After web-1's pod moves onto web-2, web-2 has a pod event "now": with consolidateAfter it is no
    longer a candidate nor a destination in this plan."""
    objects = [
        nodepool("web", ("m5.xlarge",), after="10m", budgets=ALL),
        *nodes("web", "m5.xlarge", "m5.xlarge", "m5.xlarge"),
        pod("a", "web-1", cpu="500m"),
        pod("b", "web-2", cpu="500m"),
        pod("c", "web-3", cpu="500m"),
    ]
    plan = run(objects, now=None)
    assert [tuple(n.name for n in a.nodes) for a in plan.actions] == [("web-1", "web-2")]
    assert "pods moved onto it" in dict(plan.blocked)["web-3"]


def test_pending_pods_take_their_share_of_the_room() -> None:
    """Karpenter simulates the pending pods too (largest first): here the pending pod takes the room on
    web-2 that web-1's pod would have used, so web-1 is replaced instead of deleted."""
    objects = [
        nodepool("web", GENERAL),
        *nodes("web", "m5.xlarge", "m5.xlarge"),
        pod("a", "web-1", cpu="500m"),
        pod("b", "web-2", cpu="2"),
    ]
    assert [a.decision for a in run(objects).actions] == [DELETE]
    pending = pod("p", "", cpu="1500m")
    pending["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    loaded = load([*objects, pending])
    pools = [read_pool(objects[0], CATALOG, loaded, PlanOptions())]
    plan = consolidate(loaded.state, pools, [objects[0]], loaded.state.features, loaded.state.classes, None, NOW)
    assert [(a.decision, a.replacement and a.replacement.instance_type) for a in plan.actions] == [
        (REPLACE, "m5.large")
    ]
    assert plan.actions[0].destinations == {"ml/a": "new m5.large"}
    # the pending pod was placed in the simulation only: the input still has it pending, on no node
    record = loaded.state.pods["ml/p"]
    assert not record.pod.spec.node_name and not record.raw["spec"].get("nodeName")
    assert all("ml/p" not in [p.key for p in info.pods] for info in loaded.state.nodes.values())


def test_uninitialized_and_deleting_nodes_are_no_candidates() -> None:
    objects = [nodepool("web", GENERAL, budgets=ALL), *nodes("web", "m5.xlarge", "m5.xlarge")]
    objects[1]["metadata"]["labels"]["karpenter.sh/initialized"] = "false"
    objects[2]["spec"]["taints"] = [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]
    plan = run(objects)
    assert plan.actions == []
    assert dict(plan.blocked) == {
        "web-1": "node isn't initialized",
        "web-2": "node is deleting or marked for deletion",
    }


@pytest.mark.parametrize(
    ("gate", "nodes_needed", "expected"),
    [
        (False, 1, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"),
        (True, 1, "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate"),
        (True, 2, ""),  # multi-node spot-to-spot needs no 15 options
    ],
)
def test_spot_nodes_are_replaced_spot_to_spot_only_behind_the_gate(
    gate: bool, nodes_needed: int, expected: str, tmp_path: Path
) -> None:
    objects = [
        nodepool("web", GENERAL, budgets=ALL, capacity_types=("on-demand", "spot")),
        *nodes("web", *["m5.2xlarge"] * nodes_needed),
        *[pod(f"p{i}", f"web-{i}", cpu="250m") for i in range(1, nodes_needed + 1)],
    ]
    prices = tmp_path / "spot.yaml"  # the packaged catalog has on-demand prices only: spot at 30%
    prices.write_text(yaml.safe_dump({"prices": {t: {"spot": round(price(t) * 0.3, 4)} for t in GENERAL}}))
    catalog = load_catalog([prices])
    loaded = load(objects)
    pool = read_pool(objects[0], catalog, loaded, PlanOptions())
    for name in (f"web-{i}" for i in range(1, nodes_needed + 1)):
        loaded.state.nodes[name].node.metadata.labels["karpenter.sh/capacity-type"] = "spot"
    state = loaded.state
    plan = consolidate(state, [pool], [objects[0]], state.features, state.classes, None, NOW, spot_to_spot=gate,
                       catalog=catalog)
    if expected:
        assert plan.actions == []
        assert all(expected in reason for _, reason in plan.blocked), plan.lines()
    else:
        (action,) = plan.actions
        assert (action.method, action.decision, action.replacement and action.replacement.instance_type) == (
            MULTI_NODE,
            REPLACE,
            "m5.large",
        )
        assert action.savings_per_hour == pytest.approx(
            2 * 0.3 * price("m5.2xlarge") - 0.3 * price("m5.large"), abs=1e-3
        )


def test_the_input_cluster_is_left_unchanged() -> None:
    objects = [
        nodepool("gpu", GPUS, budgets=ALL),
        *nodes("gpu", "p5.48xlarge"),
        *gpu_pod("train-0", "gpu-1", "gpu-0"),
    ]
    loaded = load(objects)
    state = loaded.state
    before = (
        sorted(state.nodes),
        {k: r.raw for k, r in state.pods.items()},
        {k: r.raw for k, r in state.claims.items()},
        set(state.allocated.exclusive),
        [p.key for p in state.nodes["gpu-1"].pods],
    )
    pools = [read_pool(objects[0], CATALOG, loaded, PlanOptions())]
    plan = consolidate(state, pools, [objects[0]], state.features, state.classes, None, NOW)
    assert [a.decision for a in plan.actions] == [REPLACE]
    after = (
        sorted(state.nodes),
        {k: r.raw for k, r in state.pods.items()},
        {k: r.raw for k, r in state.claims.items()},
        set(state.allocated.exclusive),
        [p.key for p in state.nodes["gpu-1"].pods],
    )
    assert after == before


def test_unknown_nodepool_and_unmanaged_nodes() -> None:
    plan = run(
        [
            nodepool("web", GENERAL, budgets=ALL),
            *nodes("batch", "m5.xlarge"),
        ]
    )
    assert plan.actions == []
    assert dict(plan.blocked) == {"batch-1": "NodePool batch not found"}


# ---- budgets, cron, durations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes_value", "count", "allowed"),
    [("0", 10, 0), ("1", 10, 1), ("10%", 10, 1), ("10%", 3, 1), ("10%", 0, 0), ("25%", 10, 3), ("100%", 7, 7)],
)
def test_budget_counts_and_percentages_round_up(nodes_value: str, count: int, allowed: int) -> None:
    assert Budget(nodes_value, ()).allowed(count, NOW) == allowed


def test_budgets_take_the_smallest_for_the_reason_and_fail_closed() -> None:
    policy = NodePoolPolicy.read(
        nodepool("p", GENERAL, budgets=[{"nodes": "5"}, {"nodes": "2", "reasons": ["Underutilized"]}])
    )
    assert policy.allowed("Underutilized", 10, NOW)[0] == 2
    assert policy.allowed("Empty", 10, NOW)[0] == 5
    default = NodePoolPolicy.read({"metadata": {"name": "d"}, "spec": {}})
    assert default.allowed("Empty", 25, NOW)[0] == 3  # the default budget: 10%
    broken = NodePoolPolicy.read(
        nodepool("b", GENERAL, budgets=[{"nodes": "5", "schedule": "99 * * * *", "duration": "1h"}])
    )
    assert broken.allowed("Empty", 10, NOW)[0] == 0


@pytest.mark.parametrize(
    ("schedule", "duration", "now", "active"),
    [
        ("0 9 * * *", "8h", "2026-09-21T12:00:00", True),
        ("0 9 * * *", "8h", "2026-09-21T17:00:00", False),  # the window is (now - 8h, now]: 09:00 is out
        ("0 9 * * *", "8h", "2026-09-21T16:59:59", True),
        ("0 9 * * *", "8h", "2026-09-21T08:59:00", False),
        ("0 22 * * *", "10h", "2026-09-22T07:00:00", True),  # across midnight
        ("@daily", "1h", "2026-09-21T00:30:00", True),
        ("@hourly", "10m", "2026-09-21T00:30:00", False),
        ("*/15 * * * *", "5m", "2026-09-21T10:47:00", True),
        ("0 0 1 * *", "24h", "2026-10-01T23:00:00", True),
        ("0 0 1 * *", "24h", "2026-10-02T01:00:00", False),
        ("0 9 * * mon-fri", "1h", "2026-09-20T09:30:00", False),  # a Sunday
        ("0 9 * * MON-FRI", "1h", "2026-09-21T09:30:00", True),
        ("0 9 15 * mon", "1h", "2026-09-21T09:30:00", True),  # both day fields set: either matches
        ("0 9 15 jan *", "1h", "2026-09-15T09:30:00", False),
    ],
)
def test_cron_windows(schedule: str, duration: str, now: str, active: bool) -> None:
    moment = datetime.fromisoformat(now).replace(tzinfo=UTC)
    assert Cron.parse(schedule).active(moment, go_duration(duration)) is active


@pytest.mark.parametrize(
    "schedule",
    ["", "* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 7", "*/0 * * * *", "a * * * *"],
)
def test_cron_rejects(schedule: str) -> None:
    with pytest.raises(ValueError):
        Cron.parse(schedule)


def test_go_durations() -> None:
    assert go_duration("1h30m") == timedelta(hours=1, minutes=30)
    assert go_duration("720h") == timedelta(days=30)
    assert go_duration("0s") == timedelta(0)
    assert go_duration("1.5h") == timedelta(minutes=90)
    with pytest.raises(ValueError):
        go_duration("10 minutes")


def test_drifted_nodes_are_reported_with_their_catalog_price_and_the_savings_count() -> None:
    plan = run([
        nodepool("web", ("m5.large", "m5.xlarge"), budgets=ALL),
        *nodes("web", "m5.2xlarge"),
        pod("small", "web-1", cpu="250m"),
    ])
    (drifted,) = plan.drifted
    assert (drifted.name, drifted.nodepool, drifted.instance_type, drifted.drift.reason) == (
        "web-1", "web", "m5.2xlarge", "RequirementsDrifted")
    assert drifted.price == price("m5.2xlarge") > 0
    assert "node.kubernetes.io/instance-type" in drifted.drift.message
    (action,) = plan.actions
    assert action.nodes[0].price == price("m5.2xlarge")
    assert action.savings_per_hour == pytest.approx(price("m5.2xlarge") - price("m5.large"))
    assert plan.savings_per_hour == action.savings_per_hour
    assert action.sentence.startswith("replace drifted web-1 (m5.2xlarge, $0.384/h) with m5.large ($0.096/h): "
                                      "RequirementsDrifted: the node no longer meets the requirements of NodePool web")
    assert action.sentence.endswith("its 1 pod goes to new m5.large; saves $0.288/h")


def test_a_dearer_drift_replacement_says_what_it_costs() -> None:
    plan = run([nodepool("web", ("m5.2xlarge",), budgets=ALL), *nodes("web", "m5.xlarge"), pod("a", "web-1", cpu="3")])
    (action,) = plan.actions
    assert action.savings_per_hour == pytest.approx(price("m5.xlarge") - price("m5.2xlarge"))
    assert action.sentence.endswith("costs $0.192/h more")


def test_a_node_of_a_type_ec2_no_longer_offers_is_priced_at_its_list_price() -> None:
    plan = run([nodepool("gpu", GPUS, budgets=ALL), *nodes("gpu", "p3.8xlarge")])
    (drifted,) = plan.drifted
    assert drifted.price == 12.24  # the list price: p3 has no offering any more
    (action,) = plan.actions  # empty: Emptiness deletes it first
    assert (action.method, action.decision, action.nodes[0].price) == (EMPTINESS, DELETE, 12.24)


def test_ec2nodeclass_hash_drift() -> None:
    node_class = {"metadata": {"name": "default", "annotations": {
        "karpenter.k8s.aws/ec2nodeclass-hash": "9", "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4"}}}
    objects = [nodepool("web", GENERAL, after="Never", budgets=ALL),
               *nodes("web", "m5.xlarge", annotations={"karpenter.k8s.aws/ec2nodeclass-hash": "8",
                                                     "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4"})]
    loaded = load(objects)
    pools = [read_pool(objects[0], CATALOG, loaded, PlanOptions())]
    state = loaded.state
    plan = consolidate(state, pools, [objects[0]], state.features, state.classes, None, NOW,
                       node_classes={"default": node_class})
    assert [d.drift.reason for d in plan.drifted] == ["NodeClassDrift"]
    assert [(a.method, a.decision) for a in plan.actions] == [(DRIFT, DELETE)]

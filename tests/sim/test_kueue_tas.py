"""Topology-aware scheduling on the product path (sim/kueue_tas.py): Topology objects and a flavor's
``topologyName`` read from the manifests, PodSets annotated ``podset-required-topology`` /
``podset-preferred-topology`` / ``podset-unconstrained-topology`` placed at admission from the nodes' labels
and free capacity, and the admitted pods constrained to their domains.

Kueue at ff69552: site/content/en/docs/concepts/topology_aware_scheduling.md (required: one domain of the
level or not admitted; preferred: the lowest level that fits, above it spread; unconstrained: any nodes),
pkg/cache/scheduler/tas_flavor_snapshot.go (BestFit for required/preferred, LeastFreeCapacity for an
unconstrained request under TASProfileMixed; the "doesn't allow to fit" / "allows to fit only" messages),
pkg/scheduler/flavorassigner/tas_flavorassigner.go (a placement failing even on an empty cluster is NoFit,
TopologyPlacementFailed), pkg/cache/scheduler/tas_non_tas_pod_cache.go (the capacity of a node less the
non-TAS pods bound there), pkg/controller/tas/topology_ungater.go (each pod gets its domain's nodeSelector).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import configuration, local_queue
from tests.builders.kueue_sim import KueueRig, cpu_queue, kueue_rig, queued_job
from tests.builders.kueue_tas import BLOCK, HOST, RACK, bound_pod, tas_flavor, tas_node, topology
from tests.builders.manifests import pod as manifest_pod
from tests.builders.sim import job as plain_job

from dratwin.kueue.tas.request import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION, UNCONSTRAINED_ANNOTATION
from dratwin.sim.kueue_status import find_condition
from dratwin.sim.quick_scenario import RUN_FOR

Raw = dict[str, Any]


def tas_cluster(racks: int = 2, per_rack: int = 2, cpu: str = "8", quota: int = 1000) -> list[Raw]:
    """``racks`` racks of ``per_rack`` nodes (``r1-n1``...) in one block, a Topology block/rack/hostname, the TAS
    flavor ``tas`` naming it, ClusterQueue ``cq`` with ample cpu quota (the topology alone decides)."""
    nodes = [tas_node(f"r{r}-n{n}", "b1", f"rack-{r}", cpu=cpu, memory="64Gi", pods="110")
             for r in range(1, racks + 1) for n in range(1, per_rack + 1)]
    return [*nodes, topology(), tas_flavor(), cpu_queue("cq", quota, flavor="tas"),
            local_queue("lq", "cq", namespace="default")]


def tas_job(name: str, pods: int, cpu: str, annotation: str = "", level: str = RACK, **args: Any) -> Raw:
    """A queued Job of ``pods`` pods at once, its pod template annotated for TAS (``annotation``: the key)."""
    raw = queued_job(name, cpu, parallelism=pods, completions=pods, **args)
    if annotation:
        value = "true" if annotation == UNCONSTRAINED_ANNOTATION else level
        raw["spec"]["template"].setdefault("metadata", {})["annotations"] = {annotation: value}
    return raw


def _nodes_of(rig: KueueRig, job: str) -> list[str]:
    """The nodes of the Job's pods, sorted; each pod's nodeSelector names its node (the hostname level)."""
    out = []
    for record in rig.store.state.pods.values():
        meta = record.raw["metadata"]
        if not meta["name"].startswith(f"{job}-"):
            continue
        spec = record.raw["spec"]
        assert "schedulingGates" not in spec, "the topology ungater lifts the gate"
        assert spec["nodeSelector"][HOST] == spec.get("nodeName"), "placed in the domain it was given"
        out.append(spec["nodeName"])
    return sorted(out)


@dataclass(frozen=True)
class TasCase:
    name: str
    cite: str
    objects: list[Raw]
    nodes: dict[str, list[str]]  # admitted Job -> the nodes of its pods
    pending: dict[str, str] = field(default_factory=dict)  # Job -> QuotaReserved=False "reason: message" part


REQUIRED = REQUIRED_ANNOTATION
PREFERRED = PREFERRED_ANNOTATION
UNCONSTRAINED = UNCONSTRAINED_ANNOTATION

CASES = [
    TasCase("required-rack-fits-one-rack", "required: every pod in one domain of the level; BestFit ties by name",
            [*tas_cluster(), tas_job("gang", 4, "4", REQUIRED)],
            {"gang": ["r1-n1", "r1-n1", "r1-n2", "r1-n2"]}),
    TasCase("required-rack-takes-the-other-rack", "the TAS usage of an admitted Workload is booked on its domains",
            [*tas_cluster(), tas_job("first", 4, "4", REQUIRED), tas_job("second", 4, "4", REQUIRED)],
            {"first": ["r1-n1", "r1-n1", "r1-n2", "r1-n2"], "second": ["r2-n1", "r2-n1", "r2-n2", "r2-n2"]}),
    TasCase("required-rack-never-fits", "a required request that fails even on an empty cluster is NoFit "
            "(TopologyPlacementFailed), with the pods that fit in the best domain",
            [*tas_cluster(), tas_job("wide", 6, "4", REQUIRED)], {},
            {"wide": 'TopologyPlacementFailed: couldn\'t assign flavors to pod set main: topology "default" '
                     "allows to fit only 4 out of 6 pod(s)"}),
    TasCase("required-hostname-too-big-for-any-node", "one pod larger than every node: none of the pods fit",
            [*tas_cluster(), tas_job("huge", 1, "12", REQUIRED, level=HOST)], {},
            {"huge": 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: '
                     'resource "cpu": 4'}),
    TasCase("non-tas-pods-take-capacity", "tas_non_tas_pod_cache.go: a node's capacity less the bound non-TAS pods",
            [*tas_cluster(), bound_pod("daemon", "r1-n1", "2"), tas_job("gang", 4, "4", REQUIRED)],
            {"gang": ["r2-n1", "r2-n1", "r2-n2", "r2-n2"]}),
    TasCase("preferred-rack-spreads-when-no-rack-fits", "preferred: the next level up when the level has no fit",
            [*tas_cluster(), tas_job("wide", 6, "4", PREFERRED)],
            {"wide": ["r1-n1", "r1-n1", "r1-n2", "r1-n2", "r2-n1", "r2-n1"]}),
    TasCase("preferred-rack-stays-in-one-rack", "preferred: one domain of the level when one fits",
            [*tas_cluster(), tas_job("first", 2, "4", REQUIRED, level=HOST), tas_job("pair", 4, "4", PREFERRED)],
            {"first": ["r1-n1", "r1-n1"], "pair": ["r2-n1", "r2-n1", "r2-n2", "r2-n2"]}),
    TasCase("unconstrained-takes-the-least-free-node", "TASProfileMixed: unconstrained requests use "
            "LeastFreeCapacity, packing the fullest node that still fits",
            [*tas_cluster(), tas_job("first", 1, "4", REQUIRED, level=HOST), tas_job("any", 1, "4", UNCONSTRAINED)],
            {"first": ["r1-n1"], "any": ["r1-n1"]}),
    TasCase("level-not-in-topology", "checkPodSetAndFlavorMatchForTAS: the flavor lacks the requested level",
            [*tas_cluster(), tas_job("zoned", 1, "1", REQUIRED, level="topology.kubernetes.io/zone")], {},
            {"zoned": 'NoMatchingFlavor: couldn\'t assign flavors to pod set main: Flavor "tas" does not contain '
                      "the requested level"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_tas_assignment_on_the_product_path(case: TasCase) -> None:
    rig = kueue_rig(case.objects)
    rig.run("1s")
    for job, nodes in case.nodes.items():
        raw = rig.workload(job)
        assert find_condition(raw, "Admitted")["status"] == "True", raw["status"]
        (assigned,) = raw["status"]["admission"]["podSetAssignments"]
        assert assigned["topologyAssignment"]["levels"] == [HOST]
        assert _nodes_of(rig, job) == nodes
    for job, message in case.pending.items():
        condition = find_condition(rig.workload(job), "QuotaReserved")
        assert condition["status"] == "False"
        assert message in f"{condition['reason']}: {condition['message']}"
        assert _nodes_of(rig, job) == []
    assert rig.checker.checks > 0  # every invariant held after each event (a violation raises)


def test_topology_freed_when_the_gang_finishes() -> None:
    """The second gang waits for a rack (quota is ample) and is admitted when the first finishes at 10 min."""
    rig = kueue_rig([*tas_cluster(racks=1), tas_job("first", 4, "4", REQUIRED), tas_job("second", 4, "4", REQUIRED)])
    rig.run("5m")
    condition = find_condition(rig.workload("second"), "QuotaReserved")
    assert condition["status"] == "False"
    assert 'topology "default" doesn\'t allow to fit any of 4 pod(s)' in condition["message"]
    rig.run("11m")
    assert find_condition(rig.workload("second"), "Admitted")["status"] == "True"
    assert _nodes_of(rig, "second") == ["r1-n1", "r1-n1", "r1-n2", "r1-n2"]
    assert rig.checker.checks > 0  # every invariant held after each event (a violation raises)


def test_pods_follow_the_completion_index() -> None:
    """An Indexed Job's pod of index i takes the i-th slot of the assignment (Kueue's podIndexLabel order)."""
    rig = kueue_rig([*tas_cluster(), tas_job("ranked", 4, "4", REQUIRED, indexed=True)])
    rig.run("1s")
    placed = {}
    for record in rig.store.state.pods.values():
        labels = record.raw["metadata"].get("labels") or {}
        placed[labels["batch.kubernetes.io/job-completion-index"]] = record.raw["spec"]["nodeName"]
    assert placed == {"0": "r1-n1", "1": "r1-n1", "2": "r1-n2", "3": "r1-n2"}


def test_a_job_of_more_completions_reuses_its_slots() -> None:
    """completions 4, parallelism 2: the PodSet counts 2 pods; each next pod takes the slot a succeeded one freed
    (the pods' nodeSelectors keep them in the assigned rack), and the Job completes."""
    job = queued_job("waves", "4", parallelism=2, completions=4)
    job["spec"]["template"]["metadata"] = {"annotations": {REQUIRED: RACK}}
    rig = kueue_rig([*tas_cluster(), job])
    rig.run("25m")
    raw = rig.workload("waves")
    assert find_condition(raw, "Finished")["status"] == "True"
    (assigned,) = raw["status"]["admission"]["podSetAssignments"]
    assert assigned["count"] == 2


def test_a_pod_bound_later_is_seen_by_the_next_cycle() -> None:
    """The TAS cache follows the non-TAS pods: a plain Job's pod bound on r1-n1 at 30 s leaves rack-1 room for
    5 of the gang's 7 pods at 1 min, so the gang takes rack-2 (with the cache of the first cycle, rack-1 would
    still fit it: BestFit takes the rack with the fewest free slots that holds all 7)."""
    web = plain_job("web", cpu="4", at="30s", run_for="1h")
    web["spec"]["template"]["spec"]["nodeSelector"] = {HOST: "r1-n1"}
    rig = kueue_rig([*tas_cluster(), tas_job("early", 1, "1", REQUIRED, level=HOST, run_for="1h"), web,
                     tas_job("gang", 7, "2", REQUIRED, at="1m")])
    rig.run("2m")
    assert _nodes_of(rig, "early") == ["r1-n1"]
    assert _nodes_of(rig, "gang") == ["r2-n1"] * 4 + ["r2-n2"] * 3


PODS_ON = configuration(integrations={"frameworks": ["batch/job", "pod"]})


def tas_pod(name: str, cpu: str, group: str = "", total: int = 0, annotation: str = REQUIRED,
            level: str = RACK, index: str = "") -> Raw:
    """A queued plain pod (of pod group ``group`` of ``total`` pods) annotated for TAS; ``index``: its rank in
    label ``rank``, named by the ``pod-group-pod-index-label`` annotation."""
    labels = {"kueue.x-k8s.io/queue-name": "lq", **({"kueue.x-k8s.io/pod-group-name": group} if group else {}),
              **({"rank": index} if index else {})}
    annotations = {annotation: "true" if annotation == UNCONSTRAINED else level,
                   **({"kueue.x-k8s.io/pod-group-total-count": str(total)} if group else {}),
                   **({"kueue.x-k8s.io/pod-group-pod-index-label": "rank"} if index else {}), RUN_FOR: "10m"}
    raw = manifest_pod(name, cpu=cpu, labels=labels)
    raw["metadata"]["annotations"] = annotations
    return raw


def _pod_nodes(rig: KueueRig, prefix: str) -> dict[str, str]:
    out = {}
    for key, record in rig.store.state.pods.items():
        if key.split("/", 1)[1].startswith(prefix):
            spec = record.raw["spec"]
            assert not spec.get("schedulingGates"), "the admission and topology gates are lifted"
            assert record.raw["metadata"]["labels"]["kueue.x-k8s.io/tas"] == "true"
            assert spec["nodeSelector"][HOST] == spec.get("nodeName"), "placed in the domain it was given"
            out[key.split("/", 1)[1]] = spec["nodeName"]
    return out


def test_a_pod_group_is_placed_by_topology() -> None:
    """pod_webhook.go Default: a managed pod asking for TAS gets the kueue.x-k8s.io/topology gate and the TAS
    label; the group's Workload is admitted with a topology assignment and the ungater puts each pod in its
    domain. The first group takes rack 1, the second rack 2 (its usage is booked on rack 1's nodes)."""
    group_a = [tas_pod(f"a-{i}", "4", "a", 4) for i in range(4)]
    group_b = [tas_pod(f"b-{i}", "4", "b", 4) for i in range(4)]
    rig = kueue_rig([*tas_cluster(), PODS_ON, *group_a, *group_b])
    rig.run("1s")
    placed_a, placed_b = _pod_nodes(rig, "a-"), _pod_nodes(rig, "b-")
    assert sorted(placed_a.values()) == ["r1-n1", "r1-n1", "r1-n2", "r1-n2"]
    assert sorted(placed_b.values()) == ["r2-n1", "r2-n1", "r2-n2", "r2-n2"]
    workload = rig.store.state.workloads["default/a"]
    assert workload["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]["levels"] == [HOST]
    assert rig.checker.checks > 0


def test_a_pod_group_ranks_follow_its_index_label() -> None:
    """The webhook copies the label named by pod-group-pod-index-label into kueue.x-k8s.io/pod-group-pod-index;
    the ungater gives the pod of rank i the i-th slot of the assignment (rack 1's first node first)."""
    pods = [tas_pod(f"p-{name}", "4", "p", 4, index=str(rank)) for name, rank in
            (("w", 3), ("x", 2), ("y", 1), ("z", 0))]
    rig = kueue_rig([*tas_cluster(), PODS_ON, *pods])
    rig.run("1s")
    placed = _pod_nodes(rig, "p-")
    assert placed == {"p-z": "r1-n1", "p-y": "r1-n1", "p-x": "r1-n2", "p-w": "r1-n2"}
    assert rig.store.state.pods["default/p-w"].raw["metadata"]["labels"]["kueue.x-k8s.io/pod-group-pod-index"] == "3"


def test_a_pod_group_too_wide_for_a_rack_stays_gated() -> None:
    """Required rack, 6 pods of 4 cpu, racks of 16 cpu: TopologyPlacementFailed; the pods keep both gates."""
    pods = [tas_pod(f"w-{i}", "4", "w", 6) for i in range(6)]
    rig = kueue_rig([*tas_cluster(), PODS_ON, *pods])
    rig.run("1s")
    condition = find_condition(rig.store.state.workloads["default/w"], "QuotaReserved")
    assert condition["reason"] == "TopologyPlacementFailed", condition
    gates = rig.store.state.pods["default/w-0"].raw["spec"]["schedulingGates"]
    assert [g["name"] for g in gates] == ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"]


def test_the_domain_of_a_finished_group_is_free_again() -> None:
    """When a group's pods succeed its Workload is Finished, its TAS usage and its slots released: the next
    group that needs the rack gets it."""
    first = [tas_pod(f"a-{i}", "4", "a", 4) for i in range(4)]
    wide = [tas_pod(f"c-{i}", "8", "c", 4, level=BLOCK) for i in range(4)]  # the whole block, once a is gone
    rig = kueue_rig([*tas_cluster(), PODS_ON, *first, *wide])
    rig.run("1s")
    assert find_condition(rig.store.state.workloads["default/c"], "QuotaReserved")["status"] == "False"
    rig.run("15m")  # a's pods run 10 minutes; c's from then on
    assert find_condition(rig.store.state.workloads["default/a"], "Finished")["status"] == "True"
    assert find_condition(rig.store.state.workloads["default/c"], "Admitted")["status"] == "True"
    assert sorted(_pod_nodes(rig, "c-").values()) == ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]
    assert rig.kueue.tas.slots.keys() == {"default/c"}, "the finished group's slots are gone"

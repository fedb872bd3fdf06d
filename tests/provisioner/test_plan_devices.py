"""plan: the provisioning rules of the Neuron DRA driver and of EFA interface layouts, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.plan import (
    auto_node_class,
    ec2_node_class,
    interfaces,
    launched,
    nodepool,
    pod,
    run_plan,
    template_from_shared,
)

from dratwin.provisioner.pending import AUTO_MODE_NEURON
from dratwin.provisioner.solver import NO_NEURON_METADATA

NEURON_CATEGORY = {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["trn", "inf"]}
AUTO_NEURON_CATEGORY = {**NEURON_CATEGORY, "key": "eks.amazonaws.com/instance-category"}


def plugin_pod(name: str, neurons: int) -> dict[str, Any]:
    """A pod asking the Neuron device plugin for ``neurons`` devices."""
    raw = pod(name)
    container = raw["spec"]["containers"][0]["resources"]
    container["requests"]["aws.amazon.com/neuron"] = neurons
    container["limits"] = {"aws.amazon.com/neuron": neurons}
    return raw


@dataclass(frozen=True)
class NeuronCase:
    id: str
    objects: list[dict[str, Any]]
    auto_mode: bool
    reason: str  # why the DRA pod is not provisioned
    launched: list[tuple[str, list[str]]] = field(default_factory=list)
    note: bool = False  # the plan's note on Neuron DRA claims


CASES = [
    NeuronCase("Karpenter: connected Trainium devices", [nodepool(requirements=[NEURON_CATEGORY]),
                                                        template_from_shared("1x4-connected-neurons"),
                                                        pod("dra", template="1x4-connected-neurons")],
               False, NO_NEURON_METADATA, note=True),
    NeuronCase("Karpenter: Neuron + EFA of one group", [nodepool(requirements=[NEURON_CATEGORY]),
                                                       template_from_shared("aligned-efa-neuron"),
                                                       pod("dra", template="aligned-efa-neuron")],
               False, NO_NEURON_METADATA, note=True),
    NeuronCase("Karpenter: the device plugin pod is launched", [nodepool(requirements=[NEURON_CATEGORY]),
                                                               template_from_shared("1x4-connected-neurons"),
                                                               pod("dra", template="1x4-connected-neurons"),
                                                               plugin_pod("plugin", 1)],
               False, NO_NEURON_METADATA, [("inf2.xlarge", ["ml/plugin"])], note=True),
    NeuronCase("Auto Mode: a DRA claim for Neuron devices", [nodepool(requirements=[AUTO_NEURON_CATEGORY],
                                                                     auto_mode=True),
                                                            template_from_shared("all-neurons-lnc-1"),
                                                            pod("dra", template="all-neurons-lnc-1"),
                                                            plugin_pod("plugin", 6)],
               True, AUTO_MODE_NEURON, [("inf2.24xlarge", ["ml/plugin"])]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_neuron_dra_claims_are_never_provisioned(case: NeuronCase) -> None:
    report = run_plan(*case.objects, auto_mode=case.auto_mode)
    assert launched(report) == case.launched
    [stuck] = [u for u in report.plan.unplaced if u.pod == "ml/dra"]
    reasons = {r.reason for rs in stuck.reasons.values() for r in rs}
    assert reasons == {case.reason}
    notes = [n for n in report.notes if "Neuron DRA claims (neuron.aws.com) cannot trigger provisioning" in n]
    assert len(notes) == int(case.note)
    if case.note:
        assert "the catalog has none for inf2.24xlarge" in notes[0] and "trn2.48xlarge" in notes[0]


def test_a_gpu_type_with_metadata_has_no_neuron_devices() -> None:
    """On a NodePool of GPU types, a Neuron claim meets devices of other drivers only: the allocator says so."""
    p5 = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
    report = run_plan(nodepool(requirements=[p5]), template_from_shared("1x4-connected-neurons"),
                      pod("dra", template="1x4-connected-neurons"))
    [stuck] = report.plan.unplaced
    reasons = {r.reason for rs in stuck.reasons.values() for r in rs}
    assert reasons == {"DRA: request neurons (class neuron.aws.com) needs 4 device(s): selector #0 of class "
                       "neuron.aws.com is false for its devices (driver=dra.net, driver=gpu.nvidia.com)"}


@dataclass(frozen=True)
class LayoutCase:
    id: str
    node_class: dict[str, Any]
    auto_mode: bool
    says: list[str]  # what the warning says; [] when there is none


LAYOUT_CASES = [
    LayoutCase("Karpenter: 2 efa-only interfaces for 4 planned EFAs", ec2_node_class(interfaces=interfaces(2)), False,
               ["EC2NodeClass x sets networkInterfaces", "2 efa-only interface(s)", "the plan gives its pods' claims 4",
                "fewer EFA devices than planned, so 2 of those cannot be allocated", "undefined behavior"]),
    LayoutCase("Karpenter: enough efa-only interfaces, still unsupported", ec2_node_class(interfaces=interfaces(8)),
               False, ["8 efa-only interface(s)", "undefined behavior"]),
    LayoutCase("Karpenter: no layout, every EFA attached", ec2_node_class(), False, []),
    LayoutCase("Karpenter: a layout on a NodeClass the NodePool does not use",
               ec2_node_class("other", interfaces=interfaces(1)), False, []),
    LayoutCase("Auto Mode: the guide's P5 layout", auto_node_class(interfaces=interfaces(4)), True,
               ["NodeClass default sets advancedNetworking.networkInterfaces", "4 efa-only interface(s)",
                "attaches no interface after launch"]),
    LayoutCase("Auto Mode: one efa-only interface", auto_node_class(interfaces=interfaces(1)), True,
               ["fewer EFA devices than planned, so 3 of those cannot be allocated"]),
]


@pytest.mark.parametrize("case", LAYOUT_CASES, ids=lambda c: c.id)
def test_static_interface_layouts_with_dra_efa_claims(case: LayoutCase) -> None:
    family = {"key": ("eks.amazonaws.com" if case.auto_mode else "karpenter.k8s.aws") + "/instance-family",
              "operator": "In", "values": ["p5"]}
    objects = [nodepool(requirements=[family], auto_mode=case.auto_mode), case.node_class,
               template_from_shared("gpu-with-4-local-efa"), pod("p", template="gpu-with-4-local-efa")]
    report = run_plan(*objects, auto_mode=case.auto_mode)
    assert [t for t, _ in launched(report)] == ["p5.48xlarge"]
    found = [n for n in report.notes if "efa-only interface(s)" in n]
    if not case.says:
        assert found == []
        return
    [warning] = found
    for text in case.says:
        assert text in warning

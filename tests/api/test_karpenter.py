"""Karpenter's kinds: classification, typed decoding, unknown fields, and the label vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dratwin.api.codec import Support, classify, decode, object_ref
from dratwin.api.intake import structural_problems
from dratwin.api.karpenter import (
    AWS_WELL_KNOWN_LABELS,
    CORE_WELL_KNOWN_LABELS,
    WELL_KNOWN_LABELS,
    EC2NodeClass,
    NodeClaim,
    NodePool,
    restricted_label,
)
from dratwin.api.loader import load_text
from dratwin.api.schema import IssueKind, builtin_schema, check_structure
from dratwin.errors import InputError

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata:
      labels: {team: ml}
      annotations: {example.com/owner: ml}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5, p5e], minValues: 2}
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["3"]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      startupTaints: [{key: example.com/init, value: "true", effect: NoExecute}]
      expireAfter: Never
      terminationGracePeriod: 48h
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    budgets:
    - {nodes: "10%"}
    - {nodes: "0", reasons: [Drifted], schedule: "0 9 * * mon-fri", duration: 8h}
  limits: {cpu: 1000, nvidia.com/gpu: 64}
  weight: 50
status:
  conditions: [{type: Ready, status: "True", reason: Ready, message: ""}]
"""
NODECLAIM = """\
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: gpu-abcde, labels: {karpenter.sh/nodepool: gpu}}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}
  resources: {requests: {cpu: 1500m, pods: "3"}}
status:
  nodeName: ip-10-0-64-10.ec2.internal
  providerID: aws:///us-east-1a/i-0123456789abcdef0
  imageID: ami-0123456789abcdef0
  capacity: {nvidia.com/gpu: "8"}
  conditions: [{type: Launched, status: "True"}]
"""
EC2NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu
  annotations: {karpenter.k8s.aws/nvidia-consumable-capacity: "4"}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{id: sg-0123456789abcdef0}]
  blockDeviceMappings:
  - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 200Gi, volumeType: gp3, snapshotID: snap-1,
     kmsKeyID: k}}
  networkInterfaces:
  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}
  - {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}
  kubelet: {maxPods: 110, systemReserved: {cpu: 100m}, kubeReserved: {memory: 1Gi}, clusterDNS: [10.0.0.10]}
  associatePublicIPAddress: false
status: {amis: [{id: ami-1}]}
"""


def test_nodepool_decodes_every_field() -> None:
    [obj] = load_text(NODEPOOL)
    pool = decode(obj)
    assert isinstance(pool, NodePool)
    template = pool.spec.template
    assert template.metadata.labels == {"team": "ml"}
    assert template.metadata.annotations == {"example.com/owner": "ml"}
    assert template.spec.node_class_ref is not None and template.spec.node_class_ref.kind == "EC2NodeClass"
    assert [(r.key, r.operator, r.values, r.min_values) for r in template.spec.requirements or []] == [
        ("karpenter.k8s.aws/instance-family", "In", ["p5", "p5e"], 2),
        ("karpenter.k8s.aws/instance-gpu-count", "Gt", ["3"], None),
    ]
    assert (template.spec.taints[0].key, template.spec.startup_taints[0].effect) == ("nvidia.com/gpu", "NoExecute")
    assert (template.spec.expire_after, template.spec.termination_grace_period) == ("Never", "48h")
    disruption = pool.spec.disruption
    assert (disruption.consolidation_policy, disruption.consolidate_after) == ("WhenEmpty", "10m")
    assert [(b.nodes, b.reasons, b.schedule, b.duration) for b in disruption.budgets or []] == [
        ("10%", None, None, None), ("0", ["Drifted"], "0 9 * * mon-fri", "8h")]
    assert pool.spec.limits == {"cpu": 1000, "nvidia.com/gpu": 64}
    assert (pool.spec.weight, pool.spec.replicas) == (50, None)
    assert pool.status.conditions[0].type == "Ready"
    assert structural_problems([obj]) == []


def test_nodeclaim_decodes_spec_and_status() -> None:
    [obj] = load_text(NODECLAIM)
    claim = decode(obj)
    assert isinstance(claim, NodeClaim)
    assert claim.spec.resources.requests == {"cpu": "1500m", "pods": "3"}
    assert claim.status.provider_id == "aws:///us-east-1a/i-0123456789abcdef0"
    assert (claim.status.image_id, claim.status.capacity) == ("ami-0123456789abcdef0", {"nvidia.com/gpu": "8"})
    assert claim.status.conditions[0].type == "Launched"
    assert structural_problems([obj]) == []


def test_ec2nodeclass_decodes_the_modelled_fields() -> None:
    [obj] = load_text(EC2NODECLASS)
    node_class = decode(obj)
    assert isinstance(node_class, EC2NodeClass)
    spec = node_class.spec
    assert (spec.role, spec.instance_profile, spec.ami_family) == ("KarpenterNodeRole-demo", None, None)
    assert [t.alias for t in spec.ami_selector_terms or []] == ["al2023@latest"]
    assert spec.block_device_mappings[0].ebs is not None
    assert (spec.block_device_mappings[0].ebs.snapshot_id, spec.block_device_mappings[0].ebs.kms_key_id) == (
        "snap-1", "k")
    assert [n.interface_type for n in spec.network_interfaces or []] == ["interface", "efa-only"]
    assert spec.kubelet is not None and spec.kubelet.max_pods == 110 and spec.kubelet.cluster_dns == ["10.0.0.10"]
    assert spec.associate_public_ip_address is False
    assert node_class.metadata.annotations["karpenter.k8s.aws/nvidia-consumable-capacity"] == "4"
    assert structural_problems([obj]) == []  # every field is one the CRD has


def test_karpenter_kinds_are_cluster_scoped() -> None:
    cases = ((NODEPOOL, "NodePool gpu"), (NODECLAIM, "NodeClaim gpu-abcde"), (EC2NODECLASS, "EC2NodeClass gpu"))
    for text, ref in cases:
        [obj] = load_text(text)
        assert object_ref(obj) == ref


@dataclass(frozen=True)
class KindCase:
    name: str
    api_version: str
    kind: str
    expect: Support | None = None
    expect_error: str | None = None


KIND_CASES = [
    KindCase("nodepool", "karpenter.sh/v1", "NodePool", Support.MODELLED),
    KindCase("nodeclaim", "karpenter.sh/v1", "NodeClaim", Support.MODELLED),
    KindCase("ec2nodeclass", "karpenter.k8s.aws/v1", "EC2NodeClass", Support.MODELLED),
    KindCase("nodeoverlay-not-modelled", "karpenter.sh/v1alpha1", "NodeOverlay", Support.NOT_CHECKED),
    KindCase("kueue-v1beta1-modelled", "kueue.x-k8s.io/v1beta1", "ClusterQueue", Support.MODELLED),
    KindCase("kueue-localqueue-modelled", "kueue.x-k8s.io/v1beta2", "LocalQueue", Support.MODELLED),
    KindCase("kueue-multikueue-not-checked", "kueue.x-k8s.io/v1beta2", "MultiKueueCluster", Support.NOT_CHECKED),
    KindCase("auto-mode-nodeclass-not-checked", "eks.amazonaws.com/v1", "NodeClass", Support.NOT_CHECKED),
    KindCase("v1beta1-nodepool", "karpenter.sh/v1beta1", "NodePool",
             expect_error="karpenter.sh/v1beta1 is not read by dratwin; use karpenter.sh/v1"),
    KindCase("v1beta1-ec2nodeclass", "karpenter.k8s.aws/v1beta1", "EC2NodeClass",
             expect_error="use karpenter.k8s.aws/v1"),
    KindCase("kind-typo", "karpenter.sh/v1", "Nodepool", expect_error="did you mean NodePool?"),
    KindCase("unknown-aws-kind", "karpenter.k8s.aws/v1", "NodeClass", expect_error='unknown kind "NodeClass"'),
]


@pytest.mark.parametrize("case", KIND_CASES, ids=lambda c: c.name)
def test_classify(case: KindCase) -> None:
    [obj] = load_text(f"apiVersion: {case.api_version}\nkind: {case.kind}\nmetadata: {{name: x}}\n")
    if case.expect_error is not None:
        with pytest.raises(InputError, match=case.expect_error.replace("?", r"\?")):
            classify(obj)
    else:
        assert classify(obj).support is case.expect


def test_unknown_fields_of_a_nodepool() -> None:
    [obj] = load_text("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec:\n  template:\n"
                      "    metadata: {name: n}\n    spec:\n      kubelet: {maxPods: 3}\n      requirements:\n"
                      "      - {key: a, operator: In, values: [b], minValue: 2}\n  disruption: {expireAfter: 1h}\n")
    root = builtin_schema().kind("karpenter.sh/v1", "NodePool")
    assert root is not None
    unknown = [i for i in check_structure(obj.raw, root) if i.kind is IssueKind.UNKNOWN_FIELD]
    assert [(i.path, list(i.known[:2])) for i in unknown] == [
        (("spec", "template", "metadata", "name"), ["annotations", "labels"]),
        (("spec", "template", "spec", "kubelet"), ["expireAfter", "nodeClassRef"]),
        (("spec", "template", "spec", "requirements", 0, "minValue"), ["key", "minValues"]),
        (("spec", "disruption", "expireAfter"), ["budgets", "consolidateAfter"]),
    ]


@pytest.mark.parametrize(
    ("key", "nodepool", "expect"),
    [
        ("karpenter.sh/capacity-type", True, None),
        ("karpenter.sh/nodepool", True, 'label "karpenter.sh/nodepool" is restricted'),
        ("karpenter.sh/nodepool", False, None),
        ("karpenter.sh/registered", True, 'label domain "karpenter.sh" is restricted'),
        ("sub.karpenter.sh/x", True, 'label domain "karpenter.sh" is restricted'),
        ("kubernetes.io/hostname", True, 'label "kubernetes.io/hostname" is restricted'),
        ("karpenter.k8s.aws/instance-gpu-name", True, None),
        ("karpenter.k8s.aws/ec2nodeclass", True, None),
        ("karpenter.k8s.aws/gpu", True, 'label domain "karpenter.k8s.aws" is restricted'),
        ("node.kubernetes.io/instance-type", True, None),
        ("kubernetes.io/custom", True, None),  # relaxed in Karpenter v1.9 (#2586)
        ("example.com/team", True, None),
    ],
)
def test_restricted_labels(key: str, nodepool: bool, expect: str | None) -> None:
    assert restricted_label(key, nodepool) == expect


def test_well_known_labels() -> None:
    assert "topology.kubernetes.io/zone" in CORE_WELL_KNOWN_LABELS
    assert {"karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count",
            "karpenter.k8s.aws/instance-gpu-memory", "topology.k8s.aws/zone-id"} <= AWS_WELL_KNOWN_LABELS
    assert len(CORE_WELL_KNOWN_LABELS) == 8 and len(AWS_WELL_KNOWN_LABELS) == 29
    assert WELL_KNOWN_LABELS == CORE_WELL_KNOWN_LABELS | AWS_WELL_KNOWN_LABELS

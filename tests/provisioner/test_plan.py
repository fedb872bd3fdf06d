"""`dratwin plan`: Karpenter's provisioning rules and the worked examples of docs/karpenter-dra.md §7."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.builders.plan import CLASSES, launched, nodepool, pod, run_plan, template_from_shared

from dratwin.allocator import Features
from dratwin.api.loader import load_paths, load_text
from dratwin.cli.main import main
from dratwin.provisioner.solver import PodToPlace, Solver
from dratwin.twin.plan import PlanOptions, _pending, plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("claim", "instance_type", "price"),
    [
        ("single-gpu", "g6f.large", 0.202),
        ("gpu-efa-aligned", "g4dn.8xlarge", 2.176),
        ("large-gpu", "p5en.48xlarge", 63.296),
        ("eight-gpus", "g4dn.metal", 7.824),
    ],
    ids=["single-gpu", "gpu-efa-aligned", "large-gpu", "eight-gpus"],
)
def test_worked_examples_launch_the_cheapest_qualifying_type(claim: str, instance_type: str, price: float) -> None:
    report = run_plan(nodepool(), template_from_shared(claim), pod("p", template=claim))
    assert launched(report) == [(instance_type, ["ml/p"])]
    assert report.plan.cost_per_hour == pytest.approx(price)


def test_gpu_and_efa_on_another_root_is_turned_down() -> None:
    """g6.8xlarge has a GPU and an EFA, but not on one PCIe root: the aligned claim cannot use it."""
    report = run_plan(nodepool(), template_from_shared("gpu-efa-aligned"), pod("p", template="gpu-efa-aligned"))
    assert "g6.8xlarge" not in {t.instance_type.name for t in report.plan.claims[0].options}
    pool = next(p for p in report.pools if p.name == "gpu")
    g6 = next(t for t in pool.templates if t.instance_type.name == "g6.8xlarge")
    solver = Solver(report.pools, Features(), dict(report.scheduled.state.classes))
    pending: list[PodToPlace] = _pending(report.scheduled, report.scheduled.loaded)
    from dratwin.provisioner.solver import PlannedClaim

    reason, _ = solver._fit(PlannedClaim("probe", pool, [g6]), g6, pending[0])
    assert reason == "DRA: enough devices, but none of their combinations satisfies the claim's constraints"


def test_types_without_device_metadata_are_never_launched_for_dra_claims() -> None:
    pool = nodepool(requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g7e"]}])
    report = run_plan(pool, template_from_shared("single-gpu"), pod("p", template="single-gpu"))
    assert launched(report) == []
    reasons = {r.reason for r in report.plan.unplaced[0].reasons["gpu"]}
    assert reasons == {"the instance type has no DRA device metadata (no device would be published)"}


def test_mig_claims_cannot_trigger_provisioning() -> None:
    report = run_plan(nodepool(), template_from_shared("mig-devices"), pod("p", template="mig-devices"))
    assert launched(report) == []
    assert any("MIG claims cannot trigger provisioning" in n for n in report.notes)


def test_pods_fitting_existing_nodes_launch_nothing() -> None:
    objects = load_paths(
        [str(EXAMPLES / "nodes.yaml"), str(EXAMPLES / "p5-slices.yaml"), str(EXAMPLES / "deviceclasses.yaml")]
    )
    text = yaml.safe_dump_all([nodepool(), template_from_shared("single-gpu"), pod("p", template="single-gpu")])
    report = plan(objects + load_text(text), Features(), PlanOptions())
    assert launched(report) == []
    assert [(a.pod, a.node) for a in report.scheduled.attempts] == [("ml/p", "p5-node-1")]


def test_nodepool_weight_decides_first_and_limits_cap_it() -> None:
    cheap = nodepool(
        "cheap",
        weight=50,
        requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}],
        limits={"nvidia.com/gpu": "1"},
    )
    other = nodepool(
        "other",
        weight=1,
        requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6"]}],
    )
    report = run_plan(cheap, other, *[pod(f"p{i}", gpus=1, cpu="6") for i in range(2)])
    pools = sorted((c.pool.name, c.chosen().instance_type.name) for c in report.plan.claims)
    assert pools == [("cheap", "g5.2xlarge"), ("other", "g6.2xlarge")]


def test_min_values_keeps_flexibility_or_refuses() -> None:
    pool = nodepool(
        requirements=[
            {
                "key": "karpenter.k8s.aws/instance-family",
                "operator": "In",
                "values": ["g5", "g6", "g4dn"],
                "minValues": 3,
            }
        ]
    )
    assert launched(run_plan(pool, pod("p", gpus=1))) != []  # three families can hold it
    report = run_plan(pool, pod("p", gpus=1, node_selector={"karpenter.k8s.aws/instance-family": "g5"}))
    assert launched(report) == []
    reason = report.plan.unplaced[0].reasons["gpu"][0].reason
    assert reason.startswith("minValues 3 for karpenter.k8s.aws/instance-family not met")


def test_auto_mode_gives_dra_and_device_plugin_pods_separate_nodes() -> None:
    report = run_plan(
        nodepool(),
        template_from_shared("single-gpu"),
        pod("dra", template="single-gpu"),
        pod("plugin", gpus=1),
        auto_mode=True,
    )
    roles = sorted(
        (
            c.chosen().node.metadata.labels.get("eks.amazonaws.com/device-manager-nvidia", ""),
            [p.info.key for p in c.pods],
        )
        for c in report.plan.claims
    )
    assert roles == [("device-plugin", ["ml/plugin"]), ("dra", ["ml/dra"])]


def test_karpenter_warns_when_one_node_would_need_both_managers() -> None:
    report = run_plan(
        nodepool(),
        template_from_shared("single-gpu"),
        pod("dra", template="single-gpu", cpu="4"),
        pod("plugin", gpus=1, cpu="4"),
    )
    assert any("both the DRA driver and the device plugin" in n for n in report.notes) or len(report.plan.claims) == 2


def test_missing_deviceclass_in_auto_mode_says_who_creates_it() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "h200"}}]}}},
    }
    report = run_plan(nodepool(), claim, pod("p", template="t"), auto_mode=True)
    reason = report.plan.unplaced[0].reasons["(any)"][0].reason
    assert reason.startswith("DeviceClass h200 does not exist: the pod stays Pending forever")
    assert "EKS Auto Mode ships the NVIDIA and EFA DRA drivers but not their DeviceClasses" in reason


def test_cli_plan_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(
        yaml.safe_dump_all([nodepool(), template_from_shared("gpu-efa-aligned"), pod("p", template="gpu-efa-aligned")])
    )
    assert main(["plan", "-f", str(CLASSES), "-f", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 node(s) to launch, $2.1760/hour" in out and "g4dn.8xlarge" in out
    assert main(["plan", "-f", str(CLASSES), "-f", str(path), "-o", "yaml"]) == 0
    docs = yaml.safe_load(capsys.readouterr().out)["items"]
    kinds = [d["kind"] for d in docs]
    assert kinds[:2] == ["NodeClaim", "Node"] and "ResourceSlice" in kinds and "Pod" in kinds
    node = docs[1]
    assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "g4dn.8xlarge"
    claim = next(d for d in docs if d["kind"] == "ResourceClaim")
    assert len(claim["status"]["allocation"]["devices"]["results"]) == 2


def test_plan_reports_consolidation_of_existing_karpenter_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "existing.yaml"
    assert main(["cluster", "generate", "-t", "g5.xlarge=2", "--nodepool", "gpu", "--name-prefix", "gpu"]) == 0
    existing.write_text(capsys.readouterr().out)
    pools = tmp_path / "pools.yaml"
    pools.write_text(yaml.safe_dump(nodepool()))
    assert main(["plan", "-f", str(CLASSES), "-f", str(pools), "--existing", str(existing)]) == 0
    out = capsys.readouterr().out
    assert "0 node(s) to launch, $0.0000/hour" in out
    assert "CONSOLIDATION (saves $1.0060/hour)" in out
    assert "delete gpu-1 (g5.xlarge, $1.01/h): empty" in out


def test_nodeclaim_records_the_dra_drivers_it_promised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.yaml"
    objects = [nodepool(), template_from_shared("gpu-efa-aligned"), pod("p", template="gpu-efa-aligned")]
    path.write_text(yaml.safe_dump_all(objects))
    assert main(["plan", "-f", str(CLASSES), "-f", str(path), "-o", "yaml"]) == 0
    node_claim = yaml.safe_load(capsys.readouterr().out)["items"][0]
    assert node_claim["kind"] == "NodeClaim"
    assert node_claim["metadata"]["annotations"] == {"karpenter.sh/requested-dra-drivers": "dra.net,gpu.nvidia.com"}
    assert node_claim["spec"]["nodeClassRef"]["name"] == "x"


def test_static_network_interfaces_with_dra_efa_claims_are_flagged() -> None:
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "x"},
        "spec": {
            "role": "KarpenterNodeRole",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}],
        },
    }
    objects = [nodepool(), node_class, template_from_shared("gpu-efa-aligned"), pod("p", template="gpu-efa-aligned")]
    report = run_plan(*objects)
    assert any("sets networkInterfaces" in n and "fewer EFA devices" in n for n in report.notes)
    assert not any("networkInterfaces" in n for n in run_plan(*[o for o in objects if o is not node_class]).notes)


def test_auto_mode_serves_dra_claims_only_from_kubernetes_1_36(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.yaml"
    objects = [nodepool(), template_from_shared("single-gpu"), pod("dra", template="single-gpu"), pod("plugin", gpus=1)]
    path.write_text(yaml.safe_dump_all(objects))
    base = ["plan", "-f", str(CLASSES), "-f", str(path), "--auto-mode", "-o", "json"]
    assert main([*base, "--kubernetes-version", "1.35"]) == 1
    body = json.loads(capsys.readouterr().out)  # one object, as kubectl prints one
    (stuck,) = body["unprovisionable"]
    assert stuck["pod"] == "ml/dra"
    assert "only from Kubernetes 1.36 (this cluster: 1.35)" in stuck["nodePools"]["(any)"][0]["reason"]
    assert [pods for c in body["nodeClaims"] for pods in [c["pods"]]] == [["ml/plugin"]]
    assert main([*base, "--kubernetes-version", "v1.36.2"]) == 0
    assert json.loads(capsys.readouterr().out)["unprovisionable"] == []
    with pytest.raises(SystemExit):
        main([*base, "--kubernetes-version", "latest"])


def test_user_catalog_prices_spot_and_regions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spot_pool = nodepool(requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}])
    path = tmp_path / "in.yaml"
    workload = [template_from_shared("single-gpu"), pod("p", template="single-gpu")]
    path.write_text(yaml.safe_dump_all([spot_pool, *workload]))
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  g6f.large: {spot: 0.05}\n  g6.xlarge: {spot: {us-east-1b: 0.04}}\n")
    base = ["plan", "-f", str(CLASSES), "-f", str(path), "-o", "json"]
    assert main(base) == 2  # the bundled catalog has no spot prices: the NodePool can launch nothing
    assert "give your prices with --catalog" in capsys.readouterr().err
    assert main([*base, "--catalog", str(prices)]) == 0
    (claim,) = json.loads(capsys.readouterr().out)["nodeClaims"]
    assert (claim["instanceType"], claim["zone"], claim["capacityType"]) == ("g6.xlarge", "us-east-1b", "spot")
    assert claim["pricePerHour"] == pytest.approx(0.04)

    region = tmp_path / "eu.yaml"
    region.write_text("region: eu-west-1\nzones: [eu-west-1a]\nprices:\n  g6f.large: {on-demand: 0.3}\n")
    on_demand = tmp_path / "od.yaml"
    on_demand.write_text(yaml.safe_dump_all([nodepool(), *workload]))
    assert main(["plan", "-f", str(CLASSES), "-f", str(on_demand), "-o", "json", "--catalog", str(region)]) == 0
    (claim,) = json.loads(capsys.readouterr().out)["nodeClaims"]
    assert (claim["instanceType"], claim["zone"]) == ("g6f.large", "eu-west-1a")

    broken = tmp_path / "broken.yaml"
    broken.write_text("discount: 20\n")
    assert main([*base, "--catalog", str(broken)]) == 2
    assert "broken.yaml: discount:" in capsys.readouterr().err


def test_a_nodepool_that_can_launch_nothing_is_skipped_with_a_note() -> None:
    impossible = nodepool(
        "spot-only",
        weight=100,
        requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
    )
    report = run_plan(impossible, nodepool(), template_from_shared("single-gpu"), pod("p", template="single-gpu"))
    assert [(c.pool.name, t) for c, (t, _) in zip(report.plan.claims, launched(report), strict=True)] == [
        ("gpu", "g6f.large")
    ]
    assert any(n.startswith("NodePool spot-only: its requirements allow no instance type") for n in report.notes)


def test_pods_go_to_the_in_flight_nodeclaim_with_the_fewest_pods() -> None:
    # Karpenter sorts its in-flight NodeClaims by pod count before each pod: the last small pod goes to the
    # NodeClaim with one pod, although the first one (two pods) still has room for it.
    only_xlarge = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.xlarge"]}]
    sizes = {"a": "3", "b": "3", "c": "500m", "d": "250m"}
    report = run_plan(nodepool(requirements=only_xlarge), *[pod(name, cpu=cpu) for name, cpu in sizes.items()])
    assert launched(report) == [("m7i.xlarge", ["ml/a", "ml/c"]), ("m7i.xlarge", ["ml/b", "ml/d"])]


def test_nothing_pending_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-f", str(EXAMPLES / "plan" / "nodepools.yaml")]) == 0
    assert capsys.readouterr().out.startswith("0 node(s) to launch, $0.0000/hour\nno pod is pending")


def test_invalid_karpenter_objects_are_reported_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = nodepool(limits={"cpu": "lots"})
    bad["spec"]["template"]["spec"]["requirements"] = [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "Between", "values": ["g6"]}
    ]
    path = tmp_path / "pools.yaml"
    path.write_text(yaml.safe_dump_all([bad, pod("p", cpu="1")], sort_keys=False))
    assert main(["plan", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and 'spec.limits[cpu]: Invalid value: "lots"' in err
    assert 'requirements[0].operator: Unsupported value: "Between"' in err


def test_first_available_preference_does_not_choose_the_instance_type() -> None:
    report = run_plan(
        nodepool(), template_from_shared("prefer-h200-then-h100"), pod("p", template="prefer-h200-then-h100")
    )
    assert [t for t, _ in launched(report)] == ["g6f.large"]
    (note,) = [n for n in report.notes if "not the preferred" in n]
    assert "gets gpu/any-gpu on g6f.large" in note and "not the preferred gpu/h200" in note
    only_p5en = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5en.48xlarge"]}]
    report = run_plan(
        nodepool(requirements=only_p5en),
        template_from_shared("prefer-h200-then-h100"),
        pod("p", template="prefer-h200-then-h100"),
    )
    assert [t for t, _ in launched(report)] == ["p5en.48xlarge"]
    assert not [n for n in report.notes if "not the preferred" in n]


def test_limits_count_capacity_and_nodes_as_karpenter_does() -> None:
    only_xlarge = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.xlarge"]}]
    pods = [pod(f"p{i}", cpu="3") for i in range(3)]
    # two m7i.xlarge are 8 vCPUs of capacity (7.84 allocatable): a 7.9 CPU limit allows one node only
    report = run_plan(nodepool(requirements=only_xlarge, limits={"cpu": "7.9"}), *pods)
    assert len(report.plan.claims) == 1
    assert report.plan.unplaced[0].reasons["gpu"][0].reason == "NodePool gpu limit cpu would be exceeded"
    report = run_plan(nodepool(requirements=only_xlarge, limits={"nodes": "2"}), *pods)
    assert len(report.plan.claims) == 2 and len(report.plan.unplaced) == 1
    assert report.plan.unplaced[0].reasons["gpu"][0].reason == "NodePool gpu limit nodes would be exceeded"


def test_plan_states_the_pod_constraints_it_ignores() -> None:
    spread = pod("p", cpu="1")
    spread["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    ]
    report = run_plan(nodepool(), spread)
    assert any(n.startswith("1 pod(s) set spec.topologySpreadConstraints (ml/p)") for n in report.notes)

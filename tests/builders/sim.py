"""Scenarios for the simulation tests: manifests with arrival annotations, run with invariants checked.

    sim = simulate_text(manifest(gpu_class(), node("n1"), gpu_slice("n1", 2), template("one"),
                                 job("a", "one", at="10s", run_for="10m")), until="1h")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from tests.builders.manifests import GPU_DRIVER, claim_template, gpu_request
from tests.builders.plan import nodepool

from dratwin.api.loader import load_text
from dratwin.catalog import Catalog, load_catalog
from dratwin.metrics import MetricsSet
from dratwin.scenario.model import AutoscalerSpec, ColdStartSpec, RatePoint, ServiceSpec
from dratwin.sim.batch import RunOutput
from dratwin.sim.exports import metrics_sets
from dratwin.sim.kubelet import ColdStart
from dratwin.sim.quick_scenario import ARRIVE_AT, RUN_FOR, parse_duration, run_spec
from dratwin.sim.run import SimOptions, Simulation, simulate
from dratwin.sim.store import Change
from dratwin.sim.workloads import GANG_ANNOTATION

Raw = dict[str, Any]


def template(name: str, gpus: int = 1) -> Raw:
    return claim_template(name, gpu_request(count=gpus))


def pod_template(claims: Mapping[str, tuple[str, str]]) -> Raw:
    """A pod spec using claims: ``{"g": ("template", "one")}`` or ``{"g": ("claim", "shared")}``."""
    references = [
        {"name": name, "resourceClaimTemplateName": target} if how == "template"
        else {"name": name, "resourceClaimName": target}
        for name, (how, target) in claims.items()
    ]
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"claims": [{"name": name} for name in claims]}}],
            "resourceClaims": references,
        }
    }


def _timed(meta: Raw, at: str | None, run_for: str | None, extra: Mapping[str, str] | None = None) -> Raw:
    annotations = dict(extra or {})
    if at is not None:
        annotations[ARRIVE_AT] = at
    if run_for is not None:
        annotations[RUN_FOR] = run_for
    if annotations:
        meta["annotations"] = annotations
    return meta


def job(name: str, claim_template: str = "", *, at: str | None = None, run_for: str | None = "10m",
        completions: int | None = None, parallelism: int | None = None, indexed: bool = False,
        gang: bool = False, claims: Mapping[str, tuple[str, str]] | None = None, cpu: str = "",
        priority_class: str = "", backoff_limit: int | None = None) -> Raw:
    spec: Raw = {"template": pod_template(claims or ({"g": ("template", claim_template)} if claim_template else {}))}
    pod_spec = spec["template"]["spec"]
    if cpu:
        pod_spec["containers"][0]["resources"]["requests"] = {"cpu": cpu}
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    if backoff_limit is not None:
        spec["backoffLimit"] = backoff_limit
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if indexed:
        spec["completionMode"] = "Indexed"
    meta = _timed({"name": name, "namespace": "default"}, at, run_for, {GANG_ANNOTATION: "true"} if gang else None)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def bare_pod(name: str, claims: Mapping[str, tuple[str, str]], *, at: str | None = None,
             run_for: str | None = "10m") -> Raw:
    meta = _timed({"name": name, "namespace": "default"}, at, run_for)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, **pod_template(claims)}


def simulate_text(text: str, *, until: str = "1h", seed: int = 0, check: bool = True,
                  events: bool = True, launch_seconds: float = 60.0,
                  cold_start: ColdStart | None = None, keda_on_rate: bool = False,
                  services: Sequence[ServiceSpec] = (), cold_start_spec: ColdStartSpec | None = None,
                  catalog: Catalog | None = None, inline_cycles: bool = True) -> Simulation:
    spec = run_spec(load_text(text, "scenario.yaml"), name="scenario.yaml", seed=seed,
                    until_seconds=parse_duration(until))
    spec = dataclasses.replace(spec, default_node_launch_seconds=launch_seconds, services=tuple(services),
                               cold_start=cold_start_spec or ColdStartSpec())
    return simulate(spec, SimOptions(catalog=catalog or load_catalog(), check_invariants=check, keep_events=events,
                                     cold_start=cold_start, keda_activation_on_request_rate=keda_on_rate,
                                     keep_utilization=True, inline_cycles=inline_cycles))


def times(sim: Simulation, type_: str, kind: str, key_prefix: str = "") -> list[float]:
    """When changes of one type and kind happened, for keys starting with ``key_prefix``."""
    return [c.time for c in sim.events if c.type == type_ and c.kind == kind and c.key.startswith(key_prefix)]


def changes(sim: Simulation, kind: str, key_prefix: str = "") -> list[Change]:
    return [c for c in sim.events if c.kind == kind and c.key.startswith(key_prefix)]


def bound_at(sim: Simulation, pod_prefix: str) -> list[float]:
    """When pods whose key starts with ``pod_prefix`` were bound (their first Modified event with a node)."""
    return [c.time for c in sim.events if c.kind == "Pod" and c.type == "Scheduled" and c.key.startswith(pod_prefix)]


def deployment(name: str, claim_template: str, replicas: int, *, at: str | None = None,
               run_for: str | None = None) -> Raw:
    labels = {"app": name}
    template = pod_template({"g": ("template", claim_template)})
    template["spec"]["restartPolicy"] = "Always"
    template["metadata"] = {"labels": labels}
    meta = _timed({"name": name, "namespace": "default"}, at, run_for)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}}


def inference(name: str = "svc", *points: tuple[float, float], per_gpu: float = 10.0,
              autoscaler: AutoscalerSpec | None = None) -> ServiceSpec:
    """The service of Deployment default/``name``: its rate curve as (seconds, requests per second)."""
    return ServiceSpec(f"default/{name}", tuple(RatePoint(t, r) for t, r in points), per_gpu, autoscaler)


def shared_deployment(name: str, claim: str, replicas: int) -> Raw:
    """A Deployment whose pods all use one ResourceClaim: they share its device (time-slicing)."""
    raw = deployment(name, "", replicas)
    raw["spec"]["template"]["spec"] = pod_template({"g": ("claim", claim)})["spec"]
    raw["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    return raw


def mig_slice(node_name: str, profile: str, count: int, *, driver: str = GPU_DRIVER) -> Raw:
    """A node's ResourceSlice of ``count`` MIG partitions of one profile (``type: mig``)."""
    devices = [{"name": f"mig-{i}", "attributes": {"type": {"string": "mig"}, "profile": {"string": profile}},
                "capacity": {"memory": {"value": "40Gi"}}} for i in range(count)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-mig"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}


def gpu_nodepool(types: Sequence[str], *, name: str = "gpu", consolidate_after: str | None = None,
                 policy: str | None = None, budgets: Sequence[Mapping[str, Any]] | None = None) -> Raw:
    """A Karpenter NodePool over some instance types, with its disruption settings (Karpenter's defaults
    where not given)."""
    disruption: Raw = {}
    if consolidate_after is not None:
        disruption["consolidateAfter"] = consolidate_after
    if policy is not None:
        disruption["consolidationPolicy"] = policy
    if budgets is not None:
        disruption["budgets"] = [dict(b) for b in budgets]
    raw = nodepool(name, requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                        "values": list(types)}])
    if disruption:
        raw["spec"]["disruption"] = disruption
    return raw


def with_pod_annotations(workload: Raw, annotations: Mapping[str, str]) -> Raw:
    """The workload with annotations on its pod template (``karpenter.sh/do-not-disrupt``)."""
    template = workload["spec"]["template"]
    template.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
    return workload


def karpenter_nodes(nodepool_name: str, instance_type: str, count: int = 1) -> list[Raw]:
    """Nodes Karpenter launched before the run (labelled with their NodePool), with their ResourceSlices."""
    from dratwin.cluster.generate import generate
    from dratwin.cluster.generate_options import KARPENTER, GenerateOptions, NodeGroup

    generated = generate(GenerateOptions(groups=(NodeGroup(instance_type, count),), nodepool=nodepool_name,
                                         name_prefix=f"{nodepool_name}-old", provisioner=KARPENTER), load_catalog())
    return [*generated.nodes, *generated.slices]


def simulated_metrics(until: str = "30m") -> list[MetricsSet]:
    """The metrics of a short seeded run: a two-GPU node, a half-busy inference replica on one GPU (5 of the
    10 requests per second it can serve) and a training Job on the other, sampled every 5 minutes."""
    from tests.builders.manifests import gpu_class, gpu_slice, manifest, node

    text = manifest(gpu_class(), node("n1", labels={"node.kubernetes.io/instance-type": "p5.48xlarge"}),
                    gpu_slice("n1", 2), template("one"), deployment("svc", "one", 1),
                    job("train", "one", at="10s", run_for="1h"))
    spec = run_spec(load_text(text, "scenario.yaml"), name="scenario.yaml", seed=0, until_seconds=parse_duration(until))
    spec = dataclasses.replace(spec, services=(inference("svc", (0.0, 5.0), (parse_duration(until), 5.0)),))
    sim = simulate(spec, SimOptions(catalog=load_catalog(), sample_every=300.0))
    return metrics_sets([RunOutput(sim.result, sim.timeline)])

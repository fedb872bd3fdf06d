"""A plan resolved into run specifications: one per variant and seed, in the file's order (variants, then seeds).

For each variant the cluster is built (the variant's fleet or the scenario's; generated nodes with the
variant's GPU manager and MIG layout), and for each seed every workload's arrivals are sampled
(:mod:`dratwin.scenario.sampling`) and instantiated (:mod:`dratwin.scenario.instances`). The cluster does
not depend on the seed, so it is built once per variant; the arrivals do not depend on the variant, so every
variant of a seed runs the same arrivals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from dratwin.api.duplicates import object_key
from dratwin.api.loader import FieldPath, LoadedObject, SourceLocation
from dratwin.catalog.instances import UnknownInstanceTypeError
from dratwin.cluster.generate import generate
from dratwin.cluster.generate_options import (
    AUTO_MODE,
    KARPENTER,
    GenerateError,
    GenerateOptions,
    MigRequest,
    NodeGroup,
    parse_mig_request,
    parse_taint,
)
from dratwin.scenario import format as fmt
from dratwin.scenario.instances import instance, key
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import Arrival, Provisioner, RunSpec, ServiceSpec
from dratwin.scenario.plan import ClusterPlan, Plan, VariantPlan, WorkloadPlan
from dratwin.scenario.sampling import diurnal_times, first, poisson_times, stream
from dratwin.trace.alibaba import AlibabaPod


@dataclass(frozen=True)
class Inputs:
    """What the files named by the scenario hold, read beforehand (resolution does no I/O)."""

    origin: str  # the scenario file
    files: Mapping[FieldPath, Sequence[LoadedObject]]  # by the path of a cluster's ``files`` field
    traces: Mapping[str, Sequence[AlibabaPod]]  # by workload name
    line_of: Mapping[FieldPath, int]  # lines of the scenario's own fields, for the objects made from them


def resolve(plan: Plan, inputs: Inputs, judge: Judge, *, seeds: Sequence[int] | None = None,
            until_seconds: float | None = None) -> list[RunSpec]:
    """Every run of the plan (``seeds`` and ``until_seconds`` replace the file's); problems go to the judge."""
    until = until_seconds if until_seconds is not None else plan.duration_seconds
    runs: list[RunSpec] = []
    arrivals = {seed: _arrivals(plan, inputs, seed, until) for seed in (seeds or plan.seeds)}
    for variant in plan.variants:
        cluster_plan = variant.cluster or plan.cluster
        objects = _cluster_objects(cluster_plan, variant, inputs, judge)
        made = arrivals
        if variant.templates:  # the same times (the same streams), other objects
            workloads = tuple(replace(w, objects=variant.templates.get(w.name, w.objects)) for w in plan.workloads)
            made = {seed: _arrivals(replace(plan, workloads=workloads), inputs, seed, until) for seed in arrivals}
        _check_names(objects, made, plan, judge)
        for seed, (seed_arrivals, instances) in made.items():
            runs.append(RunSpec(
                scenario=plan.name,
                variant=variant.name,
                seed=seed,
                until_seconds=until,
                objects=objects,
                arrivals=seed_arrivals,
                provisioner=_provisioner(cluster_plan.written),
                scoring=variant.scoring or plan.scoring,
                services=_services(plan, variant, instances),
                cold_start=replace(plan.cold_start, model_bytes=_model_bytes(plan, instances)),
                node_launch_seconds=dict(cluster_plan.launch_seconds),
                default_node_launch_seconds=cluster_plan.default_launch_seconds,
            ))
    return runs


def _provisioner(cluster: fmt.Cluster) -> Provisioner:
    if cluster.auto_mode:
        return "auto-mode"
    return "karpenter" if cluster.node_pools else "none"


# ---- cluster ---------------------------------------------------------------------------------------------


def _cluster_objects(cluster: ClusterPlan, variant: VariantPlan, inputs: Inputs,
                     judge: Judge) -> tuple[LoadedObject, ...]:
    objects: list[LoadedObject] = []
    for index in range(len(cluster.written.files)):
        objects.extend(inputs.files.get((*cluster.path, "files", index), ()))
    objects.extend(cluster.objects)
    objects.extend(_generated(cluster, variant, inputs, judge))
    return with_overrides(objects, variant.objects)


def with_overrides(objects: Sequence[LoadedObject], overrides: Sequence[LoadedObject]) -> tuple[LoadedObject, ...]:
    """A variant's ``objects``: each replaces the cluster's object of the same identity in its place (a
    ClusterQueue with other quotas, a Kueue Configuration with fair sharing), or is added at the end. The
    identity is the API group, kind, namespace and name (:func:`dratwin.api.duplicates.object_key`: a v1beta1
    object is replaced by its v1beta2 form)."""
    replacing = {key: o for o in overrides if (key := object_key(o)) is not None}
    out = [replacing.pop(key, o) if (key := object_key(o)) is not None else o for o in objects]
    out.extend(o for o in overrides if (key := object_key(o)) is not None and key in replacing)
    return tuple(out)


def _generated(cluster: ClusterPlan, variant: VariantPlan, inputs: Inputs, judge: Judge) -> list[LoadedObject]:
    """The generated nodes and slices: entries with the same options are generated together, each part's
    names after the previous part's."""
    parts: dict[GenerateOptions, list[tuple[int, fmt.GenerateEntry]]] = {}
    for index, entry in enumerate(cluster.written.generate):
        parts.setdefault(_options(entry, variant, cluster.written), []).append((index, entry))
    objects: list[LoadedObject] = []
    first_index = 0
    for options, entries in parts.items():
        groups = tuple(NodeGroup(entry.instance_type, entry.count) for _, entry in entries)
        where = (*cluster.path, "generate", entries[0][0])
        try:
            generated = generate(replace(options, groups=groups, first_node_index=first_index))
        except (GenerateError, UnknownInstanceTypeError) as error:
            field = "instanceType" if isinstance(error, UnknownInstanceTypeError) else ""
            judge.invalid((*where, field) if field else where, None, str(error),
                          "see `dratwin cluster generate --help` for the instance types and options")
            continue
        first_index += sum(group.count for group in groups)
        location = SourceLocation(inputs.origin, 0, inputs.line_of.get(where, 0))
        objects.extend(LoadedObject(raw, location) for raw in generated.objects)
    return objects


def _options(entry: fmt.GenerateEntry, variant: VariantPlan, cluster: fmt.Cluster) -> GenerateOptions:
    mig: tuple[MigRequest, ...] = tuple(parse_mig_request(text) for text in entry.mig)
    chosen = not variant.mig_instance_types or entry.instance_type in variant.mig_instance_types
    if variant.mig is not None and chosen:
        mig = variant.mig
    return GenerateOptions(
        groups=(),
        gpu_manager=variant.gpu_manager or entry.gpu_manager,
        efa_manager=entry.efa_manager,
        neuron_manager=entry.neuron_manager,
        mig=mig,
        zones=tuple(entry.zones) or ("us-east-1a",),
        provisioner=AUTO_MODE if cluster.auto_mode else KARPENTER,
        nodepool=entry.nodepool,
        taints=tuple(parse_taint(text) for text in entry.taints),
    )


# ---- arrivals --------------------------------------------------------------------------------------------

Instances = dict[str, list[tuple[LoadedObject, ...]]]  # by workload: each arrival's objects


def _arrivals(plan: Plan, inputs: Inputs, seed: int, horizon: float) -> tuple[tuple[Arrival, ...], Instances]:
    arrivals: list[tuple[float, int, int, Arrival]] = []
    instances: Instances = {}
    for workload in plan.workloads:
        times, runs = _times(workload, inputs, seed, min(workload.until_seconds, horizon))
        made = instances.setdefault(workload.name, [])
        for number, (at, run) in enumerate(zip(times, runs, strict=True)):
            objects = instance(workload.objects, "" if workload.single else f"-{number}")
            made.append(objects)
            source = workload.objects[0].source if workload.objects else None
            arrivals.append((at, workload.index, number, Arrival(at, objects, run, source)))
    arrivals.sort(key=lambda item: item[:3])
    return tuple(item[3] for item in arrivals), instances


def _times(workload: WorkloadPlan, inputs: Inputs, seed: int, until: float) -> tuple[list[float], list[float | None]]:
    arrival = workload.arrival
    if arrival.kind == "trace":
        pods = [p for p in inputs.traces.get(workload.name, ()) if p.creation_time is not None]
        pods = [p for p in pods if p.creation_time is not None and p.creation_time < until]
        pods = pods[: workload.count] if workload.count is not None else pods
        times = [float(p.creation_time or 0) for p in pods]
        if workload.run_time == "trace":
            return times, [_trace_run(p) for p in pods]
    elif arrival.kind == "at":
        times = [arrival.at_seconds] * (workload.count or 1) if arrival.at_seconds < until else []
    else:
        rng = stream(seed, workload.name, "arrival")
        process = (poisson_times(rng, arrival.rate, until) if arrival.kind == "poisson" else
                   diurnal_times(rng, arrival.diurnal, until) if arrival.diurnal is not None else iter(()))
        times = first(process, workload.count)
    run_time = workload.run_time
    if run_time is None or run_time == "trace":
        return times, [None] * len(times)
    rng = stream(seed, workload.name, "runFor")
    return times, [run_time.sample(rng) for _ in times]


def _trace_run(pod: AlibabaPod) -> float | None:
    """How long a trace's pod ran: from its scheduling (its creation when not scheduled) to its deletion."""
    start = pod.scheduled_time if pod.scheduled_time is not None else pod.creation_time
    if pod.deletion_time is None or start is None:
        return None
    return float(max(pod.deletion_time - start, 0))


def _services(plan: Plan, variant: VariantPlan, instances: Instances) -> tuple[ServiceSpec, ...]:
    services: list[ServiceSpec] = []
    for workload in plan.workloads:
        service = workload.service
        if service is None:
            continue
        scaler = variant.autoscalers.get(workload.name, service.autoscaler)
        for number, objects in enumerate(instances.get(workload.name, [])):
            name = service.deployment if workload.single else f"{service.deployment}-{number}"
            deployment = next((o for o in objects if o.kind == "Deployment" and o.name == name), None)
            if deployment is not None:
                services.append(ServiceSpec(key(deployment), service.rate, service.requests_per_second_per_gpu,
                                            scaler))
    return tuple(services)


def _model_bytes(plan: Plan, instances: Instances) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for workload in plan.workloads:
        size = plan.cold_start.model_bytes.get(workload.name)
        if size is None:
            continue
        for objects in instances.get(workload.name, []):
            sizes.update({key(obj): size for obj in objects if obj.kind not in ("ResourceClaim",
                                                                                 "ResourceClaimTemplate")})
    return sizes


def _check_names(cluster: Sequence[LoadedObject], arrivals: Mapping[int, tuple[tuple[Arrival, ...], Instances]],
                 plan: Plan, judge: Judge) -> None:
    """Every object of a run is named once (two workloads whose templates share a name would collide)."""
    owners: dict[tuple[str, str, str], str] = {_identity(o): "spec.cluster" for o in cluster}
    reported: set[str] = set()
    for _, instances in arrivals.values():
        for workload in plan.workloads:
            for objects in instances.get(workload.name, []):
                for obj in objects:
                    owner = owners.setdefault(_identity(obj), workload.name)
                    if owner != workload.name and workload.name not in reported:
                        reported.add(workload.name)
                        judge.duplicate(("spec", "workloads", workload.index, "template"), obj.name,
                                        f"{obj.kind} {obj.name} is also made by {owner}",
                                        "give the objects of each workload their own names")


_NAMESPACED = frozenset({"Pod", "Job", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "CronJob",
                         "ReplicationController", "ResourceClaim", "ResourceClaimTemplate", "ComputeDomain",
                         "ConfigMap", "Secret", "Service", "PodDisruptionBudget", "ServiceAccount"})


def _identity(obj: LoadedObject) -> tuple[str, str, str]:
    namespace = (obj.namespace or "default") if obj.kind in _NAMESPACED else ""
    return obj.kind, namespace, obj.name

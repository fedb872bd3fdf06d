"""Judging a decoded scenario: every value read and checked, every problem reported, into a :class:`Plan`.

The check is pure: objects embedded in the file are made by ``child`` (which knows their lines), files
named by the scenario are read later (:mod:`dratwin.scenario.document`). Every problem of the file is
reported before anything is resolved, so one run of ``dratwin validate`` shows them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import msgspec

from dratwin.api.codec import POD_TEMPLATES
from dratwin.api.duplicates import ObjectKey, object_key
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.schema import MapKey
from dratwin.api.validation_base import ProblemKind
from dratwin.api.validation_formats import did_you_mean, dns_label
from dratwin.cluster.generate_options import GenerateError, MigRequest, parse_mig_request, parse_taint
from dratwin.scenario import cold_start as defaults
from dratwin.scenario import format as fmt
from dratwin.scenario.autoscaling import autoscaler_spec, merged
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import AutoscalerSpec, ColdStartSpec, RatePoint
from dratwin.scenario.plan import ArrivalPlan, ClusterPlan, Plan, ServicePlan, VariantPlan, WorkloadPlan
from dratwin.scenario.sampling import DiurnalRate, Exponential, Fixed, LogNormal, RunTime, Uniform
from dratwin.scheduler.scoring import SCORING_NAMES

Child = Callable[[FieldPath, dict[str, Any]], LoadedObject]

DEFAULT_SEED = 0
DEFAULT_VARIANT = "default"
# The scheduler's NodeResourcesFit strategies, then the opt-in placement policies of the FGD paper's
# simulator (reported beside the faithful result, never instead of it).
SCORING = SCORING_NAMES
WORKLOAD_KINDS = frozenset({kind for _, kind in POD_TEMPLATES} | {"Pod"} - {"PodTemplate"})
CLAIM_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ConfigMap", "Secret", "Service",
                         "PodDisruptionBudget", "ServiceAccount", "ComputeDomain"})
NODE_POOL_KINDS = frozenset({"NodePool", "EC2NodeClass", "NodeClass"})
_SPEC: FieldPath = ("spec",)
MAX_ARRIVALS = 1_000_000  # of one workload in one run


def interpret(written: fmt.ScenarioFile, judge: Judge, child: Child) -> Plan:
    """The plan of a scenario; its problems are in the judge's reporter (the plan is usable only without errors)."""
    spec = written.spec
    if written.api_version != fmt.API_VERSION:
        judge.unsupported(("apiVersion",), written.api_version, [fmt.API_VERSION])
    if written.kind != fmt.KIND:
        judge.unsupported(("kind",), written.kind, [fmt.KIND])
    for message in dns_label(written.metadata.name):
        judge.invalid(("metadata", "name"), written.metadata.name, message)
    duration = judge.duration((*_SPEC, "duration"), spec.duration, positive=True) or 0.0
    cluster = _cluster(spec.cluster, (*_SPEC, "cluster"), judge, child)
    workloads = tuple(_workloads(spec.workloads, duration, judge, child))
    check_scoring(spec.scoring, (*_SPEC, "scoring"), judge)
    return Plan(
        name=written.metadata.name,
        duration_seconds=duration,
        seeds=_seeds(spec, judge),
        cluster=cluster,
        workloads=workloads,
        cold_start=_cold_start(spec.cold_start, {w.name for w in workloads}, judge),
        scoring=spec.scoring,
        variants=tuple(_variants(spec, cluster, workloads, judge, child)),
    )


def _seeds(spec: fmt.Spec, judge: Judge) -> tuple[int, ...]:
    if spec.seeds and spec.seed is not None:
        judge.forbidden((*_SPEC, "seeds"), "give either seed or seeds, not both", "put the seed into the seeds list")
    check_seeds(spec.seeds, (*_SPEC, "seeds"), judge)
    return tuple(spec.seeds) or (spec.seed if spec.seed is not None else DEFAULT_SEED,)


def check_seeds(seeds: Sequence[int], path: FieldPath, judge: Judge) -> None:
    seen: set[int] = set()
    for index, seed in enumerate(seeds):
        if seed in seen:
            judge.duplicate((*path, index), seed, "a repeated seed repeats a run", "give each seed once")
        seen.add(seed)


def check_scoring(value: str, path: FieldPath, judge: Judge) -> None:
    if value not in SCORING:
        judge.unsupported(path, value, list(SCORING))


# ---- cluster ---------------------------------------------------------------------------------------------


def _cluster(cluster: fmt.Cluster, path: FieldPath, judge: Judge, child: Child) -> ClusterPlan:
    objects = [child((*path, "objects", i), raw) for i, raw in enumerate(cluster.objects)]
    for index, raw in enumerate(cluster.node_pools):
        where = (*path, "nodePools", index)
        if raw.get("kind") not in NODE_POOL_KINDS:
            judge.invalid((*where, "kind"), raw.get("kind"), "nodePools holds Karpenter NodePools and "
                          "EC2NodeClasses (or Auto Mode NodeClasses)", "put other objects into cluster.objects")
        objects.append(child(where, raw))
    for index, entry in enumerate(cluster.generate):
        check_generate_entry(entry, (*path, "generate", index), judge)
    launch = cluster.launch_times or fmt.LaunchTimes()
    default_launch = 60.0
    if launch.default is not None:
        default_launch = judge.duration((*path, "launchTimes", "default"), launch.default) or default_launch
    by_type: dict[str, float] = {}
    for name, value in launch.by_instance_type.items():
        seconds = judge.duration((*path, "launchTimes", "byInstanceType", MapKey(name)), value)
        if seconds is not None:
            by_type[name] = seconds
    return ClusterPlan(cluster, path, tuple(objects), by_type, default_launch)


def check_generate_entry(entry: fmt.GenerateEntry, path: FieldPath, judge: Judge) -> None:
    if entry.count < 1:
        judge.invalid((*path, "count"), entry.count, "must be at least 1")
    for index, text in enumerate(entry.mig):
        mig_request((*path, "mig", index), text, judge)
    for index, text in enumerate(entry.taints):
        try:
            parse_taint(text)
        except GenerateError as error:
            judge.invalid((*path, "taints", index), text, str(error))


def mig_request(path: FieldPath, text: str, judge: Judge) -> MigRequest | None:
    try:
        return parse_mig_request(text)
    except GenerateError as error:
        judge.invalid(path, text, str(error), "the profiles `dratwin cluster generate --mig` takes")
        return None


# ---- workloads -------------------------------------------------------------------------------------------


def _workloads(workloads: Sequence[fmt.Workload], duration: float, judge: Judge, child: Child) -> list[WorkloadPlan]:
    plans: list[WorkloadPlan] = []
    seen: dict[str, int] = {}
    for index, workload in enumerate(workloads):
        path = (*_SPEC, "workloads", index)
        for message in dns_label(workload.name):
            judge.invalid((*path, "name"), workload.name, message)
        if workload.name in seen:
            judge.duplicate((*path, "name"), workload.name, f"workload {seen[workload.name]} has this name too",
                            "name each workload once: its samples are seeded by its name")
        seen.setdefault(workload.name, index)
        plans.append(_workload(workload, index, path, duration, judge, child))
    return plans


def _workload(workload: fmt.Workload, index: int, path: FieldPath, duration: float, judge: Judge,
              child: Child) -> WorkloadPlan:
    objects = _template(workload.template, (*path, "template"), judge, child)
    arrival = _arrival(workload.arrival, (*path, "arrival"), judge)
    until = duration
    if workload.until is not None:
        until = judge.duration((*path, "until"), workload.until, positive=True) or duration
    if workload.count is not None and workload.count < 1:
        judge.invalid((*path, "count"), workload.count, "must be at least 1")
    _check_volume(arrival, workload.count, min(until, duration), path, judge)
    if arrival.kind == "at" and duration and arrival.at_seconds >= min(until, duration):
        judge.reporter.warn(ProblemKind.INVALID, (*path, "arrival", "at"), "arrives when the run is over: it "
                            "is never created", "make it arrive before the duration (or until) ends")
    run_time = _run_for(workload.run_for, arrival, objects, (*path, "runFor"), judge)
    service = None
    if workload.service is not None:
        service = _service(workload.service, objects, (*path, "service"), duration, judge)
    return WorkloadPlan(workload.name, index, objects, arrival, workload.count, min(until, duration), run_time,
                        service)


def _check_volume(arrival: ArrivalPlan, count: int | None, until: float, path: FieldPath, judge: Judge) -> None:
    """A workload that would make more arrivals than a run can hold (a rate per second meant per hour)."""
    rate = arrival.rate if arrival.kind == "poisson" else arrival.diurnal.mean if arrival.diurnal else 0.0
    expected = rate * until if arrival.kind in ("poisson", "diurnal") else float(count or 1)
    if count is not None:
        expected = min(expected, float(count))
    if expected > MAX_ARRIVALS:
        where = (*path, "count") if arrival.kind == "at" else arrival.path
        judge.invalid(where, f"{expected:,.0f} arrivals", f"more than {MAX_ARRIVALS:,} arrivals of one workload",
                      "check the rate's unit (12/h, not 12/s), or limit it with count or until")


def _template(template: dict[str, Any] | list[dict[str, Any]], path: FieldPath, judge: Judge,
              child: Child) -> tuple[LoadedObject, ...]:
    raws = [(path, template)] if isinstance(template, dict) else [((*path, i), t) for i, t in enumerate(template)]
    objects = tuple(child(where, raw) for where, raw in raws)
    for obj, (where, _) in zip(objects, raws, strict=True):
        if obj.kind and obj.kind not in WORKLOAD_KINDS | CLAIM_KINDS:
            judge.forbidden((*where, "kind"), f"a {obj.kind} is not part of a workload: it exists once, not per "
                            "arrival", "put it into spec.cluster.objects")
    if not any(obj.kind in WORKLOAD_KINDS for obj in objects):
        judge.required(path, "a template needs a Pod or a workload (Job, Deployment, StatefulSet, ...)",
                       "add the workload's manifest; its claim templates may come along in a list")
    return objects


def _arrival(arrival: fmt.ArrivalSpec | None, path: FieldPath, judge: Judge) -> ArrivalPlan:
    if arrival is None:
        return ArrivalPlan("at", path)
    given = [name for name in ("at", "poisson", "diurnal", "trace") if getattr(arrival, name) is not None]
    if len(given) != 1:
        message = "must have exactly one of at, poisson, diurnal, trace" + (f" (has {', '.join(given)})" if given
                                                                             else "")
        judge.invalid(path, given or None, message, "e.g. arrival: {poisson: {rate: 12/h}}")
        return ArrivalPlan("at", path)
    if arrival.at is not None:
        return ArrivalPlan("at", path, at_seconds=judge.duration((*path, "at"), arrival.at) or 0.0)
    if arrival.poisson is not None:
        return ArrivalPlan("poisson", path, rate=judge.rate((*path, "poisson", "rate"), arrival.poisson.rate) or 0.0)
    if arrival.diurnal is not None:
        return ArrivalPlan("diurnal", path, diurnal=diurnal_rate(arrival.diurnal, (*path, "diurnal"), judge))
    assert arrival.trace is not None
    return ArrivalPlan("trace", (*path, "trace"), trace_file=arrival.trace.file)


def diurnal_rate(diurnal: fmt.Diurnal, path: FieldPath, judge: Judge) -> DiurnalRate:
    mean = judge.rate((*path, "mean"), diurnal.mean) or 0.0
    peak = judge.time_of_day((*path, "peak"), diurnal.peak) or 0.0
    amplitude = judge.number((*path, "amplitude"), diurnal.amplitude, 0.0, 1.0,
                             hint="the swing around the mean: 0 is a flat rate, 1 falls to nothing at the low point")
    return DiurnalRate(mean, peak, 0.0 if amplitude is None else amplitude)


def _run_for(run_for: str | fmt.RunForSpec | None, arrival: ArrivalPlan, objects: Sequence[LoadedObject],
             path: FieldPath, judge: Judge) -> RunTime | Literal["trace"] | None:
    if run_for is None:
        if any(obj.kind in ("Job", "CronJob") for obj in objects):
            judge.required(path, "a Job's pods run for some time", "e.g. runFor: 30m, or a distribution "
                           "such as runFor: {exponential: {mean: 30m}}")
        return None
    if run_for == "trace":
        if arrival.kind != "trace":
            judge.invalid(path, run_for, "run times come from a trace only with a trace arrival",
                          "use arrival: {trace: {file: ...}}, or a time such as 30m")
        return "trace"
    if isinstance(run_for, str):
        seconds = judge.duration(path, run_for, positive=True)
        return Fixed(seconds) if seconds is not None else None
    given = [n for n in ("exponential", "lognormal", "uniform") if getattr(run_for, n) is not None]
    if len(given) != 1:
        judge.invalid(path, given or None, "must have exactly one of exponential, lognormal, uniform",
                      "or a fixed time such as runFor: 30m")
        return None
    if run_for.exponential is not None:
        mean = judge.duration((*path, "exponential", "mean"), run_for.exponential.mean, positive=True)
        return Exponential(mean) if mean is not None else None
    if run_for.lognormal is not None:
        median = judge.duration((*path, "lognormal", "median"), run_for.lognormal.median, positive=True)
        sigma = judge.number((*path, "lognormal", "sigma"), run_for.lognormal.sigma, 0.0, low_open=True)
        return LogNormal(median, sigma) if median is not None and sigma is not None else None
    assert run_for.uniform is not None
    low = judge.duration((*path, "uniform", "min"), run_for.uniform.min, positive=True)
    high = judge.duration((*path, "uniform", "max"), run_for.uniform.max, positive=True)
    if low is not None and high is not None and high < low:
        judge.invalid((*path, "uniform", "max"), run_for.uniform.max, "must not be less than min")
        return None
    return Uniform(low, high) if low is not None and high is not None else None


def _service(service: fmt.Service, objects: Sequence[LoadedObject], path: FieldPath, duration: float,
             judge: Judge) -> ServicePlan | None:
    deployments = [obj.name for obj in objects if obj.kind == "Deployment"]
    name = service.deployment
    if name is None and len(deployments) != 1:
        judge.required((*path, "deployment"), f"the template has {len(deployments)} Deployments: name the one "
                       "that serves", f"one of: {', '.join(deployments)}" if deployments else
                       "a service is a Deployment: put one into the template")
    elif name is not None and name not in deployments:
        judge.not_found((*path, "deployment"), name, "no Deployment of that name in the template",
                        did_you_mean(name, deployments))
    rate = _rate_curve(service.rate, (*path, "rate"), duration, judge)
    per_gpu = judge.number((*path, "requestsPerSecondPerGpu"), service.requests_per_second_per_gpu, 0.0,
                           low_open=True)
    scaler = None
    if service.autoscaler is not None:
        scaler = autoscaler_spec(service.autoscaler, (*path, "autoscaler"), judge)
    chosen = name if name is not None else (deployments[0] if deployments else "")
    return ServicePlan(chosen, rate, per_gpu or 0.0, scaler, service.autoscaler)


def _rate_curve(curve: fmt.RateCurve, path: FieldPath, duration: float, judge: Judge) -> tuple[RatePoint, ...]:
    if bool(curve.points) == (curve.diurnal is not None):
        judge.invalid(path, None, "must have exactly one of points, diurnal",
                      "e.g. rate: {diurnal: {mean: 40/s, peak: \"14:00\", amplitude: 0.6}}")
        return ()
    if curve.diurnal is not None:
        daily = diurnal_rate(curve.diurnal, (*path, "diurnal"), judge)
        step = judge.duration((*path, "step"), curve.step, positive=True) or 600.0
        count = int(duration // step)
        times = [i * step for i in range(count + 1)] + ([duration] if count * step < duration else [])
        return tuple(RatePoint(t, daily.at(t)) for t in times)
    points: list[RatePoint] = []
    for index, point in enumerate(curve.points):
        where = (*path, "points", index)
        at = judge.duration((*where, "at"), point.at)
        rps = judge.number((*where, "requestsPerSecond"), point.requests_per_second, 0.0)
        if at is None or rps is None:
            continue
        if points and at < points[-1].at_seconds:
            judge.invalid((*where, "at"), point.at, "points must be in time order")
        points.append(RatePoint(at, rps))
    return tuple(points)


# ---- cold start ------------------------------------------------------------------------------------------


def _cold_start(written: fmt.ColdStart | None, workloads: set[str], judge: Judge) -> ColdStartSpec:
    if written is None:
        written = fmt.ColdStart()
    path = (*_SPEC, "coldStart")
    images = {image: judge.size((*path, "images", MapKey(image)), size) or 0 for image, size in written.images.items()}
    models: dict[str, int] = {}
    for name, written_size in written.models.items():
        where = (*path, "models", MapKey(name))
        if name not in workloads:
            judge.not_found(where, name, "models are given by workload name", did_you_mean(name, workloads))
        models[name] = judge.size(where, written_size) or 0

    def size(value: str | None, name: str, default: int) -> int:
        return default if value is None else (judge.size((*path, name), value) or default)

    def bandwidth(value: str | None, name: str, default: float) -> float:
        return default if value is None else (judge.bandwidth((*path, name), value) or default)

    warm_up = defaults.DEFAULT_WARM_UP_SECONDS
    if written.warm_up is not None:
        warm_up = judge.duration((*path, "warmUp"), written.warm_up) or 0.0
    return ColdStartSpec(
        image_bytes=images,
        default_image_bytes=size(written.default_image_size, "defaultImageSize", defaults.DEFAULT_IMAGE_BYTES),
        node_image_bandwidth=bandwidth(written.image_pull_bandwidth, "imagePullBandwidth",
                                       defaults.DEFAULT_IMAGE_PULL_BANDWIDTH),
        model_bytes=models,
        object_storage_bandwidth=bandwidth(written.object_storage_bandwidth, "objectStorageBandwidth",
                                           defaults.DEFAULT_OBJECT_STORAGE_BANDWIDTH),
        cluster_cache=bool(written.cluster_cache),
        cluster_cache_bandwidth=bandwidth(written.cluster_cache_bandwidth, "clusterCacheBandwidth",
                                          defaults.DEFAULT_CLUSTER_CACHE_BANDWIDTH),
        gpu_load_bandwidth=bandwidth(written.gpu_load_bandwidth, "gpuLoadBandwidth",
                                     defaults.DEFAULT_GPU_LOAD_BANDWIDTH),
        warm_up_seconds=warm_up,
    )


# ---- variants --------------------------------------------------------------------------------------------


def _variants(spec: fmt.Spec, cluster: ClusterPlan, workloads: Sequence[WorkloadPlan], judge: Judge,
              child: Child) -> list[VariantPlan]:
    if not spec.variants:
        return [VariantPlan(DEFAULT_VARIANT)]
    plans: list[VariantPlan] = []
    seen: set[str] = set()
    for index, variant in enumerate(spec.variants):
        path = (*_SPEC, "variants", index)
        for message in dns_label(variant.name):
            judge.invalid((*path, "name"), variant.name, message)
        if variant.name in seen:
            judge.duplicate((*path, "name"), variant.name, "another variant has this name",
                            "name each variant once: results are reported by variant")
        seen.add(variant.name)
        plans.append(_variant(variant, (*path, "overrides"), cluster, workloads, judge, child))
    return plans


def _variant(variant: fmt.Variant, path: FieldPath, base: ClusterPlan, workloads: Sequence[WorkloadPlan],
             judge: Judge, child: Child) -> VariantPlan:
    over = variant.overrides
    cluster = _cluster(over.cluster, (*path, "cluster"), judge, child) if over.cluster is not None else None
    generated = (cluster or base).written.generate
    for name, value in (("gpuManager", over.gpu_manager), ("sharing", over.sharing)):
        if value is not None:
            needs_generated((*path, name), generated, judge)
    mig: tuple[MigRequest, ...] | None = None
    mig_types: tuple[str, ...] = ()
    if over.sharing == "whole":
        mig = ()
    elif isinstance(over.sharing, fmt.Sharing):
        if not over.sharing.mig:
            judge.required((*path, "sharing", "mig"), "name the MIG profiles", "e.g. mig: [3g.40gb=1, 1g.10gb]")
        found = [mig_request((*path, "sharing", "mig", i), t, judge) for i, t in enumerate(over.sharing.mig)]
        mig = tuple(m for m in found if m is not None)
        check_sharing_types((*path, "sharing", "instanceTypes"), over.sharing.instance_types, generated, judge)
        mig_types = tuple(over.sharing.instance_types)
    if over.scoring is not None:
        check_scoring(over.scoring, (*path, "scoring"), judge)
    autoscalers: dict[str, AutoscalerSpec | None] = {}
    if over.autoscaler is not None:
        services = [w for w in workloads if w.service is not None]
        if not services:
            judge.forbidden((*path, "autoscaler"), "no workload has a service to scale",
                            "give the inference Deployment's workload a service block")
        for workload in services:
            assert workload.service is not None
            combined = merged(workload.service.written_autoscaler, over.autoscaler)
            autoscalers[workload.name] = autoscaler_spec(combined, (*path, "autoscaler"), judge)
    templates = _template_overrides(over, path, workloads, judge, child)
    objects = tuple(child((*path, "objects", i), raw) for i, raw in enumerate(over.objects))
    named: set[ObjectKey] = set()
    for index, loaded in enumerate(objects):
        key = object_key(loaded)
        if key is None:
            judge.required((*path, "objects", index), "an object that replaces or adds to the cluster's needs its "
                           "kind and metadata.name", "e.g. the ClusterQueue to change, written whole")
        elif key in named:
            judge.duplicate((*path, "objects", index), loaded.name, f"another {loaded.kind} of this variant has "
                            "this name", "write each object once")
        else:
            named.add(key)
    return VariantPlan(variant.name, over.gpu_manager, mig, mig_types, over.scoring, cluster, autoscalers, templates,
                       objects=objects, written_autoscaler=over.autoscaler)


def needs_generated(path: FieldPath, generated: Sequence[fmt.GenerateEntry], judge: Judge) -> None:
    """GPU managers and MIG layouts are options of generated nodes: a fleet without ``generate`` has none."""
    if not generated:
        judge.forbidden(path, "applies to generated nodes, and the cluster has no cluster.generate",
                        "describe the fleet with cluster.generate (instance types and counts)")


def check_sharing_types(path: FieldPath, names: Sequence[str], generated: Sequence[fmt.GenerateEntry],
                        judge: Judge) -> None:
    """The instance types a MIG layout is limited to are generated by the cluster."""
    types = {entry.instance_type for entry in generated}
    for index, name in enumerate(names):
        if name not in types:
            judge.not_found((*path, index), name, "no generate entry of this instance type",
                            did_you_mean(name, types) or f"one of: {', '.join(sorted(types))}")


def _template_overrides(over: fmt.Overrides, path: FieldPath, workloads: Sequence[WorkloadPlan], judge: Judge,
                        child: Child) -> dict[str, tuple[LoadedObject, ...]]:
    """Workloads that create other objects in this variant (a claim for a MIG device instead of a whole GPU);
    they arrive as in the other variants, at the same times."""
    by_name = {w.name: w for w in workloads}
    templates: dict[str, tuple[LoadedObject, ...]] = {}
    for name, template in over.templates.items():
        where = (*path, "templates", MapKey(name))
        workload = by_name.get(name)
        if workload is None:
            judge.not_found(where, name, "templates are replaced by workload name", did_you_mean(name, by_name))
            continue
        objects = _template(template, where, judge, child)
        service = workload.service
        if service is not None and not any(o.kind == "Deployment" and o.name == service.deployment for o in objects):
            judge.required(where, f"the workload's service is Deployment {service.deployment}",
                           "keep the serving Deployment's name in the replaced template")
        templates[name] = objects
    return templates


def decode(raw: dict[str, Any]) -> fmt.ScenarioFile | str:
    """The typed file, or msgspec's message when it still does not decode (the structure check passed)."""
    try:
        return msgspec.convert(raw, fmt.ScenarioFile)
    except msgspec.ValidationError as error:
        return str(error)

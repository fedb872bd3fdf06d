"""A sweep's axes judged into choices, and each combination of choices made into one variant of the scenario.

Pure: the base scenario's plan and the decoded axes in, problems to the sweep's judge (at the sweep file's
lines), combinations out. A choice changes what a scenario variant overrides, with the scenario's own rules
(:mod:`dratwin.scenario.checks`): a GPU manager or a MIG layout needs generated nodes, the instance types a
layout is limited to must be generated, autoscaler knobs are merged over the service's and the variant's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from dratwin.api.loader import FieldPath
from dratwin.api.validation_formats import did_you_mean, dns_label
from dratwin.cluster.generate_options import MigRequest
from dratwin.scenario import format as fmt
from dratwin.scenario import sweep_format as sfmt
from dratwin.scenario.autoscaling import autoscaler_spec, merged
from dratwin.scenario.checks import (
    check_generate_entry,
    check_scoring,
    check_sharing_types,
    mig_request,
    needs_generated,
)
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import AutoscalerSpec
from dratwin.scenario.plan import ArrivalPlan, ClusterPlan, Plan, VariantPlan, WorkloadPlan
from dratwin.scenario.sampling import DiurnalRate

AXES_PATH: FieldPath = ("spec", "axes")
MAX_RATE_SCALE = 100.0
MAX_RUNS = 10_000  # combinations x seeds: a typo in a grid should not start a week of runs


@dataclass(frozen=True)
class Choice:
    """One value of one axis: its label in run names and tables, where it is written, and what it changes."""

    axis: str  # the file's name of the axis: gpuManager, sharing, ...
    label: str
    path: FieldPath
    variant: VariantPlan | None = None
    gpu_manager: str | None = None
    mig: tuple[MigRequest, ...] | None = None  # () whole GPUs
    mig_types: tuple[str, ...] = ()
    scoring: str | None = None
    fleet: ClusterPlan | None = None
    autoscaler: fmt.Autoscaler | None = None  # the knob this value sets, nothing else
    rate_scale: float | None = None


Reader = Callable[[list[Any], FieldPath, Plan, Judge], list[Choice]]


@dataclass(frozen=True)
class Combination:
    """One point of the grid: the variant it runs as (named after its labels) and its arrival rate scale."""

    labels: tuple[tuple[str, str], ...]  # (axis, label) of every axis, in the file's order
    variant: VariantPlan
    rate_scale: float


def judge_axes(axes: sfmt.Axes, order: Sequence[str], plan: Plan, judge: Judge) -> list[list[Choice]]:
    """The choices of every axis, in the file's order; the scenario's variants are an axis of their own
    (the first) when it has several and the sweep does not choose among them."""
    found: list[list[Choice]] = []
    if not axes.variant and len(plan.variants) > 1:
        found.append([Choice("variant", v.name, AXES_PATH, variant=v) for v in plan.variants])
    for name in order:
        values: list[Any] = getattr(axes, _attribute(name), [])
        path = (*AXES_PATH, name)
        if not values:
            judge.required(path, "an axis needs at least one value", f"e.g. {name}: [...], or leave the axis out")
            continue
        choices = READERS[name](values, path, plan, judge)
        _check_labels(choices, judge)
        found.append(choices)
    return found


def combinations(axes: Sequence[Sequence[Choice]], plan: Plan, judge: Judge) -> list[Combination]:
    """Every combination of one choice per axis, the first axis slowest; each made into a variant."""
    count = math.prod(len(choices) for choices in axes) * len(plan.seeds)
    if count > MAX_RUNS:  # before the grid is made: it could fill the memory
        judge.invalid(AXES_PATH, f"{count:,} runs", f"more than {MAX_RUNS:,} runs (combinations x seeds)",
                      "sweep fewer values at once, or fewer seeds")
        return []
    return [_combine(choices, plan, judge) for choices in itertools.product(*axes)]


def varying(axes: Sequence[Sequence[Choice]]) -> list[str]:
    """The axes with more than one value: those name the runs and are the comparison's columns."""
    return [choices[0].axis for choices in axes if len(choices) > 1]


def run_name(combination: Combination, shown: Sequence[str]) -> str:
    labels = [label for axis, label in combination.labels if axis in shown]
    return "/".join(labels) if labels else combination.variant.name


def scaled(plan: Plan, scale: float) -> Plan:
    """The plan with its workloads' Poisson and diurnal arrival rates times ``scale``. The random streams stay
    the seed's: at scale 2 a Poisson workload's arrivals are those of scale 1 at half the times."""
    if scale == 1.0:
        return plan
    return replace(plan, workloads=tuple(replace(w, arrival=_scaled_arrival(w.arrival, scale))
                                         for w in plan.workloads))


# ---- the axes --------------------------------------------------------------------------------------------


def _attribute(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _variants(values: list[str], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    by_name = {v.name: v for v in plan.variants}
    choices = []
    for index, name in enumerate(values):
        variant = by_name.get(name)
        if variant is None:
            judge.not_found((*path, index), name, "the scenario has no variant of this name",
                            did_you_mean(name, by_name) or f"its variants: {', '.join(by_name)}")
            continue
        choices.append(Choice("variant", name, (*path, index), variant=variant))
    return choices


def _gpu_managers(values: list[str], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    return [Choice("gpuManager", value, (*path, i), gpu_manager=value) for i, value in enumerate(values)]


def _sharings(values: list[str | fmt.Sharing], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    choices = []
    for index, value in enumerate(values):
        where = (*path, index)
        if not isinstance(value, fmt.Sharing):
            choices.append(Choice("sharing", "whole", where, mig=()))
            continue
        if not value.mig:
            judge.required((*where, "mig"), "name the MIG profiles", "e.g. mig: [3g.40gb=1, 1g.10gb]")
        found = [mig_request((*where, "mig", i), text, judge) for i, text in enumerate(value.mig)]
        label = "mig-" + "+".join(value.mig)
        choices.append(Choice("sharing", label, where, mig=tuple(m for m in found if m is not None),
                              mig_types=tuple(value.instance_types)))
    return choices


def _scorings(values: list[str], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    for index, value in enumerate(values):
        check_scoring(value, (*path, index), judge)
    return [Choice("scoring", value, (*path, i), scoring=value) for i, value in enumerate(values)]


def _fleets(values: list[sfmt.Fleet], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    choices = []
    for index, fleet in enumerate(values):
        where = (*path, index)
        for message in dns_label(fleet.name):
            judge.invalid((*where, "name"), fleet.name, message)
        if not fleet.generate:
            judge.required((*where, "generate"), "a fleet generates nodes", "e.g. generate: "
                           "[{instanceType: p5.48xlarge, count: 4}]")
        for number, entry in enumerate(fleet.generate):
            check_generate_entry(entry, (*where, "generate", number), judge)
        written = msgspec.structs.replace(plan.cluster.written, generate=fleet.generate)
        cluster = replace(plan.cluster, written=written, path=where)
        choices.append(Choice("fleet", fleet.name, where, fleet=cluster))
    return choices


def _targets(values: list[float], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    return [Choice("autoscalerTarget", f"target-{value:g}", (*path, i), autoscaler=fmt.Autoscaler(target=value))
            for i, value in enumerate(values)]


METRIC_LABELS = {"DCGM_FI_DEV_GPU_UTIL": "gpu-util", "cpu": "cpu"}


def _metrics(values: list[str], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    return [Choice("autoscalerMetric", METRIC_LABELS.get(value, value), (*path, i),
                   autoscaler=fmt.Autoscaler(metric=value))  # type: ignore[arg-type]  # checked by the structure
            for i, value in enumerate(values)]


def _rate_scales(values: list[float], path: FieldPath, plan: Plan, judge: Judge) -> list[Choice]:
    if not any(w.arrival.kind in ("poisson", "diurnal") for w in plan.workloads):
        judge.forbidden(path, "no workload of the scenario arrives at a rate", "scale workloads whose arrival "
                        "is poisson or diurnal; times and traces are not scaled")
    choices = []
    for index, value in enumerate(values):
        scale = judge.number((*path, index), value, 0.0, MAX_RATE_SCALE, low_open=True,
                             hint="a factor: 0.5 halves the arrival rates, 2 doubles them")
        choices.append(Choice("arrivalRateScale", f"rate-x{value:g}", (*path, index), rate_scale=scale or 1.0))
    return choices


READERS: dict[str, Reader] = {"variant": _variants, "gpuManager": _gpu_managers, "sharing": _sharings,
                              "scoring": _scorings, "fleet": _fleets, "autoscalerTarget": _targets,
                              "autoscalerMetric": _metrics, "arrivalRateScale": _rate_scales}


def _check_labels(choices: Sequence[Choice], judge: Judge) -> None:
    seen: set[str] = set()
    for choice in choices:
        if choice.label in seen:
            judge.duplicate(choice.path, choice.label, f"another value of {choice.axis} is also {choice.label!r}",
                            "give each value once: runs are named and compared by their values")
        seen.add(choice.label)


# ---- one combination -------------------------------------------------------------------------------------


def _combine(choices: Sequence[Choice], plan: Plan, judge: Judge) -> Combination:
    picked = next((c.variant for c in choices if c.variant is not None), None)
    variant = picked or plan.variants[0]
    for choice in choices:
        if choice.fleet is not None:
            if variant.cluster is not None:
                judge.forbidden(choice.path, f"variant {variant.name} of the scenario has a cluster of its own",
                                "a fleet replaces spec.cluster.generate; choose other variants with the variant "
                                "axis")
            variant = replace(variant, cluster=choice.fleet)
    generated = (variant.cluster or plan.cluster).written.generate
    scale = 1.0
    override = fmt.Autoscaler()
    autoscaler_at: FieldPath | None = None
    for choice in choices:
        if choice.gpu_manager is not None:
            needs_generated(choice.path, generated, judge)
            variant = replace(variant, gpu_manager=choice.gpu_manager)
        if choice.mig is not None:
            needs_generated(choice.path, generated, judge)
            check_sharing_types((*choice.path, "instanceTypes"), choice.mig_types, generated, judge)
            variant = replace(variant, mig=choice.mig, mig_instance_types=choice.mig_types)
        if choice.scoring is not None:
            variant = replace(variant, scoring=choice.scoring)
        if choice.autoscaler is not None:
            override = merged(override, choice.autoscaler)
            autoscaler_at = autoscaler_at or choice.path
        if choice.rate_scale is not None:
            scale = choice.rate_scale
    if autoscaler_at is not None:
        variant = replace(variant, autoscalers=_autoscalers(variant, override, plan.workloads, autoscaler_at, judge))
    return Combination(tuple((c.axis, c.label) for c in choices), variant, scale)


def _autoscalers(variant: VariantPlan, override: fmt.Autoscaler, workloads: Sequence[WorkloadPlan],
                 path: FieldPath, judge: Judge) -> dict[str, AutoscalerSpec | None]:
    """Every service's autoscaler with the sweep's knobs over the variant's override over the service's own."""
    services = [w for w in workloads if w.service is not None]
    if not services:
        judge.forbidden(path, "no workload of the scenario has a service to scale",
                        "give the inference Deployment's workload a service block")
    written = merged(variant.written_autoscaler, override) if variant.written_autoscaler else override
    found = dict(variant.autoscalers)
    for workload in services:
        assert workload.service is not None
        found[workload.name] = autoscaler_spec(merged(workload.service.written_autoscaler, written), path, judge)
    return found


def _scaled_arrival(arrival: ArrivalPlan, scale: float) -> ArrivalPlan:
    if arrival.kind == "poisson":
        return replace(arrival, rate=arrival.rate * scale)
    if arrival.kind == "diurnal" and arrival.diurnal is not None:
        daily = arrival.diurnal
        return replace(arrival, diurnal=DiurnalRate(daily.mean * scale, daily.peak_seconds, daily.amplitude))
    return arrival

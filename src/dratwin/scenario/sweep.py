"""Reading a sweep file: ``load(path) -> (Sweep, [RunSpec, ...])``, or every problem of the file.

A ``kind: Sweep`` names a base scenario and axes (:mod:`dratwin.scenario.sweep_format`). The steps:

1. the file is read with the project's loader and its structure checked against the format's types (unknown
   fields with a did-you-mean, wrong types), as a scenario's is;
2. the base scenario is checked as ``dratwin simulate`` checks any scenario (a file relative to the sweep,
   or the document written inline, with the sweep file's lines);
3. the axes are judged against the scenario's plan (:mod:`dratwin.scenario.sweep_axes`) and expanded into
   their cartesian product, each combination a variant named after its values;
4. each combination is resolved into run specifications with the scenario's own resolution (one per seed).

The runs keep the scenario's order: combinations (the first axis slowest), then seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from dratwin.api.loader import FieldPath, LoadedObject, load_paths
from dratwin.api.validation_base import Problem, ProblemKind, Reporter, SelectorCompilerLike, Severity
from dratwin.api.validation_formats import dns_label
from dratwin.errors import InputError
from dratwin.scenario import document
from dratwin.scenario import format as fmt
from dratwin.scenario import sweep_format as sfmt
from dratwin.scenario.checks import check_seeds
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import RunSpec
from dratwin.scenario.plan import Plan, VariantPlan
from dratwin.scenario.resolve import Inputs, resolve
from dratwin.scenario.structure import check_structure
from dratwin.scenario.sweep_axes import Choice, Combination, combinations, judge_axes, run_name, scaled, varying

_SPEC: FieldPath = ("spec",)


@dataclass(frozen=True)
class Sweep:
    """A sweep file that reads: its name, its base scenario, and the axis values of each run's variant."""

    name: str
    path: str
    scenario: document.Scenario
    axes: tuple[str, ...]  # the axes with several values, in the file's order: the comparison's columns
    fixed: tuple[tuple[str, str], ...]  # (axis, value) of the axes with one value
    values: dict[str, tuple[str, ...]]  # by run variant name: its value on each of ``axes``
    warnings: tuple[Problem, ...] = ()


def is_sweep(obj: LoadedObject) -> bool:
    return obj.kind == sfmt.KIND and obj.api_version == fmt.API_VERSION


def load(path: str, *, seeds: Sequence[int] | None = None,
         until_seconds: float | None = None) -> tuple[Sweep, list[RunSpec]]:
    """The sweep of ``path`` and its runs (``seeds`` / ``until_seconds`` replace the file's);
    :class:`~dratwin.scenario.ScenarioError` with every problem when it has errors."""
    sweep, runs, problems = check(path, seeds=seeds, until_seconds=until_seconds)
    if sweep is None:
        raise document.ScenarioError(problems)
    return sweep, runs


def check(path: str, *, seeds: Sequence[int] | None = None, until_seconds: float | None = None,
          compiler: SelectorCompilerLike | None = None) -> tuple[Sweep | None, list[RunSpec], list[Problem]]:
    try:
        documents = load_paths([path])
    except InputError as error:
        return None, [], [Problem(Severity.ERROR, path, 0, "", "", ProblemKind.NOT_READ, str(error))]
    if len(documents) != 1:
        line = documents[1].source.line if len(documents) > 1 else 0
        return None, [], [Problem(Severity.ERROR, path, line, "", "", ProblemKind.INVALID,
                                  f"a sweep file holds one document, this one has {len(documents)}",
                                  hint="put each sweep into its own file")]
    return check_document(documents[0], seeds=seeds, until_seconds=until_seconds, compiler=compiler)


def check_document(doc: LoadedObject, *, seeds: Sequence[int] | None = None, until_seconds: float | None = None,
                   compiler: SelectorCompilerLike | None = None) -> tuple[Sweep | None, list[RunSpec], list[Problem]]:
    """:func:`check` of a document already loaded."""
    problems: list[Problem] = []
    judge = Judge(Reporter(doc, f"Sweep {doc.name or '<unnamed>'}", problems))
    findings = check_structure(doc.raw, sfmt.SweepFile)
    for finding in findings:
        if finding.value is None:
            judge.reporter.add(finding.kind, finding.path, finding.message, hint=finding.hint)
        else:
            judge.reporter.add(finding.kind, finding.path, finding.message, finding.value, finding.hint)
    if findings:
        return None, [], problems
    try:
        written = msgspec.convert(_without_nulls(doc.raw), sfmt.SweepFile)
    except msgspec.ValidationError as error:
        judge.invalid((), None, str(error))
        return None, [], problems
    _check_header(written, judge)
    first_seed = (seeds or written.spec.seeds)[:1] or None
    scenario, scenario_problems = _base(written.spec.scenario, doc, first_seed, until_seconds, compiler, judge)
    problems += scenario_problems
    if scenario is None or scenario.inputs is None or judge.failed:
        return None, [], _unique(problems)
    check_seeds(written.spec.seeds, (*_SPEC, "seeds"), judge)
    plan = replace(scenario.plan, seeds=tuple(seeds or written.spec.seeds or scenario.plan.seeds))
    axes = judge_axes(written.spec.axes, _axis_order(doc.raw), plan, judge)
    points = combinations(axes, plan, judge)
    if judge.failed:
        return None, [], _unique(problems)
    inputs = _with_fleets(scenario.inputs, axes, scenario.plan, doc)
    shown = varying(axes)
    values = {run_name(point, shown): tuple(label for axis, label in point.labels if axis in shown)
              for point in points}
    runs = _runs(points, list(values), plan, inputs, judge, until_seconds, written.metadata.name)
    if judge.failed:
        return None, [], _unique(problems)
    fixed = tuple((c[0].axis, c[0].label) for c in axes if len(c) == 1)
    ordered = _unique(problems)
    sweep = Sweep(written.metadata.name, doc.source.path, scenario, tuple(shown), fixed, values, tuple(ordered))
    return sweep, runs, ordered


def _without_nulls(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` without its ``null`` fields: as in the API server's strict decoding, ``null`` is an absent
    field (the inline scenario is left as written: it is checked as a scenario)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items() if item is not None}
        return [strip(item) for item in value] if isinstance(value, list) else value

    stripped: dict[str, Any] = strip(raw)
    spec = raw.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("scenario"), dict):
        stripped["spec"]["scenario"] = spec["scenario"]
    return stripped


def _check_header(written: sfmt.SweepFile, judge: Judge) -> None:
    if written.api_version != fmt.API_VERSION:
        judge.unsupported(("apiVersion",), written.api_version, [fmt.API_VERSION])
    if written.kind != sfmt.KIND:
        judge.unsupported(("kind",), written.kind, [sfmt.KIND])
    for message in dns_label(written.metadata.name):
        judge.invalid(("metadata", "name"), written.metadata.name, message)


def _base(written: str | dict[str, Any], doc: LoadedObject, seeds: Sequence[int] | None,
          until_seconds: float | None, compiler: SelectorCompilerLike | None,
          judge: Judge) -> tuple[document.Scenario | None, list[Problem]]:
    """The base scenario checked as a scenario is (with ``seeds``: one seed is enough, the sweep resolves its
    own runs)."""
    where = (*_SPEC, "scenario")
    if isinstance(written, str):
        file = Path(doc.source.path).parent / written
        if not file.is_file():
            judge.not_found(where, written, "no such scenario file", "paths are relative to the sweep file")
            return None, []
        try:
            loaded = load_paths([str(file)])
        except InputError as error:
            judge.invalid(where, written, str(error))
            return None, []
        if len(loaded) != 1:
            judge.invalid(where, written, f"a scenario file holds one document, this one has {len(loaded)}",
                          "name a kind: Scenario file (a sweep runs a scenario, not manifests)")
            return None, []
        base = loaded[0]
    else:
        base = document.children(doc)(where, written)
    scenario, _, problems = document.check_document(base, seeds=seeds, until_seconds=until_seconds,
                                                    compiler=compiler)
    return scenario, problems


def _axis_order(raw: dict[str, Any]) -> list[str]:
    spec = raw.get("spec")
    axes = spec.get("axes") if isinstance(spec, dict) else None
    return [str(name) for name, value in axes.items() if value is not None] if isinstance(axes, dict) else []


def _with_fleets(inputs: Inputs, axes: Sequence[Sequence[Choice]], plan: Plan, doc: LoadedObject) -> Inputs:
    """The scenario's inputs, and under each fleet's path what resolution reads there: the scenario
    cluster's files (a fleet replaces only the generated nodes) and the lines of the fleet's entries."""
    files = dict(inputs.files)
    lines = dict(inputs.line_of)
    for choice in (c for choices in axes for c in choices if c.fleet is not None):
        assert choice.fleet is not None
        for index in range(len(plan.cluster.written.files)):
            files[(*choice.path, "files", index)] = inputs.files.get((*plan.cluster.path, "files", index), ())
        for index in range(len(choice.fleet.written.generate)):
            where = (*choice.path, "generate", index)
            lines[where] = doc.line_of(where)
    return replace(inputs, files=files, line_of=lines)


def _runs(points: Sequence[Combination], names: Sequence[str], plan: Plan, inputs: Inputs, judge: Judge,
          until_seconds: float | None, sweep_name: str) -> list[RunSpec]:
    """Every combination's runs, in the grid's order. The combinations of one arrival rate scale are resolved
    together, as the variants of one scenario: their arrivals are drawn once per seed."""
    groups: dict[float, list[VariantPlan]] = {}
    for point, name in zip(points, names, strict=True):
        groups.setdefault(point.rate_scale, []).append(replace(point.variant, name=name))
    by_name: dict[str, list[RunSpec]] = {}
    for scale, variants in groups.items():
        for run in resolve(replace(scaled(plan, scale), variants=tuple(variants)), inputs, judge,
                           until_seconds=until_seconds):
            by_name.setdefault(run.variant, []).append(replace(run, scenario=sweep_name))
    return [run for name in names for run in by_name.get(name, [])]


def _unique(problems: list[Problem]) -> list[Problem]:
    """Each problem once (a combination's problem is found once per combination that has it), in file order."""
    unique = list({str(p): p for p in problems}.values())
    files = {path: i for i, path in reversed(list(enumerate(p.file for p in unique)))}
    return sorted(unique, key=lambda p: (files[p.file], p.line))

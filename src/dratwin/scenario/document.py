"""Reading a scenario file: ``load(path) -> (Scenario, [RunSpec, ...])``, or every problem of the file.

The steps, each reporting every problem it finds before the next one runs:

1. the file is read with the project's loader (one YAML or JSON document; lines of every field);
2. its structure is checked against the format's types (:mod:`dratwin.scenario.structure`: unknown fields
   with a did-you-mean, wrong types, missing fields), then msgspec decodes it;
3. its values are judged (:mod:`dratwin.scenario.checks`: durations, rates, one-of choices, names);
4. the files it names are read (cluster ``files`` with the loader, traces with the Alibaba reader, both
   relative to the scenario file), and every manifest embedded in it or named by it is validated as
   ``dratwin validate`` validates any manifest, at its own file and line;
5. it is resolved into run specifications (:mod:`dratwin.scenario.resolve`); generating the nodes of an
   unknown instance type, or two workloads making objects of the same name, are problems of this step.

Problems are :class:`~dratwin.api.validation_base.Problem` values (file, line, field path, what, hint);
:func:`load` raises them together as one :class:`ScenarioError` (an :class:`~dratwin.errors.InputError`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dratwin.api.codec import render_path
from dratwin.api.loader import FieldPath, LoadedObject, SourceLocation, load_paths
from dratwin.api.validation import validate_objects
from dratwin.api.validation_base import Problem, ProblemKind, Reporter, SelectorCompilerLike, Severity
from dratwin.errors import InputError
from dratwin.scenario import format as fmt
from dratwin.scenario.checks import decode, interpret
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import RunSpec
from dratwin.scenario.plan import ClusterPlan, Plan
from dratwin.scenario.resolve import Inputs, resolve
from dratwin.scenario.structure import check_structure
from dratwin.trace.alibaba import AlibabaPod, read_pods


@dataclass(frozen=True)
class Scenario:
    """A scenario file that reads: its name, where it is, its judged plan, and its warnings."""

    name: str
    path: str
    plan: Plan
    warnings: tuple[Problem, ...] = ()
    inputs: Inputs | None = field(default=None, repr=False, compare=False)  # the files it names, read


class ScenarioError(InputError):
    """A scenario with errors; ``problems`` holds all of them (and the warnings), in file order."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        errors = [p for p in self.problems if p.is_error]
        shown = "\n".join(str(p) for p in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} error{'s' * (len(errors) != 1)} in the scenario:\n{shown}{more}")


def is_scenario(obj: LoadedObject) -> bool:
    """Whether a loaded object is a scenario (``dratwin validate`` hands those here)."""
    return obj.kind == fmt.KIND and obj.api_version == fmt.API_VERSION


def load(path: str, *, seeds: Sequence[int] | None = None,
         until_seconds: float | None = None) -> tuple[Scenario, list[RunSpec]]:
    """The scenario of ``path`` and its runs (``seeds`` / ``until_seconds`` replace the file's);
    :class:`ScenarioError` with every problem when it has errors."""
    scenario, runs, problems = check(path, seeds=seeds, until_seconds=until_seconds)
    if scenario is None:
        raise ScenarioError(problems)
    return scenario, runs


def check(path: str, *, seeds: Sequence[int] | None = None, until_seconds: float | None = None,
          compiler: SelectorCompilerLike | None = None) -> tuple[Scenario | None, list[RunSpec], list[Problem]]:
    """Everything about a scenario file, never raising for bad content: the scenario and its runs (None and
    [] when there are errors) and every problem."""
    try:
        documents = load_paths([path])
    except InputError as error:
        return None, [], [Problem(Severity.ERROR, path, 0, "", "", ProblemKind.NOT_READ, str(error))]
    if len(documents) != 1:
        message = f"a scenario file holds one document, this one has {len(documents)}"
        line = documents[1].source.line if len(documents) > 1 else 0
        return None, [], [Problem(Severity.ERROR, path, line, "", "", ProblemKind.INVALID, message,
                                  hint="put each scenario into its own file")]
    return check_document(documents[0], seeds=seeds, until_seconds=until_seconds, compiler=compiler)


def check_document(doc: LoadedObject, *, seeds: Sequence[int] | None = None, until_seconds: float | None = None,
                   compiler: SelectorCompilerLike | None = None,
                   ) -> tuple[Scenario | None, list[RunSpec], list[Problem]]:
    """:func:`check` of a document already loaded."""
    problems: list[Problem] = []
    reporter = Reporter(doc, f"Scenario {doc.name or '<unnamed>'}", problems)
    judge = Judge(reporter)
    findings = check_structure(doc.raw, fmt.ScenarioFile)
    for finding in findings:
        if finding.value is None:
            reporter.add(finding.kind, finding.path, finding.message, hint=finding.hint)
        else:
            reporter.add(finding.kind, finding.path, finding.message, finding.value, finding.hint)
    # The values are judged even when the structure has problems, without the fields at fault (a missing field:
    # without the mapping that misses it), so that one run reports both kinds; what is then said about those
    # fields is left out (it would only repeat them), and a file that still does not decode has only its
    # structural problems reported.
    pruned = [f.path[:-1] if f.kind is ProblemKind.REQUIRED and len(f.path) > 1 else f.path for f in findings]
    written = decode(_without(doc.raw, pruned) if findings else doc.raw)
    if isinstance(written, str):
        if not findings:
            reporter.add(ProblemKind.INVALID, (), written)
        return None, [], problems
    judged_from = len(problems)
    base = Path(doc.source.path).parent
    plan = interpret(written, judge, children(doc))
    inputs = _read_inputs(doc, plan, base, judge)
    problems += _validate_manifests(plan, inputs, compiler)
    if findings:
        problems[judged_from:] = [p for p in problems[judged_from:]
                                  if p.object != reporter.ref or not _near(p.field, pruned)]
    if judge.failed:
        return None, [], _ordered(problems)
    runs = resolve(plan, inputs, judge, seeds=seeds, until_seconds=until_seconds)
    if judge.failed:
        return None, [], _ordered(problems)
    ordered = _ordered(problems)
    return Scenario(plan.name, doc.source.path, plan, tuple(ordered), inputs), runs, ordered


def _near(field: str, paths: Sequence[FieldPath]) -> bool:
    """Whether a field is one of ``paths``, inside one or holds one."""
    for path in paths:
        rendered = render_path(path)
        for inner, outer in ((field, rendered), (rendered, field)):
            if inner == outer or (inner.startswith(outer) and inner[len(outer):][:1] in (".", "[")):
                return True
    return False


def _without(raw: dict[str, Any], paths: Sequence[FieldPath]) -> dict[str, Any]:
    """A copy of ``raw`` without the mapping fields at ``paths`` (list entries stay: decoding then fails)."""
    pruned = copy.deepcopy(raw)
    for path in paths:
        parent: Any = pruned
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else (
                parent[part] if isinstance(parent, list) and isinstance(part, int) and part < len(parent) else None)
        if isinstance(parent, dict) and path and path[-1] in parent:
            del parent[path[-1]]
    return pruned


def children(doc: LoadedObject) -> Any:
    """Makes the objects embedded in the scenario: their source is the scenario file, their lines its lines."""

    def child(path: FieldPath, raw: dict[str, Any]) -> LoadedObject:
        line = doc.line_of(path)

        def locate() -> dict[FieldPath, int]:
            doc.line_of(())
            size = len(path)
            return {p[size:]: n for p, n in doc.lines.items() if p[:size] == path}

        return LoadedObject(raw, SourceLocation(doc.source.path, doc.source.document, line), locate=locate)

    return child


def _read_inputs(doc: LoadedObject, plan: Plan, base: Path, judge: Judge) -> Inputs:
    files: dict[FieldPath, list[LoadedObject]] = {}
    clusters: list[ClusterPlan] = [plan.cluster, *(v.cluster for v in plan.variants if v.cluster is not None)]
    for cluster in clusters:
        for index, name in enumerate(cluster.written.files):
            where = (*cluster.path, "files", index)
            try:
                files[where] = load_paths([str(base / name)])
            except InputError as error:
                judge.not_found(where, name, str(error), "paths are relative to the scenario file")
    traces: dict[str, list[AlibabaPod]] = {}
    for workload in plan.workloads:
        if workload.arrival.kind != "trace":
            continue
        where = (*workload.arrival.path, "file")
        try:
            pods = read_pods(base / workload.arrival.trace_file)
        except InputError as error:
            judge.invalid(where, workload.arrival.trace_file, str(error), "paths are relative to the scenario file")
            continue
        if not any(pod.creation_time is not None for pod in pods):
            judge.invalid(where, workload.arrival.trace_file, "the trace has no creation_time column",
                          "arrivals need the full pod schema (name, ..., creation_time, deletion_time)")
        traces[workload.name] = pods
    lines: dict[FieldPath, int] = {}
    for cluster in clusters:
        for index in range(len(cluster.written.generate)):
            where = (*cluster.path, "generate", index)
            lines[where] = doc.line_of(where)
    return Inputs(doc.source.path, files, traces, lines)


def _validate_manifests(plan: Plan, inputs: Inputs, compiler: SelectorCompilerLike | None) -> list[Problem]:
    """The problems of the manifests, as ``dratwin validate`` finds them: each variant's fleet with the
    templates of that variant (a problem shared by several variants is reported once)."""
    problems: list[Problem] = []
    for variant in plan.variants:
        cluster = variant.cluster or plan.cluster
        objects = [obj for index in range(len(cluster.written.files))
                   for obj in inputs.files.get((*cluster.path, "files", index), ())]
        objects += cluster.objects
        objects += [obj for w in plan.workloads for obj in variant.templates.get(w.name, w.objects)]
        problems += validate_objects(objects, compiler)
    unique: dict[str, Problem] = {str(p): p for p in problems}
    return list(unique.values())


def _ordered(problems: list[Problem]) -> list[Problem]:
    files = {path: i for i, path in reversed(list(enumerate(p.file for p in problems)))}
    return sorted(problems, key=lambda p: (files[p.file], p.line))

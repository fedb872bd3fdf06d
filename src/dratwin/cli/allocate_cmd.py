"""``dratwin allocate``: run the DRA allocator for one node and show each claim's devices, or why not."""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from dratwin.allocator import (
    AllocatedState,
    AllocationOutcome,
    AllocationTimeout,
    Allocator,
    EffortBudget,
    Features,
    Variant,
    select_variant,
)
from dratwin.allocator.each import allocate_each
from dratwin.allocator.effort import FILTER_TIMEOUT_S
from dratwin.allocator.explain import Explanation, explain
from dratwin.allocator.order import OrderProbe, from_outcome, probe_pool_orders
from dratwin.allocator.variants import VARIANTS
from dratwin.api.codec import FieldDecodeError, decode_as, dump_yaml, object_ref, render_path
from dratwin.api.conversion import convert_to_v1, needs_conversion
from dratwin.api.core import Node
from dratwin.api.intake import ConvertedObject, admit
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.cel import SelectorCompiler
from dratwin.cli.main import add_file_arguments, load_inputs
from dratwin.cluster.device_taint_rules import device_taint_view
from dratwin.errors import AllocationError, DratwinError, InputError

S = TypeVar("S", bound=msgspec.Struct)

TOGETHER, ONE_BY_ONE = "together", "one-by-one"
EXIT_BY_RESULT = {"allocated": 0, "unsatisfiable": 1, "timeout": 1}

EPILOG = """\
examples:
  dratwin allocate -f examples/ --node p5-node-1
      allocate every unallocated claim in examples/ on node p5-node-1, one by one, like the claims
      of separate pods: each sees the devices the ones before it took
  dratwin allocate -f examples/ --node p5-node-1 --together
      allocate them jointly instead, like the claims of one pod: all get devices or none does
  dratwin allocate -f cluster.yaml -f claims.yaml --node gpu-1 --claim ml/train --claim ml/eval -o yaml
      allocate two claims jointly and print them as the API server would store them
  dratwin allocate -f case.yaml --node n1 --feature-gates DRAConsumableCapacity=false -o json

the allocator: Kubernetes 1.36 has three copies of it (stable, incubating, experimental) and runs the
first that supports every enabled feature: incubating with the default gates, stable when
DRAConsumableCapacity and binding conditions are off, experimental with DRAListTypeAttributes.
-o json names the one used ("variant"). The stable copy visits pools in a random order; where its
answer depends on that order, the output says so ("poolOrder").

search effort: kube-scheduler stops a node's allocation after filterTimeout (10 s). dratwin gives
each call the number of search steps upstream's allocator makes in that time, and reports a longer
search as kube-scheduler does: "timed out trying to allocate devices" (--filter-timeout).

exit status: 0 all claims allocated (or nothing to allocate), 1 some cannot be allocated on this node
             (or the search timed out), 2 bad input or the allocator refused it (as upstream returns an error)
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "allocate",
        help="allocate claims on one node with the Kubernetes 1.36 allocator",
        description="Allocate ResourceClaims on one node exactly as kube-scheduler's DRA allocator would "
        "(Kubernetes 1.36 semantics). Claims named with --claim, or all of them with --together, are allocated "
        "jointly like the claims of one pod; otherwise each claim is allocated on its own, in input order.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_file_arguments(parser)
    parser.add_argument("--node", required=True, help="name of the Node (in the input) to allocate for")
    parser.add_argument(
        "--claim",
        dest="claims",
        action="append",
        default=[],
        metavar="NS/NAME",
        help="claim to allocate, in this order (repeatable); the claims named are allocated jointly. "
        "Default: every unallocated claim, one by one",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="without --claim: allocate every unallocated claim jointly, as one pod's claims (all or none)",
    )
    parser.add_argument(
        "--feature-gates",
        default="",
        metavar="GATE=BOOL,...",
        help="override the 1.36 defaults, e.g. DRAConsumableCapacity=false",
    )
    parser.add_argument(
        "--variants",
        default="",
        metavar="NAME,...",
        help="allocator copies that may be picked, as upstream's tests limit them (stable, incubating, "
        "experimental); the first that supports the features is used. Default: all, like kube-scheduler",
    )
    parser.add_argument(
        "--filter-timeout",
        type=float,
        default=FILTER_TIMEOUT_S,
        metavar="SECONDS",
        help="kube-scheduler's DynamicResources filterTimeout that bounds the search (default 10; 0: no bound)",
    )
    parser.add_argument(
        "--skip-validation",
        action="store_true",
        help="give the objects to the allocator as they are, without the API server's checks (unknown fields, "
        "types, required fields); older resource.k8s.io versions are still converted to v1, and a value the "
        "allocator cannot read is still an error (exit status 2)",
    )
    parser.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    parser.set_defaults(handler=run)


@dataclass
class Inputs:
    node: Node
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: dict[str, tuple[ResourceClaim, LoadedObject]] = field(default_factory=dict)
    templates: int = 0
    locations: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """How the command was asked to allocate."""

    features: Features
    variant: Variant
    budget: EffortBudget
    together: bool = False

    @classmethod
    def parse(
        cls, feature_gates: str, variants: str = "", filter_timeout: float = FILTER_TIMEOUT_S, together: bool = False
    ) -> Settings:
        features = Features.from_gates(feature_gates)
        allowed = tuple(name.strip() for name in variants.split(",") if name.strip())
        known = [v.name for v in VARIANTS]
        unknown = [name for name in allowed if name not in known]
        if unknown:
            raise InputError(f"--variants: unknown allocator variant {unknown[0]!r}; known: {', '.join(known)}")
        if filter_timeout < 0:
            raise InputError("--filter-timeout: must be 0 (no bound) or a number of seconds")
        try:
            variant = select_variant(features, allowed)
        except ValueError as error:
            raise InputError(f"--variants: {error}; allow a later variant or turn features off") from error
        return cls(features, variant, EffortBudget(filter_timeout), together)


@dataclass
class Attempt:
    """One allocation call for one node: the inputs it read, the claims it allocated, and the outcome."""

    inputs: Inputs
    targets: list[str]
    outcome: AllocationOutcome | None
    allocator: Allocator
    error: AllocationError | None = None
    probe: OrderProbe | None = None

    @property
    def steps(self) -> int:
        if isinstance(self.error, AllocationTimeout):
            return self.error.steps
        return self.outcome.steps if self.outcome is not None else 0

    @property
    def result(self) -> str:
        if isinstance(self.error, AllocationTimeout):
            return "timeout"
        if self.error is not None:
            return "error"
        assert self.outcome is not None
        return "allocated" if self.outcome.allocated else "unsatisfiable"


@dataclass
class Run:
    """Everything one ``allocate`` command did: one joint call, or one call per claim."""

    inputs: Inputs
    settings: Settings
    mode: str
    attempts: list[Attempt]
    notes: list[str] = field(default_factory=list)
    warnings_of_input: list[str] = field(default_factory=list)  # about the objects read (DeviceTaintRules, ...)

    @property
    def result(self) -> str:
        results = {a.result for a in self.attempts}
        for worst in ("error", "timeout", "unsatisfiable"):
            if worst in results:
                return worst
        return "allocated"

    @property
    def warnings(self) -> list[str]:
        found = [w for a in self.attempts if a.outcome is not None for w in a.outcome.warnings]
        return list(dict.fromkeys(found))


def run(args: argparse.Namespace) -> int:
    try:
        settings = Settings.parse(args.feature_gates, args.variants, args.filter_timeout, args.together)
        objects = _read(load_inputs(args.paths, args.recursive, "allocate"), args.skip_validation)
        done = allocate_run(objects, args.node, args.claims, settings)
        for warning in done.warnings_of_input:
            print(f"warning: {warning}", file=sys.stderr)
    except DratwinError as error:
        if args.output == "json" or isinstance(error, AllocationError):
            return _report_error(args.output, str(error))
        raise
    if args.output == "json":
        print(json.dumps(json_body(done, paths=args.paths), indent=2))
    else:
        _report(args.output, done, args.paths)
    return EXIT_BY_RESULT.get(done.result, 2)


def allocate_run(objects: list[LoadedObject], node: str, claims: list[str], settings: Settings) -> Run:
    """What the command does, as a value: the joint call, or one call per claim (see the module help)."""
    inputs = _collect(objects, node)
    taints = device_taint_view(objects, inputs.slices, settings.features)  # the slices as kube-scheduler sees them
    inputs.slices = taints.slices
    targets = _targets(inputs, claims)
    joint = bool(claims) or settings.together
    mode = TOGETHER if joint else ONE_BY_ONE
    state = AllocatedState.from_claims((c for c, _ in inputs.claims.values()), settings.features)
    compiler = SelectorCompiler(list_type_attributes=settings.features.list_type_attributes)

    def build(held: AllocatedState) -> Allocator:
        return Allocator(
            settings.features,
            inputs.classes,
            inputs.slices,
            held,
            compiler,
            variant=settings.variant,
            budget=settings.budget,
            locations=inputs.locations,
        )

    notes = _nothing_to_allocate(inputs) if not targets else []
    if joint:
        attempts = [_joint(inputs, targets, build(state))] if targets else []
    else:
        pairs = [(key, inputs.claims[key][0]) for key in targets]
        each = allocate_each(build, inputs.node, pairs, state, settings.features)
        attempts = [Attempt(inputs, [e.key], e.outcome, e.allocator, e.error) for e in each]
    for attempt in attempts:
        if attempt.outcome is not None:
            claims_of = [inputs.claims[key][0] for key in attempt.targets]
            attempt.probe = probe_pool_orders(attempt.allocator, inputs.node, claims_of, from_outcome(attempt.outcome),
                                              attempt.outcome.steps)
    return Run(inputs, settings, mode, attempts, notes, list(taints.warnings))


def _joint(inputs: Inputs, targets: list[str], allocator: Allocator) -> Attempt:
    try:
        outcome = allocator.allocate(inputs.node, [inputs.claims[key][0] for key in targets])
    except AllocationTimeout as timeout:
        return Attempt(inputs, targets, None, allocator, timeout)
    return Attempt(inputs, targets, outcome, allocator)


def attempt_allocation(objects: list[LoadedObject], node: str, claims: list[str], feature_gates: str) -> Attempt:
    """Allocate ``claims`` (``ns/name``; all unallocated ones when empty) on ``node`` jointly.

    Raises :class:`AllocationError` where upstream's allocator returns an error, and other
    :class:`DratwinError` for bad input.
    """
    settings = Settings.parse(feature_gates, together=True)
    done = allocate_run(objects, node, claims, settings)
    if not done.attempts:
        empty = Allocator(settings.features, done.inputs.classes, done.inputs.slices)
        return Attempt(done.inputs, [], AllocationOutcome([], 0, [], settings.variant.name), empty)
    attempt = done.attempts[0]
    if attempt.error is not None:
        raise attempt.error
    return attempt


def json_answer(
    objects: list[LoadedObject],
    node: str,
    claims: list[str],
    feature_gates: str,
    *,
    explain_failure: bool = True,
    together: bool = False,
    variants: str = "",
) -> dict[str, Any]:
    """What ``dratwin allocate -o json`` prints: every error (bad input, or refused as upstream
    does) becomes ``{"result": "error"}``. ``explain_failure=False`` leaves out the explanation of an
    unsatisfiable answer, which costs a second pass over the devices."""
    try:
        settings = Settings.parse(feature_gates, variants, together=together)
        return json_body(allocate_run(objects, node, claims, settings), explain_failure=explain_failure)
    except DratwinError as error:
        return {"result": "error", "error": str(error)}


# ---- reading the input ----------------------------------------------------------------------------


def _collect(objects: list[LoadedObject], node_name: str) -> Inputs:
    node: Node | None = None
    inputs = Inputs(node=Node())
    for obj in objects:
        kind = obj.kind
        if kind == "Node":
            candidate = _decode(obj, Node)
            if candidate.metadata.name == node_name:
                node = candidate
        elif kind == "DeviceClass":
            device_class = _decode(obj, DeviceClass)
            inputs.classes.append(device_class)
            inputs.locations[("DeviceClass", device_class.metadata.name)] = str(obj.source)
        elif kind == "ResourceSlice":
            resource_slice = _decode(obj, ResourceSlice)
            inputs.slices.append(resource_slice)
            inputs.locations[("ResourceSlice", resource_slice.metadata.name)] = str(obj.source)
        elif kind == "ResourceClaim":
            claim = _decode(obj, ResourceClaim)
            if not claim.metadata.namespace:
                claim.metadata.namespace = "default"
            key = f"{claim.metadata.namespace}/{claim.metadata.name}"
            inputs.claims[key] = (claim, obj)
            inputs.locations[("ResourceClaim", key)] = str(obj.source)
        elif kind == "ResourceClaimTemplate":
            inputs.templates += 1
    if node is None:
        known = sorted(o.name for o in objects if o.kind == "Node")
        hint = f"; nodes in the input: {', '.join(known)}" if known else "; the input has no Node"
        raise InputError(f"node {node_name!r} is not in the input{hint}")
    inputs.node = node
    return inputs


def _read(objects: list[LoadedObject], skip_validation: bool) -> list[LoadedObject]:
    """The objects as the API server takes them (v1, structurally valid); InputError lists every refusal."""
    if skip_validation:
        return [ConvertedObject(o, convert_to_v1(o.raw)) if needs_conversion(o.raw) else o for o in objects]
    admitted = admit(objects)
    for note in admitted.notes:
        print(f"note: {note}", file=sys.stderr)
    errors = [str(p) for read in admitted.rejected for p in read.problems if p.is_error]
    if errors:
        count = len(admitted.rejected)
        raise InputError(f"the API server refuses {count} object{'s' * (count != 1)} of the input:\n  "
                         + "\n  ".join(errors) + "\n(dratwin validate shows every problem; --skip-validation gives "
                         "the objects to the allocator as they are)")
    return admitted.objects


def _decode(obj: LoadedObject, kind: type[S]) -> S:
    """The typed view the allocator reads; a value it cannot read is an InputError with file, line and field."""
    ref = object_ref(obj)
    try:
        return decode_as(obj.raw, kind, ref)
    except FieldDecodeError as error:
        raise InputError(f"{obj.source.path}:{obj.line_of(error.path)}: {ref}: {render_path(error.path)}: "
                         f"{error.detail}") from error


def _targets(inputs: Inputs, wanted: list[str]) -> list[str]:
    if not wanted:
        return [key for key, (claim, _) in inputs.claims.items() if claim.status.allocation is None]
    targets = []
    for key in wanted:
        key = key if "/" in key else f"default/{key}"
        if key not in inputs.claims:
            raise InputError(f"claim {key} is not in the input; claims: {', '.join(sorted(inputs.claims)) or 'none'}")
        targets.append(key)
    return targets


def _nothing_to_allocate(inputs: Inputs) -> list[str]:
    if inputs.templates and not inputs.claims:
        return [
            f"the input has {inputs.templates} ResourceClaimTemplate(s) and no ResourceClaim: the resourceclaim "
            "controller creates a claim from a template for each pod that references it, so there is nothing "
            "to allocate until pods exist; to see their claims allocated, schedule the pods: dratwin schedule -f PATH"
        ]
    if inputs.claims:
        return ["every ResourceClaim in the input already has status.allocation"]
    return ["the input has no ResourceClaim"]


# ---- output ---------------------------------------------------------------------------------------


def json_body(done: Run, *, explain_failure: bool = True, paths: Sequence[str] = ()) -> dict[str, Any]:
    body: dict[str, Any] = {
        "result": done.result,
        "node": done.inputs.node.metadata.name,
        "variant": done.settings.variant.name,
        "mode": done.mode,
        "allocations": _allocations(done.attempts),
        "steps": sum(a.steps for a in done.attempts),
    }
    if done.mode == TOGETHER:
        if done.attempts:
            body.update(_attempt_body(done.attempts[0], explain_failure))
    else:
        body["claims"] = [{"claim": a.targets[0], **_attempt_body(a, explain_failure)} for a in done.attempts]
    if done.warnings:
        body["warnings"] = done.warnings
    notes = _notes(done, paths)
    if notes:
        body["notes"] = notes
    return body


def _attempt_body(attempt: Attempt, explain_failure: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"result": attempt.result}
    if attempt.error is not None:
        part["error"] = str(attempt.error)
        if isinstance(attempt.error, AllocationTimeout):
            part["detail"] = attempt.error.detail
    elif attempt.result == "unsatisfiable" and explain_failure:
        part["explanation"] = _explain(attempt).to_dict()
    if attempt.probe is not None:
        part["poolOrder"] = {
            "dependsOnOrder": attempt.probe.depends_on_order,
            "ordersTried": attempt.probe.orders,
            "ordersNotTried": attempt.probe.skipped,
            "note": attempt.probe.note(),
            "answers": [
                {"result": a.kind, "error": a.error or None, "allocations": _results(attempt.targets, a.results)}
                for a in attempt.probe.answers
            ],
        }
    return part


def _notes(done: Run, paths: Sequence[str]) -> list[str]:
    notes = list(done.notes)
    if paths and notes and done.inputs.templates and not done.inputs.claims:
        notes[-1] = notes[-1].replace("-f PATH", " ".join(f"-f {p}" for p in paths))
    return notes


def _results(targets: list[str], results: Sequence[Any] | None) -> dict[str, Any]:
    if results is None:
        return {}
    return {key: msgspec.to_builtins(r) for key, r in zip(targets, results, strict=True)}


def _allocations(attempts: list[Attempt]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for attempt in attempts:
        if attempt.outcome is not None:
            found.update(_results(attempt.targets, attempt.outcome.results))
    return found


def _explain(attempt: Attempt) -> Explanation:
    claims = [attempt.inputs.claims[key][0] for key in attempt.targets]
    return explain(attempt.allocator, attempt.inputs.node, claims)


def _report_error(output: str, message: str) -> int:
    if output == "json":
        print(json.dumps({"result": "error", "error": message}, indent=2))
    else:
        print(f"error: {message}", file=sys.stderr)
    return 2


def _report(output: str, done: Run, paths: Sequence[str]) -> None:
    """Table or YAML output (JSON goes through :func:`json_body`)."""
    node = done.inputs.node.metadata.name
    allocations = _allocations(done.attempts)
    failures = [line for a in done.attempts if a.result != "allocated" for line in _failure_lines(a, node)]
    if output == "yaml":
        _print_yaml(done.inputs, [key for a in done.attempts for key in a.targets], allocations)
        if failures:
            print("\n".join(failures), file=sys.stderr)
        return
    if done.mode == ONE_BY_ONE and done.attempts:
        allocated = sum(1 for a in done.attempts if a.result == "allocated")
        print(
            f"node {node}: {allocated} of {len(done.attempts)} claim(s) allocated, one by one (each with the devices "
            "of the ones before it held; --together allocates them jointly, like the claims of one pod)"
        )
        if allocations:
            print(_table(allocations))
    elif allocations:
        print(f"node {node}: {len(allocations)} claim(s) allocated")
        print(_table(allocations))
    elif not done.attempts:
        print(f"node {node}: nothing to allocate: " + "; ".join(_notes(done, paths)))
    for line in failures:
        print(line)
    for warning in done.warnings:
        print(f"warning: {warning}")
    for attempt in done.attempts:
        if attempt.probe is not None:
            print(f"note: {attempt.probe.note()}")


def _failure_lines(attempt: Attempt, node: str) -> list[str]:
    if attempt.error is not None:
        if isinstance(attempt.error, AllocationTimeout):
            return [f"cannot allocate on node {node}: {attempt.error}", f"  {attempt.error.detail}"]
        return [f"error: {', '.join(attempt.targets)}: {attempt.error}"]
    return _explain(attempt).lines()


def _print_yaml(inputs: Inputs, targets: list[str], allocations: dict[str, Any]) -> None:
    """The claims as the API server would store them: as written, plus status.allocation."""
    documents = []
    for key in targets:
        raw = copy.deepcopy(inputs.claims[key][1].raw)
        if key in allocations:
            raw.setdefault("status", {})["allocation"] = allocations[key]
        documents.append(raw)
    if documents:
        print(dump_yaml(documents), end="")


def _table(allocations: dict[str, Any]) -> str:
    rows = [("CLAIM", "REQUEST", "DEVICE", "NODE SELECTOR")]
    for key, allocation in allocations.items():
        selector = _selector_text(allocation.get("nodeSelector"))
        results = (allocation.get("devices") or {}).get("results") or []
        if not results:
            rows.append((key, "-", "(no devices requested)", selector))
        for result in results:
            device = "/".join(str(result.get(part) or "") for part in ("driver", "pool", "device"))
            extra = " (admin)" if result.get("adminAccess") else ""
            extra += f" share {result['shareID'][:8]}" if result.get("shareID") else ""
            rows.append((key, str(result.get("request", "")), device + extra, selector))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def _selector_text(selector: dict[str, Any] | None) -> str:
    if not selector:
        return "any node"
    terms = []
    for term in selector.get("nodeSelectorTerms", []):
        parts = [
            f"{r.get('key', '')} {r.get('operator', '')} {','.join(r.get('values', []))}".strip()
            for r in term.get("matchFields", []) + term.get("matchExpressions", [])
        ]
        terms.append(" and ".join(parts))
    return " or ".join(terms)

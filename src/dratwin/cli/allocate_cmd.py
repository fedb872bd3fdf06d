"""``dratwin allocate``: run the DRA allocator for one node and show each claim's devices, or why not."""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from dratwin.allocator import AllocatedState, AllocationOutcome, Allocator, Features
from dratwin.allocator.explain import Explanation, explain
from dratwin.api.codec import decode_as, dump_yaml
from dratwin.api.core import Node
from dratwin.api.loader import LoadedObject, load_paths
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from dratwin.cli.main import add_file_arguments
from dratwin.errors import AllocationError, DratwinError, InputError

S = TypeVar("S", bound=msgspec.Struct)

EPILOG = """\
examples:
  dratwin allocate -f examples/ --node p5-node-1
      allocate every unallocated claim in examples/ on node p5-node-1, together
  dratwin allocate -f cluster.yaml -f claims.yaml --node gpu-1 --claim ml/train --claim ml/eval -o yaml
      allocate two claims jointly and print them as the API server would store them
  dratwin allocate -f case.yaml --node n1 --feature-gates DRAConsumableCapacity=false -o json

exit status: 0 all claims allocated, 1 they cannot be allocated on this node,
             2 bad input or the allocator refused it (as upstream returns an error)
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "allocate",
        help="allocate claims on one node with the Kubernetes 1.36 allocator",
        description="Allocate ResourceClaims on one node exactly as kube-scheduler's DRA allocator would "
        "(Kubernetes 1.36 semantics), jointly: all claims get devices or none does.",
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
        help="claim to allocate, in this order (repeatable); default: every unallocated claim",
    )
    parser.add_argument(
        "--feature-gates",
        default="",
        metavar="GATE=BOOL,...",
        help="override the 1.36 defaults, e.g. DRAConsumableCapacity=false",
    )
    parser.add_argument(
        "--skip-validation",
        action="store_true",
        help="give the objects to the allocator as they are, without API validation",
    )
    parser.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    parser.set_defaults(handler=run)


@dataclass
class Inputs:
    node: Node
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: dict[str, tuple[ResourceClaim, LoadedObject]] = field(default_factory=dict)


def run(args: argparse.Namespace) -> int:
    if args.output == "json":
        try:
            objects = load_paths(args.paths, args.recursive)
        except DratwinError as error:
            return _report_error("json", str(error))
        body = json_answer(objects, args.node, args.claims, args.feature_gates)
        print(json.dumps(body, indent=2))
        return {"allocated": 0, "unsatisfiable": 1}.get(str(body["result"]), 2)
    try:
        attempt = attempt_allocation(load_paths(args.paths, args.recursive), args.node, args.claims, args.feature_gates)
    except AllocationError as error:
        return _report_error(args.output, str(error))
    return _report(args.output, attempt)


@dataclass(frozen=True)
class Attempt:
    """One allocation for one node: the inputs it read, the claims it allocated, and the outcome."""

    inputs: Inputs
    targets: list[str]
    outcome: AllocationOutcome
    allocator: Allocator


def attempt_allocation(objects: list[LoadedObject], node: str, claims: list[str], feature_gates: str) -> Attempt:
    """Allocate ``claims`` (``ns/name``; all unallocated ones when empty) on ``node``, as the command does.

    Raises :class:`AllocationError` where upstream's allocator returns an error, and other
    :class:`DratwinError` for bad input.
    """
    features = Features.from_gates(feature_gates)
    inputs = _collect(objects, node)
    targets = _targets(inputs, claims)
    state = AllocatedState.from_claims((c for c, _ in inputs.claims.values()), features)
    allocator = Allocator(features, inputs.classes, inputs.slices, state)
    outcome = allocator.allocate(inputs.node, [inputs.claims[key][0] for key in targets])
    return Attempt(inputs, targets, outcome, allocator)


def json_answer(
    objects: list[LoadedObject], node: str, claims: list[str], feature_gates: str, *, explain_failure: bool = True
) -> dict[str, Any]:
    """What ``dratwin allocate -o json`` prints: every error (bad input, or refused as upstream
    does) becomes ``{"result": "error"}``. ``explain_failure=False`` leaves out the explanation of an
    unsatisfiable answer, which costs a second search."""
    try:
        attempt = attempt_allocation(objects, node, claims, feature_gates)
    except DratwinError as error:
        return {"result": "error", "error": str(error)}
    outcome, node_name = attempt.outcome, attempt.inputs.node.metadata.name
    body: dict[str, Any] = {"result": "allocated" if outcome.allocated else "unsatisfiable", "node": node_name}
    if outcome.allocated:
        body["allocations"] = _allocations(attempt)
    elif explain_failure:
        body["explanation"] = _explain(attempt).to_dict()
    return body


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
            inputs.classes.append(_decode(obj, DeviceClass))
        elif kind == "ResourceSlice":
            inputs.slices.append(_decode(obj, ResourceSlice))
        elif kind == "ResourceClaim":
            claim = _decode(obj, ResourceClaim)
            if not claim.metadata.namespace:
                claim.metadata.namespace = "default"
            inputs.claims[f"{claim.metadata.namespace}/{claim.metadata.name}"] = (claim, obj)
    if node is None:
        known = sorted(o.name for o in objects if o.kind == "Node")
        hint = f"; nodes in the input: {', '.join(known)}" if known else "; the input has no Node"
        raise InputError(f"node {node_name!r} is not in the input{hint}")
    inputs.node = node
    return inputs


def _decode(obj: LoadedObject, kind: type[S]) -> S:
    return decode_as(obj.raw, kind, f"{obj.source}: {obj.ref}")


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


def _report_error(output: str, message: str) -> int:
    if output == "json":
        print(json.dumps({"result": "error", "error": message}, indent=2))
    else:
        print(f"error: {message}", file=sys.stderr)
    return 2


def _allocations(attempt: Attempt) -> dict[str, Any]:
    results = attempt.outcome.results
    if results is None:
        return {}
    return {key: msgspec.to_builtins(r) for key, r in zip(attempt.targets, results, strict=True)}


def _explain(attempt: Attempt) -> Explanation:
    claims = [attempt.inputs.claims[key][0] for key in attempt.targets]
    return explain(attempt.allocator, attempt.inputs.node, claims)


def _report(output: str, attempt: Attempt) -> int:
    """Table or YAML output (JSON goes through :func:`json_answer`)."""
    allocations = _allocations(attempt)
    explanation = None if attempt.outcome.allocated else _explain(attempt)
    if output == "yaml":
        _print_yaml(attempt.inputs, attempt.targets, allocations)
        if explanation is not None:
            print("\n".join(explanation.lines()), file=sys.stderr)
    elif explanation is not None:
        print("\n".join(explanation.lines()))
    else:
        print(_table(attempt.inputs.node.metadata.name, allocations))
    return 0 if attempt.outcome.allocated else 1


def _print_yaml(inputs: Inputs, targets: list[str], allocations: dict[str, Any]) -> None:
    """The claims as the API server would store them: as written, plus status.allocation."""
    documents = []
    for key in targets:
        raw = copy.deepcopy(inputs.claims[key][1].raw)
        if key in allocations:
            raw.setdefault("status", {})["allocation"] = allocations[key]
        documents.append(raw)
    print(dump_yaml(documents), end="")


def _table(node: str, allocations: dict[str, Any]) -> str:
    rows = [("CLAIM", "REQUEST", "DEVICE", "NODE SELECTOR")]
    for key, allocation in allocations.items():
        selector = _selector_text(allocation.get("nodeSelector"))
        for result in allocation["devices"]["results"]:
            device = f"{result['driver']}/{result['pool']}/{result['device']}"
            extra = " (admin)" if result.get("adminAccess") else ""
            extra += f" share {result['shareID'][:8]}" if result.get("shareID") else ""
            rows.append((key, result["request"], device + extra, selector))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    header = f"node {node}: {len(allocations)} claim(s) allocated"
    return "\n".join([header, *lines]) if allocations else f"node {node}: nothing to allocate"


def _selector_text(selector: dict[str, Any] | None) -> str:
    if not selector:
        return "any node"
    terms = []
    for term in selector.get("nodeSelectorTerms", []):
        parts = [
            f"{r['key']} {r['operator']} {','.join(r.get('values', []))}".strip()
            for r in term.get("matchFields", []) + term.get("matchExpressions", [])
        ]
        terms.append(" and ".join(parts))
    return " or ".join(terms)

"""`dratwin validate`: check manifests the way a Kubernetes 1.36 API server with DRA would, and more."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence

from dratwin.allocator.features import Features
from dratwin.api.codec import decode_as
from dratwin.api.core import Node
from dratwin.api.loader import LoadedObject, load_paths
from dratwin.api.resource import ResourceSlice
from dratwin.api.validation import Problem, SelectorCompilerLike, validate_objects
from dratwin.api.validation_base import ProblemKind, Severity
from dratwin.cli.main import add_file_arguments
from dratwin.cluster.roles import node_roles
from dratwin.errors import DratwinError

EXIT_OK, EXIT_PROBLEMS = 0, 1

EPILOG = """\
examples:
  dratwin validate -f claims.yaml -f deviceclasses.yaml   check claims against the classes they use
  dratwin validate -f manifests/                           every .yaml/.yml/.json file below a directory
  kubectl get resourceclaims,deviceclasses -A -o yaml | dratwin validate -f -
  dratwin validate -f slices.yaml --feature-gates DRAPartitionableDevices=false
  dratwin validate -f manifests/ -o json                   for CI: {"valid": ..., "problems": [...]}

what is checked:
  - the API rules of resource.k8s.io/v1 (1.36): names, required fields, one-of fields, enums, limits
    (32 requests, 8 subrequests, 128 devices per slice, ...), quantities, semver versions, unknown fields
  - CEL selectors of DeviceClasses and requests: compiled, errors with position and a hint
  - references between the objects given: DeviceClasses named by claims, claims and templates named by
    Pods and workloads, container claims, the admin-access namespace label, the slices of each pool
  - fields of feature gates that are off (--feature-gates, 1.36 defaults otherwise)
  Objects of other API groups (CRDs such as ComputeDomain, Karpenter, Kueue) are skipped with a warning.
  Reference checks only see the input: pass the DeviceClasses along with the claims that use them.

output:
  FILE:LINE: KIND NAMESPACE/NAME: FIELD: PROBLEM: VALUE: what is wrong (hint)
  then a summary line. Warnings are marked "warning:" and do not fail the run.

exit status: 0 no errors (warnings allowed), 1 errors found, 2 unreadable input, unknown kind or bad usage.
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "validate",
        help="check manifests: schema, API limits, CEL selectors, dangling references",
        description="Check Kubernetes manifests for Dynamic Resource Allocation (DeviceClass, ResourceSlice,\n"
        "ResourceClaim, ResourceClaimTemplate, Pods and workloads) before they reach a cluster.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_file_arguments(parser, dest="files")
    parser.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")
    parser.add_argument(
        "--feature-gates", metavar="GATES", default=None,
        help="Gate=true|false,... on top of the Kubernetes 1.36 defaults (e.g. DRAListTypeAttributes=true)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    features = Features.from_gates(args.feature_gates)
    objects = load_paths(args.files, args.recursive)
    gc.freeze()  # the objects live until the end: the collector need not walk them again (100,000 devices)
    compiler = _compiler(features.list_type_attributes)
    problems = validate_objects(objects, compiler, features) + device_manager_conflicts(objects)
    files = len(dict.fromkeys(o.source.path for o in objects))
    if args.output == "json":
        _print_json(problems, len(objects), compiler is not None)
    else:
        _print_text(problems, len(objects), files)
    return EXIT_PROBLEMS if any(p.is_error for p in problems) else EXIT_OK


def device_manager_conflicts(objects: Sequence[LoadedObject]) -> list[Problem]:
    """Nodes where the device plugin and the DRA driver both serve one device family: both hand out the
    same devices, which no API rule catches and a real cluster does silently. An error, so CI stops."""
    nodes: dict[str, tuple[LoadedObject, Node]] = {}
    slices: list[ResourceSlice] = []
    for obj in objects:
        try:
            if obj.kind == "Node":
                nodes[obj.name] = (obj, decode_as(obj.raw, Node, obj.ref))
            elif obj.kind == "ResourceSlice":
                slices.append(decode_as(obj.raw, ResourceSlice, obj.ref))
        except DratwinError:
            continue  # reported by the field checks
    found = []
    for role in node_roles((node for _, node in nodes.values()), slices):
        if not role.warning():
            continue
        obj = nodes[role.node][0]
        severity = Severity.ERROR if role.conflict else Severity.WARNING
        found.append(Problem(
            severity, obj.source.path, obj.source.line, obj.ref, "status.allocatable", ProblemKind.FORBIDDEN,
            role.warning(),
        ))
    return found


def _compiler(list_type_attributes: bool) -> SelectorCompilerLike | None:
    """The CEL compiler of dratwin.cel, or None (with a note) when it cannot be loaded."""
    try:
        from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]

        compiler: SelectorCompilerLike = SelectorCompiler(list_type_attributes=list_type_attributes)
    except (ImportError, AttributeError, TypeError) as error:
        print(f"dratwin validate: note: CEL selectors are not compiled ({error})", file=sys.stderr)
        return None
    return compiler


def summary(problems: Sequence[Problem], objects: int, files: int) -> str:
    errors = sum(p.is_error for p in problems)
    warnings = len(problems) - errors
    where = f"{objects} object{'s' * (objects != 1)} in {files} file{'s' * (files != 1)}"
    if not problems:
        return f"valid: {where}, no problems"
    counts = f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    return f"{'invalid' if errors else 'valid'}: {counts} in {where}"


def _print_text(problems: Sequence[Problem], objects: int, files: int) -> None:
    for problem in problems:
        print(problem)
    print(summary(problems, objects, files))


def _print_json(problems: Sequence[Problem], objects: int, cel_checked: bool) -> None:
    errors = sum(p.is_error for p in problems)
    document = {
        "valid": errors == 0,
        "objects": objects,
        "errors": errors,
        "warnings": len(problems) - errors,
        "celChecked": cel_checked,
        "problems": [p.to_dict() for p in problems],
    }
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    print()

"""`dratwin validate`: check manifests the way a Kubernetes 1.36 API server with DRA would, and more."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence

import msgspec

from dratwin.allocator.features import Features
from dratwin.api.core import Node
from dratwin.api.input_set import FileNote, InputSet, NoteLevel, read_inputs
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import ResourceSlice
from dratwin.api.validation import Problem, SelectorCompilerLike, validate_objects
from dratwin.api.validation_base import ProblemKind, Severity
from dratwin.cli.main import add_file_arguments
from dratwin.cluster.roles import node_roles
from dratwin.errors import DratwinError
from dratwin.scenario.document import check_document, is_scenario
from dratwin.scenario.sweep import check_document as check_sweep
from dratwin.scenario.sweep import is_sweep

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2

EPILOG = """\
examples:
  dratwin validate -f claims.yaml -f deviceclasses.yaml   check claims against the classes they use
  dratwin validate -f manifests/                           every .yaml/.yml/.json file below a directory
  kubectl get resourceclaims,deviceclasses -A -o yaml | dratwin validate -f -
  dratwin validate -f slices.yaml --feature-gates DRAPartitionableDevices=false
  dratwin validate -f manifests/ -o json                   for CI: {"valid": ..., "problems": [...]}

what is checked:
  - structure, as the API server checks it under kubectl's --validate=strict: unknown fields (with a
    did-you-mean), wrong types (count: "2"), quantities (cpu: abc), required fields (a Pod without
    containers, a Deployment without selector), for every kind read: Pods and workloads (the whole pod
    spec), Nodes, Namespaces, resource.k8s.io, Karpenter's NodePool, NodeClaim and EC2NodeClass
  - resource.k8s.io v1beta1 and v1beta2 are converted to v1 as the API server does (a warning each)
  - the API rules of resource.k8s.io/v1 (1.36): names, required fields, one-of fields, enums, limits
    (32 requests, 8 subrequests, 128 devices per slice, ...), quantities, semver versions, unknown fields
  - CEL selectors of DeviceClasses and requests: compiled, errors with position and a hint; the cost limit
    of the API server (1,000,000, estimated as it estimates it); and, as warnings, selectors that compile
    but cannot work: attributes or capacities no device publishes (productname for productName), against
    the ResourceSlices given and the known drivers (NVIDIA GPU, DRANET, Neuron, DRA example driver),
    invalid literals (quantity("40GB"), semver("9.0")), a version compared with a string
  - references between the objects given: DeviceClasses named by claims, claims and templates named by
    Pods and workloads (a ComputeDomain's channel template counts: its controller creates it), container
    claims, the admin-access namespace label, the slices of each pool
  - fields of feature gates that are off (--feature-gates, 1.36 defaults otherwise)
  - NVIDIA ComputeDomains (resource.nvidia.com/v1beta1): the CRD's structure and rules (numNodes >= 0,
    allocationMode All|Single), and a channel template name the controller can create
  - Kueue (kueue.x-k8s.io/v1beta2; v1beta1 converted with a warning) and its Configuration
    (config.kueue.x-k8s.io): the CRDs' structure, and the rules of Kueue's webhooks in its words (<= 16
    resource groups, every flavor lists exactly the covered resources in order, a resource and a flavor
    in one group, borrowingLimit/lendingLimit only in a cohort, lendingLimit <= nominalQuota, ...), and
    ClusterQueues whose flavors are not in the input (Kueue keeps them inactive)
  - scenario files of `dratwin simulate` (dratwin.io/v1alpha1 Scenario): their fields (unknown ones with a
    did-you-mean), durations, rates, choices, the files they name, and their embedded manifests as above
  Objects of other API groups (CRDs such as MPIJob) are skipped with a warning.
  Reference checks only see the input: pass the DeviceClasses along with the claims that use them.

the input, as kubectl apply -f reads it:
  - the same object twice (same kind, namespace and name): identical copies are one object; a different
    later copy replaces the earlier one, with a warning naming both places and the first difference (an
    error where the API server refuses the update, e.g. a changed ResourceClaim spec)
  - a directory's files that are not manifests (Helm values.yaml and Chart.yaml, kustomization.yaml,
    templates with {{ }}, documents that are not objects) are skipped with a warning; a file named with
    -f is taken at its word
  - a file that cannot be read or parsed, or an object of an unknown kind, is an error of that file or
    object, and validation goes on with the rest

output:
  FILE:LINE: KIND NAMESPACE/NAME: FIELD: PROBLEM: VALUE: what is wrong (hint)
  then a summary line. Warnings are marked "warning:" and do not fail the run. Long values are
  shortened to their first 60 characters and their length. -o json always prints one JSON document.

exit status: 0 no errors (warnings allowed); 1 errors found, including unreadable files and an input
without any object; 2 bad usage, or nothing could be read at all (every path missing or unreadable).
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
    try:
        features = Features.from_gates(args.feature_gates)
    except DratwinError as error:
        return _usage_error(args.output, str(error))
    inputs = read_inputs(args.files, args.recursive, keep_going=True)
    gc.freeze()  # the objects live until the end: the collector need not walk them again (100,000 devices)
    args.built = inputs  # freed with the process when dratwin ends it (cli.main)
    compiler = _compiler(features.list_type_attributes)
    problems = [note_problem(note) for note in inputs.notes]
    if inputs.empty:
        problems.append(note_problem(inputs.empty_note()))
    typed: list[tuple[LoadedObject, msgspec.Struct]] = []
    manifests = [obj for obj in inputs.objects if not is_scenario(obj) and not is_sweep(obj)]
    problems += validate_objects(manifests, compiler, features, typed=typed)
    for scenario in (obj for obj in inputs.objects if is_scenario(obj)):
        problems += check_document(scenario, compiler=compiler)[2]
    for sweep in (obj for obj in inputs.objects if is_sweep(obj)):
        problems += check_sweep(sweep, compiler=compiler)[2]
    problems += device_manager_conflicts(typed)
    problems = _in_input_order(problems, inputs)
    objects, files = len(inputs.objects), len(dict.fromkeys(o.source.path for o in inputs.objects))
    if args.output == "json":
        _print_json(problems, objects, compiler is not None)
    elif inputs.unreadable:
        for problem in problems:
            print(f"dratwin validate: {problem}", file=sys.stderr)
    else:
        _print_text(problems, objects, files)
    if inputs.unreadable:
        return EXIT_USAGE
    return EXIT_PROBLEMS if any(p.is_error for p in problems) else EXIT_OK


def note_problem(note: FileNote) -> Problem:
    """A problem of a whole file (skipped, unreadable) or of the whole input (no objects)."""
    error = note.level is NoteLevel.ERROR
    kind = ProblemKind.NOT_FOUND if note.message.startswith("no Kubernetes objects") else (
        ProblemKind.NOT_READ if error else ProblemKind.NOT_CHECKED)
    return Problem(Severity.ERROR if error else Severity.WARNING, note.file, note.line, "", "", kind, note.message,
                   hint=note.hint)


def _in_input_order(problems: list[Problem], inputs: InputSet) -> list[Problem]:
    order = {file: i for i, file in enumerate(inputs.seen)}
    return sorted(problems, key=lambda p: (order.get(p.file, len(order)), p.line))


def _usage_error(output: str, message: str) -> int:
    if output == "json":
        document = {"valid": False, "error": message, "objects": 0, "errors": 1, "warnings": 0, "problems": []}
        json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print(f"dratwin validate: {message}", file=sys.stderr)
    return EXIT_USAGE


def device_manager_conflicts(typed: Sequence[tuple[LoadedObject, msgspec.Struct]]) -> list[Problem]:
    """Nodes where the device plugin and the DRA driver both serve one device family: both hand out the
    same devices, which no API rule catches and a real cluster does silently. An error, so CI stops.
    ``typed``: the objects validation decoded (v1 forms) with their typed views, in input order."""
    nodes: dict[str, tuple[LoadedObject, Node]] = {}
    slices: list[ResourceSlice] = []
    for obj, value in typed:
        if isinstance(value, Node):
            nodes[obj.name] = (obj, value)
        elif isinstance(value, ResourceSlice):
            slices.append(value)
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

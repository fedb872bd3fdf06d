"""Validate Kubernetes objects as a 1.36 API server with DRA would, plus what only shows across objects.

``validate_objects`` is pure: it reads loaded objects and returns :class:`Problem` values (errors and
warnings), never prints and never raises for bad content. The objects are first resolved as ``kubectl
apply`` applies them (:mod:`dratwin.api.duplicates`: a repeated object replaces the earlier one, with a
warning); an object that is not of a kind dratwin can judge (see :func:`dratwin.api.codec.classify`) is
an error of that object, and validation goes on with the others.

What is checked:

- every modelled object: its structure (``intake``: unknown fields, types, quantities, required fields,
  for every kind and version, older resource.k8s.io versions converted to v1 with a note), metadata
  (names, namespace, labels, annotations);
- DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate: the upstream API rules and limits
  (``validation_claims``, ``validation_slices``), CEL selectors compiled with ``compiler``, fields of
  disabled feature gates (``validation_gates``);
- Pods and the pod templates of workloads: their resource claims (``validation_core``);
- Kueue's objects (kueue.x-k8s.io v1beta2, v1beta1 converted with a note) and its Configuration: the
  CRDs' and webhooks' rules (``validation_kueue``), and the flavors, admission checks and ClusterQueues
  they name;
- Karpenter's NodePool, NodeClaim and EC2NodeClass: the CRDs' rules and the NodePool runtime validation
  (``validation_karpenter``); NVIDIA's ComputeDomain: its CRD's rules and the name of the template its
  controller creates (``validation_compute_domain``);
- across objects: DeviceClasses, claims and templates that are referenced but not in the input (or made
  by a controller of the input), requests named by containers, the admin-access namespace label
  (``validation_refs``), claims with EFA devices that several pods share (``validation_sharing``), the slices of
  each pool (``validation_pools``), the EC2NodeClasses that
  NodePools name (``validation_karpenter``), and selectors that compile but cannot work on the devices
  the input's slices (or the known drivers) publish (``validation_selectors``).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from dratwin.api.codec import (
    Classification,
    FieldDecodeError,
    Support,
    classify,
    decode_as,
    object_ref,
    pod_spec_of,
)
from dratwin.api.compute_domain import ComputeDomain
from dratwin.api.core import Namespace, Node, Pod
from dratwin.api.duplicates import merge_duplicates
from dratwin.api.intake import note_problem, read_object
from dratwin.api.karpenter import EC2NodeClass, NodeClaim, NodePool
from dratwin.api.kueue import KUEUE_KINDS
from dratwin.api.kueue import Configuration as KueueConfiguration
from dratwin.api.loader import LoadedObject
from dratwin.api.meta import ObjectMeta
from dratwin.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from dratwin.api.validation_base import (
    Context,
    DefaultGates,
    FeatureGatesLike,
    Problem,
    ProblemKind,
    Reporter,
    SelectorCompilerLike,
    Severity,
    kind_problem,
    replacement_problem,
)
from dratwin.api.validation_claims import validate_claim_spec, validate_device_class
from dratwin.api.validation_compute_domain import validate_compute_domain
from dratwin.api.validation_core import validate_labels_and_annotations, validate_metadata, validate_pod_spec
from dratwin.api.validation_formats import dns_label, dns_subdomain
from dratwin.api.validation_gates import check_claim_gates, check_class_gates, check_slice_gates
from dratwin.api.validation_karpenter import check_karpenter_references, validate_karpenter_object
from dratwin.api.validation_kueue import check_kueue_references, validate_kueue_object
from dratwin.api.validation_pools import check_pools
from dratwin.api.validation_refs import Checked, check_references, created_templates, extended_resource_classes
from dratwin.api.validation_selectors import check_selector_advice
from dratwin.api.validation_sharing import check_shared_efa_claims
from dratwin.api.validation_slices import validate_slice_spec
from dratwin.errors import InputError

__all__ = [
    "FeatureGatesLike",
    "Problem",
    "ProblemKind",
    "SelectorCompilerLike",
    "Severity",
    "validate_objects",
]

def validate_objects(
    objects: Sequence[LoadedObject],
    compiler: SelectorCompilerLike | None,
    gates: FeatureGatesLike | None = None,
    *,
    typed: list[tuple[LoadedObject, msgspec.Struct]] | None = None,
) -> list[Problem]:
    """Every problem of ``objects``, ordered by file (in input order) and line.

    ``compiler`` compiles CEL selectors (``dratwin.cel.SelectorCompiler``); None skips that check.
    ``gates`` are the feature gates of the cluster (Kubernetes 1.36 defaults when None). ``typed``, when
    given, receives each object that decoded (its v1 form) with its typed view, in order, for checks of
    higher layers: decoding 100,000 devices twice would cost seconds.
    """
    problems: list[Problem] = []
    merged = merge_duplicates(objects)
    problems.extend(replacement_problem(r) for r in merged.replacements)
    objects = merged.objects
    ctx = Context(compiler, gates or DefaultGates(), extended_resources=extended_resource_classes(objects))
    checked: list[Checked] = []
    for written in objects:
        try:
            how = classify(written)
        except InputError as error:
            problems.append(kind_problem(written, error))
            continue
        if how.support is Support.NOT_CHECKED:
            Reporter(written, object_ref(written), problems).warn(ProblemKind.NOT_CHECKED, (), how.reason,
                                                                  "skipped: nothing in it is validated")
            continue
        read = read_object(written)
        problems += read.problems
        if read.note:
            problems.append(note_problem(read))
        item = _check_object(read.obj, classify(read.obj), ctx, problems, read.typed)
        checked.append(item)
        if typed is not None and item.value is not None:
            typed.append((item.obj, item.value))
    check_references(checked, created_templates(objects))
    check_shared_efa_claims(checked)
    check_pools(checked)
    check_karpenter_references(checked)
    check_kueue_references(checked)
    check_selector_advice(ctx, [item.value for item in checked if isinstance(item.value, ResourceSlice)])
    order = {path: i for i, path in reversed(list(enumerate(o.source.path for o in objects)))}
    return sorted(_without_duplicates(problems), key=lambda p: (order.get(p.file, len(order)), p.line))


def _without_duplicates(problems: list[Problem]) -> list[Problem]:
    """A field a CRD's schema requires is often required by a rule with a better message too: keep that one."""
    explained = {(p.file, p.object, p.field) for p in problems if p.kind is ProblemKind.REQUIRED and p.message}
    return [p for p in problems
            if not (p.kind is ProblemKind.REQUIRED and not p.message and (p.file, p.object, p.field) in explained)]


def _check_object(obj: LoadedObject, how: Classification, ctx: Context, sink: list[Problem], typed: bool) -> Checked:
    """The rules of one object (its structure is checked already); none when a field has a wrong type: the
    API server refuses such an object before it validates anything, and its typed view would mislead."""
    namespaced = how.info.namespaced if how.info is not None else True
    rep = Reporter(obj, object_ref(obj, namespaced), sink)
    item = Checked(obj, rep, (obj.namespace or "default") if namespaced else "")
    if not typed:
        return item
    try:
        if how.info is None:
            _check_workload(item, how)
        else:
            item.value = decode_as(obj.raw, how.info.type, rep.ref)
            _check_typed(item, ctx)
    except FieldDecodeError as error:
        rep.invalid(error.path, _value_at(obj, error.path), error.detail)
    return item


def _check_workload(item: Checked, how: Classification) -> None:
    meta = decode_as(item.obj.raw.get("metadata") or {}, ObjectMeta, item.rep.ref, ("metadata",))
    validate_metadata(item.rep, meta, namespaced=True)
    spec = pod_spec_of(item.obj, how.template_path)
    if spec is not None:
        validate_pod_spec(item.rep, spec, how.template_path)
        item.pod_specs.append((how.template_path, spec))


def _check_typed(item: Checked, ctx: Context) -> None:
    rep, value = item.rep, item.value
    if isinstance(value, DeviceClass):
        validate_metadata(rep, value.metadata, namespaced=False)
        validate_device_class(rep, ctx, value)
        check_class_gates(rep, ctx.gates, value)
    elif isinstance(value, ResourceSlice):
        validate_metadata(rep, value.metadata, namespaced=False)
        validate_slice_spec(rep, value.spec)
        check_slice_gates(rep, ctx.gates, value.spec)
    elif isinstance(value, ResourceClaim):
        validate_metadata(rep, value.metadata, namespaced=True)
        validate_claim_spec(rep, ctx, value.spec.devices, ("spec", "devices"))
        check_claim_gates(rep, ctx.gates, value.spec.devices, ("spec", "devices"))
    elif isinstance(value, ResourceClaimTemplate):
        validate_metadata(rep, value.metadata, namespaced=True)
        validate_labels_and_annotations(rep, value.spec.metadata, ("spec", "metadata"))
        validate_claim_spec(rep, ctx, value.spec.spec.devices, ("spec", "spec", "devices"))
        check_claim_gates(rep, ctx.gates, value.spec.spec.devices, ("spec", "spec", "devices"))
    elif isinstance(value, Pod):
        validate_metadata(rep, value.metadata, namespaced=True)
        validate_pod_spec(rep, value.spec, ("spec",), value.metadata.name)
        item.pod_specs.append((("spec",), value.spec))
    elif isinstance(value, Namespace):
        validate_metadata(rep, value.metadata, namespaced=False, check=dns_label)
    elif isinstance(value, Node):
        validate_metadata(rep, value.metadata, namespaced=False, check=dns_subdomain)
    elif isinstance(value, NodePool | NodeClaim | EC2NodeClass):
        validate_metadata(rep, value.metadata, namespaced=False)
        validate_karpenter_object(rep, value)
    elif isinstance(value, _KUEUE_TYPES):
        validate_metadata(rep, value.metadata, namespaced=KUEUE_KINDS[value.kind][1])  # type: ignore[attr-defined]
        validate_kueue_object(rep, value)
    elif isinstance(value, KueueConfiguration):
        validate_kueue_object(rep, value)
    elif isinstance(value, ComputeDomain):
        validate_metadata(rep, value.metadata, namespaced=True)
        validate_compute_domain(rep, value)


_KUEUE_TYPES = tuple(type_ for type_, _ in KUEUE_KINDS.values())


def _value_at(obj: LoadedObject, path: tuple[str | int, ...]) -> object:
    value: object = obj.raw
    for part in path:
        in_list = isinstance(value, list) and isinstance(part, int) and part < len(value)
        if not in_list and not (isinstance(value, dict) and part in value):
            return None
        value = value[part]  # type: ignore[index]
    return value if isinstance(value, str | int | float | bool) or value is None else type(value).__name__

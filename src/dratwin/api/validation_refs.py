"""Checks across objects: dangling references (classes, claims, templates, requests) and the admin-access
namespace label.

The same object given twice is not a problem here: the input is resolved as ``kubectl apply`` would
apply it first (:mod:`dratwin.api.duplicates`). Templates that a controller creates from another
object of the input (NVIDIA's ComputeDomain controller creates the channel template a ComputeDomain
names, with one request ``channel``) count as present, with the requests the controller writes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import msgspec

from dratwin.api import compute_domain
from dratwin.api.core import Namespace, PodSpec
from dratwin.api.loader import FieldPath, LoadedObject
from dratwin.api.resource import DeviceClaim, ResourceClaim, ResourceClaimTemplate
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_claims import RequestNames, request_names
from dratwin.api.validation_formats import close_match, did_you_mean, dns_subdomain

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


@dataclass
class Checked:
    """An object that passed the kind check, with its typed view (None when it did not decode)."""

    obj: LoadedObject
    rep: Reporter
    namespace: str  # "" for cluster-scoped kinds, the defaulted namespace otherwise
    value: msgspec.Struct | None = None
    pod_specs: list[tuple[FieldPath, PodSpec]] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.obj.kind

    @property
    def name(self) -> str:
        return self.obj.name


def claim_devices(item: Checked) -> tuple[DeviceClaim, FieldPath] | None:
    """``spec.devices`` of a claim or of a template's claim spec, with its path."""
    if isinstance(item.value, ResourceClaim):
        return item.value.spec.devices, ("spec", "devices")
    if isinstance(item.value, ResourceClaimTemplate):
        return item.value.spec.spec.devices, ("spec", "spec", "devices")
    return None


@dataclass(frozen=True)
class CreatedTemplate:
    """A ResourceClaimTemplate that a controller creates for another object of the input."""

    namespace: str
    name: str
    controller: str  # who creates it, in words
    owner: LoadedObject  # the object it is created for
    requests: RequestNames = field(default_factory=dict)  # the requests the controller writes

    def describe(self) -> str:
        return f"created by {self.controller} ({self.owner.kind} {self.namespace}/{self.owner.name})"


def created_templates(objects: Sequence[LoadedObject]) -> dict[tuple[str, str], CreatedTemplate]:
    """Templates controllers create: the channel template of each NVIDIA ComputeDomain, in its namespace."""
    found: dict[tuple[str, str], CreatedTemplate] = {}
    for obj in objects:
        if obj.kind != compute_domain.KIND or obj.api_version.rpartition("/")[0] != compute_domain.GROUP:
            continue
        spec = obj.raw.get("spec")
        channel = spec.get("channel") if isinstance(spec, dict) else None
        template = channel.get("resourceClaimTemplate") if isinstance(channel, dict) else None
        name = template.get("name") if isinstance(template, dict) else None
        if isinstance(name, str) and name:
            namespace = obj.namespace or "default"
            found[(namespace, name)] = CreatedTemplate(
                namespace, name, "the ComputeDomain controller of the NVIDIA DRA driver", obj,
                {compute_domain.CHANNEL_REQUEST: None})
    return found


def check_references(items: list[Checked], created: dict[tuple[str, str], CreatedTemplate] | None = None) -> None:
    _check_device_classes(items)
    _check_pod_references(items, created or {})
    _check_created_templates(items, created or {})
    _check_admin_access(items)


def _class_references(devices: DeviceClaim, path: FieldPath) -> Iterator[tuple[FieldPath, str]]:
    for i, request in enumerate(devices.requests):
        if request.exactly is not None and request.exactly.device_class_name:
            yield (*path, "requests", i, "exactly", "deviceClassName"), request.exactly.device_class_name
        for j, sub in enumerate(request.first_available or ()):
            if sub.device_class_name:
                yield (*path, "requests", i, "firstAvailable", j, "deviceClassName"), sub.device_class_name


def _check_device_classes(items: list[Checked]) -> None:
    classes = {item.name for item in items if item.kind == "DeviceClass"}
    for item in items:
        found = claim_devices(item)
        if found is None:
            continue
        for path, name in _class_references(*found):
            if name in classes or dns_subdomain(name):
                continue  # an invalid name is reported where it is written, with its hint
            hint = did_you_mean(name, classes) or (
                "the input has no DeviceClass at all: add the file that defines it with another -f" if not classes
                else f"DeviceClasses in the input: {', '.join(sorted(classes))}")
            item.rep.not_found(path, name, f'no DeviceClass "{name}" in the input: the claim would stay pending',
                               hint)


def _check_pod_references(items: list[Checked], created: dict[tuple[str, str], CreatedTemplate]) -> None:
    targets: dict[str, dict[tuple[str, str], RequestNames]] = {"ResourceClaim": {}, "ResourceClaimTemplate": {}}
    for item in items:
        found = claim_devices(item)
        if found is not None:
            targets[item.kind][(item.namespace, item.name)] = request_names(found[0])
    for item in items:
        for path, spec in item.pod_specs:
            _check_pod_spec(item, spec, path, targets, created)


def _check_created_templates(items: list[Checked], created: dict[tuple[str, str], CreatedTemplate]) -> None:
    for item in items:
        template = created.get((item.namespace, item.name)) if item.kind == "ResourceClaimTemplate" else None
        if template is not None:
            item.rep.warn(ProblemKind.DUPLICATE, ("metadata", "name"),
                          f"this template is also {template.describe()}: the controller's create fails because "
                          "the template exists, and the ComputeDomain does not become ready",
                          "remove this template and let the controller create it")


def _check_pod_spec(item: Checked, spec: PodSpec, path: FieldPath,
                    targets: dict[str, dict[tuple[str, str], RequestNames]],
                    created: dict[tuple[str, str], CreatedTemplate]) -> None:
    requests_of: dict[str, RequestNames] = {}
    for i, claim in enumerate(spec.resource_claims):
        for field_name, kind, name in (("resourceClaimName", "ResourceClaim", claim.resource_claim_name),
                                       ("resourceClaimTemplateName", "ResourceClaimTemplate",
                                        claim.resource_claim_template_name)):
            if not name:
                continue
            known = targets[kind]
            if (item.namespace, name) in known:
                requests_of[claim.name] = known[(item.namespace, name)]
                continue
            made = created.get((item.namespace, name)) if kind == "ResourceClaimTemplate" else None
            if made is not None:
                requests_of[claim.name] = made.requests
                continue
            item.rep.not_found((*path, "resourceClaims", i, field_name), name,
                               f"no {kind} {item.namespace}/{name} in the input: the pod would stay pending",
                               _where_else(name, item.namespace, known))
    for group in ("containers", "initContainers"):
        containers = spec.containers if group == "containers" else spec.init_containers
        for c, container in enumerate(containers):
            for k, ref in enumerate(container.resources.claims):
                names = requests_of.get(ref.name)
                if ref.request and names is not None and ref.request not in names:
                    item.rep.not_found((*path, group, c, "resources", "claims", k, "request"), ref.request,
                                       f'the claim behind "{ref.name}" has no request "{ref.request}" '
                                       f"(has: {', '.join(sorted(names)) or 'none'})", did_you_mean(ref.request, names))


def _where_else(name: str, namespace: str, known: dict[tuple[str, str], RequestNames]) -> str:
    elsewhere = sorted(ns for ns, n in known if n == name)
    if elsewhere:
        return f"it exists in namespace {elsewhere[0]}; a pod can only use claims of its own namespace"
    match = close_match(name, [n for ns, n in known if ns == namespace])
    return f'did you mean "{match}"?' if match else ""


def _check_admin_access(items: list[Checked]) -> None:
    namespaces = {item.name: item.value for item in items if isinstance(item.value, Namespace)}
    by_namespace: dict[str, list[tuple[Checked, FieldPath]]] = defaultdict(list)
    for item in items:
        found = claim_devices(item)
        if found is None:
            continue
        devices, path = found
        for i, request in enumerate(devices.requests):
            if request.exactly is not None and request.exactly.admin_access:
                by_namespace[item.namespace].append((item, (*path, "requests", i, "exactly", "adminAccess")))
    for namespace, uses in by_namespace.items():
        ns = namespaces.get(namespace)
        for item, path in uses:
            if ns is None:
                item.rep.warn(ProblemKind.NOT_CHECKED, path,
                              f"adminAccess needs the label {ADMIN_ACCESS_LABEL}: \"true\" on namespace {namespace}, "
                              "which is not in the input", "add the Namespace with another -f to check it")
            elif ns.metadata.labels.get(ADMIN_ACCESS_LABEL) != "true":
                item.rep.forbidden(path, f"adminAccess is only allowed in namespaces labelled {ADMIN_ACCESS_LABEL}: "
                                   f"\"true\", and namespace {namespace} is not",
                                   f"kubectl label namespace {namespace} {ADMIN_ACCESS_LABEL}=true")


def extended_resource_classes(objects: Sequence[LoadedObject]) -> dict[str, str]:
    """extendedResourceName -> DeviceClass name, for the classes of the input (read before they are decoded)."""
    found: dict[str, str] = {}
    for obj in objects:
        spec = obj.raw.get("spec") if obj.kind == "DeviceClass" else None
        name = spec.get("extendedResourceName") if isinstance(spec, dict) else None
        if isinstance(name, str) and name and obj.name:
            found.setdefault(name, obj.name)
    return found

"""Rules shared by every kind (object metadata, node selectors) and the core/v1 kinds dratwin models.

Pods are checked only where they touch DRA: ``spec.resourceClaims`` and the containers' ``resources.claims``
(references to other objects are checked in :mod:`dratwin.api.validation_refs`).
"""

from __future__ import annotations

from collections.abc import Callable

from dratwin.api.codec import MapKey
from dratwin.api.core import Container, NodeSelector, NodeSelectorRequirement, PodSpec
from dratwin.api.loader import FieldPath
from dratwin.api.meta import ObjectMeta
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_formats import (
    did_you_mean,
    dns_label,
    dns_subdomain,
    label_key,
    label_value,
    suggest_dns,
)

NameCheck = Callable[[str], list[str]]
ANNOTATIONS_MAX_BYTES = 256 * 1024
NODE_SELECTOR_OPERATORS = ["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"]


def validate_name(rep: Reporter, path: FieldPath, name: str, check: NameCheck, what: str = "name") -> None:
    """A required name of the given format, with a corrected spelling as hint."""
    if not name:
        rep.required(path, f"a {what} is required")
        return
    fixed = suggest_dns(name, subdomain=check is dns_subdomain)
    rep.invalid_all(path, name, check(name), f'try "{fixed}"' if fixed and not check(fixed) else "")


def validate_metadata(
    rep: Reporter, meta: ObjectMeta, namespaced: bool, check: NameCheck = dns_subdomain, path: FieldPath = ("metadata",)
) -> None:
    if meta.name:
        validate_name(rep, (*path, "name"), meta.name, check)
    elif meta.generate_name:
        # A generateName is a prefix: a trailing '-' is fine, the server appends random characters.
        prefix = meta.generate_name[:-1] + "a" if meta.generate_name.endswith("-") else meta.generate_name
        rep.invalid_all((*path, "generateName"), meta.generate_name, check(prefix))
    else:
        rep.required((*path, "name"), "name or generateName is required")
    if meta.namespace and namespaced:
        validate_name(rep, (*path, "namespace"), meta.namespace, dns_label, "namespace")
    elif meta.namespace:
        rep.warn(ProblemKind.INVALID, (*path, "namespace"),
                 f'{rep.obj.kind} is cluster-scoped: the namespace "{meta.namespace}" is ignored')
    validate_labels_and_annotations(rep, meta, path)


def validate_labels_and_annotations(rep: Reporter, meta: ObjectMeta, path: FieldPath) -> None:
    for key, value in meta.labels.items():
        rep.invalid_all((*path, "labels", MapKey(key)), key, label_key(key))
        rep.invalid_all((*path, "labels", MapKey(key)), value, label_value(str(value)))
    size = 0
    for key, value in meta.annotations.items():
        rep.invalid_all((*path, "annotations", MapKey(key)), key, label_key(key.lower()))
        size += len(key) + len(str(value))
    if size > ANNOTATIONS_MAX_BYTES:
        rep.too_long((*path, "annotations"), ANNOTATIONS_MAX_BYTES, size, "bytes")


# ---- node selectors ------------------------------------------------------------------------------


def validate_node_selector(rep: Reporter, selector: NodeSelector, path: FieldPath, single_term: bool) -> None:
    """A v1 NodeSelector; ResourceSlices need exactly one term (so that selectors of slices can be merged)."""
    terms = selector.node_selector_terms
    if not terms:
        rep.required((*path, "nodeSelectorTerms"), "at least one node selector term is required")
    elif single_term and len(terms) != 1:
        rep.invalid((*path, "nodeSelectorTerms"), len(terms), "must have exactly one node selector term",
                    "put all requirements into one term (they are ANDed)")
    for t, term in enumerate(terms):
        term_path = (*path, "nodeSelectorTerms", t)
        for r, requirement in enumerate(term.match_expressions):
            _validate_requirement(rep, requirement, (*term_path, "matchExpressions", r))
        for r, requirement in enumerate(term.match_fields):
            _validate_field_requirement(rep, requirement, (*term_path, "matchFields", r))


def _validate_requirement(rep: Reporter, req: NodeSelectorRequirement, path: FieldPath) -> None:
    rep.invalid_all((*path, "key"), req.key, label_key(req.key))
    values_path = (*path, "values")
    if req.operator in ("In", "NotIn"):
        if not req.values:
            rep.required(values_path, f"must be specified when operator is {req.operator}")
        for i, value in enumerate(req.values):
            rep.invalid_all((*values_path, i), value, label_value(value))
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            rep.forbidden(values_path, f"may not be specified when operator is {req.operator}")
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1:
            rep.required(values_path, f"must have exactly one value when operator is {req.operator}")
        elif not req.values[0].lstrip("-").isdigit():
            rep.invalid((*values_path, 0), req.values[0], f"must be an integer for operator {req.operator}")
    elif not req.operator:
        rep.required((*path, "operator"), "one of " + ", ".join(NODE_SELECTOR_OPERATORS))
    else:
        rep.unsupported((*path, "operator"), req.operator, NODE_SELECTOR_OPERATORS)


def _validate_field_requirement(rep: Reporter, req: NodeSelectorRequirement, path: FieldPath) -> None:
    if req.key != "metadata.name":
        rep.unsupported((*path, "key"), req.key, ["metadata.name"],
                        "matchFields selects nodes by name only; use matchExpressions for labels")
    if req.operator not in ("In", "NotIn"):
        rep.unsupported((*path, "operator"), req.operator, ["In", "NotIn"])
    if len(req.values) != 1:
        rep.invalid((*path, "values"), len(req.values), "must have exactly one value (a node name)")
    else:
        rep.invalid_all((*path, "values", 0), req.values[0], dns_subdomain(req.values[0]))


# ---- pods ----------------------------------------------------------------------------------------


def validate_pod_spec(rep: Reporter, spec: PodSpec, path: FieldPath, pod_name: str = "") -> set[str]:
    """The DRA part of a pod spec; returns the names of the pod's resource claims."""
    names: set[str] = set()
    for i, claim in enumerate(spec.resource_claims):
        claim_path = (*path, "resourceClaims", i)
        if not claim.name:
            rep.required((*claim_path, "name"))
        elif claim.name in names:
            rep.duplicate((*claim_path, "name"), claim.name, "each pod resource claim needs its own name")
        elif not rep.invalid_all((*claim_path, "name"), claim.name, dns_label(claim.name)):
            final = f"{pod_name}-{claim.name}"
            if pod_name and claim.resource_claim_template_name is not None and dns_subdomain(final):
                rep.invalid((*claim_path, "name"), final, "the generated ResourceClaim name (pod name + '-' + "
                            "claim name) must be a DNS subdomain: " + "; ".join(dns_subdomain(final)))
        names.add(claim.name)
        sources = [s for s in (claim.resource_claim_name, claim.resource_claim_template_name) if s is not None]
        if len(sources) != 1:
            rep.invalid(claim_path, claim.name, "must set exactly one of resourceClaimName and "
                        "resourceClaimTemplateName", "name an existing ResourceClaim, or a template to get one "
                        "claim per pod")
        for field, value in (("resourceClaimName", claim.resource_claim_name),
                             ("resourceClaimTemplateName", claim.resource_claim_template_name)):
            if value is not None:
                validate_name(rep, (*claim_path, field), value, dns_subdomain)
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for c, container in enumerate(containers):
            _validate_container_claims(rep, container, (*path, group, c, "resources", "claims"), names)
    return names


def _validate_container_claims(rep: Reporter, container: Container, path: FieldPath, names: set[str]) -> None:
    seen: set[tuple[str, str]] = set()
    for i, claim in enumerate(container.resources.claims):
        if not claim.name:
            rep.required((*path, i, "name"))
            continue
        if (claim.name, claim.request) in seen:
            rep.duplicate((*path, i), claim.name, "this claim (and request) is already listed for the container")
        seen.add((claim.name, claim.request))
        if claim.name not in names:
            listed = ", ".join(sorted(names)) or "none"
            rep.not_found((*path, i, "name"), claim.name,
                          f"must be one of the names in the pod's spec.resourceClaims (has: {listed})",
                          did_you_mean(claim.name, names))
        if claim.request:
            rep.invalid_all((*path, i, "request"), claim.request, dns_label(claim.request))

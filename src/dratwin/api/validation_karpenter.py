"""Rules of Karpenter's NodePool, NodeClaim and EC2NodeClass, and the references between them (the EC2NodeClass's
own rules are in :mod:`.validation_ec2nodeclass`).

Two sources, both kubernetes-sigs/karpenter and aws/karpenter-provider-aws v1.14:

- the CRDs' OpenAPI schema and CEL rules (``pkg/apis/crds/*.yaml``): the API server rejects objects that
  break them, so they are errors;
- the NodePool runtime validation (``pkg/apis/v1/nodepool_validation.go``, ``nodeclaim_validation.go``):
  a NodePool that fails it is not Ready and launches nothing, so those are errors too.

Warnings are dratwin's own: things the API accepts that most likely do not do what was meant (a label
that contradicts a requirement, a typo of a well-known label, a NodeClass that is not in the input).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from dratwin.api.codec import MapKey
from dratwin.api.core import Taint
from dratwin.api.karpenter import (
    AUTO_MODE_WELL_KNOWN_LABELS,
    AWS_GROUP,
    CONSOLIDATION_POLICIES,
    DISRUPTION_REASONS,
    EC2_NODE_CLASS,
    EKS_GROUP,
    NODEPOOL_LABEL,
    NORMALIZED_LABELS,
    REQUIREMENT_OPERATORS,
    RESTRICTED_LABEL_DOMAINS,
    WELL_KNOWN_LABELS,
    WELL_KNOWN_VALUES,
    Budget,
    Disruption,
    EC2NodeClass,
    NodeClaim,
    NodeClaimSpec,
    NodeClaimTemplateMetadata,
    NodeClaimTemplateSpec,
    NodeClassReference,
    NodePool,
    NodeSelectorRequirementWithMinValues,
    label_domain,
    restricted_label,
)
from dratwin.api.loader import FieldPath
from dratwin.api.meta import ObjectMeta
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_core import validate_labels_and_annotations
from dratwin.api.validation_ec2nodeclass import validate_ec2_nodeclass
from dratwin.api.validation_formats import LABEL_VALUE_MAX, close_match, did_you_mean, label_key, label_value
from dratwin.api.validation_refs import Checked

MAX_REQUIREMENTS = 100
MAX_MIN_VALUES = 50
MAX_BUDGETS = 50
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
BOUND_OPERATORS = ("Gt", "Gte", "Lt", "Lte")

# The CRDs' patterns; OpenAPI patterns are searched, not anchored (those that need it carry ^ and $).
_DURATION_OR_NEVER = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
_DURATION = re.compile(r"^([0-9]+(s|m|h))+$")
_BUDGET_DURATION = re.compile(r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")
_BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
_SCHEDULE = re.compile(r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# Domains of the labels Karpenter knows: an unknown key there is most likely a typo of a known one.
_KNOWN_DOMAINS = frozenset(label_domain(k) for k in WELL_KNOWN_LABELS | AUTO_MODE_WELL_KNOWN_LABELS) | {"kubernetes.io"}
# Fields karpenter.sh/v1beta1 had that v1 moved elsewhere: a hint for the unknown-field error.
_MOVED_IN_V1: dict[tuple[str, tuple[str | int, ...]], str] = {
    ("NodePool", ("spec", "template", "spec", "kubelet")): "karpenter.sh/v1 moved kubelet to the EC2NodeClass "
    "(spec.kubelet)",
    ("NodePool", ("spec", "disruption", "expireAfter")): "karpenter.sh/v1 moved expireAfter to "
    "spec.template.spec.expireAfter",
    ("NodePool", ("spec", "template", "spec", "nodeClassRef", "apiVersion")): "karpenter.sh/v1 names the "
    "group without version: group: karpenter.k8s.aws",
    ("NodeClaim", ("spec", "kubelet")): "karpenter.sh/v1 moved kubelet to the EC2NodeClass (spec.kubelet)",
    ("NodeClaim", ("spec", "nodeClassRef", "apiVersion")): "karpenter.sh/v1 names the group without version: "
    "group: karpenter.k8s.aws",
}


def moved_field_hint(kind: str, path: FieldPath) -> str:
    """For an unknown field of a karpenter.sh/v1 object: where v1 moved it from v1beta1 ("" when not moved)."""
    return _MOVED_IN_V1.get((kind, tuple(path)), "")


def validate_karpenter_object(rep: Reporter, value: NodePool | NodeClaim | EC2NodeClass) -> None:
    """The rules of one object's spec (metadata is checked by the caller, like for every kind)."""
    if isinstance(value, NodePool):
        validate_nodepool(rep, value)
    elif isinstance(value, NodeClaim):
        validate_nodeclaim(rep, value)
    else:
        validate_ec2_nodeclass(rep, value)


# ---- NodePool and NodeClaim ----------------------------------------------------------------------


def validate_nodepool(rep: Reporter, pool: NodePool) -> None:
    spec, template = pool.spec, ("spec", "template")
    if len(pool.metadata.name) > LABEL_VALUE_MAX:
        rep.warn(ProblemKind.INVALID, ("metadata", "name"), f"the name becomes the value of the label "
                 f"karpenter.sh/nodepool on every node, which may be at most {LABEL_VALUE_MAX} characters "
                 f"(has {len(pool.metadata.name)}): Karpenter could not create its NodeClaims", "use a shorter name")
    _validate_template_metadata(rep, spec.template.metadata, (*template, "metadata"))
    _validate_claim_spec(rep, spec.template.spec, (*template, "spec"), nodepool=True)
    _check_labels_against_requirements(rep, spec.template.metadata.labels, spec.template.spec.requirements or [],
                                       (*template, "metadata", "labels"))
    _validate_disruption(rep, spec.disruption, ("spec", "disruption"))
    for name, amount in spec.limits.items():
        rep.quantity(("spec", "limits", MapKey(name)), amount)
    if spec.weight is not None and not 1 <= spec.weight <= 100:
        rep.invalid(("spec", "weight"), spec.weight, "must be between 1 and 100",
                    "NodePools with higher weights are tried first; leave it unset for the lowest priority")
    if spec.replicas is not None:
        _validate_static(rep, pool)


def validate_nodeclaim(rep: Reporter, claim: NodeClaim) -> None:
    _validate_claim_spec(rep, claim.spec, ("spec",), nodepool=False)
    for name, amount in claim.spec.resources.requests.items():
        rep.quantity(("spec", "resources", "requests", MapKey(name)), amount)


def _validate_static(rep: Reporter, pool: NodePool) -> None:
    spec = pool.spec
    assert spec.replicas is not None
    if spec.replicas < 0:
        rep.invalid(("spec", "replicas"), spec.replicas, "must be 0 or more")
    if set(spec.limits) - {"nodes"}:
        rep.invalid(("spec", "limits"), ", ".join(sorted(spec.limits)), "only 'limits.nodes' is supported on "
                    "static NodePools", "a static NodePool keeps spec.replicas nodes; cap it with limits.nodes")
    if spec.weight is not None:
        rep.forbidden(("spec", "weight"), "'weight' is not supported on static NodePools",
                      "static NodePools do not provision for pending pods, so they are never ordered")


def _validate_template_metadata(rep: Reporter, meta: NodeClaimTemplateMetadata, path: FieldPath) -> None:
    validate_labels_and_annotations(rep, ObjectMeta(labels=meta.labels, annotations=meta.annotations), path)
    for key in meta.labels:
        reason = restricted_label(key)
        if reason is not None:
            rep.invalid((*path, "labels", MapKey(key)), key, reason, _restricted_hint(key))


def _validate_claim_spec(
    rep: Reporter, spec: NodeClaimTemplateSpec | NodeClaimSpec, path: FieldPath, nodepool: bool
) -> None:
    _validate_requirements(rep, spec.requirements, (*path, "requirements"), nodepool)
    seen: set[tuple[str, str]] = set()
    _validate_taints(rep, spec.taints, (*path, "taints"), seen)
    _validate_taints(rep, spec.startup_taints, (*path, "startupTaints"), seen)
    _validate_node_class_ref(rep, spec.node_class_ref, (*path, "nodeClassRef"))
    _validate_duration(rep, spec.expire_after, (*path, "expireAfter"), never=True)
    _validate_duration(rep, spec.termination_grace_period, (*path, "terminationGracePeriod"), never=False)


def _validate_requirements(
    rep: Reporter, requirements: list[NodeSelectorRequirementWithMinValues] | None, path: FieldPath, nodepool: bool
) -> None:
    if requirements is None:
        rep.required(path, "requirements is required (an empty list allows every instance type)",
                     "e.g. - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}")
        return
    if len(requirements) > MAX_REQUIREMENTS:
        rep.too_many(path, len(requirements), MAX_REQUIREMENTS)
    for i, requirement in enumerate(requirements):
        _validate_requirement(rep, requirement, (*path, i), nodepool)


def _validate_requirement(
    rep: Reporter, req: NodeSelectorRequirementWithMinValues, path: FieldPath, nodepool: bool
) -> None:
    _validate_requirement_key(rep, req.key, (*path, "key"), nodepool)
    values_path = (*path, "values")
    for i, value in enumerate(req.values):
        rep.invalid_all((*values_path, i), value, label_value(value))
    if not req.operator:
        rep.required((*path, "operator"), "one of " + ", ".join(REQUIREMENT_OPERATORS))
    elif req.operator not in REQUIREMENT_OPERATORS:
        rep.unsupported((*path, "operator"), req.operator, list(REQUIREMENT_OPERATORS))
    elif req.operator == "In" and not req.values:
        rep.required(values_path, "requirements with operator 'In' must have a value defined")
    elif req.operator in BOUND_OPERATORS and (len(req.values) != 1 or not _is_non_negative_int(req.values[0])):
        rep.invalid(values_path, req.values, "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single "
                    "positive integer value", f'e.g. values: ["{_first_digits(req.values)}"]')
    elif req.operator in ("Exists", "DoesNotExist") and req.values:
        rep.warn(ProblemKind.INVALID, values_path, f"values are ignored with operator {req.operator}",
                 "use In or NotIn to name values")
    if req.min_values is not None:
        _validate_min_values(rep, req, (*path, "minValues"))
    if req.operator == "In" and req.values:
        _check_well_known_values(rep, req, path)


def _validate_requirement_key(rep: Reporter, key: str, path: FieldPath, nodepool: bool) -> None:
    if not key:
        rep.required(path, "the label key the requirement applies to")
        return
    if rep.invalid_all(path, key, label_key(key)):
        return
    reason = restricted_label(key, nodepool)
    if reason is not None:
        rep.invalid(path, key, reason, _restricted_hint(key))
        return
    meant = _well_known_typo(key)
    if meant is not None:
        rep.warn(ProblemKind.INVALID, path, f'"{key}" is not a label Karpenter knows: it is treated as a custom '
                 "label, which instance types do not have", f'did you mean "{meant}"?')


def _well_known_typo(key: str) -> str | None:
    """The well-known label an unknown key in a well-known domain most likely meant: the same name in another
    known domain (kubernetes.io/instance-type), or a close spelling of a name in the same domain."""
    known = WELL_KNOWN_LABELS | AUTO_MODE_WELL_KNOWN_LABELS
    domain, name = label_domain(key), key.rsplit("/", 1)[-1]
    if key in known or key in NORMALIZED_LABELS or domain not in _KNOWN_DOMAINS:
        return None
    same_name = sorted(k for k in known if k.rsplit("/", 1)[-1] == name)
    if same_name:
        return same_name[0]
    names = {k.rsplit("/", 1)[-1]: k for k in known if label_domain(k) == domain}
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.8)
    return names[close[0]] if close else None


def _validate_min_values(rep: Reporter, req: NodeSelectorRequirementWithMinValues, path: FieldPath) -> None:
    assert req.min_values is not None
    if not 1 <= req.min_values <= MAX_MIN_VALUES:
        rep.invalid(path, req.min_values, f"must be between 1 and {MAX_MIN_VALUES}")
    elif req.operator == "In" and len(req.values) < req.min_values:
        rep.invalid(path, req.min_values, "requirements with 'minValues' must have at least that many values "
                    f"specified in the 'values' field (has {len(req.values)})",
                    f"list at least {req.min_values} values or lower minValues to {len(req.values)}")


def _check_well_known_values(rep: Reporter, req: NodeSelectorRequirementWithMinValues, path: FieldPath) -> None:
    """Keys with a known set of values: no valid value leaves the NodePool not Ready (runtime validation)."""
    key = NORMALIZED_LABELS.get(req.key, req.key)
    known = WELL_KNOWN_VALUES.get(key)
    if known is None:
        return
    valid = [v for v in req.values if v in known]
    invalid = [v for v in req.values if v not in known]
    expected = ", ".join(sorted(known))
    hint = did_you_mean(invalid[0], known) if invalid else ""
    if not valid:
        rep.invalid((*path, "values"), req.values, f"no valid values for {key}, expected one of: {expected}: the "
                    "NodePool would not become Ready", hint)
    elif req.min_values is not None and len(valid) < req.min_values:
        rep.invalid((*path, "minValues"), req.min_values, f"not enough valid values for {key} (has {len(valid)} of "
                    f"{expected}): the NodePool would not become Ready", hint)
    elif invalid:
        rep.warn(ProblemKind.INVALID, (*path, "values"), f"{', '.join(invalid)} is not a value of {key} "
                 f"(expected one of: {expected}); Karpenter ignores it", hint)


def _restricted_hint(key: str) -> str:
    if key == NODEPOOL_LABEL:
        return "Karpenter sets it to the NodePool's name on every node; pods can select it"
    domain = label_domain(key)
    for restricted, allowed in RESTRICTED_LABEL_DOMAINS.items():
        if domain.endswith(restricted):
            extended = sorted(k for k in allowed if k.startswith(key))  # karpenter.k8s.aws/instance-gpu
            meant = extended[0] if extended else close_match(key, allowed)
            return f'did you mean "{meant}"?' if meant else "use a label in a domain of your own (example.com/team)"
    return "Karpenter names nodes itself; select nodes by other labels"


def _validate_taints(rep: Reporter, taints: list[Taint], path: FieldPath, seen: set[tuple[str, str]]) -> None:
    for i, taint in enumerate(taints):
        taint_path = (*path, i)
        if not taint.key:
            rep.required((*taint_path, "key"))
        else:
            rep.invalid_all((*taint_path, "key"), taint.key, label_key(taint.key))
        if taint.value:
            rep.invalid_all((*taint_path, "value"), taint.value, label_key(taint.value))
        if not taint.effect:
            rep.required((*taint_path, "effect"), "one of " + ", ".join(TAINT_EFFECTS))
        elif taint.effect not in TAINT_EFFECTS:
            rep.unsupported((*taint_path, "effect"), taint.effect, TAINT_EFFECTS)
        pair = (taint.key, taint.effect)
        if pair in seen:
            rep.duplicate(taint_path, f"{taint.key}={taint.effect}", "duplicate taint Key/Effect pair",
                          "taints and startupTaints share one key/effect space")
        seen.add(pair)


def _validate_node_class_ref(rep: Reporter, ref: NodeClassReference | None, path: FieldPath) -> None:
    if ref is None:
        rep.required(path, "nodeClassRef is required", "e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, "
                     "name: default}; EKS Auto Mode: {group: eks.amazonaws.com, kind: NodeClass, name: default}")
        return
    if not ref.group:
        rep.required((*path, "group"), "group may not be empty", "karpenter.k8s.aws (EKS Auto Mode: eks.amazonaws.com)")
    elif "/" in ref.group:
        rep.invalid((*path, "group"), ref.group, "must be an API group without version",
                    f'use "{ref.group.split("/")[0]}"')
    if not ref.kind:
        rep.required((*path, "kind"), "kind may not be empty", "EC2NodeClass (EKS Auto Mode: NodeClass)")
    if not ref.name:
        rep.required((*path, "name"), "name may not be empty")


def _validate_duration(rep: Reporter, value: str | None, path: FieldPath, never: bool) -> None:
    if value is None or (_DURATION_OR_NEVER if never else _DURATION).search(value):
        return
    units = "whole numbers of s, m or h (e.g. 720h, 1h30m)" + (" or Never" if never else "")
    days = re.fullmatch(r"([0-9]+)d", value)
    hint = f"days are not a unit here: use {int(days[1]) * 24}h" if days else ""
    if not hint and value.lower() == "never":
        hint = 'write "Never"' if never else "this duration cannot be Never; leave it unset to wait indefinitely"
    rep.invalid(path, value, f"must be a duration in {units}", hint)


def _validate_disruption(rep: Reporter, disruption: Disruption, path: FieldPath) -> None:
    _validate_duration(rep, disruption.consolidate_after, (*path, "consolidateAfter"), never=True)
    policy = disruption.consolidation_policy
    if policy and policy not in CONSOLIDATION_POLICIES:
        rep.unsupported((*path, "consolidationPolicy"), policy, list(CONSOLIDATION_POLICIES))
    budgets = disruption.budgets or []
    if len(budgets) > MAX_BUDGETS:
        rep.too_many((*path, "budgets"), len(budgets), MAX_BUDGETS)
    for i, budget in enumerate(budgets):
        _validate_budget(rep, budget, (*path, "budgets", i))


def _validate_budget(rep: Reporter, budget: Budget, path: FieldPath) -> None:
    nodes = budget.nodes
    if isinstance(nodes, int):
        rep.invalid((*path, "nodes"), nodes, "must be a string", f'quote it: nodes: "{nodes}"')
    elif not nodes:
        rep.required((*path, "nodes"), "the number or percentage of nodes that may be disrupted at once",
                     'e.g. nodes: "10%"; "0" blocks disruption')
    elif not _BUDGET_NODES.search(nodes):
        rep.invalid((*path, "nodes"), nodes, 'must be a number of nodes or a percentage from 0% to 100% (e.g. "5", '
                    '"10%")')
    if budget.schedule is not None and not _SCHEDULE.search(budget.schedule):
        rep.invalid((*path, "schedule"), budget.schedule, "must be a cron schedule of five fields or a macro such "
                    "as @daily (UTC)")
    if budget.duration is not None and not _BUDGET_DURATION.search(budget.duration):
        rep.invalid((*path, "duration"), budget.duration, "must be a duration in whole hours and minutes "
                    "(e.g. 8h, 1h30m)")
    if (budget.schedule is None) != (budget.duration is None):
        rep.add(ProblemKind.INVALID, path, "'schedule' must be set with 'duration'",
                hint="set both, or neither for an always active budget")
    _validate_reasons(rep, budget.reasons or [], (*path, "reasons"))


def _validate_reasons(rep: Reporter, reasons: list[str], path: FieldPath) -> None:
    if len(reasons) > MAX_BUDGETS:
        rep.too_many(path, len(reasons), MAX_BUDGETS)
    seen: set[str] = set()
    for i, reason in enumerate(reasons):
        if reason not in DISRUPTION_REASONS:
            rep.unsupported((*path, i), reason, list(DISRUPTION_REASONS))
        elif reason in seen:
            rep.duplicate((*path, i), reason)
        seen.add(reason)


def _check_labels_against_requirements(
    rep: Reporter, labels: dict[str, str], requirements: Sequence[NodeSelectorRequirementWithMinValues],
    path: FieldPath,
) -> None:
    """A template label that a requirement on the same key excludes: Karpenter intersects the two, so no
    value remains for the key and pods that select it can never use the NodePool."""
    for req in requirements:
        value = labels.get(req.key)
        if value is None or _allows(req, value) is not False:
            continue
        shown = f"{req.key} {req.operator} [{' '.join(req.values)}]" if req.values else f"{req.key} {req.operator}"
        rep.warn(ProblemKind.INVALID, (*path, MapKey(req.key)), f'label "{req.key}: {value}" is not allowed by the '
                 f'requirement "{shown}": pods that select {req.key} can never use this NodePool',
                 "drop one of them, or make them agree")


def _allows(req: NodeSelectorRequirementWithMinValues, value: str) -> bool | None:
    """Whether a requirement allows a label value; None when the requirement itself is invalid."""
    if req.operator in ("In", "NotIn"):
        return (value in req.values) == (req.operator == "In")
    if req.operator in ("Exists", "DoesNotExist"):
        return req.operator == "Exists"
    if req.operator in BOUND_OPERATORS and len(req.values) == 1 and _INTEGER.fullmatch(req.values[0]):
        if not _INTEGER.fullmatch(value):
            return False
        actual, bound = int(value), int(req.values[0])
        return {"Gt": actual > bound, "Gte": actual >= bound, "Lt": actual < bound, "Lte": actual <= bound}[
            req.operator]
    return None


def _is_non_negative_int(text: str) -> bool:
    return bool(_INTEGER.fullmatch(text)) and int(text) >= 0


def _first_digits(values: list[str]) -> str:
    digits = re.search(r"[0-9]+", values[0]) if values else None
    return digits[0] if digits else "4"


# ---- across objects ------------------------------------------------------------------------------


def check_karpenter_references(items: list[Checked]) -> None:
    """NodePools and NodeClaims whose nodeClassRef names a NodeClass: is it in the input?"""
    classes = sorted(item.name for item in items if isinstance(item.value, EC2NodeClass))
    path: FieldPath
    for item in items:
        if isinstance(item.value, NodePool):
            ref, path = item.value.spec.template.spec.node_class_ref, ("spec", "template", "spec", "nodeClassRef")
        elif isinstance(item.value, NodeClaim):
            ref, path = item.value.spec.node_class_ref, ("spec", "nodeClassRef")
        else:
            continue
        if ref is not None and ref.name and ref.group and "/" not in ref.group:
            _check_node_class_ref(item, ref, path, classes)


def _check_node_class_ref(item: Checked, ref: NodeClassReference, path: FieldPath, classes: list[str]) -> None:
    rep, what = item.rep, "the NodePool" if item.kind == "NodePool" else "the NodeClaim"
    if ref.group == AWS_GROUP:
        if ref.kind != EC2_NODE_CLASS:
            rep.unsupported((*path, "kind"), ref.kind, [EC2_NODE_CLASS])
        elif ref.name not in classes:
            hint = did_you_mean(ref.name, classes) or (
                "the input has no EC2NodeClass: add the file that defines it with another -f" if not classes
                else f"EC2NodeClasses in the input: {', '.join(classes)}")
            rep.warn(ProblemKind.NOT_FOUND, (*path, "name"), f'no EC2NodeClass "{ref.name}" in the input: {what} '
                     "cannot launch nodes without it", hint)
    elif ref.group == EKS_GROUP:
        if ref.name != "default" or ref.kind != "NodeClass":
            rep.warn(ProblemKind.NOT_CHECKED, path, f"EKS Auto Mode {ref.kind} {ref.name} is not modelled by dratwin",
                     "only the built-in NodeClass default is known")
    else:
        hint = did_you_mean(ref.group, [AWS_GROUP, EKS_GROUP])
        rep.warn(ProblemKind.NOT_CHECKED, (*path, "group"), f"a node class of group {ref.group} is not modelled by "
                 f"dratwin (it knows {AWS_GROUP} {EC2_NODE_CLASS} and EKS Auto Mode's {EKS_GROUP} NodeClass)", hint)

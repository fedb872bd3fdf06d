"""Rules of Karpenter's EC2NodeClass (aws/karpenter-provider-aws v1.14): the CRD's OpenAPI schema and CEL rules
(``pkg/apis/crds/*.yaml``), which the API server enforces, so each is an error; the one warning is about the
NVIDIA consumable-capacity annotation's value. NodePool and NodeClaim: :mod:`.validation_karpenter`."""

from __future__ import annotations

import json
import re

from dratwin.api.codec import MapKey
from dratwin.api.karpenter import (
    AMI_ALIAS_FAMILIES,
    AMI_FAMILIES,
    INTERFACE_TYPES,
    NVIDIA_CONSUMABLE_CAPACITY_ANNOTATION,
    NVIDIA_CONSUMABLE_CAPACITY_MODES,
    RESERVED_RESOURCES,
    VOLUME_TYPES,
    AMISelectorTerm,
    EC2NodeClass,
    EC2NodeClassSpec,
)
from dratwin.api.loader import FieldPath
from dratwin.api.validation_base import ProblemKind, Reporter
from dratwin.api.validation_formats import did_you_mean

MAX_SELECTOR_TERMS = 30
MAX_BLOCK_DEVICE_MAPPINGS = 50
MAX_NETWORK_INTERFACES = 150
_ALIAS = re.compile(r"^[a-zA-Z0-9]+@.+$")
_SUBNET_ID = re.compile(r"subnet-[0-9a-z]+")
_SECURITY_GROUP_ID = re.compile(r"sg-[0-9a-z]+")
_AMI_ID = re.compile(r"ami-[0-9a-z]+")
_VOLUME_SIZE = re.compile(
    r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}"
    r"|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$"
)
_ALIAS_TO_FAMILY = {family.lower(): family for family in AMI_FAMILIES}


def validate_ec2_nodeclass(rep: Reporter, node_class: EC2NodeClass) -> None:
    spec = node_class.spec
    if (spec.role is None) == (spec.instance_profile is None):
        rep.add(ProblemKind.INVALID, ("spec",), "must specify exactly one of ['role', 'instanceProfile']",
                hint="role: the IAM role of the nodes (Karpenter creates the instance profile)")
    for field, text in (("role", spec.role), ("instanceProfile", spec.instance_profile)):
        if text == "":
            rep.required(("spec", field), f"{field} cannot be empty")
    _validate_ami(rep, spec)
    _validate_subnet_terms(rep, spec)
    _validate_security_group_terms(rep, spec)
    _validate_block_devices(rep, spec)
    _validate_network_interfaces(rep, spec)
    _validate_kubelet(rep, spec)
    mode = node_class.metadata.annotations.get(NVIDIA_CONSUMABLE_CAPACITY_ANNOTATION)
    if mode is not None and mode not in NVIDIA_CONSUMABLE_CAPACITY_MODES and not (mode.isdigit() and int(mode) > 0):
        rep.warn(ProblemKind.INVALID, ("metadata", "annotations", MapKey(NVIDIA_CONSUMABLE_CAPACITY_ANNOTATION)),
                 f"{json.dumps(mode)}: Karpenter's DRA support reads {', '.join(NVIDIA_CONSUMABLE_CAPACITY_MODES)} or "
                 "a positive number of shares", "mirror the NVIDIA DRA driver's consumableShares setting")


def _validate_ami(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    path = ("spec", "amiSelectorTerms")
    terms = spec.ami_selector_terms or []
    if not terms:
        rep.required(path, "at least one AMI selector term is required", "e.g. - alias: al2023@latest")
    elif len(terms) > MAX_SELECTOR_TERMS:
        rep.too_many(path, len(terms), MAX_SELECTOR_TERMS)
    alias_family = ""
    for i, term in enumerate(terms):
        family = _validate_ami_term(rep, term, (*path, i), len(terms))
        alias_family = alias_family or family
    if spec.ami_family is not None and spec.ami_family not in AMI_FAMILIES:
        rep.unsupported(("spec", "amiFamily"), spec.ami_family, list(AMI_FAMILIES))
    elif spec.ami_family is None and terms and not any(t.alias for t in terms):
        rep.required(("spec", "amiFamily"), "must specify amiFamily if amiSelectorTerms does not contain an alias")
    elif spec.ami_family is not None and alias_family and spec.ami_family not in ("Custom", alias_family):
        rep.invalid(("spec", "amiFamily"), spec.ami_family, f"if set, amiFamily must be '{alias_family}' or 'Custom' "
                    f"when using an {alias_family} alias")


def _validate_ami_term(rep: Reporter, term: AMISelectorTerm, path: FieldPath, count: int) -> str:
    """The rules of one term; returns the AMI family its alias names ("" when none)."""
    if not (term.tags is not None or term.id or term.name or term.alias or term.ssm_parameter):
        rep.invalid(path, None, "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']")
    if term.id and (term.alias or term.tags is not None or term.name or term.owner):
        rep.invalid(path, term.id, "'id' is mutually exclusive, cannot be set with a combination of other fields in "
                    "amiSelectorTerms")
    elif term.id and not _AMI_ID.search(term.id):
        rep.invalid((*path, "id"), term.id, "must be an AMI id such as ami-0123456789abcdef0")
    _validate_tags(rep, term.tags, (*path, "tags"))
    if not term.alias:
        return ""
    if term.tags is not None or term.name or term.owner:
        rep.invalid(path, term.alias, "'alias' is mutually exclusive, cannot be set with a combination of other "
                    "fields in amiSelectorTerms")
    if count != 1:
        rep.invalid(path, term.alias, "'alias' is mutually exclusive, cannot be set with a combination of other "
                    "amiSelectorTerms")
    alias_path = (*path, "alias")
    if not _ALIAS.search(term.alias) or len(term.alias) > 30:
        rep.invalid(alias_path, term.alias, "'alias' is improperly formatted, must match the format 'family@version'",
                    "e.g. al2023@latest or al2023@v20260917")
        return ""
    family, version = term.alias.split("@", 1)
    if family not in AMI_ALIAS_FAMILIES:
        rep.invalid(alias_path, term.alias, "family is not supported, must be one of the following: "
                    + ", ".join(f"'{f}'" for f in AMI_ALIAS_FAMILIES), did_you_mean(family, AMI_ALIAS_FAMILIES))
        return ""
    if family.startswith("windows") and version != "latest":
        rep.invalid(alias_path, term.alias, "windows families may only specify version 'latest'")
    return _ALIAS_TO_FAMILY[family]


def _validate_subnet_terms(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    path = ("spec", "subnetSelectorTerms")
    terms = spec.subnet_selector_terms or []
    if not terms:
        rep.required(path, "subnetSelectorTerms cannot be empty", "e.g. - tags: {karpenter.sh/discovery: my-cluster}")
    elif len(terms) > MAX_SELECTOR_TERMS:
        rep.too_many(path, len(terms), MAX_SELECTOR_TERMS)
    # The CRD writes the exclusivity rules with all(): they fire only when every term breaks them.
    both = bool(terms) and all(t.id and t.tags is not None for t in terms)
    for i, term in enumerate(terms):
        if term.tags is None and not term.id:
            rep.invalid((*path, i), None, "expected at least one, got none, ['tags', 'id']")
        if both:
            rep.invalid((*path, i), term.id, "'id' is mutually exclusive, cannot be set with a combination of other "
                        "fields in a subnet selector term")
        if term.id and not _SUBNET_ID.search(term.id):
            rep.invalid((*path, i, "id"), term.id, "must be a subnet id such as subnet-0123456789abcdef0")
        _validate_tags(rep, term.tags, (*path, i, "tags"))


def _validate_security_group_terms(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    path = ("spec", "securityGroupSelectorTerms")
    terms = spec.security_group_selector_terms or []
    if not terms:
        rep.required(path, "securityGroupSelectorTerms cannot be empty",
                     "e.g. - tags: {karpenter.sh/discovery: my-cluster}")
    elif len(terms) > MAX_SELECTOR_TERMS:
        rep.too_many(path, len(terms), MAX_SELECTOR_TERMS)
    id_mixed = bool(terms) and all(t.id and (t.tags is not None or t.name) for t in terms)
    name_mixed = bool(terms) and all(t.name and (t.tags is not None or t.id) for t in terms)
    for i, term in enumerate(terms):
        if term.tags is None and not term.id and not term.name:
            rep.invalid((*path, i), None, "expected at least one, got none, ['tags', 'id', 'name']")
        for mixed, field in ((id_mixed, "id"), (name_mixed, "name")):
            if mixed:
                rep.invalid((*path, i), getattr(term, field), f"'{field}' is mutually exclusive, cannot be set with a "
                            "combination of other fields in a security group selector term")
        if term.id and not _SECURITY_GROUP_ID.search(term.id):
            rep.invalid((*path, i, "id"), term.id, "must be a security group id such as sg-0123456789abcdef0")
        _validate_tags(rep, term.tags, (*path, i, "tags"))


def _validate_tags(rep: Reporter, tags: dict[str, str] | None, path: FieldPath) -> None:
    for key, value in (tags or {}).items():
        if not key or not value:
            rep.invalid((*path, MapKey(key)), value, "empty tag keys or values aren't supported",
                        'use "*" to select every value of a tag key')


def _validate_block_devices(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    path = ("spec", "blockDeviceMappings")
    mappings = spec.block_device_mappings
    if len(mappings) > MAX_BLOCK_DEVICE_MAPPINGS:
        rep.too_many(path, len(mappings), MAX_BLOCK_DEVICE_MAPPINGS)
    if sum(m.root_volume for m in mappings) > 1:
        rep.invalid(path, sum(m.root_volume for m in mappings), "must have only one blockDeviceMappings with "
                    "rootVolume")
    for i, mapping in enumerate(mappings):
        ebs = mapping.ebs
        if ebs is None:
            continue
        ebs_path = (*path, i, "ebs")
        if ebs.snapshot_id is None and ebs.volume_size is None:
            rep.required(ebs_path, "snapshotID or volumeSize must be defined")
        if ebs.volume_size is not None and not _VOLUME_SIZE.search(ebs.volume_size):
            rep.invalid((*ebs_path, "volumeSize"), ebs.volume_size, "must be a size in Gi, G, Ti or T within the EBS "
                        "limits (e.g. 100Gi)")
        if ebs.volume_type is not None and ebs.volume_type not in VOLUME_TYPES:
            rep.unsupported((*ebs_path, "volumeType"), ebs.volume_type, list(VOLUME_TYPES))


def _validate_network_interfaces(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    path = ("spec", "networkInterfaces")
    interfaces = spec.network_interfaces or []
    if len(interfaces) > MAX_NETWORK_INTERFACES:
        rep.too_many(path, len(interfaces), MAX_NETWORK_INTERFACES)
    if interfaces and not any(n.network_card_index == 0 and n.device_index == 0 and n.interface_type == "interface"
                              for n in interfaces):
        rep.invalid(path, len(interfaces), "networkInterfaces must include a primary interface with "
                    "interfaceType='interface'", "add {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}")
    seen: set[tuple[int, int]] = set()
    efa_cards: set[int] = set()
    for i, interface in enumerate(interfaces):
        item = (*path, i)
        if interface.interface_type not in INTERFACE_TYPES:
            rep.unsupported((*item, "interfaceType"), interface.interface_type, list(INTERFACE_TYPES))
        for field, index in (("networkCardIndex", interface.network_card_index),
                             ("deviceIndex", interface.device_index)):
            if index < 0:
                rep.invalid((*item, field), index, "must be 0 or more")
        pair = (interface.network_card_index, interface.device_index)
        duplicate_efa = interface.interface_type == "efa-only" and interface.network_card_index in efa_cards
        if pair in seen or duplicate_efa:
            rep.invalid(item, f"card {pair[0]}, device {pair[1]}", "networkInterfaces must not have duplicate "
                        "networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card")
        seen.add(pair)
        if interface.interface_type == "efa-only":
            efa_cards.add(interface.network_card_index)


def _validate_kubelet(rep: Reporter, spec: EC2NodeClassSpec) -> None:
    kubelet = spec.kubelet
    if kubelet is None:
        return
    path = ("spec", "kubelet")
    if isinstance(kubelet.max_pods, int) and kubelet.max_pods < 0:
        rep.invalid((*path, "maxPods"), kubelet.max_pods, "must be 0 or more")
    for field, reserved in (("systemReserved", kubelet.system_reserved), ("kubeReserved", kubelet.kube_reserved)):
        for name in reserved:
            if name not in RESERVED_RESOURCES:
                rep.unsupported((*path, field, MapKey(name)), name, list(RESERVED_RESOURCES))

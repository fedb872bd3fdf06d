"""The NVIDIA DRA driver's ComputeDomain controller and the IMEX daemons it starts, as far as placement goes.

What the driver does (kubernetes-sigs/dra-driver-nvidia-gpu, ``cmd/compute-domain-controller``,
``cmd/compute-domain-kubelet-plugin``, default driver-managed IMEX), and what the twin does of it:

1. For each ComputeDomain the controller creates, in the driver's namespace, a ResourceClaimTemplate
   ``computedomain-daemon-<uid>`` (one request ``daemon`` of class ``compute-domain-daemon.nvidia.com``) and a
   DaemonSet of the same name whose pods select nodes labelled ``resource.nvidia.com/computeDomain=<uid>``; and,
   in the ComputeDomain's namespace, the channel ResourceClaimTemplate it names (one request ``channel`` of class
   ``compute-domain-default-channel.nvidia.com``, with an opaque ComputeDomainChannelConfig naming the domain's
   uid and its allocation mode). MODELLED on load (:func:`controller_templates`): the templates exist before
   any pod's claims are made, as on a cluster where the ComputeDomain was applied first.
2. Each workload pod gets a claim from the channel template (the resourceclaim controller) and the scheduler
   allocates it the node's ``channel-0`` (the kubelet plugin publishes that one channel per node, so one
   channel claim per node). MODELLED by the scheduler, as for any claim.
3. When kubelet prepares the claim, the kubelet plugin labels the node with the domain's uid; the DaemonSet then
   runs an IMEX daemon pod there, with a claim from the daemon template (``daemon-0``). MODELLED after the
   workload pods are placed (:func:`daemon_pods`): the label, the daemon pods, their claims; the scheduler
   places them. ASSUMED: kubelet runs and the daemons become Ready (nothing runs in the twin), so the workload
   containers start and the domain's status turns Ready once ``numNodes`` daemons are (``numNodes`` does not hold
   pods back with IMEXDaemonsWithDNSNames, on by default).

Nothing restricts a domain's pods to one NVLink clique: kube-scheduler places them wherever a channel is
free, and the domain then has one IMEX domain per clique; the notes say so when that happens.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api import compute_domain as cd
from dratwin.api.codec import decode_as, object_ref
from dratwin.api.compute_domain import ComputeDomain
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass, ResourceClaim
from dratwin.api.validation_base import Problem, Reporter
from dratwin.api.validation_compute_domain import validate_compute_domain
from dratwin.cluster.naming import controller_reference, generated_name, object_uid, template_hash
from dratwin.cluster.state import ClusterState, pod_claim_keys

Raw = dict[str, Any]
MAX_NAMES = 3  # nodes or cliques named in one note
CHART_IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"
SERVICE_ACCOUNT = "compute-domain-daemon-service-account"
# The daemon template's tolerations (every taint), then those the DaemonSet controller adds to every pod.
_TOLERATIONS: list[Raw] = [
    {"operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists", "effect": "NoExecute"},
    {"operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


@dataclass(frozen=True)
class Domain:
    """A ComputeDomain the controller acts on."""

    namespace: str
    name: str
    uid: str
    template: str
    allocation_mode: str
    num_nodes: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def daemon_set(self) -> str:
        return cd.daemon_name(self.uid)


@dataclass
class Domains:
    """The ComputeDomains of the input that the controller acts on, and those it cannot."""

    domains: list[Domain] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)  # objects the API server or the controller refuses

    def by_uid(self) -> dict[str, Domain]:
        return {d.uid: d for d in self.domains}


def read_domains(objects: Sequence[LoadedObject]) -> Domains:
    """The admitted ComputeDomains whose rules hold (the API server refuses the others, or the controller cannot
    create their template); one rejection line per problem of the others."""
    found = Domains()
    for obj in objects:
        if obj.kind != cd.KIND or obj.api_version != cd.API_VERSION:
            continue
        ref = object_ref(obj, namespaced=True)
        domain = decode_as(obj.raw, ComputeDomain, ref)
        problems: list[Problem] = []
        validate_compute_domain(Reporter(obj, ref, problems), domain)
        errors = [p for p in problems if p.is_error]
        if errors:
            found.rejections += [f"{p} (the API server or the ComputeDomain controller refuses it; dratwin goes on "
                                 "without it)" for p in errors]
            continue
        namespace = domain.metadata.namespace or "default"
        uid = domain.metadata.uid or object_uid(cd.API_VERSION, cd.KIND, namespace, domain.metadata.name)
        found.domains.append(Domain(namespace, domain.metadata.name, uid, domain.template_name,
                                    domain.allocation_mode, domain.spec.num_nodes or 0))
    return found


# ---- 1. the templates --------------------------------------------------------------------------------------


def _template(namespace: str, name: str, domain: Domain, target: str, request: str, device_class: str,
              parameters: Raw) -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": object_uid("resource.k8s.io/v1", "ResourceClaimTemplate", namespace, name),
            "labels": {cd.DOMAIN_LABEL: domain.uid, cd.TARGET_LABEL: target},
            "finalizers": [cd.DOMAIN_LABEL],
        },
        "spec": {"spec": {"devices": {
            "requests": [{"name": request, "exactly": {"deviceClassName": device_class}}],
            "config": [{"requests": [request], "opaque": {"driver": cd.DRIVER, "parameters": {
                "apiVersion": cd.API_VERSION, **parameters, "domainID": domain.uid}}}],
        }}},
    }


def workload_template(domain: Domain) -> Raw:
    """The channel template, in the ComputeDomain's namespace, under the name it gives."""
    return _template(domain.namespace, domain.template, domain, cd.TARGET_WORKLOAD, cd.CHANNEL_REQUEST,
                     cd.CHANNEL_CLASS, {"kind": cd.CHANNEL_CONFIG_KIND, "allocationMode": domain.allocation_mode})


def daemon_template(domain: Domain, namespace: str = cd.DRIVER_NAMESPACE) -> Raw:
    """The IMEX daemons' template, in the driver's namespace."""
    return _template(namespace, domain.daemon_set, domain, cd.TARGET_DAEMON, cd.DAEMON_REQUEST, cd.DAEMON_CLASS,
                     {"kind": cd.DAEMON_CONFIG_KIND})


@dataclass
class CreatedTemplates:
    templates: list[Raw] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def controller_templates(domains: Domains, existing: Mapping[tuple[str, str], Raw]) -> CreatedTemplates:
    """The templates the controller creates, but not those ``existing`` has already (a cluster dump holds them;
    a template of another owner makes the controller's create fail)."""
    out = CreatedTemplates()
    present = dict(existing)
    for domain in domains.domains:
        made = []
        for raw in (workload_template(domain), daemon_template(domain)):
            meta = raw["metadata"]
            key = (meta["namespace"], meta["name"])
            there = present.get(key)
            if there is None:
                out.templates.append(raw)
                present[key] = raw
                made.append(f"{key[0]}/{key[1]}")
            elif ((there.get("metadata") or {}).get("labels") or {}).get(cd.DOMAIN_LABEL) != domain.uid:
                out.warnings.append(
                    f"ComputeDomain {domain.key}: ResourceClaimTemplate {key[0]}/{key[1]} exists and is not its "
                    "controller's: the controller's create fails (AlreadyExists) and it retries forever, so the "
                    "domain never turns Ready; pods use the existing template as written")
        if made:
            out.notes.append(
                f"ComputeDomain {domain.key}: the NVIDIA DRA driver's controller creates ResourceClaimTemplate "
                f"{' and '.join(made)} (requests channel and daemon) and DaemonSet {cd.DRIVER_NAMESPACE}/"
                f"{domain.daemon_set} (allocationMode {domain.allocation_mode})")
    return out


# ---- 2. the workload pods' claims ---------------------------------------------------------------------------


def asks_for_channels(classes: dict[str, DeviceClass], claims: Sequence[ResourceClaim]) -> bool:
    """Whether a request names a ComputeDomain class, or a class whose selectors name the driver."""
    for claim in claims:
        for request in claim.spec.devices.requests:
            for view in [request.exactly, *(request.first_available or [])]:
                if view is None:
                    continue
                if view.device_class_name in (cd.CHANNEL_CLASS, cd.DAEMON_CLASS):
                    return True
                found = classes.get(view.device_class_name)
                if found is not None and any(s.cel and cd.DRIVER in s.cel.expression for s in found.spec.selectors):
                    return True
    return False


# ---- 3. the IMEX daemons -----------------------------------------------------------------------------------


def channel_domain(claim: Raw) -> str | None:
    """The ComputeDomain uid an allocated channel claim is for (its ComputeDomainChannelConfig), else None."""
    spec = (claim.get("spec") or {}).get("devices") or {}
    allocation = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
    if not any(r.get("driver") == cd.DRIVER for r in allocation.get("results") or []):
        return None
    for config in spec.get("config") or []:
        opaque = config.get("opaque") or {}
        parameters = opaque.get("parameters") or {}
        if opaque.get("driver") == cd.DRIVER and parameters.get("kind") == cd.CHANNEL_CONFIG_KIND:
            domain = parameters.get("domainID")
            return str(domain) if domain else None
    return None


@dataclass(frozen=True)
class Placement:
    """A node that runs workload pods of a domain (and so needs its IMEX daemon)."""

    domain: Domain
    node: str
    pods: tuple[str, ...]


def daemon_pod(domain: Domain, node: str, rng: random.Random, namespace: str = cd.DRIVER_NAMESPACE) -> Raw:
    """The DaemonSet's pod for ``node``: the daemon template's spec, pinned to the node as the DaemonSet
    controller pins its pods (required node affinity on metadata.name)."""
    template_spec: Raw = {
        "serviceAccountName": SERVICE_ACCOUNT,
        "nodeSelector": {cd.DOMAIN_LABEL: domain.uid},
        "containers": [{"name": cd.DAEMON_CONTAINER, "image": CHART_IMAGE,
                        "command": ["compute-domain-daemon", "-v", "$(LOG_VERBOSITY)", "run"],
                        "resources": {"claims": [{"name": cd.DAEMON_CLAIM}]}}],
        "tolerations": _TOLERATIONS[:3],
        "resourceClaims": [{"name": cd.DAEMON_CLAIM, "resourceClaimTemplateName": domain.daemon_set}],
    }
    pinned = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    name = generated_name(f"{domain.daemon_set}-", rng)
    set_uid = object_uid("apps/v1", "DaemonSet", namespace, domain.daemon_set)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{domain.daemon_set}-",
            "namespace": namespace,
            "uid": object_uid("v1", "Pod", namespace, name),
            "labels": {cd.DOMAIN_LABEL: domain.uid, "controller-revision-hash": template_hash(template_spec),
                       "pod-template-generation": "1"},
            "ownerReferences": [controller_reference("apps/v1", "DaemonSet", domain.daemon_set, set_uid)],
        },
        "spec": {**template_spec, "affinity": pinned, "tolerations": list(_TOLERATIONS)},
        "status": {"phase": "Pending"},
    }


def has_daemon(pods: Sequence[Raw], domain: Domain, node: str) -> bool:
    """Whether one of ``pods`` is the domain's daemon for ``node`` (bound there, or pinned to it)."""
    for pod in pods:
        meta = pod.get("metadata") or {}
        if (meta.get("labels") or {}).get(cd.DOMAIN_LABEL) != domain.uid:
            continue
        spec = pod.get("spec") or {}
        if spec.get("nodeName") == node or node in _pinned_nodes(spec):
            return True
    return False


def _pinned_nodes(spec: Raw) -> set[str]:
    """The nodes a DaemonSet pod's required node affinity names by metadata.name."""
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    return {str(v) for term in required.get("nodeSelectorTerms") or [] for field_ in term.get("matchFields") or []
            if field_.get("key") == "metadata.name" for v in field_.get("values") or []}


# ---- after the workload pods are placed ---------------------------------------------------------------------


@dataclass
class DaemonRound:
    """What the kubelet plugin and the DaemonSet controller do once the workload pods are bound."""

    pods: list[Raw] = field(default_factory=list)  # the IMEX daemons to schedule
    node_labels: dict[str, str] = field(default_factory=dict)  # node -> the domain uid its label gets
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def placements(state: ClusterState, domains: Domains) -> list[Placement]:
    """Per domain and node, the bound pods whose allocated claims hold one of the node's channels for it."""
    by_uid = domains.by_uid()
    found: dict[tuple[str, str], list[str]] = {}
    for record in state.pods.values():
        node = record.pod.spec.node_name
        if not node:
            continue
        for key in pod_claim_keys(record.pod):
            claim = state.claims.get(key)
            uid = channel_domain(claim.raw) if claim is not None else None
            if uid in by_uid:
                found.setdefault((uid, node), []).append(record.info.key)
    return [Placement(by_uid[uid], node, tuple(pods)) for (uid, node), pods in found.items()]


def start_daemons(state: ClusterState, domains: Domains, rng: random.Random) -> DaemonRound:
    """The node labels and IMEX daemon pods that follow from where the workload pods landed, with notes saying
    what is modelled and what is assumed (see the module docstring)."""
    out = DaemonRound()
    existing = [r.raw for r in state.pods.values()]
    per_domain: dict[str, list[Placement]] = {}
    for placement in placements(state, domains):
        per_domain.setdefault(placement.domain.uid, []).append(placement)
        node, domain = placement.node, placement.domain
        labels = state.nodes[node].node.metadata.labels
        current = labels.get(cd.DOMAIN_LABEL)
        if current is not None and current != domain.uid:
            out.warnings.append(
                f"ComputeDomain {domain.key}: node {node} is labelled {cd.DOMAIN_LABEL}={current}, another domain's: "
                f"the kubelet plugin refuses to prepare the channel claim of {', '.join(placement.pods)} (label "
                "already exists for a different ComputeDomain), so it stays ContainerCreating")
            continue
        out.node_labels[node] = domain.uid
        if not has_daemon(existing, domain, node):
            out.pods.append(daemon_pod(domain, node, rng))
    for domain in domains.domains:
        out.notes.append(_domain_note(state, domain, per_domain.get(domain.uid, [])))
        out.warnings += _clique_warnings(state, domain, per_domain.get(domain.uid, []))
    return out


def _few(names: Sequence[str]) -> str:
    more = len(names) - MAX_NAMES
    return ", ".join(names[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")


def _domain_note(state: ClusterState, domain: Domain, placed: Sequence[Placement]) -> str:
    if not placed:
        return (f"ComputeDomain {domain.key}: no pod holds a channel of it yet, so no IMEX daemon runs "
                f"(pods join it through ResourceClaimTemplate {domain.namespace}/{domain.template})")
    nodes = sorted(p.node for p in placed)
    need = (f"once {domain.num_nodes} daemon(s) are Ready (numNodes {domain.num_nodes})" if domain.num_nodes
            else "once its daemons are Ready (numNodes 0: the domain follows its pods)")
    short = "" if len(nodes) >= domain.num_nodes else (
        f"; with {len(nodes)} of numNodes {domain.num_nodes} it stays NotReady (the pods are not held back: "
        "IMEXDaemonsWithDNSNames is on by default)")
    return (f"ComputeDomain {domain.key}: its channels are allocated on {_few(nodes)}; when kubelet prepares "
            f"them the kubelet plugin labels these nodes {cd.DOMAIN_LABEL}={domain.uid} and the DaemonSet runs an "
            f"IMEX daemon on each (placed in this run); assumed from there (no kubelet runs here): the daemons turn "
            f"Ready, the workload containers start, and the domain's status turns Ready {need}{short}")


def _clique_warnings(state: ClusterState, domain: Domain, placed: Sequence[Placement]) -> list[str]:
    cliques: dict[str, list[str]] = {}
    for placement in placed:
        labels = state.nodes[placement.node].node.metadata.labels
        cliques.setdefault(labels.get(cd.CLIQUE_LABEL, ""), []).append(placement.node)
    found = []
    outside = sorted(cliques.pop("", []))
    if outside:
        found.append(
            f"ComputeDomain {domain.key}: node(s) {_few(outside)} have no {cd.CLIQUE_LABEL} (no multi-node "
            "NVLink): the kubelet plugin prepares their channel claims without injecting an IMEX channel, so "
            "their pods share no GPU memory with the others")
    if len(cliques) > 1:
        biggest = sorted(cliques.items(), key=lambda item: (-len(item[1]), item[0]))
        parts = "; ".join(f"{_few(sorted(nodes))} in {clique}" for clique, nodes in biggest[:MAX_NAMES])
        if len(biggest) > MAX_NAMES:
            parts += f"; {len(biggest) - MAX_NAMES} more cliques"
        found.append(
            f"ComputeDomain {domain.key} spans {len(cliques)} NVLink cliques ({parts}): each clique is an IMEX domain "
            f"of its own, so pods share GPU memory over NVLink only within one; keep them in one clique with a "
            f"required pod affinity on topologyKey {cd.CLIQUE_LABEL} (dratwin does not model pod affinity yet)")
    return found

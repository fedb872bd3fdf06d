"""The resourceclaim controller and the life of a claim around its pods, as pure functions on raw dicts.

:func:`claims_for_pod` is one sync of kube-controller-manager's resourceclaim controller for a pod
(``pkg/controller/resourceclaim/controller.go``, Kubernetes 1.36): a ResourceClaim per
``resourceClaimTemplateName`` (owned by the pod, named ``<pod>-<claim>-<random>``), the pod's
``status.resourceClaimStatuses``, and what keeps the pod Pending, worded as the controller's event and
kube-scheduler's DynamicResources PreEnqueue check report it.

The lifecycle helpers take a claim and return a new dict; they never mutate their inputs:

- :func:`reserve` / :func:`unreserve`: the ``status.reservedFor`` entry kube-scheduler writes when it binds
  a pod (PreBind) and removes when binding fails (Unreserve); at most 256 consumers, as API validation allows.
- :func:`release_after_pod_deletion`: the controller's ``syncClaim`` once a consumer is gone — stale
  consumers dropped, the allocation cleared when the last one leaves, and the claim deleted when it was
  generated for a pod that is gone or done (the garbage collector or the controller delete it).

Not modelled: PodGroup-owned claims (DRAWorkloadResourceClaims), the claim for DRA-backed extended
resources (kube-scheduler creates it), admin-access gating, pods already bound to a node whose claims the
controller reserves (pre-scheduled pods).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.codec import copy_raw
from dratwin.cluster.naming import generated_name, object_uid
from dratwin.cluster.workloads import DEFAULT_NAMESPACE, SIMULATION_EPOCH
from dratwin.errors import DratwinError

Raw = dict[str, Any]
ObjectKey = tuple[str, str]  # (namespace, name)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Set on generated claims: the ``pod.spec.resourceClaims[].name`` the claim was generated for."""

CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
"""kube-scheduler adds it when it allocates a claim; the controller clears the allocation and removes it."""

RESERVED_FOR_MAX_SIZE = 256  # resource.ResourceClaimReservedForMaxSize
MAX_GENERATE_NAME_BASE = 57  # 63 characters minus a hyphen and 5 random characters
CLAIM_API_VERSION = "resource.k8s.io/v1"

CONTROLLER = "resourceclaim-controller"
SCHEDULER = "kube-scheduler"


class ReservedForFullError(DratwinError):
    """A claim that already has 256 consumers cannot be reserved for another pod (API validation)."""


# ---- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimProblem:
    """One reason a pod stays Pending because of a claim.

    ``message`` is the root cause as ``component`` reports it: the resourceclaim controller in a
    ``FailedResourceClaimCreation`` event, kube-scheduler in the status of its DynamicResources plugin at
    PreEnqueue (which only shows in the scheduler's log: the pod gets no event and no condition).
    ``scheduler_status`` is what kube-scheduler says about the pod meanwhile.
    """

    pod: str
    pod_claim: str
    component: str
    reason: str
    message: str
    scheduler_status: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"pod {self.pod}, claim {self.pod_claim}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(frozen=True)
class PodClaims:
    """What one controller sync does for a pod.

    ``created`` are new ResourceClaims (raw, in ``spec.resourceClaims`` order). ``statuses`` is the pod's
    whole ``status.resourceClaimStatuses`` afterwards (template claims only, as upstream; a
    ``resourceClaimName`` reference gets no entry). ``claim_names`` maps each pod claim to the
    ResourceClaim kube-scheduler will look up: direct references and recorded generated claims.
    When the controller fails on one template it stops there: claims it created before stay (owned by the
    pod, found again on the next sync) but the pod status is not updated.
    """

    created: tuple[Raw, ...] = ()
    statuses: tuple[Raw, ...] = ()
    claim_names: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[ClaimProblem, ...] = ()

    @property
    def ready(self) -> bool:
        """Every claim of the pod exists and is the pod's: the scheduler can go on to allocate."""
        return not self.problems

    def apply_to(self, pod: Raw) -> Raw:
        """A copy of ``pod`` with ``status.resourceClaimStatuses`` as the controller leaves it."""
        updated = copy_raw(pod)
        status = updated.setdefault("status", {})
        if self.statuses:
            status["resourceClaimStatuses"] = [dict(s) for s in self.statuses]
        else:
            status.pop("resourceClaimStatuses", None)
        return updated


@dataclass(frozen=True)
class ClaimRelease:
    """The claim after the controller has seen a consumer go (``claim`` is a new dict).

    ``deallocate``: its ``status.allocation`` was removed (no consumer left, or the claim goes away).
    ``delete``: the claim itself goes away — it was generated for a pod that is gone or done.
    ``removed``: the consumers dropped from ``status.reservedFor``, by name.
    """

    claim: Raw
    deallocate: bool
    delete: bool
    removed: tuple[str, ...] = ()
    note: str = ""


# ---- names and ownership -------------------------------------------------------------------------


def claim_generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The ``generateName`` of a claim generated for a pod: ``<pod>-<claim>-``.

    When that is longer than 57 characters, both parts are cut in proportion to their lengths and joined by
    one hyphen, with no trailing hyphen, so that the pod claim name survives (the API server would cut the
    end). The random suffix then follows the claim part directly, as upstream.
    """
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_GENERATE_NAME_BASE:
        return base
    total = len(base)
    return (pod_name[: len(pod_name) * MAX_GENERATE_NAME_BASE // total] + "-"
            + pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME_BASE // total])


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _pod_identity(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = _meta(pod)
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    name = str(meta.get("name") or "")
    uid = str(meta.get("uid") or object_uid("v1", "Pod", namespace, name))
    return namespace, name, uid


def owning_pod(claim: Mapping[str, Any]) -> tuple[str, str] | None:
    """(name, uid) of the pod that controls the claim (``owningPod``), or None for a user-created claim."""
    for owner in _meta(claim).get("ownerReferences") or []:
        if owner.get("controller") and owner.get("apiVersion") == "v1" and owner.get("kind") == "Pod":
            return str(owner.get("name") or ""), str(owner.get("uid") or "")
    return None


def is_generated_for(claim: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``resourceclaim.IsForPod``: the claim is in the pod's namespace and the pod is its controller."""
    namespace, _, uid = _pod_identity(pod)
    owner = owning_pod(claim)
    claim_namespace = str(_meta(claim).get("namespace") or DEFAULT_NAMESPACE)
    return owner is not None and claim_namespace == namespace and owner[1] == uid


def _being_deleted(claim: Mapping[str, Any]) -> bool:
    return bool(_meta(claim).get("deletionTimestamp"))


# ---- the controller's pod sync -------------------------------------------------------------------


def claims_for_pod(
    pod: Raw,
    templates: Mapping[ObjectKey, Raw],
    claims: Mapping[ObjectKey, Raw],
    rng: random.Random,
    *,
    creation_timestamp: str = SIMULATION_EPOCH,
    owned: Mapping[ObjectKey, Raw] | None = None,
) -> PodClaims:
    """One resourceclaim controller sync for ``pod``, and what kube-scheduler then finds missing.

    ``templates`` and ``claims`` are keyed by (namespace, name). Random name suffixes come from ``rng``,
    so a seeded ``rng`` gives the same names every time. Inputs are not mutated. ``owned``, when the
    caller keeps such an index, holds just the claims whose owner is this pod (the controller looks them
    up by owner); without it every claim is scanned.
    """
    return _PodSync(pod, templates, claims, rng, creation_timestamp, owned).run()


class _PodSync:
    """Per-call scratch of :func:`claims_for_pod`."""

    def __init__(self, pod: Raw, templates: Mapping[ObjectKey, Raw], claims: Mapping[ObjectKey, Raw],
                 rng: random.Random, now: str, owned: Mapping[ObjectKey, Raw] | None = None) -> None:
        self.pod = pod
        self.owned = owned
        self.templates = templates
        self.claims = claims
        self.rng = rng
        self.now = now
        self.namespace, self.name, self.uid = _pod_identity(pod)
        self.ref = f"{self.namespace}/{self.name}"
        self.created: list[Raw] = []
        self.problems: list[ClaimProblem] = []
        self.claim_names: dict[str, str] = {}
        self.recorded: dict[str, str | None] = {}
        for entry in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            self.recorded[str(entry.get("name") or "")] = entry.get("resourceClaimName")
        self.new_statuses: dict[str, str] = {}
        self.controller_failed = False  # syncPod returns at the first failing pod claim
        self.taken: set[str] = set()  # names this call created; the rest are looked up in ``claims``

    def run(self) -> PodClaims:
        for pod_claim in (self.pod.get("spec") or {}).get("resourceClaims") or []:
            name = str(pod_claim.get("name") or "")
            direct = pod_claim.get("resourceClaimName")
            template = pod_claim.get("resourceClaimTemplateName")
            if direct:
                self._direct(name, str(direct))
            elif template:
                self._from_template(name, str(template))
            else:
                self.controller_failed = True
                message = (f'pod "{self.ref}", spec.resourceClaim "{name}": none of the supported fields are set')
                self._problem(name, SCHEDULER, "PreEnqueue", message, message,
                              "set exactly one of resourceClaimName and resourceClaimTemplateName")
        statuses = [{"name": k, "resourceClaimName": v} if v is not None else {"name": k}
                    for k, v in self.recorded.items()]
        if not self.controller_failed:
            for pod_claim, claim_name in self.new_statuses.items():
                if pod_claim not in self.recorded:
                    statuses.append({"name": pod_claim, "resourceClaimName": claim_name})
                else:
                    statuses = [{"name": pod_claim, "resourceClaimName": claim_name} if s["name"] == pod_claim
                                else s for s in statuses]
                self.claim_names[pod_claim] = claim_name
        return PodClaims(tuple(self.created), tuple(statuses), self._ordered_names(), tuple(self.problems))

    def _ordered_names(self) -> dict[str, str]:
        order = [str(c.get("name") or "") for c in (self.pod.get("spec") or {}).get("resourceClaims") or []]
        return {n: self.claim_names[n] for n in order if n in self.claim_names}

    def _problem(self, pod_claim: str, component: str, reason: str, message: str, scheduler_status: str,
                 hint: str) -> None:
        self.problems.append(ClaimProblem(self.ref, pod_claim, component, reason, message, scheduler_status, hint))

    def _direct(self, pod_claim: str, claim_name: str) -> None:
        """``resourceClaimName``: the pod uses a claim someone else created, possibly shared."""
        self.claim_names[pod_claim] = claim_name
        claim = self.claims.get((self.namespace, claim_name))
        if claim is None:
            # The scheduler's claim assume cache: assumecache.NotFoundError("ResourceClaim", key).
            message = f'could not find ResourceClaim "{self.namespace}/{claim_name}"'
            self._problem(pod_claim, SCHEDULER, "PreEnqueue", message, message,
                          f"create ResourceClaim {claim_name} in namespace {self.namespace}, or use "
                          "resourceClaimTemplateName for a claim per pod")
        elif _being_deleted(claim):
            message = f'resourceclaim "{claim_name}" is being deleted'
            self._problem(pod_claim, SCHEDULER, "PreEnqueue", message, message,
                          "the claim is going away; create it again once it is gone")

    def _from_template(self, pod_claim: str, template_name: str) -> None:
        """``handleClaim``: reuse the claim recorded in the pod status or an orphan, else create one."""
        if pod_claim in self.recorded:
            recorded = self.recorded[pod_claim]
            if recorded is None:
                return  # the controller decided earlier that no claim is needed
            claim = self.claims.get((self.namespace, recorded))
            if claim is not None and is_generated_for(claim, self.pod):
                self.claim_names[pod_claim] = recorded
                if _being_deleted(claim):
                    message = f'resourceclaim "{recorded}" is being deleted'
                    self._problem(pod_claim, SCHEDULER, "PreEnqueue", message, message,
                                  "the generated claim is going away; the controller creates a new one after")
                return
            # Deleted by accident, or replaced by a claim of another owner: the controller makes a new one.
        orphan = self._orphan(pod_claim)
        if orphan is not None:
            self.new_statuses[pod_claim] = orphan
            return
        template = self.templates.get((self.namespace, template_name))
        if template is None:
            not_found = f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
            self._problem(pod_claim, CONTROLLER, "FailedResourceClaimCreation",
                          f'PodResourceClaim {pod_claim}: resource claim template "{template_name}": {not_found}',
                          f'pod "{self.ref}": ResourceClaim not created yet',
                          f"create ResourceClaimTemplate {template_name} in namespace {self.namespace}")
            self.controller_failed = True
            return
        if self.controller_failed:
            return  # syncPod stopped at an earlier pod claim: this one waits for the next sync
        claim = self._new_claim(pod_claim, template)
        self.created.append(claim)
        self.new_statuses[pod_claim] = claim["metadata"]["name"]

    def _orphan(self, pod_claim: str) -> str | None:
        """``findPodResourceClaim``: a claim owned by the pod and annotated for this pod claim."""
        candidates = self.owned if self.owned is not None else self.claims
        for (namespace, name) in sorted(candidates):
            claim = candidates[(namespace, name)]
            if namespace != self.namespace or not is_generated_for(claim, self.pod):
                continue
            if (_meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == pod_claim:
                return name
        return None

    def _new_claim(self, pod_claim: str, template: Raw) -> Raw:
        template_spec = template.get("spec") or {}
        template_meta = template_spec.get("metadata") or {}
        generate = claim_generate_name(self.name, pod_claim)
        while True:  # AlreadyExists makes the controller retry with a new random name
            name = generated_name(generate, self.rng)
            if name not in self.taken and (self.namespace, name) not in self.claims:
                break
        self.taken.add(name)
        metadata: Raw = {"name": name, "generateName": generate, "namespace": self.namespace,
                         "uid": object_uid(CLAIM_API_VERSION, "ResourceClaim", self.namespace, name),
                         "creationTimestamp": self.now}
        if template_meta.get("labels"):
            metadata["labels"] = dict(template_meta["labels"])
        metadata["annotations"] = {**(template_meta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim}
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": self.name, "uid": self.uid,
                                        "controller": True, "blockOwnerDeletion": True}]
        return {"apiVersion": CLAIM_API_VERSION, "kind": "ResourceClaim", "metadata": metadata,
                "spec": copy_raw(template_spec.get("spec") or {})}


# ---- reservations --------------------------------------------------------------------------------


def _reserved_for(claim: Mapping[str, Any]) -> list[Raw]:
    return list((claim.get("status") or {}).get("reservedFor") or [])


def _is_pod_entry(entry: Mapping[str, Any]) -> bool:
    return not entry.get("apiGroup") and entry.get("resource") == "pods"


def is_reserved_for(claim: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``resourceclaim.IsReservedForPod``: an entry of ``status.reservedFor`` has the pod's uid."""
    uid = _pod_identity(pod)[2]
    return any(entry.get("uid") == uid for entry in _reserved_for(claim))


def reservation_refusal(claim: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    """Why :func:`reserve` would refuse the pod (the API server's words), or None."""
    if is_reserved_for(claim, pod):
        return None
    entries = _reserved_for(claim)
    if len(entries) < RESERVED_FOR_MAX_SIZE:
        return None
    name = _meta(claim).get("name") or ""
    return (f'ResourceClaim.resource.k8s.io "{name}" is invalid: status.reservedFor: Too many: '
            f"{len(entries) + 1}: must have at most {RESERVED_FOR_MAX_SIZE} items")


def reserve(claim: Raw, pod: Raw) -> Raw:
    """A copy of ``claim`` reserved for ``pod`` (kube-scheduler's PreBind); unchanged if already reserved.

    Raises :class:`ReservedForFullError` when 256 other consumers hold it: the API server refuses the
    status update, and the pod cannot bind until one of them goes.
    """
    refusal = reservation_refusal(claim, pod)
    if refusal is not None:
        namespace, name, _ = _pod_identity(pod)
        raise ReservedForFullError(f"pod {namespace}/{name}: cannot reserve the claim: {refusal} (a claim can be "
                                   f"shared by at most {RESERVED_FOR_MAX_SIZE} pods at a time; use a template "
                                   "or a second claim for the others)")
    if is_reserved_for(claim, pod):
        return copy_raw(claim)
    _, name, uid = _pod_identity(pod)
    # Copy on write: only the status changes, and reserving happens once per scheduled pod.
    status = dict(claim.get("status") or {})
    status["reservedFor"] = [*_reserved_for(claim), {"resource": "pods", "name": name, "uid": uid}]
    return {**claim, "status": status}


def unreserve(claim: Raw, pod: Raw) -> Raw:
    """A copy of ``claim`` without the pod's ``reservedFor`` entry (matched by uid, as the scheduler's patch)."""
    uid = _pod_identity(pod)[2]
    updated = copy_raw(claim)
    entries = _reserved_for(updated)
    kept = [e for e in entries if not (_is_pod_entry(e) and e.get("uid") == uid)]
    if len(kept) != len(entries):
        status = updated.setdefault("status", {})
        if kept:
            status["reservedFor"] = kept
        else:
            status.pop("reservedFor", None)
    return updated


def _is_done(pod: Mapping[str, Any]) -> bool:
    """``isPodDone``: a terminal phase, or deleted before it was scheduled."""
    phase = (pod.get("status") or {}).get("phase")
    spec = pod.get("spec") or {}
    return phase in ("Succeeded", "Failed") or (bool(_meta(pod).get("deletionTimestamp")) and not spec.get("nodeName"))


def release_after_pod_deletion(claim: Raw, pod: Raw, pods_alive: Iterable[Raw]) -> ClaimRelease:
    """The controller's ``syncClaim`` after ``pod`` was deleted; ``pods_alive`` are the pods that still exist.

    - Every pod consumer that is not alive (gone, replaced by a pod with another uid, or done) leaves
      ``status.reservedFor``; ``pod`` counts as gone even if it is listed in ``pods_alive``.
    - When that leaves no consumer, the allocation is cleared and the finalizer removed — only for claims
      carrying :data:`CLAIM_FINALIZER`, which kube-scheduler adds when it allocates (upstream's check).
      A claim that had no consumer to begin with stays allocated.
    - A claim generated for a pod is deleted once that pod is gone (the garbage collector follows the owner
      reference) or, with no consumer left, done or replaced (the controller deletes it). A claim someone
      created is never deleted by its consumers going.
    """
    gone_uid = _pod_identity(pod)[2]
    alive = {}
    for other in pods_alive:
        uid = _pod_identity(other)[2]
        if uid != gone_uid:
            alive[uid] = other
    updated = copy_raw(claim)
    entries = _reserved_for(updated)
    valid = [e for e in entries
             if not _is_pod_entry(e) or (e.get("uid") in alive and not _is_done(alive[str(e.get("uid"))]))]
    removed = tuple(str(e.get("name") or "") for e in entries if e not in valid)
    status = updated.setdefault("status", {})
    was_allocated = status.get("allocation") is not None
    finalizers = list(_meta(updated).get("finalizers") or [])
    deallocate = False
    note = ""
    if len(valid) < len(entries):
        if valid:
            status["reservedFor"] = valid
        else:
            status.pop("reservedFor", None)
            if CLAIM_FINALIZER in finalizers:
                deallocate = was_allocated
                status.pop("allocation", None)
                _set_finalizers(updated, [f for f in finalizers if f != CLAIM_FINALIZER])
            elif was_allocated:
                note = (f"no consumer left but the claim has no {CLAIM_FINALIZER} finalizer, so the controller "
                        "keeps its allocation (kube-scheduler adds the finalizer when it allocates)")
    owner = owning_pod(claim)
    delete = False
    if owner is not None:
        owner_pod = alive.get(owner[1])
        delete = owner_pod is None or (not valid and _is_done(owner_pod))
    if delete and status.get("allocation") is not None:
        status.pop("allocation", None)
        deallocate = True
        _set_finalizers(updated, [f for f in finalizers if f != CLAIM_FINALIZER])
    if not status:
        updated.pop("status", None)
    return ClaimRelease(updated, deallocate, delete, removed, note)


def _set_finalizers(claim: Raw, finalizers: list[str]) -> None:
    meta = claim.setdefault("metadata", {})
    if finalizers:
        meta["finalizers"] = finalizers
    else:
        meta.pop("finalizers", None)

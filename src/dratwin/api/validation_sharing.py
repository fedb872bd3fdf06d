"""Checks across objects: ResourceClaims that hold EFA devices and that several pods share (see
:mod:`dratwin.api.efa_sharing` for what DRANET then does)."""

from __future__ import annotations

from collections import defaultdict

from dratwin.api.efa_sharing import allocated_efas, requests_efa, shared_efa_message
from dratwin.api.resource import DeviceClass, ResourceClaim
from dratwin.api.validation_base import ProblemKind, Severity
from dratwin.api.validation_refs import Checked

# Where a workload says how many pods run its template at once.
_REPLICAS = {"Deployment": "replicas", "ReplicaSet": "replicas", "StatefulSet": "replicas", "Job": "parallelism"}


def _pods_of(item: Checked) -> tuple[str, int]:
    """How ``item`` is named in the warning, and how many pods it runs at once (1 for a Pod)."""
    if item.kind == "Pod":
        return f"pod {item.name}", 1
    spec = item.obj.raw.get("spec")
    field = _REPLICAS.get(item.kind)
    value = spec.get(field) if isinstance(spec, dict) and field else None
    count = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1
    pods = f"the {count} pods" if count != 1 else "the pod"
    return f"{pods} of {item.kind} {item.name}", count


def check_shared_efa_claims(items: list[Checked]) -> None:
    """A warning on each ResourceClaim with EFA devices that more than one pod references by name."""
    classes = {item.name: item.value for item in items if isinstance(item.value, DeviceClass)}
    claims = {(item.namespace, item.name): item for item in items if isinstance(item.value, ResourceClaim)}
    users: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for item in items:
        for _, spec in item.pod_specs:
            names = {ref.resource_claim_name for ref in spec.resource_claims if ref.resource_claim_name}
            for name in sorted(names):
                if (item.namespace, name) in claims:
                    users[(item.namespace, name)].append(_pods_of(item))
    for key, found in users.items():
        count = sum(n for _, n in found)
        claim = claims[key]
        assert isinstance(claim.value, ResourceClaim)
        efas = allocated_efas(claim.value)
        if count < 2 or not (efas or requests_efa(claim.value.spec.devices, classes)):
            continue
        message = shared_efa_message(f"{key[0]}/{key[1]}", [name for name, _ in found], efas, count)
        claim.rep.add(ProblemKind.INVALID, ("spec", "devices"), message, severity=Severity.WARNING)

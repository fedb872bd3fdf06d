"""Planning rules of the Neuron DRA driver and of EFA interface layouts, with the reason for each "no".

- **EKS Auto Mode** serves Neuron devices only through its Neuron device plugin (``aws.amazon.com/neuron``): it
  runs no Neuron DRA driver (the EKS guide's "Neuron DRA driver vs. Neuron device plugin" table lists Auto Mode
  for the device plugin only; the driver's manifests keep it off ``eks.amazonaws.com/compute-type: auto`` nodes),
  so a pod with a claim for ``neuron.aws.com`` devices is never provisioned there.
- **Karpenter** launches for a DRA claim only from its per-type device metadata; that metadata covers the NVIDIA
  GPU driver and DRANET (``pkg/providers/drametadata`` of v1.15.2 has no Neuron driver), so the catalog's trn and inf
  types have none and no NodePool launches for a Neuron claim (static NodePools and managed node groups run the
  driver on nodes that exist).
- **networkInterfaces with DRA EFA claims**: a NodeClass that lists its network interfaces makes every instance
  get exactly those, whatever its pods ask (EKS guide, "Manage EFA devices on Amazon EKS"); an ``efa-only``
  interface is one EFA device, an ``interface`` none. Karpenter plans DRA EFA claims with every EFA of the type
  (its docs: leave ``spec.networkInterfaces`` unset for EFA DRA workloads, "undefined behavior" otherwise), and
  EKS Auto Mode attaches nothing after launch to nodes with a static layout; so a layout with fewer ``efa-only``
  interfaces than the planned claims take leaves their pods Pending on the new node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dratwin.api.efa_sharing import EFA_DRIVER
from dratwin.api.loader import LoadedObject
from dratwin.api.resource import DeviceClass
from dratwin.catalog import Catalog
from dratwin.provisioner.pending import wants_neuron
from dratwin.provisioner.solver import Plan, PlannedClaim, PodToPlace

_SHOWN = 3


def neuron_note(plan: Plan, pods: Sequence[PodToPlace], classes: Mapping[str, DeviceClass], catalog: Catalog) -> str:
    """Why Karpenter launches nothing for the unplaced pods with Neuron claims ("" when there is none)."""
    unplaced = {u.pod for u in plan.unplaced}
    names = [p.info.key for p in pods if p.info.key in unplaced and wants_neuron(p, classes)]
    if not names:
        return ""
    types = sorted(it.name for it in catalog if it.neuron is not None and it.dra is None)
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    return (
        f"{shown}: Neuron DRA claims (neuron.aws.com) cannot trigger provisioning: Karpenter launches for DRA claims "
        "only from its device metadata, which covers the NVIDIA GPU and EFA drivers and no Neuron type (the catalog "
        f"has none for {', '.join(types)}); run them on nodes that exist with the Neuron DRA driver (a static "
        "NodePool, a managed node group), or ask for aws.amazon.com/neuron through the Neuron device plugin"
    )


def _interfaces(objects: Sequence[LoadedObject], auto_mode: bool) -> dict[str, list[Mapping[str, Any]]]:
    """NodeClass name -> its static network interfaces (EC2NodeClass spec.networkInterfaces; Auto Mode's NodeClass
    spec.advancedNetworking.networkInterfaces)."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        spec = obj.raw.get("spec")
        if not isinstance(spec, dict):
            continue
        if auto_mode and obj.kind == "NodeClass" and obj.api_version.startswith("eks.amazonaws.com/"):
            advanced = spec.get("advancedNetworking")
            listed = advanced.get("networkInterfaces") if isinstance(advanced, dict) else None
        elif not auto_mode and obj.kind == "EC2NodeClass":
            listed = spec.get("networkInterfaces")
        else:
            continue
        if isinstance(listed, list) and listed:
            found[obj.name] = [i for i in listed if isinstance(i, dict)]
    return found


def _efas_taken(claim: PlannedClaim) -> int:
    chosen = claim.chosen().instance_type.name
    allocations = claim.allocations.get(chosen, {})
    return sum(1 for a in allocations.values() for r in a.devices.results if r.driver == EFA_DRIVER)


def interface_warnings(plan: Plan, objects: Sequence[LoadedObject], auto_mode: bool) -> list[str]:
    """One warning per NodeClaim with DRA EFA claims whose NodeClass lists its network interfaces."""
    layouts = _interfaces(objects, auto_mode)
    found = []
    for claim in plan.claims:
        interfaces = layouts.get(claim.pool.node_class)
        taken = _efas_taken(claim)
        if interfaces is None or not taken:
            continue
        chosen = claim.chosen().instance_type
        efa_only = sum(1 for i in interfaces if i.get("interfaceType") in ("efa-only", "efa"))
        kind, field = ("NodeClass", "advancedNetworking.networkInterfaces") if auto_mode else \
            ("EC2NodeClass", "networkInterfaces")
        text = (
            f"{claim.name} ({chosen.name}): {kind} {claim.pool.node_class} sets {field}, so the instance gets "
            f"exactly those interfaces whatever its pods ask: {efa_only} efa-only interface(s), {efa_only} EFA "
            f"device(s) for DRANET to publish, where the plan gives its pods' claims {taken} of the type's "
            f"{chosen.efa_count} EFAs"
        )
        if efa_only < taken:
            text += (f"; the node publishes fewer EFA devices than planned, so {taken - efa_only} of those cannot be "
                     "allocated and their pods stay Pending on the new node")
        text += ("; EKS Auto Mode attaches no interface after launch to nodes with a static layout" if auto_mode else
                 "; Karpenter's DRA docs call networkInterfaces with EFA DRA claims unsupported (undefined behavior): "
                 "leave it unset and Karpenter attaches every EFA of the type")
        found.append(text)
    return found

"""The pending pods a provisioning round takes, and the reason for each it leaves: one rule for ``dratwin plan``
and for the simulation's Karpenter (:mod:`dratwin.sim.provisioner`).

A pod the scheduler found no room for goes to the solver with its claims not yet allocated
(:func:`pod_to_place`), unless no node the provisioner launches could ever serve it
(:func:`split_unprovisionable`): a claim names a DeviceClass that does not exist; EKS Auto Mode before its DRA
drivers (Kubernetes 1.36) and a pod with claims; EKS Auto Mode and Neuron claims (it runs only the Neuron device
plugin); ComputeDomain claims (:mod:`dratwin.provisioner.compute_domain_pods`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dratwin.api.driver_shapes import requests_driver
from dratwin.api.resource import DeviceClass
from dratwin.cluster.state import ClusterState, PodRecord, pod_claim_keys
from dratwin.provisioner.compute_domain_pods import split_compute_domain_pods
from dratwin.provisioner.nodepools import AUTO_MODE_DRA_VERSION, PlanOptions
from dratwin.provisioner.solver import ANY_POOL, PodToPlace, Pool, TypeRejection, Unplaced

NEURON_DRIVER = "neuron.aws.com"
AUTO_MODE_NEURON = (
    "EKS Auto Mode serves Neuron devices only through its Neuron device plugin (aws.amazon.com/neuron, "
    "aws.amazon.com/neuroncore) and runs no Neuron DRA driver, so no node it launches publishes neuron.aws.com "
    "devices: ask for aws.amazon.com/neuron instead, or run the pod on nodes with the Neuron DRA driver (managed or "
    "self-managed node groups, a Karpenter static NodePool)"
)


def pod_to_place(state: ClusterState, record: PodRecord) -> PodToPlace:
    """A pending pod as the solver takes it: with the claims it references that are not allocated yet (a claim
    allocated already, shared with a running pod, pins the pod to that pod's node instead)."""
    claims, keys = [], []
    for key in pod_claim_keys(record.pod, extended=False):
        claim = state.claims.get(key)
        if claim is not None and claim.claim.status.allocation is None:
            claims.append(claim.claim)
            keys.append(key)
    return PodToPlace(record.info, claims, keys)


def split_unprovisionable(
    pods: list[PodToPlace], classes: Mapping[str, DeviceClass], pools: Sequence[Pool], options: PlanOptions
) -> tuple[list[PodToPlace], list[Unplaced]]:
    """The pods a round may launch for, and those no launch can help, each with its reason."""
    pods, unplaced = split_missing_classes(pods, classes, options)
    pods, no_auto_dra = split_auto_mode_dra(pods, options)
    pods, no_auto_neuron = split_auto_mode_neuron(pods, classes, options.auto_mode)
    pods, compute_domain = split_compute_domain_pods(pods, dict(classes), pools)
    return pods, unplaced + no_auto_dra + no_auto_neuron + compute_domain


def split_missing_classes(
    pods: list[PodToPlace], classes: Mapping[str, DeviceClass], options: PlanOptions
) -> tuple[list[PodToPlace], list[Unplaced]]:
    """Pods whose claims name a DeviceClass that does not exist wait forever: no node can help them."""
    keep, stuck = [], []
    for pod in pods:
        missing = sorted(
            {
                n
                for c in pod.claims
                for r in c.spec.devices.requests
                for n in (
                    [r.exactly.device_class_name]
                    if r.exactly
                    else [s.device_class_name for s in r.first_available or []]
                )
                if n and n not in classes
            }
        )
        if not missing:
            keep.append(pod)
            continue
        reason = f"DeviceClass {', '.join(missing)} does not exist: the pod stays Pending forever, whatever is launched"
        if options.auto_mode:
            reason += (
                " (EKS Auto Mode ships the NVIDIA and EFA DRA drivers but not their DeviceClasses: create "
                "gpu.nvidia.com / efa.networking.k8s.aws yourself)"
            )
        stuck.append(Unplaced(pod.info.key, {ANY_POOL: [TypeRejection("(every instance type)", reason)]}))
    return keep, stuck


def split_auto_mode_dra(pods: list[PodToPlace], options: PlanOptions) -> tuple[list[PodToPlace], list[Unplaced]]:
    """EKS Auto Mode runs its built-in DRA drivers only from Kubernetes 1.36: before, no Auto Mode node
    publishes a device, so a pod with a claim can never be served by what Auto Mode launches."""
    if not options.auto_mode or options.kubernetes_version >= AUTO_MODE_DRA_VERSION:
        return pods, []
    major, minor = options.kubernetes_version
    reason = (
        f"EKS Auto Mode runs its NVIDIA and EFA DRA drivers only from Kubernetes "
        f"{AUTO_MODE_DRA_VERSION[0]}.{AUTO_MODE_DRA_VERSION[1]} (this cluster: {major}.{minor}): no node it launches "
        "publishes devices; upgrade the cluster, or ask for nvidia.com/gpu through the device plugin"
    )
    keep = [p for p in pods if not p.claims]
    stuck = [
        Unplaced(p.info.key, {ANY_POOL: [TypeRejection("(every instance type)", reason)]}) for p in pods if p.claims
    ]
    return keep, stuck


def wants_neuron(pod: PodToPlace, classes: Mapping[str, DeviceClass]) -> bool:
    """Whether one of the pod's claims asks for devices of the Neuron DRA driver."""
    return any(requests_driver(c.spec.devices, classes, NEURON_DRIVER) for c in pod.claims)


def split_auto_mode_neuron(
    pods: list[PodToPlace], classes: Mapping[str, DeviceClass], auto_mode: bool
) -> tuple[list[PodToPlace], list[Unplaced]]:
    """On EKS Auto Mode, the pods with Neuron claims wait forever, whatever is launched."""
    if not auto_mode:
        return pods, []
    keep = [p for p in pods if not wants_neuron(p, classes)]
    stuck = [Unplaced(p.info.key, {ANY_POOL: [TypeRejection("(every instance type)", AUTO_MODE_NEURON)]})
             for p in pods if wants_neuron(p, classes)]
    return keep, stuck

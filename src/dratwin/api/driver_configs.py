"""Opaque device configuration that a DRA driver would refuse (the API server stores it unread).

``config[].opaque.parameters`` is a raw object to the API server: any JSON object of at most 10 KiB is accepted.
The driver named by ``opaque.driver`` decodes it only when the kubelet prepares the claim on the chosen node
(NodePrepareResources); a configuration it cannot decode fails there, after scheduling, and the pod stays in
ContainerCreating with a FailedPrepareDynamicResources event. These checks say so beforehand, as warnings: the
drivers' docs do not state what a refusal does to the pod.

The AWS Neuron DRA driver (``neuron.aws.com``; its config types in the Neuron docs, "AWS Neuron Dynamic Resource
Allocation"): ``apiVersion: neuron.aws.com/v1`` (the beta driver's pages used ``neuron.aws.com/v1alphav1`` and
``resource.neuron.aws.com/v1alphav1``) with kind

- ``NeuronConfig``: ``logicalNeuronCore``, the Logical NeuronCore configuration, 1 or 2 (the Neuron docs: "LNC
  can only be set to 1 or 2", and it applies only to Trn2 and Trn3);
- ``UltraServerConfig``: ``ultraserverMode``, how many nodes of the UltraServer the workload uses: 1, 2 or 4.

The driver decodes strictly: a misspelt field fails with "strict decoding error: unknown field" (reported from a
live cluster: aws-hands-on-lab "Neuron DRA Driver", 2026-03).
"""

from __future__ import annotations

from collections.abc import Mapping

from dratwin.api.loader import FieldPath
from dratwin.api.resource import OpaqueDeviceConfiguration
from dratwin.api.validation_base import ProblemKind, Reporter, Severity
from dratwin.api.validation_formats import did_you_mean

NEURON_DRIVER = "neuron.aws.com"
NEURON_API_VERSION = "neuron.aws.com/v1"
NEURON_BETA_API_VERSIONS = ("neuron.aws.com/v1alphav1", "resource.neuron.aws.com/v1alphav1")
# kind -> field -> the values the driver's docs allow
NEURON_KINDS: Mapping[str, Mapping[str, tuple[int, ...]]] = {
    "NeuronConfig": {"logicalNeuronCore": (1, 2)},
    "UltraServerConfig": {"ultraserverMode": (1, 2, 4)},
}
_REFUSED = ("the API server stores it unread; the Neuron DRA driver decodes it when the kubelet prepares the claim "
            "and refuses it, so the pod stays ContainerCreating (FailedPrepareDynamicResources)")


def check_driver_config(rep: Reporter, opaque: OpaqueDeviceConfiguration, path: FieldPath) -> None:
    """Warnings for opaque ``parameters`` that the named driver would refuse at prepare time."""
    if opaque.driver == NEURON_DRIVER and isinstance(opaque.parameters, dict):
        _check_neuron(rep, opaque.parameters, (*path, "parameters"))


def _warn(rep: Reporter, kind: ProblemKind, path: FieldPath, value: object, message: str, hint: str = "") -> None:
    rep.add(kind, path, f"{message}: {_REFUSED}", value, hint, severity=Severity.WARNING)


def _check_neuron(rep: Reporter, parameters: Mapping[str, object], path: FieldPath) -> None:
    api_version, kind = parameters.get("apiVersion"), parameters.get("kind")
    if api_version in NEURON_BETA_API_VERSIONS:
        _warn(rep, ProblemKind.INVALID, (*path, "apiVersion"), api_version,
              f"the beta Neuron DRA driver's apiVersion; the current driver's config types are {NEURON_API_VERSION}, "
              "and a driver that does not know this version cannot decode the parameters", f"use {NEURON_API_VERSION}")
    elif api_version != NEURON_API_VERSION:
        _warn(rep, ProblemKind.UNSUPPORTED, (*path, "apiVersion"), api_version,
              f"the Neuron DRA driver's config types are {NEURON_API_VERSION}", f"use {NEURON_API_VERSION}")
    fields = NEURON_KINDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        kinds = sorted(NEURON_KINDS)
        _warn(rep, ProblemKind.UNSUPPORTED, (*path, "kind"), kind,
              f"the Neuron DRA driver's config kinds are {' and '.join(kinds)}",
              did_you_mean(kind, kinds) if isinstance(kind, str) else "")
        return
    for name, value in parameters.items():
        if name in ("apiVersion", "kind"):
            continue
        allowed = fields.get(name)
        if allowed is None:
            message = f"{kind} has no field {name!r} (it has {', '.join(fields)}); the driver decodes strictly"
            rep.add(ProblemKind.UNKNOWN_FIELD, (*path, name), f"{message}: {_REFUSED}",
                    hint=did_you_mean(name, list(fields)), severity=Severity.WARNING)
        elif isinstance(value, bool) or value not in allowed:
            listed = ", ".join(str(v) for v in allowed)
            _warn(rep, ProblemKind.UNSUPPORTED, (*path, name), value, f"{kind}.{name} must be one of {listed}")

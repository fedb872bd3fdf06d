"""Rules of NVIDIA's ComputeDomain (``resource.nvidia.com/v1beta1``), beyond its structure.

Two sources, both the NVIDIA DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu, the chart's CRD and
``cmd/compute-domain-controller``):

- the CRD's OpenAPI schema (``numNodes`` minimum 0, ``allocationMode`` enum All/Single): the API server
  refuses an object that breaks them, so they are errors;
- what the controller does with an accepted object: it creates the channel ResourceClaimTemplate under the
  name the ComputeDomain gives, so a name the API server refuses for a ResourceClaimTemplate means the
  template never exists and every pod that references it stays pending: an error too.

The structure (unknown fields, types, required fields) is checked by :mod:`dratwin.api.intake` from the
CRD itself; ``spec`` is immutable (the CRD's ``self == oldSelf``), which :mod:`dratwin.api.duplicates` applies.
"""

from __future__ import annotations

from dratwin.api.compute_domain import ALLOCATION_MODES, ComputeDomain
from dratwin.api.validation_base import Reporter
from dratwin.api.validation_formats import dns_subdomain

CHANNEL = ("spec", "channel")
TEMPLATE_NAME = (*CHANNEL, "resourceClaimTemplate", "name")


def validate_compute_domain(rep: Reporter, domain: ComputeDomain) -> None:
    spec = domain.spec
    if spec.num_nodes is not None and spec.num_nodes < 0:
        rep.invalid(("spec", "numNodes"), spec.num_nodes, "spec.numNodes in body should be greater than or equal to 0",
                    "0 (the default) lets the domain follow the pods; a positive value only sets when its status "
                    "turns Ready")
    channel = spec.channel
    if channel is None:
        return  # required: reported with the structure
    mode = channel.allocation_mode
    if mode is not None and mode not in ALLOCATION_MODES:
        rep.unsupported((*CHANNEL, "allocationMode"), mode, list(ALLOCATION_MODES))
    if not _name_written(rep):
        return  # required: reported with the structure
    name = channel.resource_claim_template.name
    problems = dns_subdomain(name) if name else ["must not be empty"]
    rep.invalid_all(TEMPLATE_NAME, name, [
        f"the ComputeDomain controller cannot create a ResourceClaimTemplate of this name: it {p}" for p in problems],
        "pods that reference the template stay pending; use a lower-case name such as imex-channel-0")


def _name_written(rep: Reporter) -> bool:
    value: object = rep.obj.raw
    for key in TEMPLATE_NAME:
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return True

"""NVIDIA's ComputeDomain (``resource.nvidia.com/v1beta1``): a multi-node NVLink (IMEX) domain that follows
a workload, and the vocabulary of the NVIDIA DRA driver's ComputeDomain controller and kubelet plugin.

A ComputeDomain names a ResourceClaimTemplate (``spec.channel.resourceClaimTemplate.name``) that the
driver's controller creates in the ComputeDomain's namespace; workload pods reference it by name, each pod
gets a claim for one IMEX channel of its node. The constants below are the names the driver writes (its
controller, the chart's DeviceClasses, the kubelet plugin's devices); the behaviour that uses them is in
:mod:`dratwin.cluster.compute_domains`, the rules the API server and the controller apply in
:mod:`dratwin.api.validation_compute_domain`.

Like the other typed views, the structs are permissive (strings for enums) so that what the API server
would refuse can still be read and reported; the CRD's defaults are named (``DEFAULT_*``), not filled in.
"""

from __future__ import annotations

import msgspec

from dratwin.api.meta import ObjectMeta

GROUP = "resource.nvidia.com"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "ComputeDomain"

ALLOCATION_SINGLE = "Single"
ALLOCATION_ALL = "All"
ALLOCATION_MODES = (ALLOCATION_ALL, ALLOCATION_SINGLE)  # the CRD's enum, in its order
DEFAULT_ALLOCATION_MODE = ALLOCATION_SINGLE
STATUS_READY = "Ready"
STATUS_NOT_READY = "NotReady"

# The kubelet plugin of the ComputeDomain side of the driver, and the devices it publishes on every node it
# runs on (one pool per node): channel-0 (the only channel it advertises) and daemon-0.
DRIVER = "compute-domain.nvidia.com"
CHANNEL_TYPE = "channel"
DAEMON_TYPE = "daemon"
CHANNEL_DEVICE = "channel-0"
DAEMON_DEVICE = "daemon-0"
# The DeviceClasses of the chart (resources.computeDomains.enabled, the default).
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"
# What the controller writes on the objects it creates, and the kubelet plugin on the nodes it prepares.
DOMAIN_LABEL = "resource.nvidia.com/computeDomain"  # value: the ComputeDomain's uid (also the finalizer)
TARGET_LABEL = "resource.nvidia.com/computeDomainTarget"  # Workload | Daemon
TARGET_WORKLOAD = "Workload"
TARGET_DAEMON = "Daemon"
CLIQUE_POD_LABEL = "resource.nvidia.com/computeDomain.cliqueID"  # set by each IMEX daemon on its pod
CHANNEL_CONFIG_KIND = "ComputeDomainChannelConfig"
DAEMON_CONFIG_KIND = "ComputeDomainDaemonConfig"
CHANNEL_REQUEST = "channel"
DAEMON_REQUEST = "daemon"
DAEMON_CLAIM = "compute-domain-daemon"  # the pod-level claim name of the daemon pods
DAEMON_CONTAINER = "compute-domain-daemon"
# GPU Feature Discovery's label of multi-node NVLink nodes: <ClusterUUID>.<CliqueID>; nodes with the same value
# reach each other over NVLink (one clique per P6e-GB200 UltraServer).
CLIQUE_LABEL = "nvidia.com/gpu.clique"
# Where the EKS UltraServer guide installs the driver (helm --namespace); the daemons run there.
DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"


def daemon_name(uid: str) -> str:
    """The name of a ComputeDomain's DaemonSet and of its daemons' ResourceClaimTemplate."""
    return f"computedomain-daemon-{uid}"


class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    pass


class ComputeDomainResourceClaimTemplate(_Wire):
    name: str = ""


class ComputeDomainChannelSpec(_Wire):
    resource_claim_template: ComputeDomainResourceClaimTemplate = msgspec.field(
        default_factory=ComputeDomainResourceClaimTemplate)
    allocation_mode: str | None = None  # None: the CRD's default, Single


class ComputeDomainSpec(_Wire):
    num_nodes: int | None = None  # deprecated; 0 (the default) with IMEXDaemonsWithDNSNames
    channel: ComputeDomainChannelSpec | None = None


class ComputeDomainNode(_Wire):
    name: str = ""
    ip_address: str = ""
    clique_id: str = msgspec.field(default="", name="cliqueID")
    index: int | None = None
    status: str = ""


class ComputeDomainStatus(_Wire):
    status: str = ""
    nodes: list[ComputeDomainNode] = msgspec.field(default_factory=list)


class ComputeDomain(_Wire):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ComputeDomainSpec = msgspec.field(default_factory=ComputeDomainSpec)
    status: ComputeDomainStatus = msgspec.field(default_factory=ComputeDomainStatus)

    @property
    def template_name(self) -> str:
        channel = self.spec.channel
        return channel.resource_claim_template.name if channel is not None else ""

    @property
    def allocation_mode(self) -> str:
        channel = self.spec.channel
        return (channel.allocation_mode if channel is not None else None) or DEFAULT_ALLOCATION_MODE

"""Generate the Nodes and ResourceSlices a real EKS cluster shows for a given set of accelerated instances.

``generate(GenerateOptions(...))`` returns the objects as the API server would hand them to
``kubectl get nodes,resourceslices -o yaml``: plain dicts, deterministic (same options, same output).

Nodes (Karpenter on EKS with the AL2023 NVIDIA/Neuron AMIs, EKS Auto Mode, or an EKS managed node group):

- name ``ip-10-0-<a>-<b>.ec2.internal`` (``<region>.compute.internal`` outside us-east-1), or ``<prefix>-<n>``;
- labels: Karpenter's instance labels for the type (from its generated instance-types page; ``eks.amazonaws.com/
  instance-*`` on Auto Mode), hostname, os/arch, zone/region (and their deprecated beta forms), capacity type
  on-demand, node pool and node class, ``nvidia.com/gpu.present`` on NVIDIA nodes (set by the AL2023 NVIDIA AMI;
  the NVIDIA DRA kubelet plugin only runs where it is set), and ``eks.amazonaws.com/device-manager-nvidia|efa``
  from ``--gpu-manager`` / ``--efa-manager``; a managed node group's labels instead of Karpenter's with
  ``node-group`` (:mod:`dratwin.cluster.node_groups`); on the instances of P6e-GB200 UltraServers, their NVLink
  clique ``nvidia.com/gpu.clique`` and Capacity Block labels (:mod:`dratwin.cluster.nvlink_domains`);
- capacity / allocatable: Karpenter's overhead model (``dratwin.catalog.resources``: kube-reserved cpu
  6/1/0.5/0.25 %, memory 11 MiB x max-pods + 255 MiB, eviction 100Mi, VM overhead 7.5 %), max pods = the
  ENI-limited value from Karpenter's page (110 where the page lacks the type), and the device plugins' extended
  resources on device-plugin nodes (``nvidia.com/gpu`` or ``nvidia.com/mig-<profile>``, ``vpc.amazonaws.com/efa``,
  ``aws.amazon.com/neuron`` + ``neuroncore``, ``amd.com/gpu``); trn2u.48xlarge nodes carry the Neuron UltraServer
  labels (``neuron.amazonaws.com/ultraserver-*``, four consecutive nodes of a group = one UltraServer, one zone);
- no taint unless asked (``taints``): neither Karpenter nor EKS taints GPU nodes by itself; the Karpenter docs'
  GPU NodePools (concepts/nodepools "Isolating Expensive Hardware", the DRA reference configuration) add
  ``nvidia.com/gpu`` ``NoSchedule`` in the NodePool, which is a choice of the cluster's owner.

ResourceSlices, one pool per driver and node (pool name = node name, generation 1, resourceSliceCount 1):

- ``gpu.nvidia.com`` (NVIDIA GPU DRA driver, classic path, v0.5.0-dev attribute set): ``gpu-<i>`` with type, uuid,
  productName, brand, architecture, cudaComputeCapability, driverVersion, cudaDriverVersion, addressingMode,
  resource.kubernetes.io/pciBusID, pcieRoot and numaNode, capacity ``memory``; with MIG (``mig``), the
  static-MIG layout instead: ``gpu-<i>-mig-<profile>-<gi>-<start>`` devices of type ``mig`` with parentUUID,
  profile, uuid and the MIG capacities incl. ``memorySlice<k>`` (the shape of
  ``resourceslice-p4d.24xlarge-static-mig.yaml``);
- ``neuron.aws.com`` (the AWS Neuron DRA driver, with ``--neuron-manager dra``, the default on Karpenter nodes):
  ``neurondevice<N>`` with the attributes of the driver's reference, topology and devicegroup ids from
  ``dratwin/data/neuron-devices.yaml`` (see :mod:`dratwin.cluster.neuron`; trn2u: one ``neuron_node`` device);
- ``dra.net`` (DRANET as the aws-dranet chart deploys it: EFA devices only): ``pci-<address>`` with dra.net/
  pciAddress, pciDevice, pciVendor, pciSubsystem, rdma, rdmaDevice, numaNode and resource.kubernetes.io/pcieRoot;
  on trn types the addresses of the connected-device maps and DRANET's ``resource.aws.com/devicegroup*_id``
  (their PCIe roots and NUMA nodes are not known, so those two are left out).
- ``compute-domain.nvidia.com`` (the NVIDIA DRA driver's ComputeDomain kubelet plugin) on UltraServer instances
  only (the EKS guides enable ComputeDomains there and disable them elsewhere): ``channel-0`` and ``daemon-0``.

Where the values come from: model attributes, memory and every PCIe root from Karpenter's DRA metadata;
PCI bus IDs / addresses and NUMA nodes from the packaged captures (p5.48xlarge GPUs and EFAs, p4d.24xlarge
GPUs) and live DRANET slices (p4d.24xlarge EFAs, ``dranet-efas.yaml``); driver 580.126.9 / CUDA 13.0.0 /
addressingMode HMM from the p5 capture. PLACEHOLDERS (format only):
node names, IPs, instance ids, uids, GPU and MIG UUIDs, slice name suffixes, PCI bus IDs and addresses of the
types without a capture (derived from the PCIe root). A NUMA node is published only where it is known (a capture,
or an EFA on the same PCIe root that the Karpenter scrape gave one); elsewhere the attribute is left out rather
than invented. Types without Karpenter DRA metadata (g7e, g7, p6e-gb200, ...) get their GPUs and EFAs from the
EC2 catalog without pcieRoot or NUMA node, with a warning.

Not modelled: DynamicMIG
(partitionable devices and counters), consumable shares, VFIO passthrough, host-managed IMEX,
ENA interfaces (the EKS aws-dranet chart filters them out), addressingMode ATS (Grace), annotations,
``status.nodeInfo``, ``topology.k8s.aws/zone-id`` (account-specific), EFAs attached only on request.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dratwin.catalog import (
    Catalog,
    load_catalog,
)
from dratwin.catalog.resources import AUTO_MODE_ROOT_VOLUME_GIB, KARPENTER_ROOT_VOLUME_GIB
from dratwin.cluster.generate_options import (
    AUTO_MODE,
    AUTO_MODE_INSTANCE_LABELS,
    DRA,
    EFA_DRIVER,
    EKS_LABEL,
    GPU_DRIVER,
    KARPENTER,
    MANAGER_LABEL_EFA,
    MANAGER_LABEL_NVIDIA,
    MANAGERS,
    MAX_NODES,
    NODE_GROUP,
    PROVISIONERS,
    GenerateError,
    GenerateOptions,
    NodeGroup,
    neuron_manager,
)
from dratwin.cluster.neuron import (
    NEURON_DRIVER,
    Placement,
    neuron_devices,
    ultraserver_labels,
)
from dratwin.cluster.node_groups import karpenter_capacity_block_labels, node_group_labels
from dratwin.cluster.nvlink_domains import COMPUTE_DOMAIN_DRIVER, Fabric, compute_domain_devices, expand_groups
from dratwin.cluster.type_plans import TypePlan, TypePlanner, string_attribute

_UUID_NAMESPACE = uuid.UUID("0d6f6a8e-5a0c-5c1e-9f6b-2d1c3e4f5a6b")
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_ZONE = re.compile(r"^(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)(?:-[a-z]+-\d+)?[a-z]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# ---- result ------------------------------------------------------------------------------------------------


@dataclass
class GeneratedCluster:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    slices: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def objects(self) -> list[dict[str, Any]]:
        """Nodes first, then ResourceSlices, as ``kubectl get nodes,resourceslices`` lists them."""
        return [*self.nodes, *self.slices]


# ---- nodes and slices --------------------------------------------------------------------------------------


def _uid(kind: str, key: str) -> str:
    return str(uuid.uuid5(_UUID_NAMESPACE, f"{kind}/{key}"))


def _suffix(key: str) -> str:
    digest = hashlib.sha256(key.encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def _region(zone: str) -> str:
    match = _ZONE.match(zone)
    if match is None:
        raise GenerateError(f"bad zone {zone!r}: expected an AWS availability zone such as us-east-1a")
    return match["region"]


def _node_name(index: int, region: str, prefix: str | None) -> tuple[str, str]:
    ip = f"10.0.{64 + index // 200}.{10 + index % 200}"
    if prefix:
        return f"{prefix}-{index + 1}", ip
    domain = "ec2.internal" if region == "us-east-1" else f"{region}.compute.internal"
    return f"ip-{ip.replace('.', '-')}.{domain}", ip


def _labels(plan: TypePlan, options: GenerateOptions, name: str, place: Placement, region: str,
            fabric: Mapping[str, str]) -> dict[str, str]:
    it = plan.it
    labels: dict[str, str] = {}
    for key, value in it.well_known_labels().items():
        if options.provisioner == AUTO_MODE and key.startswith("karpenter.k8s.aws/"):
            short = key.removeprefix("karpenter.k8s.aws/")
            if short in AUTO_MODE_INSTANCE_LABELS:
                labels[EKS_LABEL + short] = value
        else:
            labels[key] = value
    zone = place.zone
    arch = labels.get("kubernetes.io/arch", it.arch or "amd64")
    labels.update(
        {
            "beta.kubernetes.io/arch": arch,
            "beta.kubernetes.io/instance-type": it.name,
            "beta.kubernetes.io/os": "linux",
            "failure-domain.beta.kubernetes.io/region": region,
            "failure-domain.beta.kubernetes.io/zone": zone,
            "karpenter.sh/capacity-type": "on-demand",
            "karpenter.sh/initialized": "true",
            "karpenter.sh/nodepool": options.nodepool,
            "karpenter.sh/registered": "true",
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/region": region,
            "topology.kubernetes.io/zone": zone,
        }
    )
    if options.provisioner == AUTO_MODE:
        labels["eks.amazonaws.com/compute-type"] = "auto"
        labels["eks.amazonaws.com/nodeclass"] = "default"
    else:
        labels["karpenter.k8s.aws/ec2nodeclass"] = "default"
    if plan.nvidia:
        labels["nvidia.com/gpu.present"] = "true"
        labels[MANAGER_LABEL_NVIDIA] = options.gpu_manager
    if it.efa_count:
        labels[MANAGER_LABEL_EFA] = options.efa_manager
    labels.update(ultraserver_labels(plan.neuron, place))
    labels.update(fabric)
    if options.provisioner == NODE_GROUP:
        return node_group_labels(labels, options.nodepool, capacity_block=bool(fabric))
    if fabric and options.provisioner == KARPENTER:
        return karpenter_capacity_block_labels(labels, f"{options.nodepool}/{next(iter(fabric.values()))}")
    return dict(sorted(labels.items()))


def _node(plan: TypePlan, options: GenerateOptions, name: str, ip: str, place: Placement, region: str,
          fabric: Mapping[str, str]) -> dict[str, Any]:
    root = AUTO_MODE_ROOT_VOLUME_GIB if options.provisioner == AUTO_MODE else KARPENTER_ROOT_VOLUME_GIB
    resources = plan.it.node_resources(plan.extended, root)
    zone = place.zone
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{hashlib.sha256(name.encode()).hexdigest()[:17]}"}
    if options.taints:
        spec["taints"] = [t.to_dict() for t in options.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": _uid("Node", name),
                     "labels": _labels(plan, options, name, place, region, fabric)},
        "spec": spec,
        "status": {
            "capacity": resources.capacity,
            "allocatable": resources.allocatable,
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status"}
            ],
        },
    }


def _slice(node: str, driver: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": f"{node}-{driver}-{_suffix(f'{node}/{driver}')}",
            "generateName": f"{node}-{driver}-",
            "ownerReferences": [
                {"apiVersion": "v1", "controller": True, "kind": "Node", "name": node, "uid": _uid("Node", node)}
            ],
        },
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _gpu_devices(plan: TypePlan, node: str) -> list[dict[str, Any]]:
    devices = []
    for index, gpu in enumerate(plan.gpus):
        gpu_uuid = f"GPU-{_uid('GPU', f'{node}/gpu-{index}')}"
        if plan.mig is None:
            named = {"type": string_attribute("gpu"), "uuid": string_attribute(gpu_uuid)}
            attributes = dict(sorted({**gpu.attributes, **named}.items()))
            devices.append({"name": f"gpu-{index}", "attributes": attributes,
                            "capacity": {"memory": {"value": gpu.memory}}})
            continue
        for instance in plan.mig:
            profile = instance.profile
            name = profile.device_name(index, instance.start)
            attributes = {
                **gpu.attributes,
                "parentUUID": string_attribute(gpu_uuid),
                "profile": string_attribute(profile.name),
                "type": string_attribute("mig"),
                "uuid": string_attribute(f"MIG-{_uid('MIG', f'{node}/{name}')}"),
            }
            capacity = {key: {"value": str(value)} for key, value in profile.engines.items()}
            capacity["memory"] = {"value": profile.memory}
            capacity.update({f"memorySlice{s}": {"value": "1"} for s in instance.memory_slices})
            devices.append({"name": name, "attributes": dict(sorted(attributes.items())),
                            "capacity": dict(sorted(capacity.items()))})
    return devices


def _efa_devices(plan: TypePlan) -> list[dict[str, Any]]:
    return [{"name": efa.name, "attributes": dict(efa.attributes)} for efa in plan.efas]


# ---- entry point -------------------------------------------------------------------------------------------


def _check_options(options: GenerateOptions) -> str:
    if not options.groups:
        raise GenerateError("no instance types: give at least one, e.g. p5.48xlarge=2")
    for value, allowed, what in (
        (options.gpu_manager, MANAGERS, "GPU manager"),
        (options.efa_manager, MANAGERS, "EFA manager"),
        (neuron_manager(options), MANAGERS, "Neuron manager"),
        (options.provisioner, PROVISIONERS, "provisioner"),
    ):
        if value not in allowed:
            raise GenerateError(f"unknown {what} {value!r}: use one of {', '.join(allowed)}")
    if options.provisioner == AUTO_MODE and options.neuron_manager == DRA:
        raise GenerateError(
            "EKS Auto Mode serves Neuron devices only through its Neuron device plugin (aws.amazon.com/neuron): "
            "the Neuron DRA driver runs on Karpenter, managed and self-managed nodes, not on Auto Mode nodes; "
            "use --neuron-manager device-plugin, or --provisioner karpenter"
        )
    total = sum(g.count for g in options.groups)
    if total > MAX_NODES or any(g.count < 1 for g in options.groups):
        raise GenerateError(f"node counts must be between 1 and {MAX_NODES} in total (asked for {total})")
    if not options.zones:
        raise GenerateError("no zone: give one, e.g. us-east-1a")
    regions = {_region(z) for z in options.zones}
    if len(regions) > 1:
        raise GenerateError(f"zones of several regions ({', '.join(sorted(regions))}): a cluster lives in one region")
    if options.name_prefix is not None and not _DNS_LABEL.match(options.name_prefix):
        raise GenerateError(f"bad name prefix {options.name_prefix!r}: use lower-case letters, digits and '-'")
    if not _DNS_LABEL.match(options.nodepool):
        raise GenerateError(f"bad node pool name {options.nodepool!r}")
    return regions.pop()


@dataclass
class GeneratedStream:
    """The objects of ``options`` made one at a time (Nodes, then ResourceSlices), so that a cluster of
    10,000 nodes is written out in the memory of one node; ``warnings`` are known before the first object."""

    options: GenerateOptions
    region: str
    plans: list[TypePlan]
    warnings: list[str]
    fabrics: list[Fabric | None] = field(default_factory=list)  # per group: its UltraServers, if any

    def _nodes(self) -> Iterator[tuple[TypePlan, str, str, Placement, dict[str, str]]]:
        index = self.options.first_node_index
        zones = self.options.zones
        fabrics = self.fabrics or [None] * len(self.plans)
        groups = zip(self.plans, self.options.groups, fabrics, strict=True)
        for group_index, (plan, group, fabric) in enumerate(groups):
            # the nodes of one UltraServer share a zone; other nodes go round-robin over the zones
            together = plan.neuron.ultraserver if plan.neuron is not None and plan.neuron.ultraserver else 1
            start = index
            for position in range(group.count):
                if fabric is not None:
                    spread = fabric.ordinal(position)
                else:
                    spread = index if together == 1 else start + position // together
                name, ip = _node_name(index, self.region, self.options.name_prefix)
                index += 1
                labels = fabric.labels(position) if fabric is not None else {}
                yield plan, name, ip, Placement(zones[spread % len(zones)], group_index, position), labels

    def nodes(self) -> Iterator[dict[str, Any]]:
        for plan, name, ip, place, fabric in self._nodes():
            yield _node(plan, self.options, name, ip, place, self.region, fabric)

    def slices(self) -> Iterator[dict[str, Any]]:
        for plan, name, _, place, fabric in self._nodes():
            if plan.gpu_dra and plan.gpus:
                yield _slice(name, GPU_DRIVER, _gpu_devices(plan, name))
            if plan.neuron_dra and plan.neuron is not None:
                yield _slice(name, NEURON_DRIVER, neuron_devices(plan.neuron, plan.it.name, place))
            if plan.efa_dra and plan.efas:
                yield _slice(name, EFA_DRIVER, _efa_devices(plan))
            if fabric:
                yield _slice(name, COMPUTE_DOMAIN_DRIVER, compute_domain_devices())

    def objects(self) -> Iterator[dict[str, Any]]:
        """Nodes first, then ResourceSlices, as ``kubectl get nodes,resourceslices`` lists them."""
        yield from self.nodes()
        yield from self.slices()


def generate_stream(options: GenerateOptions, catalog: Catalog | None = None) -> GeneratedStream:
    """Plan ``options`` (GenerateError / UnknownInstanceTypeError for bad ones) and make objects on demand."""
    catalog = catalog or load_catalog()
    warnings: list[str] = []
    planner = TypePlanner(options, warnings)
    expanded = expand_groups([(g.instance_type, g.count) for g in options.groups], planner.warn)
    options = replace(options, groups=tuple(NodeGroup(e.instance_type, e.count) for e in expanded))
    region = _check_options(options)
    planner.options = options
    plans: dict[str, TypePlan] = {}
    for group in options.groups:
        it = catalog.get(group.instance_type)
        if it.name not in plans:
            plans[it.name] = planner.plan(it)
    if options.mig and not planner.mig_used:
        raise GenerateError(
            f"--mig: none of {', '.join(plans)} has a MIG-capable GPU with a profile table "
            "(A100 on p4d/p4de, H100 on p5, H200 on p5e/p5en, B200 on p6-b200)"
        )
    per_group = [plans[catalog.get(group.instance_type).name] for group in options.groups]
    if any(e.fabric for e in expanded) and options.provisioner == AUTO_MODE:
        planner.warn("EKS Auto Mode launches no UltraServer instances (P6e-GB200 come from Capacity Blocks through "
                     "managed or self-managed node groups, the EKS UltraServer guide): use --provisioner node-group")
    return GeneratedStream(options, region, per_group, warnings, [e.fabric for e in expanded])


def generate(options: GenerateOptions, catalog: Catalog | None = None) -> GeneratedCluster:
    """The Nodes and ResourceSlices of ``options``; GenerateError / UnknownInstanceTypeError for bad options."""
    stream = generate_stream(options, catalog)
    return GeneratedCluster(list(stream.nodes()), list(stream.slices()), stream.warnings)


def generate_groups(groups: Iterable[NodeGroup], **options: Any) -> GeneratedCluster:
    """Shorthand: ``generate_groups([NodeGroup("p5.48xlarge", 2)], gpu_manager="dra")``."""
    return generate(GenerateOptions(groups=tuple(groups), **options))

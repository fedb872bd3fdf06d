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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dratwin.api.karpenter import AUTO_MODE_LABELS
from dratwin.catalog import (
    Catalog,
    InstanceType,
    MigInstance,
    MigLayout,
    UnknownMigProfileError,
    captured_topology,
    classic_memory,
    load_catalog,
    mig_layout,
)
from dratwin.catalog.dranet import live_efas
from dratwin.catalog.neuron import NeuronShape, neuron_shape
from dratwin.catalog.resources import AUTO_MODE_ROOT_VOLUME_GIB, DEFAULT_MAX_PODS, KARPENTER_ROOT_VOLUME_GIB
from dratwin.cluster.neuron import (
    NEURON_DRIVER,
    Placement,
    neuron_devices,
    neuron_efa_attributes,
    rdma_device,
    ultraserver_labels,
)
from dratwin.cluster.node_groups import karpenter_capacity_block_labels, node_group_labels
from dratwin.cluster.nvlink_domains import COMPUTE_DOMAIN_DRIVER, Fabric, compute_domain_devices, expand_groups
from dratwin.errors import InputError

DRA, DEVICE_PLUGIN = "dra", "device-plugin"
MANAGERS = (DRA, DEVICE_PLUGIN)
KARPENTER, AUTO_MODE, NODE_GROUP = "karpenter", "auto-mode", "node-group"
PROVISIONERS = (KARPENTER, AUTO_MODE, NODE_GROUP)
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MAX_NODES = 10_000

GPU_DRIVER = "gpu.nvidia.com"
EFA_DRIVER = "dra.net"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
NUMA_NODE = "resource.kubernetes.io/numaNode"
# Node-wide values of the p5.48xlarge capture (any R580 driver is plausible on the EKS AL2023 NVIDIA AMI).
DRIVER_VERSION = "580.126.9"
CUDA_DRIVER_VERSION = "13.0.0"
ADDRESSING_MODE = "HMM"
EFA_PCI_DEVICE = "Elastic Fabric Adapter (EFA)"
EFA_PCI_VENDOR = "Amazon.com, Inc."
EKS_LABEL = "eks.amazonaws.com/"
MANAGER_LABEL_NVIDIA = "eks.amazonaws.com/device-manager-nvidia"
MANAGER_LABEL_EFA = "eks.amazonaws.com/device-manager-efa"
# Instance labels EKS Auto Mode sets (as eks.amazonaws.com/instance-*): EKS User Guide, create-node-pool.
AUTO_MODE_INSTANCE_LABELS = frozenset(k.removeprefix(EKS_LABEL) for k in AUTO_MODE_LABELS) - {"compute-type"}
_UUID_NAMESPACE = uuid.UUID("0d6f6a8e-5a0c-5c1e-9f6b-2d1c3e4f5a6b")
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_ZONE = re.compile(r"^(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)(?:-[a-z]+-\d+)?[a-z]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class GenerateError(InputError):
    """Options that cannot produce a cluster (bad syntax, unknown MIG profile, impossible layout)."""


# ---- options -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeGroup:
    """``count`` nodes of one instance type."""

    instance_type: str
    count: int = 1


@dataclass(frozen=True)
class MigRequest:
    """A MIG profile for every MIG-capable GPU: ``count`` instances per GPU, or as many as fit (None)."""

    profile: str
    count: int | None = None


@dataclass(frozen=True)
class NodeTaint:
    key: str
    value: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, **({"value": self.value} if self.value else {}), "effect": self.effect}


@dataclass(frozen=True)
class GenerateOptions:
    groups: tuple[NodeGroup, ...]
    gpu_manager: str = DRA
    efa_manager: str = DRA
    neuron_manager: str | None = None  # None: the DRA driver with Karpenter, the device plugin on EKS Auto Mode
    mig: tuple[MigRequest, ...] = ()
    zones: tuple[str, ...] = ("us-east-1a",)
    name_prefix: str | None = None
    provisioner: str = KARPENTER
    nodepool: str = "default"
    taints: tuple[NodeTaint, ...] = ()
    first_node_index: int = 0  # where node names and IPs start: clusters generated in parts never collide


def parse_node_group(text: str) -> NodeGroup:
    """``p5.48xlarge=4`` (or ``p5.48xlarge`` for one node)."""
    name, sep, count = text.partition("=")
    name = name.strip()
    if not name or (sep and not count.strip().isdigit()) or (sep and int(count) < 1):
        raise GenerateError(f"bad instance type {text!r}: expected TYPE=COUNT with COUNT >= 1, e.g. p5.48xlarge=4")
    return NodeGroup(name, int(count) if sep else 1)


def parse_mig_request(text: str) -> MigRequest:
    """``1g.10gb`` (fill every GPU) or ``3g.40gb=1`` (that many per GPU)."""
    profile, sep, count = text.partition("=")
    profile = profile.strip()
    if not re.fullmatch(r"\d+g\.\d+gb(\+me)?", profile) or (sep and not count.strip().isdigit()):
        raise GenerateError(f"bad MIG profile {text!r}: expected PROFILE or PROFILE=COUNT, e.g. 1g.10gb or 3g.40gb=1")
    if sep and int(count) < 1:
        raise GenerateError(f"bad MIG profile {text!r}: COUNT must be at least 1")
    return MigRequest(profile, int(count) if sep else None)


def parse_taint(text: str) -> NodeTaint:
    """``key[=value]:Effect``, as ``kubectl taint`` writes it."""
    spec, _, effect = text.rpartition(":")
    key, _, value = spec.partition("=")
    if not key or effect not in EFFECTS or not _QUALIFIED_NAME.match(key):
        raise GenerateError(
            f"bad taint {text!r}: expected KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(EFFECTS)}, "
            "e.g. nvidia.com/gpu:NoSchedule"
        )
    return NodeTaint(key, value, effect)


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


# ---- per instance type: what every node of the type publishes ----------------------------------------------


@dataclass(frozen=True)
class _Gpu:
    attributes: Mapping[str, dict[str, Any]]  # without uuid
    memory: str
    pcie_root: str | None


@dataclass(frozen=True)
class _Efa:
    name: str
    attributes: Mapping[str, dict[str, Any]]


@dataclass
class _TypePlan:
    it: InstanceType
    nvidia: bool
    gpu_dra: bool
    efa_dra: bool
    gpus: list[_Gpu] = field(default_factory=list)
    efas: list[_Efa] = field(default_factory=list)
    mig: list[MigInstance] | None = None
    extended: dict[str, int] = field(default_factory=dict)
    neuron: NeuronShape | None = None  # the Neuron device layout (its EFAs' devicegroup ids need it either way)
    neuron_dra: bool = False


def _string(value: str) -> dict[str, Any]:
    return {"string": value}


def _version(value: str) -> dict[str, Any]:
    parts = value.split(".")
    return {"version": ".".join(parts + ["0"] * (3 - len(parts)))}


def _bus(root: str) -> tuple[str, int]:
    domain, _, bus = root.removeprefix("pci").partition(":")
    return domain, int(bus, 16)


class _Planner:
    def __init__(self, options: GenerateOptions, warnings: list[str]) -> None:
        self.options = options
        self.warnings = warnings
        self.mig_used = False

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def plan(self, it: InstanceType) -> _TypePlan:
        it.node_resources()  # fails early for types without vCPU/memory
        nvidia = it.gpus is not None and it.gpus.manufacturer == "nvidia"
        plan = _TypePlan(
            it,
            nvidia=nvidia,
            gpu_dra=nvidia and self.options.gpu_manager == DRA,
            efa_dra=it.efa_count > 0 and self.options.efa_manager == DRA,
        )
        if it.unverified:
            self.warn(f"{it.name}: the catalog marks {', '.join(it.unverified)} as unverified")
        if it.max_pods is None:
            self.warn(f"{it.name}: not on Karpenter's instance-types page, so its ENI-limited max pods is unknown; "
                      f"using {DEFAULT_MAX_PODS}, the kubelet default")
        if nvidia:
            self._plan_gpus(plan)
        elif it.gpus is not None:
            plan.extended["amd.com/gpu"] = it.gpus.count
            if self.options.gpu_manager == DRA:
                self.warn(f"{it.name}: no DRA driver for {it.gpus.manufacturer.upper()} GPUs is modelled; its "
                          f"{it.gpus.count} GPU(s) are advertised by the device plugin as amd.com/gpu")
        if it.neuron is not None:
            self._plan_neuron(plan)
        if it.efa_count:
            if plan.efa_dra:
                self._plan_efas(plan)
            else:
                plan.extended["vpc.amazonaws.com/efa"] = it.efa_count
        return plan

    # -- GPUs --

    def _plan_gpus(self, plan: _TypePlan) -> None:
        it = plan.it
        assert it.gpus is not None
        meta = it.dra.gpu if it.dra is not None else None
        product = meta.product_name if meta is not None else it.gpus.model
        count = meta.count if meta is not None else it.gpus.count
        plan.mig = self._plan_mig(it, product)
        if not plan.gpu_dra:
            if plan.mig is None:
                plan.extended["nvidia.com/gpu"] = count
            else:
                for instance in plan.mig:
                    key = f"nvidia.com/mig-{instance.profile.name}"
                    plan.extended[key] = plan.extended.get(key, 0) + count
            return
        if meta is None:
            self.warn(f"{it.name}: no Karpenter DRA device metadata for this type; its {count} GPU(s) come from "
                      f"the EC2 catalog without {PCIE_ROOT} or {NUMA_NODE} (topology unknown: claims that align "
                      "GPUs with EFAs or NUMA nodes cannot be satisfied on it)")
        captured = captured_topology(it.name)
        roots = [d.pcie_root for d in meta.devices] if meta is not None else [None] * count
        efa_numa = {d.pcie_root: d.numa_node for d in (it.dra.efa.devices if it.dra and it.dra.efa else ())
                    if d.numa_node is not None}
        bus_ids = _gpu_bus_ids(roots)
        for index in range(count):
            root = roots[index]
            numa: int | None = efa_numa.get(root) if root else None
            bus_id = bus_ids[index]
            if captured is not None and index < len(captured.gpus) and captured.gpus[index].pcie_root == root:
                bus_id, numa = captured.gpus[index].pci_bus_id, captured.gpus[index].numa_node
            attributes: dict[str, dict[str, Any]] = {
                "addressingMode": _string(ADDRESSING_MODE),
                "brand": _string(meta.brand if meta is not None else "Nvidia"),
                "cudaDriverVersion": _version(CUDA_DRIVER_VERSION),
                "driverVersion": _version(DRIVER_VERSION),
                "productName": _string(product),
                PCI_BUS_ID: _string(bus_id),
            }
            architecture = meta.architecture if meta is not None else it.gpus.architecture
            if architecture:
                attributes["architecture"] = _string(architecture)
            capability = meta.cuda_compute_capability if meta is not None else it.gpus.cuda_compute_capability
            if capability:
                attributes["cudaComputeCapability"] = _version(capability)
            if numa is not None:
                attributes[NUMA_NODE] = {"int": numa}
            if root:
                attributes[PCIE_ROOT] = _string(root)
            memory = classic_memory(product) or (meta.memory if meta is not None else self._catalog_memory(it))
            plan.gpus.append(_Gpu(dict(sorted(attributes.items())), memory, root))

    def _catalog_memory(self, it: InstanceType) -> str:
        assert it.gpus is not None
        if it.gpus.memory_mib is not None:
            return f"{it.gpus.memory_mib}Mi"
        if it.gpus.memory_gb_nominal is not None:
            self.warn(f"{it.name}: GPU memory is NVIDIA's nominal {it.gpus.memory_gb_nominal:g} GB (EC2's value is "
                      "not in the catalog)")
            return f"{it.gpus.memory_gb_nominal:g}G"
        raise GenerateError(f"{it.name}: the catalog has no GPU memory for {it.gpus.model}")

    def _plan_mig(self, it: InstanceType, product: str) -> list[MigInstance] | None:
        if not self.options.mig:
            return None
        layout: MigLayout | None = mig_layout(product)
        if layout is None:
            known = "MIG-capable GPUs with a profile table: A100, H100, H200, B200"
            self.warn(f"{it.name}: {product} has no MIG profile table in dratwin ({known}); its GPUs stay whole")
            return None
        specs = [(m.profile, m.count) for m in self.options.mig]
        try:
            instances = layout.plan(specs)
        except UnknownMigProfileError as error:
            raise GenerateError(f"{it.name}: {error}") from error
        if layout.estimated:
            self.warn(f"{it.name}: the MIG table of {product} is an estimate (no captured driver output): its "
                      "MIG memory capacities may differ from a real node's")
        self.mig_used = True
        return instances

    # -- Neuron devices --

    def _plan_neuron(self, plan: _TypePlan) -> None:
        it = plan.it
        assert it.neuron is not None
        plan.neuron = neuron_shape(it.name)
        if neuron_manager(self.options) == DRA and plan.neuron is not None:
            plan.neuron_dra = True
            if plan.neuron.ultraserver:
                self.warn(f"{it.name}: each UltraServer node is published as one neuron_node device (the unit the "
                          "Neuron docs' claims take); its name, and that the node publishes no neuron_device, are "
                          "inferred: the driver's source is not public")
            return
        if neuron_manager(self.options) == DRA:
            self.warn(f"{it.name}: dratwin has no layout of its Neuron devices (dratwin/data/neuron-devices.yaml); "
                      f"its {it.neuron.count} device(s) are advertised by the Neuron device plugin")
        plan.extended["aws.amazon.com/neuron"] = it.neuron.count
        if it.neuron.cores:
            plan.extended["aws.amazon.com/neuroncore"] = it.neuron.cores

    # -- EFAs --

    def _plan_neuron_efas(self, plan: _TypePlan, shape: NeuronShape) -> None:
        """The EFAs of a Neuron type: the connected-device maps' addresses, DRANET's devicegroup ids."""
        self.warn(f"{plan.it.name}: the PCIe roots and NUMA nodes of its EFAs are not known, so they are published "
                  f"without {PCIE_ROOT} and dra.net/numaNode; align Neuron devices and EFAs with matchAttribute "
                  "resource.aws.com/devicegroup<N>_id")
        for address in shape.efa_addresses:
            attributes: dict[str, dict[str, Any]] = {
                "dra.net/pciAddress": _string(address),
                "dra.net/pciDevice": _string(EFA_PCI_DEVICE),
                "dra.net/pciVendor": _string(EFA_PCI_VENDOR),
                "dra.net/rdma": {"bool": True},
                **neuron_efa_attributes(shape, address),
            }
            if shape.efa_subsystem:
                attributes["dra.net/pciSubsystem"] = _string(shape.efa_subsystem)
            rdma = rdma_device(address)
            if rdma:
                attributes["dra.net/rdmaDevice"] = _string(rdma)
            plan.efas.append(_Efa("pci-" + re.sub(r"[:.]", "-", address), dict(sorted(attributes.items()))))

    def _plan_efas(self, plan: _TypePlan) -> None:
        it = plan.it
        shape = plan.neuron
        if shape is not None and shape.efa_enabled and len(shape.efa_addresses) == it.efa_count:
            self._plan_neuron_efas(plan, shape)
            return
        meta = it.dra.efa if it.dra is not None else None
        if meta is None:
            self.warn(f"{it.name}: no Karpenter DRA metadata for its {it.efa_count} EFA(s); they are published "
                      f"without {PCIE_ROOT} (topology unknown)")
        captured = captured_topology(it.name)
        live = live_efas().get(it.name, ())
        devices = list(meta.devices) if meta is not None else []
        count = len(devices) if meta is not None else it.efa_count
        used = {g.attributes[PCI_BUS_ID]["string"] for g in plan.gpus}
        addresses = _efa_addresses([d.pcie_root for d in devices] or [None] * count, plan.gpus, used)
        for index in range(count):
            device = devices[index] if devices else None
            address = addresses[index]
            numa = device.numa_node if device is not None else None
            if captured is not None and index < len(captured.efas) and device is not None \
                    and captured.efas[index].pcie_root == device.pcie_root:
                address, numa = captured.efas[index].pci_address, captured.efas[index].numa_node
            elif index < len(live) and device is not None and live[index].pcie_root == device.pcie_root:
                address, numa = live[index].pci_address, live[index].numa_node
            attributes: dict[str, dict[str, Any]] = {
                "dra.net/pciAddress": _string(address),
                "dra.net/pciDevice": _string(meta.pci_device if meta is not None else EFA_PCI_DEVICE),
                "dra.net/pciVendor": _string(meta.pci_vendor if meta is not None else EFA_PCI_VENDOR),
                "dra.net/rdma": {"bool": device.rdma if device is not None else True},
            }
            if meta is not None:
                attributes["dra.net/pciSubsystem"] = _string(meta.pci_subsystem)
            if numa is not None:
                attributes["dra.net/numaNode"] = {"int": numa}
            if device is not None:
                attributes[PCIE_ROOT] = _string(device.pcie_root)
            rdma = rdma_device(address)
            if rdma:
                attributes["dra.net/rdmaDevice"] = _string(rdma)
            name = "pci-" + re.sub(r"[:.]", "-", address)
            plan.efas.append(_Efa(name, dict(sorted(attributes.items()))))


def _gpu_bus_ids(roots: Sequence[str | None]) -> list[str]:
    """Placeholder PCI bus IDs: the buses right below each GPU's root (0x30 onwards when the root is unknown)."""
    per_root: dict[str | None, int] = {}
    used: set[str] = set()
    found = []
    for root in roots:
        domain, base = _bus(root) if root else ("0000", 0x2F)
        offset = per_root.get(root, 0) + 1
        per_root[root] = offset
        found.append(_free_bus(domain, base + offset, used))
    return found


def _efa_addresses(roots: Sequence[str | None], gpus: Sequence[_Gpu], used: set[str]) -> list[str]:
    """Placeholder PCI addresses for EFAs: after the GPUs below the same root (or 0x80 onwards when unknown)."""
    per_root: dict[str | None, int] = {}
    for gpu in gpus:
        per_root[gpu.pcie_root] = per_root.get(gpu.pcie_root, 0) + 1
    found = []
    for root in roots:
        domain, base = _bus(root) if root else ("0000", 0x7F)
        offset = per_root.get(root, 0) + 1
        per_root[root] = offset
        found.append(_free_bus(domain, base + offset, used))
    return found


def _free_bus(domain: str, bus: int, used: set[str]) -> str:
    for step in range(256):
        address = f"{domain}:{(bus + step) % 256:02x}:00.0"
        if address not in used:
            used.add(address)
            return address
    raise GenerateError("more than 256 PCI devices below one domain")  # unreachable for EC2 types


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


def _labels(plan: _TypePlan, options: GenerateOptions, name: str, place: Placement, region: str,
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


def _node(plan: _TypePlan, options: GenerateOptions, name: str, ip: str, place: Placement, region: str,
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


def _gpu_devices(plan: _TypePlan, node: str) -> list[dict[str, Any]]:
    devices = []
    for index, gpu in enumerate(plan.gpus):
        gpu_uuid = f"GPU-{_uid('GPU', f'{node}/gpu-{index}')}"
        if plan.mig is None:
            attributes = dict(sorted({**gpu.attributes, "type": _string("gpu"), "uuid": _string(gpu_uuid)}.items()))
            devices.append({"name": f"gpu-{index}", "attributes": attributes,
                            "capacity": {"memory": {"value": gpu.memory}}})
            continue
        for instance in plan.mig:
            profile = instance.profile
            name = profile.device_name(index, instance.start)
            attributes = {
                **gpu.attributes,
                "parentUUID": _string(gpu_uuid),
                "profile": _string(profile.name),
                "type": _string("mig"),
                "uuid": _string(f"MIG-{_uid('MIG', f'{node}/{name}')}"),
            }
            capacity = {key: {"value": str(value)} for key, value in profile.engines.items()}
            capacity["memory"] = {"value": profile.memory}
            capacity.update({f"memorySlice{s}": {"value": "1"} for s in instance.memory_slices})
            devices.append({"name": name, "attributes": dict(sorted(attributes.items())),
                            "capacity": dict(sorted(capacity.items()))})
    return devices


def _efa_devices(plan: _TypePlan) -> list[dict[str, Any]]:
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
    plans: list[_TypePlan]
    warnings: list[str]
    fabrics: list[Fabric | None] = field(default_factory=list)  # per group: its UltraServers, if any

    def _nodes(self) -> Iterator[tuple[_TypePlan, str, str, Placement, dict[str, str]]]:
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
    planner = _Planner(options, warnings)
    expanded = expand_groups([(g.instance_type, g.count) for g in options.groups], planner.warn)
    options = replace(options, groups=tuple(NodeGroup(e.instance_type, e.count) for e in expanded))
    region = _check_options(options)
    planner.options = options
    plans: dict[str, _TypePlan] = {}
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


def neuron_manager(options: GenerateOptions) -> str:
    """Who serves Neuron devices: the option, or by default the DRA driver with Karpenter and the device plugin on
    EKS Auto Mode (which runs no Neuron DRA driver)."""
    if options.neuron_manager is not None:
        return options.neuron_manager
    return DEVICE_PLUGIN if options.provisioner == AUTO_MODE else DRA


def generate(options: GenerateOptions, catalog: Catalog | None = None) -> GeneratedCluster:
    """The Nodes and ResourceSlices of ``options``; GenerateError / UnknownInstanceTypeError for bad options."""
    stream = generate_stream(options, catalog)
    return GeneratedCluster(list(stream.nodes()), list(stream.slices()), stream.warnings)


def generate_groups(groups: Iterable[NodeGroup], **options: Any) -> GeneratedCluster:
    """Shorthand: ``generate_groups([NodeGroup("p5.48xlarge", 2)], gpu_manager="dra")``."""
    return generate(GenerateOptions(groups=tuple(groups), **options))

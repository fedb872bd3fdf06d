"""What every node of one instance type publishes (:mod:`dratwin.cluster.generate`): its GPUs with their
attributes and PCIe placement, its EFAs, its MIG layout, its Neuron devices and its extended resources, planned
once per type from the catalog and the options."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.catalog import (
    InstanceType,
    MigInstance,
    MigLayout,
    UnknownMigProfileError,
    captured_topology,
    classic_memory,
    mig_layout,
)
from dratwin.catalog.dranet import live_efas
from dratwin.catalog.neuron import NeuronShape, neuron_shape
from dratwin.catalog.resources import DEFAULT_MAX_PODS
from dratwin.cluster.generate_options import (
    ADDRESSING_MODE,
    CUDA_DRIVER_VERSION,
    DRA,
    DRIVER_VERSION,
    EFA_PCI_DEVICE,
    EFA_PCI_VENDOR,
    NUMA_NODE,
    PCI_BUS_ID,
    PCIE_ROOT,
    GenerateError,
    GenerateOptions,
    neuron_manager,
)
from dratwin.cluster.neuron import (
    neuron_efa_attributes,
    rdma_device,
)


@dataclass(frozen=True)
class GpuPlan:
    attributes: Mapping[str, dict[str, Any]]  # without uuid
    memory: str
    pcie_root: str | None


@dataclass(frozen=True)
class EfaPlan:
    name: str
    attributes: Mapping[str, dict[str, Any]]


@dataclass
class TypePlan:
    it: InstanceType
    nvidia: bool
    gpu_dra: bool
    efa_dra: bool
    gpus: list[GpuPlan] = field(default_factory=list)
    efas: list[EfaPlan] = field(default_factory=list)
    mig: list[MigInstance] | None = None
    extended: dict[str, int] = field(default_factory=dict)
    neuron: NeuronShape | None = None  # the Neuron device layout (its EFAs' devicegroup ids need it either way)
    neuron_dra: bool = False


def string_attribute(value: str) -> dict[str, Any]:
    """A ResourceSlice attribute of type string."""
    return {"string": value}


def _version(value: str) -> dict[str, Any]:
    parts = value.split(".")
    return {"version": ".".join(parts + ["0"] * (3 - len(parts)))}


def _bus(root: str) -> tuple[str, int]:
    domain, _, bus = root.removeprefix("pci").partition(":")
    return domain, int(bus, 16)


class TypePlanner:
    def __init__(self, options: GenerateOptions, warnings: list[str]) -> None:
        self.options = options
        self.warnings = warnings
        self.mig_used = False

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def plan(self, it: InstanceType) -> TypePlan:
        it.node_resources()  # fails early for types without vCPU/memory
        nvidia = it.gpus is not None and it.gpus.manufacturer == "nvidia"
        plan = TypePlan(
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

    def _plan_gpus(self, plan: TypePlan) -> None:
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
                "addressingMode": string_attribute(ADDRESSING_MODE),
                "brand": string_attribute(meta.brand if meta is not None else "Nvidia"),
                "cudaDriverVersion": _version(CUDA_DRIVER_VERSION),
                "driverVersion": _version(DRIVER_VERSION),
                "productName": string_attribute(product),
                PCI_BUS_ID: string_attribute(bus_id),
            }
            architecture = meta.architecture if meta is not None else it.gpus.architecture
            if architecture:
                attributes["architecture"] = string_attribute(architecture)
            capability = meta.cuda_compute_capability if meta is not None else it.gpus.cuda_compute_capability
            if capability:
                attributes["cudaComputeCapability"] = _version(capability)
            if numa is not None:
                attributes[NUMA_NODE] = {"int": numa}
            if root:
                attributes[PCIE_ROOT] = string_attribute(root)
            memory = classic_memory(product) or (meta.memory if meta is not None else self._catalog_memory(it))
            plan.gpus.append(GpuPlan(dict(sorted(attributes.items())), memory, root))

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

    def _plan_neuron(self, plan: TypePlan) -> None:
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

    def _plan_neuron_efas(self, plan: TypePlan, shape: NeuronShape) -> None:
        """The EFAs of a Neuron type: the connected-device maps' addresses, DRANET's devicegroup ids."""
        self.warn(f"{plan.it.name}: the PCIe roots and NUMA nodes of its EFAs are not known, so they are published "
                  f"without {PCIE_ROOT} and dra.net/numaNode; align Neuron devices and EFAs with matchAttribute "
                  "resource.aws.com/devicegroup<N>_id")
        for address in shape.efa_addresses:
            attributes: dict[str, dict[str, Any]] = {
                "dra.net/pciAddress": string_attribute(address),
                "dra.net/pciDevice": string_attribute(EFA_PCI_DEVICE),
                "dra.net/pciVendor": string_attribute(EFA_PCI_VENDOR),
                "dra.net/rdma": {"bool": True},
                **neuron_efa_attributes(shape, address),
            }
            if shape.efa_subsystem:
                attributes["dra.net/pciSubsystem"] = string_attribute(shape.efa_subsystem)
            rdma = rdma_device(address)
            if rdma:
                attributes["dra.net/rdmaDevice"] = string_attribute(rdma)
            plan.efas.append(EfaPlan("pci-" + re.sub(r"[:.]", "-", address), dict(sorted(attributes.items()))))

    def _plan_efas(self, plan: TypePlan) -> None:
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
                "dra.net/pciAddress": string_attribute(address),
                "dra.net/pciDevice": string_attribute(meta.pci_device if meta is not None else EFA_PCI_DEVICE),
                "dra.net/pciVendor": string_attribute(meta.pci_vendor if meta is not None else EFA_PCI_VENDOR),
                "dra.net/rdma": {"bool": device.rdma if device is not None else True},
            }
            if meta is not None:
                attributes["dra.net/pciSubsystem"] = string_attribute(meta.pci_subsystem)
            if numa is not None:
                attributes["dra.net/numaNode"] = {"int": numa}
            if device is not None:
                attributes[PCIE_ROOT] = string_attribute(device.pcie_root)
            rdma = rdma_device(address)
            if rdma:
                attributes["dra.net/rdmaDevice"] = string_attribute(rdma)
            name = "pci-" + re.sub(r"[:.]", "-", address)
            plan.efas.append(EfaPlan(name, dict(sorted(attributes.items()))))


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


def _efa_addresses(roots: Sequence[str | None], gpus: Sequence[GpuPlan], used: set[str]) -> list[str]:
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

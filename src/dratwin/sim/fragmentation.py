"""GPU fragmentation over a run, as the FGD paper defines it (the measure is :mod:`dratwin.gpushare.fragmentation`).

At a sample, each GPU node is the paper's node: the free milli-GPU of each physical GPU (1000 for a free
GPU, 0 for a held one; a MIG-partitioned GPU the compute shares of its free partitions, so a free 3g.20gb
is 428) and its free CPU (allocatable less the requests of the pods bound to it). The target workload is
the pods placed so far in the run, each a task class of its CPU request and the GPUs it was given (count,
and the share of each: 1000 for a whole GPU, the profile's share for a partition); as in the paper, the
most popular classes covering 95% of them. Classes accept any GPU model (a pod's node selector is not
part of its class). The fragmented share is the fragmented milli-GPU over the free milli-GPU (0 when
nothing is free).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dratwin.allocator.state import DeviceID
from dratwin.api.quantity import Quantity
from dratwin.gpushare.fragmentation import (
    MILLI,
    FragmentationModel,
    TaskClass,
    cluster_fragmentation,
    target_workload,
)
from dratwin.sim.accounting import TERMINAL_PHASES, Accountant
from dratwin.sim.replicas import devices_of
from dratwin.sim.services import cpu_request
from dratwin.sim.store import Change, Store
from dratwin.sim.workloads import pod_phase


@dataclass(frozen=True)
class PhysicalGpu:
    """A GPU of a node and the devices it is published as (itself, or its MIG partitions)."""

    node: str
    devices: tuple[DeviceID, ...]


@dataclass
class FragmentationMeter:
    store: Store
    accountant: Accountant
    classes: Counter[TaskClass] = field(default_factory=Counter)
    _classed: set[str] = field(default_factory=set)
    _model: tuple[int, FragmentationModel] | None = None  # for the classes counted so far (their total)

    def __post_init__(self) -> None:
        # After the accountant (a "*" handler too, subscribed before): what a pod holds is known by then.
        self.store.subscribe("*", self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.kind == "Pod":
            self._on_pod(change)

    def _on_pod(self, change: Change) -> None:
        record = self.store.state.pods.get(change.key)
        if change.type == "Deleted" or record is None or not record.pod.spec.node_name or change.key in self._classed:
            return
        self._classed.add(change.key)
        shares = self.accountant.device_gpu
        devices = [*devices_of(self.store.state, record), *self.accountant.pod_plugin_devices.get(change.key, ())]
        gpus = [shares[d] for d in devices if shares.get(d, 0.0) > 0]
        milli = round(MILLI * min(gpus)) if gpus else 0
        self.classes[TaskClass(round(cpu_request(record) * MILLI), milli, len(gpus))] += 1

    def measure(self, gpus: Sequence[PhysicalGpu], held: set[DeviceID]) -> tuple[float, float]:
        """(fragmented GPUs, fragmented share of the free GPUs) now."""
        if not gpus or not self.classes:
            return 0.0, 0.0
        shares = self.accountant.device_gpu
        per_node: dict[str, list[int]] = {}
        for gpu in gpus:
            free = sum(shares.get(d, 0.0) for d in gpu.devices if d not in held)
            per_node.setdefault(gpu.node, []).append(round(MILLI * free))
        nodes = sorted(per_node)
        width = max(len(per_node[n]) for n in nodes)
        left = np.zeros((len(nodes), width), dtype=np.int64)
        for row, node in enumerate(nodes):
            left[row, : len(per_node[node])] = per_node[node]
        cpu = np.array(self._cpu_left(nodes), dtype=np.int64)
        model = self._fragmentation_model()
        frag = model.fragmentation(left, cpu, np.zeros(len(nodes), dtype=np.int64))
        amount, share = cluster_fragmentation(frag, left)
        return amount / MILLI, share

    def _fragmentation_model(self) -> FragmentationModel:
        counted = len(self._classed)  # grows with every pod classed: the workload is the same while it stays
        if self._model is None or self._model[0] != counted:
            self._model = (counted, FragmentationModel(target_workload(self.classes.elements()), ("",)))
        return self._model[1]

    def _cpu_left(self, nodes: list[str]) -> list[int]:
        """Each node's free millicores: allocatable less the requests of the pods bound to it and not done."""
        state = self.store.state
        used: Counter[str] = Counter()
        for record in state.pods.values():
            node = record.pod.spec.node_name
            if node and pod_phase(record.raw) not in TERMINAL_PHASES:
                used[node] += round(cpu_request(record) * MILLI)
        left = []
        for node in nodes:
            info = state.nodes.get(node)
            allocatable = info.node.status.allocatable.get("cpu") if info is not None else None
            total = round(float(Quantity.parse(allocatable).value) * MILLI) if allocatable is not None else 0
            left.append(max(total - used[node], 0))
        return left


def physical_gpus(devices: Mapping[DeviceID, tuple[str, str]]) -> list[PhysicalGpu]:
    """The devices (each with its node and its GPU's UUID) grouped by the GPU they are on."""
    groups: dict[tuple[str, str], list[DeviceID]] = {}
    for device, (node, uuid) in devices.items():
        groups.setdefault((node, uuid), []).append(device)
    return [PhysicalGpu(node, tuple(found)) for (node, _), found in sorted(groups.items())]

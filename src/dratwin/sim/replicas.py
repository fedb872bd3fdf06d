"""Where a service's pods run, as the serving model sees them: each pod's share of its devices.

A pod's share follows from its claims' allocations: a MIG partition (attribute ``type: mig``) is an
isolated slice with the compute fraction of its ``profile``; a device that several of the services' pods
hold (one shared claim reserved for them, or time-slicing) is time-sliced between them; otherwise the pod
has its whole GPUs. A pod without devices is counted as one whole GPU's worth (a CPU-only service scaled
on the same rate), named after the pod.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from dratwin.allocator.state import DeviceID
from dratwin.api.quantity import Quantity
from dratwin.api.resource import Device
from dratwin.cluster.state import ClusterState, PodRecord, pod_claim_keys
from dratwin.serving import Replica, mig_compute_fraction


@dataclass(frozen=True)
class Placement:
    pod: str
    service: str
    node: str
    devices: tuple[DeviceID, ...]
    ready: bool


def device_name(device: DeviceID) -> str:
    return f"{device.driver}/{device.pool}/{device.device}"


def devices_of(state: ClusterState, record: PodRecord) -> tuple[DeviceID, ...]:
    found: list[DeviceID] = []
    for key in pod_claim_keys(record.pod):
        claim = state.claims.get(key)
        allocation = claim.claim.status.allocation if claim is not None else None
        if allocation is not None:
            found += [DeviceID(r.driver, r.pool, r.device) for r in allocation.devices.results if not r.admin_access]
    return tuple(found)


class DeviceIndex:
    """The devices the ResourceSlices publish, by id (rebuilt when the slices change)."""

    def __init__(self, state: ClusterState) -> None:
        self.devices: dict[DeviceID, Device] = {}
        for resource_slice in state.slices:
            spec = resource_slice.spec
            for device in spec.devices:
                self.devices[DeviceID(spec.driver, spec.pool.name, device.name)] = device

    def is_mig(self, device: DeviceID) -> bool:
        found = self.devices.get(device)
        kind = found.attributes.get("type") if found is not None else None
        return kind is not None and kind.string == "mig"

    def mig_fraction(self, device: DeviceID) -> float:
        found = self.devices.get(device)
        profile = found.attributes.get("profile") if found is not None else None
        try:
            return mig_compute_fraction(profile.string or "") if profile is not None else 1.0
        except ValueError:
            return 1.0  # an unknown profile name: counted as a whole GPU (the slice's size is unknown)

    def memory_bytes(self, device: DeviceID) -> int:
        found = self.devices.get(device)
        memory = found.capacity.get("memory") if found is not None else None
        return int(Quantity.parse(memory.value).value) if memory is not None else 0


def replicas(placements: Iterable[Placement], index: DeviceIndex) -> tuple[Replica, ...]:
    placed = list(placements)
    holders: dict[DeviceID, int] = defaultdict(int)
    for p in placed:
        if p.ready:
            for device in p.devices:
                holders[device] += 1
    result = []
    for p in placed:
        if not p.devices:
            result.append(Replica(p.pod, p.service, f"pod/{p.pod}", ready=p.ready))
            continue
        first = p.devices[0]
        name, memory = device_name(first), index.memory_bytes(first)
        if holders[first] > 1:
            fraction = index.mig_fraction(first) if index.is_mig(first) else 1.0
            result.append(Replica(p.pod, p.service, name, "time-sliced", fraction, memory_bytes=memory, ready=p.ready))
        elif index.is_mig(first):
            result.append(Replica(p.pod, p.service, name, "mig", index.mig_fraction(first), memory_bytes=memory,
                                  ready=p.ready))
        else:
            gpus = sum(1 for d in p.devices if not index.is_mig(d))
            result.append(Replica(p.pod, p.service, name, "exclusive", 1.0, max(gpus, 1), memory, p.ready))
    return tuple(result)

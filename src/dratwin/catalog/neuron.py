"""The Neuron devices of Trainium and Inferentia instance types (``neuron-devices.yaml``) and their topology.

What the AWS Neuron DRA driver (``neuron.aws.com``) and DRANET publish depends on three facts per type, all in
the data file: how many devices there are, whether they form a grid (the ``topology_*`` attributes), and which EFA
each device is paired with (the connected-device maps). The ``resource.aws.com/devicegroup{1,4,8,16}_id``
attributes, shared by a Neuron device and its EFA so that one ``matchAttribute`` aligns both drivers, are computed
from the pairing the way the connected-device maps library computes them: the group of size S of device d holds the
devices [S*(d//S), S*(d//S+1)); its id is the first 16 hex digits of the SHA-256 of the sorted, distinct EFA
addresses of the group joined by commas; group 1 is the device's EFA address itself.

    >>> shape = neuron_shape("trn2.48xlarge")
    >>> shape.device_groups(0)["resource.aws.com/devicegroup4_id"]
    '13713e551cd37c19'
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.catalog._data import data_yaml

NEURON_FILE = "neuron-devices.yaml"
GROUP_DOMAIN = "resource.aws.com/"
GROUP_SIZES = (1, 4, 8, 16)
GROUP_ATTRIBUTES = tuple(f"{GROUP_DOMAIN}devicegroup{size}_id" for size in GROUP_SIZES)


@dataclass(frozen=True)
class NeuronHost:
    """The host of a type whose EC2 catalog entry lacks it (vCPUs, memory, architecture)."""

    vcpus: int
    memory_mib: int
    arch: str


@dataclass(frozen=True)
class NeuronShape:
    """How the Neuron devices of one instance type are laid out and paired with EFAs."""

    instance_type: str
    count: int
    grid: tuple[int, int] | None  # (rows, columns) of the topology attributes; None: the driver publishes none
    efas: tuple[str, ...]  # the EFA PCI address paired with each device, by deviceId; () when not EFA-enabled
    efa_subsystem: str | None = None
    ultraserver: int | None = None  # nodes per UltraServer: the node is published as one neuron_node device
    host: NeuronHost | None = None
    inferred: tuple[str, ...] = ()

    @property
    def efa_enabled(self) -> bool:
        return bool(self.efas)

    @property
    def efa_addresses(self) -> list[str]:
        """The distinct EFA addresses, in the order of the devices they are paired with."""
        return list(dict.fromkeys(self.efas))

    def topology(self, device_id: int) -> dict[str, int]:
        """``topology_x`` (row), ``topology_y`` (column), ``topology4_id`` (row), ``topology8_id`` (pair of rows,
        only with 8 devices or more) of one device; {} where the driver publishes no topology."""
        if self.grid is None or self.count <= 1 or self.ultraserver:
            return {}
        columns = self.grid[1]
        found = {"topology_x": device_id // columns, "topology_y": device_id % columns,
                 "topology4_id": device_id // 4}
        if self.count >= 8:
            found["topology8_id"] = device_id // 8
        return found

    def device_groups(self, device_id: int) -> dict[str, str]:
        """The ``resource.aws.com/devicegroup*_id`` attributes of one Neuron device ({} when not EFA-enabled)."""
        if not self.efas:
            return {}
        found = {GROUP_ATTRIBUTES[0]: self.efas[device_id]}
        for size, name in zip(GROUP_SIZES[1:], GROUP_ATTRIBUTES[1:], strict=True):
            start = size * (device_id // size)
            found[name] = group_hash(self.efas[start:start + size])
        return found

    def efa_groups(self, address: str) -> dict[str, str]:
        """The same attributes on the EFA at ``address`` (DRANET's AWS provider publishes them on trn types);
        {} for an address no device is paired with."""
        if address not in self.efas:
            return {}
        return self.device_groups(self.efas.index(address))


def group_hash(addresses: Sequence[str]) -> str:
    """The id of a device group: SHA-256 of its sorted distinct EFA addresses joined by ",", 16 hex digits."""
    joined = ",".join(sorted(set(addresses)))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def _shape(name: str, raw: Mapping[str, Any]) -> NeuronShape:
    count = int(raw["devices"])
    grid = raw.get("grid")
    efas = tuple(str(a) for a in raw.get("efa") or ())
    if efas and len(efas) != count:
        raise ValueError(f"{NEURON_FILE}: {name}: {len(efas)} EFA addresses for {count} devices")
    if grid is not None and int(grid[0]) * int(grid[1]) != count:
        raise ValueError(f"{NEURON_FILE}: {name}: a {grid[0]}x{grid[1]} grid for {count} devices")
    host = raw.get("host")
    return NeuronShape(
        instance_type=name,
        count=count,
        grid=None if grid is None else (int(grid[0]), int(grid[1])),
        efas=efas,
        efa_subsystem=None if raw.get("efa_subsystem") is None else str(raw["efa_subsystem"]),
        ultraserver=None if raw.get("ultraserver") is None else int(raw["ultraserver"]),
        host=None if host is None else NeuronHost(int(host["vcpus"]), round(float(host["memory_gib"]) * 1024),
                                                  str(host["arch"])),
        inferred=tuple(str(i) for i in raw.get("inferred") or ()),
    )


@functools.cache
def neuron_shapes() -> Mapping[str, NeuronShape]:
    """Every Neuron instance type of the data file, by name."""
    return {str(name): _shape(str(name), raw) for name, raw in data_yaml(NEURON_FILE)["instance_types"].items()}


def neuron_shape(instance_type: str) -> NeuronShape | None:
    """The Neuron device layout of ``instance_type``; None for types the data file does not list."""
    return neuron_shapes().get(instance_type)

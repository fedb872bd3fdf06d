"""EC2 UltraServers (``aws-ultraservers.yaml``): instances sold as one unit whose GPUs share one NVLink domain.

    >>> from dratwin.catalog.ultraservers import ultraserver, ultraservers_of
    >>> x72 = ultraserver("u-p6e-gb200x72")
    >>> x72.instance_type, x72.instances, x72.price_per_instance
    ('p6e-gb200.36xlarge', 18, 42.328)
    >>> [u.name for u in ultraservers_of("p6e-gb200.36xlarge")]
    ['u-p6e-gb200x72', 'u-p6e-gb200x36']

The instance type itself is in the EC2 catalog (:mod:`dratwin.catalog.instances`); this adds what only the
UltraServer knows: how many instances make one, that they form one NVLink domain (one clique of GPU Feature
Discovery's ``nvidia.com/gpu.clique``), how they are bought (Capacity Blocks), and the Capacity Block price.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dratwin.catalog._data import data_yaml
from dratwin.errors import InputError

ULTRASERVER_FILE = "aws-ultraservers.yaml"


class UnknownUltraServerError(InputError):
    """A name that is no UltraServer of the catalog."""


@dataclass(frozen=True)
class UltraServer:
    name: str  # u-p6e-gb200x72
    instance_type: str  # p6e-gb200.36xlarge
    instances: int
    accelerators: int
    nvlink_domains: int
    purchase: str
    capacity_block_price_usd_per_hour: float | None
    zones: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()

    @property
    def price_per_instance(self) -> float | None:
        price = self.capacity_block_price_usd_per_hour
        return None if price is None else round(price / self.instances, 6)

    @property
    def instances_per_domain(self) -> int:
        return self.instances // max(self.nvlink_domains, 1)


def _read(raw: Mapping[str, Any]) -> UltraServer:
    price = raw.get("capacity_block_price_usd_per_hour")
    return UltraServer(
        name=str(raw["name"]),
        instance_type=str(raw["instance_type"]),
        instances=int(raw["instances"]),
        accelerators=int(raw["accelerators"]),
        nvlink_domains=int(raw.get("nvlink_domains") or 1),
        purchase=str(raw.get("purchase") or ""),
        capacity_block_price_usd_per_hour=None if price is None else float(price),
        zones=tuple(str(z) for z in raw.get("zones") or ()),
        unverified=tuple(str(u) for u in raw.get("unverified") or ()),
    )


@functools.cache
def ultraservers() -> dict[str, UltraServer]:
    """Every UltraServer of the packaged data, by name, in the file's order (largest first)."""
    return {u.name: u for u in (_read(raw) for raw in data_yaml(ULTRASERVER_FILE)["ultraservers"])}


def ultraserver(name: str) -> UltraServer:
    found = ultraservers().get(name.strip().lower())
    if found is None:
        known = ", ".join(ultraservers())
        raise UnknownUltraServerError(f"unknown UltraServer {name!r}; dratwin knows {known}")
    return found


def ultraservers_of(instance_type: str) -> list[UltraServer]:
    """The UltraServers an instance type is sold in, largest first; [] for a type sold on its own."""
    return [u for u in ultraservers().values() if u.instance_type == instance_type]

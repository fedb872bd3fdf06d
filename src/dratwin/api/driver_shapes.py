"""What the DRA drivers dratwin knows publish, and what a set of ResourceSlices publishes.

:class:`Publications` answers "can any device have attribute ``productName`` in domain
``gpu.nvidia.com``, and of which type?" from two sources: the ResourceSlices of the input, and the
known shapes of real drivers (``dratwin/data/driver-shapes.yaml``). Both count: slices that show only
full GPUs do not make a DeviceClass for MIG devices (attribute ``profile``) wrong, since the same
driver publishes MIG devices on other nodes. A domain neither source knows is not judged.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from dratwin.api.resource import DeviceAttribute, DeviceClaim, DeviceClass, ResourceSlice

ATTRIBUTE_TYPES = ("bool", "int", "string", "version")


@dataclass(frozen=True)
class KnownShapes:
    """The packaged driver data: attributes (id -> type) and capacities per domain, classes, plugin resources."""

    attributes: dict[str, dict[str, str]]
    capacities: dict[str, frozenset[str]]
    drivers: frozenset[str]
    class_drivers: dict[str, str]  # DeviceClass name -> driver
    extended_resources: dict[str, str]  # extended resource name -> DeviceClass that serves it
    device_plugin_resources: dict[str, str]  # device plugin resource -> DeviceClass of the DRA driver


@functools.cache
def known_shapes() -> KnownShapes:
    text = resources.files("dratwin").joinpath("data", "driver-shapes.yaml").read_text(encoding="utf-8")
    return parse_shapes(yaml.safe_load(text))


def parse_shapes(data: dict[str, Any]) -> KnownShapes:
    attributes: dict[str, dict[str, str]] = defaultdict(dict)
    capacities: dict[str, set[str]] = defaultdict(set)
    for driver, shape in data["drivers"].items():
        for name, kind in (shape.get("attributes") or {}).items():
            domain, ident = split_name(str(name), driver)
            attributes[domain][ident] = str(kind)
        for name in shape.get("capacity") or ():
            domain, ident = split_name(str(name), driver)
            capacities[domain].add(ident)
    classes = data.get("deviceClasses") or {}
    return KnownShapes(
        attributes=dict(attributes),
        capacities={domain: frozenset(ids) for domain, ids in capacities.items()},
        drivers=frozenset(data["drivers"]),
        class_drivers={name: str(info["driver"]) for name, info in classes.items()},
        extended_resources={str(info["extendedResourceName"]): name for name, info in classes.items()
                            if info.get("extendedResourceName")},
        device_plugin_resources={str(k): str(v) for k, v in (data.get("devicePluginResources") or {}).items()},
    )


_DRIVER_SELECTOR = re.compile(r"""device\.driver\s*==\s*["']([^"']+)["']""")


def class_driver(device_class: DeviceClass | None, name: str) -> str | None:
    """The driver a DeviceClass selects: from its ``device.driver == "..."`` selector, else the driver of the class
    the known charts create under that name (``efa.networking.k8s.aws`` -> ``dra.net``)."""
    if device_class is not None:
        for selector in device_class.spec.selectors:
            match = _DRIVER_SELECTOR.search(selector.cel.expression if selector.cel else "")
            if match:
                return match.group(1)
    return known_shapes().class_drivers.get(name)


def requests_driver(devices: DeviceClaim, classes: Mapping[str, DeviceClass], driver: str) -> bool:
    """Whether some request (or subrequest) of a claim asks for devices of a class that selects ``driver``."""
    names = [r.exactly.device_class_name for r in devices.requests if r.exactly is not None]
    names += [s.device_class_name for r in devices.requests for s in r.first_available or ()]
    return any(class_driver(classes.get(n), n) == driver for n in names if n)


def split_name(name: str, driver: str) -> tuple[str, str]:
    """``productName`` of driver d → (d, productName); ``resource.kubernetes.io/pcieRoot`` → its own domain."""
    domain, slash, ident = name.rpartition("/")
    return (domain, ident) if slash else (driver, name)


def attribute_type(attribute: DeviceAttribute) -> str | None:
    """bool, int, string or version (list attributes: the type of their elements); None when unset."""
    if attribute.string is not None or attribute.strings is not None:
        return "string"
    if attribute.int_value is not None or attribute.ints is not None:
        return "int"
    if attribute.bool_value is not None or attribute.bools is not None:
        return "bool"
    if attribute.version is not None or attribute.versions is not None:
        return "version"
    return None


@dataclass
class Publications:
    """What devices publish, per domain: attribute ids with the types seen, capacity ids, driver names.

    ``from_input`` and ``known`` say where a domain's ids come from (both can be true).
    """

    attributes: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    capacities: dict[str, set[str]] = field(default_factory=dict)
    drivers: set[str] = field(default_factory=set)
    input_domains: set[str] = field(default_factory=set)
    input_drivers: set[str] = field(default_factory=set)
    known_domains: set[str] = field(default_factory=set)
    slices: int = 0

    @classmethod
    def of(cls, slices: Iterable[ResourceSlice], shapes: KnownShapes | None = None) -> Publications:
        found = cls()
        for resource_slice in slices:
            found._add_slice(resource_slice)
        known = shapes or known_shapes()
        for domain, ids in known.attributes.items():
            target = found.attributes.setdefault(domain, {})
            for ident, kind in ids.items():
                kinds = target.setdefault(ident, set())
                if not kinds:  # the input's slices say which type this cluster's devices have
                    kinds.add(kind)
        for domain, names in known.capacities.items():
            found.capacities.setdefault(domain, set()).update(names)
        found.known_domains = set(known.attributes) | set(known.capacities)
        found.drivers |= known.drivers
        return found

    def _add_slice(self, resource_slice: ResourceSlice) -> None:
        driver = resource_slice.spec.driver
        if not driver:
            return
        self.slices += 1
        self.drivers.add(driver)
        self.input_drivers.add(driver)
        self.input_domains.add(driver)
        self.attributes.setdefault(driver, {})
        self.capacities.setdefault(driver, set())
        # Devices of one driver mostly repeat the same names and types: each distinct one is recorded once.
        seen_attributes: set[tuple[str, str | None]] = set()
        seen_capacities: set[str] = set()
        for device in resource_slice.spec.devices:
            for name, attribute in device.attributes.items():
                kind = attribute_type(attribute)
                if (name, kind) in seen_attributes:
                    continue
                seen_attributes.add((name, kind))
                domain, ident = split_name(name, driver)
                self.input_domains.add(domain)
                kinds = self.attributes.setdefault(domain, {}).setdefault(ident, set())
                if kind is not None:
                    kinds.add(kind)
            for name in device.capacity:
                if name not in seen_capacities:
                    seen_capacities.add(name)
                    domain, ident = split_name(name, driver)
                    self.input_domains.add(domain)
                    self.capacities.setdefault(domain, set()).add(ident)

    def knows_domain(self, domain: str) -> bool:
        return domain in self.attributes or domain in self.capacities

    def from_input(self, domain: str) -> bool:
        return domain in self.input_domains

    def known(self, domain: str) -> bool:
        return domain in self.known_domains

    def attribute_ids(self, domain: str) -> dict[str, set[str]]:
        return self.attributes.get(domain, {})

    def capacity_ids(self, domain: str) -> set[str]:
        return self.capacities.get(domain, set())

    def domains(self) -> set[str]:
        return set(self.attributes) | set(self.capacities)

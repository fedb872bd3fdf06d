"""User catalogs: YAML files merged over the packaged catalog (prices, discount, region, zones, instance types).

The format is documented in ``dratwin/data/CATALOG.md``; ``tests/catalog/data/`` has examples. In short::

    region: eu-west-1              # optional; another region needs zones and its own prices
    zones: [eu-west-1a, eu-west-1b, eu-west-1c]
    discount: 0.2                  # fraction off every on-demand price (an EDP / savings plan)
    prices:                        # USD per hour; on-demand: null = not sold on demand
      m7i.large: {on-demand: 0.1134, spot: 0.041}
      m7i.xlarge: {spot: {eu-west-1a: 0.08, eu-west-1b: 0.083}}
    instance_types:                # whole types, shaped as in aws-general-instances.yaml
      m7i.large: {labels: {...}, allocatable: {...}, price_usd_per_hour: 0.1134}
    unavailable:                   # offerings to mark unavailable (e.g. insufficient capacity)
      - {instance_type: p5.48xlarge, zone: eu-west-1a, capacity_type: on-demand}

Files are applied in order: later values win (region, zones, discount, a type's prices, a whole type). Every
error is a CatalogFileError that names the file, the key and what to fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from dratwin.catalog.dra import dra_metadata
from dratwin.catalog.instances import (
    Catalog,
    CatalogFileError,
    InstanceType,
    labelled_instance_type,
    with_offerings,
)
from dratwin.catalog.offerings import CAPACITY_TYPES, ON_DEMAND

TOP_LEVEL_KEYS = ("region", "zones", "discount", "prices", "instance_types", "unavailable", "metadata")
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class _Sourced:
    """A value and the file (and key) it came from, for error messages."""

    value: Any
    file: str
    key: str


@dataclass
class _State:
    region: _Sourced | None = None
    zones: _Sourced | None = None
    discount: _Sourced | None = None
    types: dict[str, InstanceType] = field(default_factory=dict)
    type_zones: dict[str, _Sourced] = field(default_factory=dict)
    on_demand: dict[str, float | None] = field(default_factory=dict)
    spot: dict[str, _Sourced] = field(default_factory=dict)  # float (every zone) or {zone: float}
    unavailable: list[_Sourced] = field(default_factory=list)  # (type, zone | None, capacity type | None)
    files: list[str] = field(default_factory=list)


def _read(path: Path) -> Mapping[str, Any]:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CatalogFileError(file, "", f"cannot be read ({error.strerror or error})") from None
    try:
        doc = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise CatalogFileError(file, "", f"{where}not valid YAML ({problem})") from None
    if not isinstance(doc, Mapping):
        raise CatalogFileError(file, "", "expected a mapping with some of the keys " + ", ".join(TOP_LEVEL_KEYS)
                               + " (see dratwin/data/CATALOG.md)")
    unknown = [str(k) for k in doc if k not in TOP_LEVEL_KEYS]
    if unknown:
        hint = difflib.get_close_matches(unknown[0], TOP_LEVEL_KEYS, n=1)
        raise CatalogFileError(file, unknown[0], "unknown key" + (f" (did you mean {hint[0]}?)" if hint else "")
                               + "; a catalog file has " + ", ".join(TOP_LEVEL_KEYS))
    return doc


def _price(value: Any, file: str, key: str, *, nullable: bool) -> float | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        null = " (or null: not sold on demand)" if nullable else ""
        raise CatalogFileError(file, key, f"expected a non-negative price in USD per hour{null}, got {value!r}")
    return float(value)


def _zones(value: Any, file: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(z, str) and z for z in value):
        raise CatalogFileError(file, key, f"expected a non-empty list of zone names (e.g. [us-east-1a, us-east-1b]), "
                               f"got {value!r}")
    if len(set(value)) != len(value):
        raise CatalogFileError(file, key, "lists a zone twice")
    return tuple(value)


class _Reader:
    def __init__(self, base: Catalog, state: _State) -> None:
        self.base = base
        self.state = state

    def known(self, name: str, file: str, key: str) -> str:
        if name in self.state.types or name in self.base:
            return name
        names = [*self.base.names(), *self.state.types]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise CatalogFileError(file, key, f"unknown instance type {name!r}{hint}; define it under instance_types "
                               "(in this file or an earlier one) to add it")

    def read(self, path: Path) -> None:
        file = str(path)
        doc = _read(path)
        state = self.state
        state.files.append(file)
        metadata = doc.get("metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise CatalogFileError(file, "metadata", "expected a mapping (only its region is read)")
        regions = [(key, value) for key, value in (("region", doc.get("region")),
                                                   ("metadata.region", (metadata or {}).get("region")))
                   if value is not None]
        if len({str(value) for _, value in regions}) > 1:
            raise CatalogFileError(file, "region", f"region {regions[0][1]!r} and metadata.region {regions[1][1]!r} "
                                   "differ; keep one")
        for key, region in regions:
            if not isinstance(region, str) or not region:
                raise CatalogFileError(file, key, f"expected a region name such as eu-west-1, got {region!r}")
            if state.region is not None and state.region.value != region:
                raise CatalogFileError(file, key, f"{region!r} conflicts with region {state.region.value!r} of "
                                       f"{state.region.file}; one catalog covers one region")
            state.region = _Sourced(region, file, key)
        if "zones" in doc:
            state.zones = _Sourced(_zones(doc["zones"], file, "zones"), file, "zones")
        if "discount" in doc:
            discount = doc["discount"]
            if isinstance(discount, bool) or not isinstance(discount, int | float) or not 0 <= discount < 1:
                raise CatalogFileError(file, "discount", "expected the fraction taken off on-demand prices, from 0 "
                                       f"up to (not including) 1 (0.2 for 20 %), got {discount!r}")
            state.discount = _Sourced(float(discount), file, "discount")
        self.read_types(doc.get("instance_types"), file)
        self.read_prices(doc.get("prices"), file)
        self.read_unavailable(doc.get("unavailable"), file)

    def read_types(self, raw: Any, file: str) -> None:
        if raw is None:
            return
        if not isinstance(raw, Mapping):
            raise CatalogFileError(file, "instance_types", "expected a mapping of instance type name to its entry "
                                   "(labels, allocatable, price_usd_per_hour), as in aws-general-instances.yaml")
        for name, entry in raw.items():
            key = f"instance_types.{name}"
            it = labelled_instance_type(str(name), entry, file, key)
            meta = dra_metadata().get(it.name)
            if meta is not None:
                it = replace(it, dra=meta)
            self.state.types[it.name] = it
            if "price_usd_per_hour" in entry:
                self.state.on_demand[it.name] = it.price_usd_per_hour
            if "zones" in entry:
                self.state.type_zones[it.name] = _Sourced(_zones(entry["zones"], file, f"{key}.zones"), file,
                                                          f"{key}.zones")

    def read_prices(self, raw: Any, file: str) -> None:
        if raw is None:
            return
        if not isinstance(raw, Mapping):
            raise CatalogFileError(file, "prices", "expected a mapping of instance type to {on-demand: <USD/h>, "
                                   "spot: <USD/h or {zone: USD/h}>}")
        for name, entry in raw.items():
            key = f"prices.{name}"
            name = self.known(str(name), file, key)
            if not isinstance(entry, Mapping) or not entry:
                raise CatalogFileError(file, key, "expected {on-demand: <USD/h>, spot: <USD/h or {zone: USD/h}>}")
            for capacity_type, value in entry.items():
                if capacity_type not in CAPACITY_TYPES:
                    raise CatalogFileError(file, f"{key}.{capacity_type}", "unknown capacity type; use on-demand or "
                                           "spot (reserved capacity is not modelled)")
                if capacity_type == ON_DEMAND:
                    self.state.on_demand[name] = _price(value, file, f"{key}.on-demand", nullable=True)
                elif value is None:
                    self.state.spot.pop(name, None)
                elif isinstance(value, Mapping):
                    zones = {str(z): _price(p, file, f"{key}.spot.{z}", nullable=False) for z, p in value.items()}
                    self.state.spot[name] = _Sourced(zones, file, f"{key}.spot")
                else:
                    self.state.spot[name] = _Sourced(_price(value, file, f"{key}.spot", nullable=False), file,
                                                     f"{key}.spot")

    def read_unavailable(self, raw: Any, file: str) -> None:
        if raw is None:
            return
        if not isinstance(raw, list):
            raise CatalogFileError(file, "unavailable", "expected a list of {instance_type, zone, capacity_type} "
                                   "(zone and capacity_type optional: every zone / both)")
        for index, entry in enumerate(raw):
            key = f"unavailable[{index}]"
            if not isinstance(entry, Mapping) or "instance_type" not in entry:
                raise CatalogFileError(file, key, "expected {instance_type: <name>, zone: <zone>, capacity_type: "
                                       "on-demand|spot} (zone and capacity_type optional)")
            extra = sorted(set(map(str, entry)) - {"instance_type", "zone", "capacity_type"})
            if extra:
                raise CatalogFileError(file, f"{key}.{extra[0]}", "unknown key; use instance_type, zone, "
                                       "capacity_type")
            name = self.known(str(entry["instance_type"]), file, f"{key}.instance_type")
            capacity_type = entry.get("capacity_type")
            if capacity_type is not None and capacity_type not in CAPACITY_TYPES:
                raise CatalogFileError(file, f"{key}.capacity_type", f"expected on-demand or spot, got "
                                       f"{capacity_type!r}")
            zone = entry.get("zone")
            self.state.unavailable.append(_Sourced((name, None if zone is None else str(zone), capacity_type),
                                                   file, key))


def _build(base: Catalog, state: _State) -> Catalog:
    region = state.region.value if state.region is not None else base.region
    if region != base.region and state.zones is None:
        assert state.region is not None
        raise CatalogFileError(state.region.file, state.region.key, f"{region!r} needs its zones too (zones: "
                               f"[{region}a, ...]); dratwin only knows the zones of {base.region}")
    zones: tuple[str, ...] = state.zones.value if state.zones is not None else base.zones
    for source in [state.zones, *state.type_zones.values()]:
        if source is not None:
            outside = [z for z in source.value if not z.startswith(region)]
            if outside:
                raise CatalogFileError(source.file, source.key, f"zone {outside[0]!r} is not in region {region!r}")
    discount = state.discount.value if state.discount is not None else 0.0

    def zones_of(name: str) -> tuple[str, ...]:
        return state.type_zones[name].value if name in state.type_zones else zones

    unavailable: dict[str, set[tuple[str, str]]] = {}
    for entry in state.unavailable:
        name, zone, capacity_type = entry.value
        if zone is not None and zone not in zones_of(name):
            raise CatalogFileError(entry.file, f"{entry.key}.zone", f"zone {zone!r} is not one of the zones of {name} "
                                   f"({', '.join(zones_of(name))})")
        for z in [zone] if zone is not None else zones_of(name):
            for ct in [capacity_type] if capacity_type is not None else CAPACITY_TYPES:
                unavailable.setdefault(name, set()).add((z, ct))
    types: dict[str, InstanceType] = {}
    for name in [*base.names(), *(n for n in state.types if n not in base)]:
        it = state.types.get(name) or base.get(name)
        if name in state.on_demand:
            list_price = state.on_demand[name]
        else:  # the packaged price, which is for the packaged region only
            list_price = base.get(name).price_usd_per_hour if name in base and region == base.region else None
        on_demand = None if list_price is None else round(list_price * (1 - discount), 9)
        spot: dict[str, float] = {}
        if name in state.spot:
            source = state.spot[name]
            if isinstance(source.value, dict):
                missing = [z for z in source.value if z not in zones_of(name)]
                if missing:
                    raise CatalogFileError(source.file, f"{source.key}.{missing[0]}", f"zone {missing[0]!r} is not "
                                           f"one of the zones of {name} ({', '.join(zones_of(name))}); add it to "
                                           "zones")
                spot = dict(source.value)
            else:
                spot = dict.fromkeys(zones_of(name), source.value)
        types[name] = with_offerings(it, zones_of(name), region=region, on_demand=on_demand, spot=spot,
                                     unavailable=unavailable.get(name, ()))
    return Catalog(types, region=region, zones=zones, discount=discount, files=state.files)


def apply_user_catalogs(base: Catalog, paths: Sequence[Path]) -> Catalog:
    """``base`` with the user catalogs ``paths`` merged over it, in order (see the module docstring)."""
    state = _State()
    reader = _Reader(base, state)
    for path in paths:
        reader.read(path)
    return _build(base, state)


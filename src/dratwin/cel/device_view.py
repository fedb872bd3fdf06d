"""A device as CEL selectors see it, converted once and fingerprinted for result caching.

:meth:`CelDevice.build` only stores its inputs; conversion happens on first use. As in Kubernetes
(``DeviceMatches``), *every* attribute is converted before any evaluation, so one attribute with no
value, a list value while list-type attributes are off, or an unparsable version makes every
selector fail on that device, whether or not it reads that attribute.

Two kinds of cache keys:

- :attr:`CelDevice.key`, the whole content (driver, attributes, capacity values,
  allowMultipleAllocations, the list-type setting), not the device's name;
- a *projection* for selectors that only look up fixed ``(domain, id)`` paths: the driver,
  allowMultipleAllocations and the values at those paths. Devices that differ only elsewhere (a GPU's
  UUID or PCI address) share it, so a selector runs once per distinct projection, not per device.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from typing import Any, ClassVar, TypeVar

from dratwin.api.resource import Device, DeviceAttribute
from dratwin.cel import environment as envnames
from dratwin.cel import values
from dratwin.cel.semver import SemverError
from dratwin.cel.semver import parse as parse_semver
from dratwin.cel.source import ATTRIBUTE, ATTRIBUTE_DOMAIN, CAPACITY, CAPACITY_DOMAIN, Path
from dratwin.errors import QuantityError

_MISSING = object()


class Key:
    """A hashable cache key that hashes its (large) content once."""

    __slots__ = ("_hash", "_value")

    def __init__(self, value: Hashable) -> None:
        self._value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Key) and self._hash == other._hash and self._value == other._value)

    def __repr__(self) -> str:
        return f"Key({self._value!r})"


class PathSet:
    """An interned set of lookup paths; one object per distinct set, hashed by identity."""

    __slots__ = ("__weakref__", "paths")

    _interned: ClassVar[weakref.WeakValueDictionary[tuple[Path, ...], PathSet]] = weakref.WeakValueDictionary()

    def __init__(self, paths: tuple[Path, ...]) -> None:
        self.paths = paths

    @classmethod
    def of(cls, paths: tuple[Path, ...]) -> PathSet:
        found = cls._interned.get(paths)
        if found is None:
            found = cls._interned[paths] = cls(paths)
        return found


class CelDevice:
    """See the module docstring. ``driver`` is the ResourceSlice's driver (the default domain)."""

    __slots__ = (
        "_checked",
        "_error",
        "_key",
        "_maps",
        "_projections",
        "_values",
        "device",
        "driver",
        "list_type_attributes",
    )

    def __init__(self, driver: str, device: Device, list_type_attributes: bool) -> None:
        self.driver = driver
        self.device = device
        self.list_type_attributes = list_type_attributes
        self._key: Key | None = None
        self._checked = False
        self._error: tuple[str, str] | None = None
        self._maps: tuple[Maps, Maps] | None = None
        self._values: dict[Path, tuple[Any, Hashable]] = {}
        # Read directly by CompiledSelector.matches: the memo is the whole of a cache hit's work.
        self._projections: dict[PathSet, Key] = {}

    @classmethod
    def build(cls, driver: str, device: Device, *, list_type_attributes: bool = False) -> CelDevice:
        """Never raises: problems with the device's values surface when a selector is matched."""
        return cls(driver, device, list_type_attributes)

    def __repr__(self) -> str:
        return f"CelDevice({self.driver!r}, {self.device.name!r})"

    @property
    def key(self) -> Key:
        """The content fingerprint: equal keys, equal results for every selector."""
        if self._key is None:
            self._key = Key(_content(self.driver, self.device, self.list_type_attributes))
        return self._key

    @property
    def allow_multiple_allocations(self) -> bool:
        return bool(self.device.allow_multiple_allocations)

    def error(self) -> tuple[str, str] | None:
        """(message, hint) when some attribute or capacity cannot be converted: no selector can run."""
        if not self._checked:
            self._error = _check(self.device, self.list_type_attributes)
            self._checked = True
        return self._error

    def projection(self, path_set: PathSet) -> Key:
        """The key of a projectable selector with these paths (memoized per path set)."""
        key = self._projections.get(path_set)
        if key is None:
            if self.error() is not None:
                key = self.key  # the error depends on the whole device
            else:
                looked_up = tuple(self._value(path)[1] for path in path_set.paths)
                key = Key((self.driver, self.allow_multiple_allocations, looked_up))
            self._projections[path_set] = key
        return key

    def data(self, domains: frozenset[str]) -> dict[str, Any]:
        """Every variable, the looked-up maps with an empty map for each of ``domains`` they lack."""
        if self._maps is None:
            self._maps = _convert(self.driver, self.device, self.list_type_attributes)
        attributes, capacity = self._maps
        # The driver's own domain is always there (empty when the device publishes nothing in it), so
        # that ``device.attributes[device.driver]`` behaves like upstream's map with an empty default.
        domains = domains | {self.driver}
        return {
            envnames.DRIVER: self.driver,
            envnames.ATTRIBUTES: _with_domains(attributes, domains),
            envnames.CAPACITY: _with_domains(capacity, domains),
            envnames.ALLOW_MULTIPLE: self.allow_multiple_allocations,
            envnames.WHOLE_ATTRIBUTES: attributes,
            envnames.WHOLE_CAPACITY: capacity,
        }

    def projected_data(self, paths: tuple[Path, ...]) -> dict[str, Any]:
        """Only the values at ``paths``: less to convert into CEL, same result for such selectors."""
        maps: dict[str, Maps] = {ATTRIBUTE: {}, CAPACITY: {}, ATTRIBUTE_DOMAIN: {}, CAPACITY_DOMAIN: {}}
        for path in paths:
            kind, domain, ident = path
            value = self._value(path)[0]
            if kind in (ATTRIBUTE_DOMAIN, CAPACITY_DOMAIN):
                if value:  # `"d" in device.attributes` reads only the keys of the whole map
                    maps[kind][domain] = {}
                continue
            target = maps[kind].setdefault(domain, {})
            if value is not _MISSING:
                target[ident] = value if kind == ATTRIBUTE else values.quantity_message(value)
        return {
            envnames.DRIVER: self.driver,
            envnames.ATTRIBUTES: maps[ATTRIBUTE],
            envnames.CAPACITY: maps[CAPACITY],
            envnames.ALLOW_MULTIPLE: self.allow_multiple_allocations,
            envnames.WHOLE_ATTRIBUTES: maps[ATTRIBUTE_DOMAIN],
            envnames.WHOLE_CAPACITY: maps[CAPACITY_DOMAIN],
        }

    def has(self, path: Path) -> bool:
        """Whether the device has a value at ``path`` (only once error() is None)."""
        return self._value(path)[0] is not _MISSING

    def _value(self, path: Path) -> tuple[Any, Hashable]:
        """(value, fingerprint) at a path, ``_MISSING`` twice when absent. Only after error() is None.

        The value is the CEL value of an attribute, the amount of a capacity.
        """
        found = self._values.get(path)
        if found is None:
            kind, domain, ident = path
            if kind in (ATTRIBUTE_DOMAIN, CAPACITY_DOMAIN):
                table = self.device.attributes if kind == ATTRIBUTE_DOMAIN else self.device.capacity
                present = any(split_name(name, self.driver)[0] == domain for name in table)
                found = (present, ("d", present))
            elif kind == ATTRIBUTE:
                attribute = _entry(self.device.attributes, self.driver, domain, ident)
                if attribute is None:
                    found = (_MISSING, _MISSING)
                else:
                    found = _attribute_value(attribute, self.list_type_attributes)
            else:
                capacity = _entry(self.device.capacity, self.driver, domain, ident)
                if capacity is None:
                    found = (_MISSING, _MISSING)
                else:
                    # The amount itself; projected_data makes the message (only an evaluation needs it).
                    amount = values.parse_quantity(capacity.value)
                    found = (amount, ("q", amount))
            self._values[path] = found
        return found


Maps = dict[str, dict[str, Any]]
_E = TypeVar("_E")


def _entry(table: dict[str, _E], driver: str, domain: str, ident: str) -> _E | None:
    """The entry that ends up at ``(domain, ident)`` when the maps are built in the table's order."""
    if "/" in domain:
        return None  # a name splits at its first slash, so no name lands in such a domain
    qualified = table.get(f"{domain}/{ident}")
    if domain != driver or "/" in ident:
        return qualified
    plain = table.get(ident)
    if plain is None or qualified is None:
        return plain if qualified is None else qualified
    # Both spellings present: the later one wins, as when the maps are built (spec §11 quirk).
    names = list(table)
    return plain if names.index(ident) > names.index(f"{domain}/{ident}") else qualified


def _with_domains(maps: dict[str, dict[str, Any]], domains: frozenset[str]) -> dict[str, dict[str, Any]]:
    missing = domains.difference(maps)
    if not missing:
        return maps
    return {**{domain: {} for domain in missing}, **maps}


def split_name(name: str, driver: str) -> tuple[str, str]:
    """``domain/id`` → (domain, id); a name without a domain belongs to the driver's domain."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (driver, name)


def _content(driver: str, device: Device, list_type_attributes: bool) -> Hashable:
    # In the maps' order, not sorted: with a name both qualified and unqualified, order decides
    # which value CEL sees (see _entry).
    attributes = tuple(
        (
            name,
            a.int_value,
            a.bool_value,
            a.string,
            a.version,
            None if a.ints is None else tuple(a.ints),
            None if a.bools is None else tuple(a.bools),
            None if a.strings is None else tuple(a.strings),
            None if a.versions is None else tuple(a.versions),
        )
        for name, a in device.attributes.items()
    )
    capacity = tuple((name, type(c.value).__name__, c.value) for name, c in device.capacity.items())
    return (driver, bool(device.allow_multiple_allocations), list_type_attributes, attributes, capacity)


def _check(device: Device, list_type_attributes: bool) -> tuple[str, str] | None:
    for name, attribute in device.attributes.items():
        if attribute.int_value is None and attribute.bool_value is None and attribute.string is None:
            try:
                _attribute_value(attribute, list_type_attributes)
            except _ConversionError as error:
                return f"attribute {name}: {error.args[0]}", error.args[1]
    for name, capacity in device.capacity.items():
        try:
            values.parse_quantity(capacity.value)
        except QuantityError as error:
            return f"capacity {name}: {error}", "capacity values must be Kubernetes quantities"
    return None


def _convert(driver: str, device: Device, list_type_attributes: bool) -> tuple[Maps, Maps]:
    """Both maps in full; only called once :func:`_check` has passed."""
    attributes: Maps = {}
    for name, attribute in device.attributes.items():
        domain, ident = split_name(name, driver)
        # A qualified name in the driver's own domain collides with the unqualified one: the later
        # entry wins (Kubernetes leaves the outcome unspecified; spec §11).
        attributes.setdefault(domain, {})[ident] = _attribute_value(attribute, list_type_attributes)[0]
    capacity: Maps = {}
    for name, entry in device.capacity.items():
        domain, ident = split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = values.quantity_message(values.parse_quantity(entry.value))
    return attributes, capacity


class _ConversionError(Exception):
    """(message, hint)"""


def _attribute_value(attribute: DeviceAttribute, list_type_attributes: bool) -> tuple[Any, Hashable]:
    # Same precedence as Kubernetes' getAttributeValue: int, bool, string, version, then lists.
    if attribute.int_value is not None:
        return attribute.int_value, ("i", attribute.int_value)
    if attribute.bool_value is not None:
        return attribute.bool_value, ("b", attribute.bool_value)
    if attribute.string is not None:
        return attribute.string, ("s", attribute.string)
    if attribute.version is not None:
        version = _version(attribute.version)
        return values.semver_message(version), ("v", version.canonical)
    lists = (attribute.ints, attribute.bools, attribute.strings, attribute.versions)
    if any(v is not None for v in lists):
        if not list_type_attributes:
            raise _ConversionError(
                "unsupported attribute value",
                "list values (ints/bools/strings/versions) need the DRAListTypeAttributes feature gate",
            )
        if attribute.ints is not None:
            return list(attribute.ints), ("I", tuple(attribute.ints))
        if attribute.bools is not None:
            return list(attribute.bools), ("B", tuple(attribute.bools))
        if attribute.strings is not None:
            return list(attribute.strings), ("S", tuple(attribute.strings))
        versions = [_version(text) for text in attribute.versions or ()]
        return [values.semver_message(v) for v in versions], ("V", tuple(v.canonical for v in versions))
    raise _ConversionError(
        "unsupported attribute value", "the attribute has no value: set one of int, bool, string, version"
    )


def _version(text: str) -> Any:
    try:
        return parse_semver(text)
    except SemverError as error:
        raise _ConversionError(
            f"parse semantic version: {error}",
            "version attributes must be strict semantic versions (MAJOR.MINOR.PATCH)",
        ) from None

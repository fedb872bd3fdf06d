"""Claim constraints: matchAttribute and distinctAttribute, checked incrementally during the search.

Each constraint has ``add`` (may refuse the device) and ``remove`` (exact inverse of a successful
add). Constraints are assumed monotonic: once a device is refused, adding more devices will not help.
"""

from __future__ import annotations

from typing import Protocol

from dratwin.api.resource import Device, DeviceAttribute

AttributeValue = tuple[str, object]  # (type, value): values of different types never match


def attribute_value(attribute: DeviceAttribute) -> AttributeValue | None:
    if attribute.string is not None:
        return ("string", attribute.string)
    if attribute.int_value is not None:
        return ("int", attribute.int_value)
    if attribute.bool_value is not None:
        return ("bool", attribute.bool_value)
    if attribute.version is not None:
        # Semver 2.0 versions are in minimal form, so string equality is value equality.
        return ("version", attribute.version)
    return None


def attribute_values(attribute: DeviceAttribute) -> frozenset[AttributeValue]:
    """With list-type attributes: the attribute as a set of typed values (a scalar is a 1-element set)."""
    scalar = attribute_value(attribute)
    if scalar is not None:
        return frozenset((scalar,))
    members: list[AttributeValue] = []
    for kind, values in (
        ("string", attribute.strings),
        ("int", attribute.ints),
        ("bool", attribute.bools),
        ("version", attribute.versions),
    ):
        members.extend((kind, v) for v in values or ())
    return frozenset(members)


def lookup_attribute(device: Device, driver: str, qualified_name: str) -> DeviceAttribute | None:
    """The attribute named ``domain/id``, or the bare ``id`` when the domain is the driver's."""
    attribute = device.attributes.get(qualified_name)
    if attribute is not None:
        return attribute
    domain, slash, ident = qualified_name.partition("/")
    if not slash or domain != driver:
        return None
    return device.attributes.get(ident)


class Constraint(Protocol):
    attribute_name: str

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool: ...

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None: ...


class _Scoped:
    def __init__(self, requests: list[str], attribute_name: str, list_values: bool = False) -> None:
        self.requests = set(requests)
        self.attribute_name = attribute_name
        self.list_values = list_values

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub_request) and f"{request}/{sub_request}" in self.requests)


class MatchAttribute(_Scoped):
    """All devices of the covered requests share one value of the attribute."""

    def __init__(self, requests: list[str], attribute_name: str, list_values: bool = False) -> None:
        super().__init__(requests, attribute_name, list_values)
        self.value: AttributeValue | None = None
        self.common: frozenset[AttributeValue] = frozenset()
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        if self.list_values:
            return self._add_set(attribute_values(attribute))
        value = attribute_value(attribute)
        if self.count == 0:
            self.value = value
        elif value is None or value != self.value:
            return False
        self.count += 1
        return True

    def _add_set(self, values: frozenset[AttributeValue]) -> bool:
        # The running intersection must stay non-empty. Like upstream's alpha code, removing a device
        # does not widen it again; it starts afresh only when the set of devices is empty.
        common = values if self.count == 0 else self.common & values
        if not common:
            return False
        self.common = common
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.count -= 1


class DistinctAttribute(_Scoped):
    """Devices of the covered requests all have different values of the attribute.

    Like upstream 1.36, values are remembered per request name: with several devices in one request
    only the latest one's value is kept, and removing a device forgets that request's value.
    """

    def __init__(self, requests: list[str], attribute_name: str, list_values: bool = False) -> None:
        super().__init__(requests, attribute_name, list_values)
        self.values: dict[str, AttributeValue | None] = {}
        self.sets: dict[str, frozenset[AttributeValue]] = {}
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        if self.list_values:
            members = attribute_values(attribute)
            if self.count > 0 and (not members or any(members & seen for seen in self.sets.values())):
                return False
            self.sets[request] = members
            self.count += 1
            return True
        value = attribute_value(attribute)
        if self.count > 0 and any(value is None or value == seen for seen in self.values.values()):
            return False
        self.values[request] = value
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.values.pop(request, None)
            self.sets.pop(request, None)
            self.count -= 1

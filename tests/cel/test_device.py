"""How a device looks to CEL: fields, domains, unknown domains and ids, conversion errors, lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.errors import CelRuntimeError

DeviceFactory = Callable[..., CelDevice]
DRIVER = "gpu.example.com"  # conftest's driver

FIELDS: list[tuple[str, str, bool]] = [
    ("driver", 'device.driver == "gpu.example.com"', True),
    ("driver-false", 'device.driver == "other.example.com"', False),
    ("unqualified-in-driver-domain", 'device.attributes["gpu.example.com"].model == "H100"', True),
    ("qualified-in-own-domain", 'device.attributes["resource.kubernetes.io"].numaNode == 1', True),
    ("qualified-not-in-driver-domain", '"numaNode" in device.attributes["gpu.example.com"]', False),
    ("unqualified-not-in-other-domain", '"model" in device.attributes["resource.kubernetes.io"]', False),
    ("select-style-domain", "has(device.attributes.gpu.model)", False),
    ("capacity-unqualified", 'device.capacity["gpu.example.com"].memory == quantity("80Gi")', True),
    ("capacity-qualified", 'device.capacity["other.example.com"].slots == quantity("4")', True),
    ("allowMultipleAllocations-unset", "device.allowMultipleAllocations", False),
    (
        "domains-present",
        '"gpu.example.com" in device.attributes && "resource.kubernetes.io" in device.attributes',
        True,
    ),
    ("domain-count", "device.attributes.size() == 2", True),
    ("capacity-domain-count", "device.capacity.size() == 2", True),
]


@pytest.mark.parametrize(("expression", "expected"), [c[1:] for c in FIELDS], ids=[c[0] for c in FIELDS])
def test_device_fields(match: Callable[[str], bool], expression: str, expected: bool) -> None:
    assert match(expression) is expected


def test_allow_multiple_allocations_set(match: Callable[..., bool], device: DeviceFactory) -> None:
    assert match("device.allowMultipleAllocations", device(allowMultipleAllocations=True)) is True
    assert match("device.allowMultipleAllocations", device(allowMultipleAllocations=False)) is False


UNKNOWN_DOMAIN: list[tuple[str, str, bool]] = [
    # Kubernetes returns an empty map for a domain the device does not have.
    ("has-in-unknown-domain", 'has(device.attributes["unknown.example.com"].x)', False),
    ("in-unknown-domain", '"x" in device.attributes["unknown.example.com"]', False),
    ("size-of-unknown-domain", 'device.attributes["unknown.example.com"].size() == 0', True),
    ("optional-in-unknown-domain", 'device.attributes["unknown.example.com"].?x.orValue(5) == 5', True),
    ("unknown-capacity-domain", 'device.capacity["unknown.example.com"].size() == 0', True),
    ("select-style-unknown", "device.attributes.unknown.size() == 0", True),
    ("bound-domain-literal", 'cel.bind(d, "unknown.example.com", device.attributes[d].size() == 0)', True),
    # ...but the map itself does not grow: membership and size see the device's real domains.
    ("membership-unaffected", '"unknown.example.com" in device.attributes', False),
    (
        "membership-and-lookup",
        '!("unknown.example.com" in device.attributes) && device.attributes["unknown.example.com"].size() == 0',
        True,
    ),
    (
        "guarded-lookup",
        '"unknown.example.com" in device.attributes && device.attributes["unknown.example.com"].x == 1',
        False,
    ),
    ("size-with-lookup", 'device.attributes.size() == 2 && !has(device.attributes["unknown.example.com"].x)', True),
    (
        "iteration-with-lookup",
        'device.attributes.all(d, d != "unknown.example.com") && device.attributes["unknown.example.com"].size() == 0',
        True,
    ),
]


@pytest.mark.parametrize(
    ("expression", "expected"), [c[1:] for c in UNKNOWN_DOMAIN], ids=[c[0] for c in UNKNOWN_DOMAIN]
)
def test_unknown_domain_is_an_empty_map(match: Callable[[str], bool], expression: str, expected: bool) -> None:
    assert match(expression) is expected


MISSING_ID: list[tuple[str, str, str]] = [
    (
        "attribute-known-domain",
        'device.attributes["gpu.example.com"].memory == 1',
        'device has no attribute "memory" in domain "gpu.example.com" '
        '(guard it: has(device.attributes["gpu.example.com"].memory), '
        'or use device.attributes["gpu.example.com"].?memory.orValue(...))',
    ),
    (
        "attribute-unknown-domain",
        'device.attributes["unknown.example.com"].x == 1',
        'device has no attribute "x" in domain "unknown.example.com"',
    ),
    (
        "attribute-index-form",
        'device.attributes["gpu.example.com"]["vendor"] == "x"',
        'device has no attribute "vendor" in domain "gpu.example.com"',
    ),
    (
        "capacity",
        'device.capacity["gpu.example.com"].cores.compareTo(quantity("1")) > 0',
        'device has no capacity "cores" in domain "gpu.example.com" (guard it: has(device.capacity',
    ),
    (
        "non-projectable-expression",
        '"gpu.example.com" in device.attributes && device.attributes["gpu.example.com"].x',
        'device has no attribute "x" in domain "gpu.example.com"',
    ),
    ("map-literal", '{"a": 1}["b"] == 1', "no such key: 'b'"),
]


@pytest.mark.parametrize(("expression", "message"), [c[1:] for c in MISSING_ID], ids=[c[0] for c in MISSING_ID])
def test_unknown_id_is_an_error_that_names_the_fix(match: Callable[[str], bool], expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as caught:
        match(expression)
    assert message in str(caught.value)


def test_qualified_name_in_the_driver_domain_collides_last_one_wins(
    match: Callable[..., bool], device: DeviceFactory
) -> None:
    first_plain = {"name": "d", "attributes": {"model": {"string": "A"}, f"{DRIVER}/model": {"string": "B"}}}
    first_qualified = {"name": "d", "attributes": {f"{DRIVER}/model": {"string": "B"}, "model": {"string": "A"}}}
    expression = f'device.attributes["{DRIVER}"].model == "B"'
    assert match(expression, device(first_plain)) is True
    assert match(expression, device(first_qualified)) is False
    # The same outcome when the whole map is built (a non-projectable expression).
    whole = f'device.attributes["{DRIVER}"].size() == 1 && device.attributes["{DRIVER}"].model == "B"'
    assert match(whole, device(first_plain)) is True
    assert match(whole, device(first_qualified)) is False


CONVERSION_ERRORS: list[tuple[str, dict[str, Any], bool, str]] = [
    ("empty-attribute", {"broken": {}}, False, "attribute broken: unsupported attribute value"),
    ("list-attribute-feature-off", {"numa": {"ints": [0, 1]}}, False, "attribute numa: unsupported attribute value"),
    ("bad-version", {"fw": {"version": "1.2"}}, False, "attribute fw: parse semantic version"),
    ("bad-version-in-list", {"fws": {"versions": ["1.0.0", "v2"]}}, True, "attribute fws: parse semantic version"),
]


@pytest.mark.parametrize(
    ("extra", "lists", "message"), [c[1:] for c in CONVERSION_ERRORS], ids=[c[0] for c in CONVERSION_ERRORS]
)
def test_conversion_error_fails_every_selector(
    device: DeviceFactory, gpu_attributes: dict[str, Any], extra: dict[str, Any], lists: bool, message: str
) -> None:
    broken = device(attributes={**gpu_attributes, **extra}, lists=lists)
    compiler = SelectorCompiler(list_type_attributes=lists)
    for expression in ('device.driver == "gpu.example.com"', "true"):
        selector = compiler.compile(expression)
        with pytest.raises(CelRuntimeError, match=message):
            selector.matches(broken)
        assert selector.evaluations == 0  # nothing was evaluated


def test_unparsable_capacity_fails_every_selector(device: DeviceFactory) -> None:
    broken = device(capacity={"memory": {"value": "80GB"}})
    with pytest.raises(CelRuntimeError, match="capacity memory: '80GB' is not a valid quantity"):
        SelectorCompiler().compile("true").matches(broken)


def test_build_never_raises_on_broken_devices(device: DeviceFactory) -> None:
    broken = device(attributes={"x": {}}, capacity={"m": {"value": "nope"}})
    assert isinstance(broken, CelDevice)
    assert broken.key is not None


LIST_ATTRIBUTES: list[tuple[str, str, bool]] = [
    ("ints-as-list", 'device.attributes["gpu.example.com"].numa == [0, 1]', True),
    ("includes-int", 'device.attributes["gpu.example.com"].numa.includes(1)', True),
    ("includes-int-false", 'device.attributes["gpu.example.com"].numa.includes(2)', False),
    ("includes-string", 'device.attributes["gpu.example.com"].roots.includes("pci0000:44")', True),
    ("includes-bool", 'device.attributes["gpu.example.com"].flags.includes(false)', True),
    ("includes-bool-is-not-int", 'device.attributes["gpu.example.com"].flags.includes(0)', False),
    ("includes-version", 'device.attributes["gpu.example.com"].fws.includes(semver("2.0.0"))', True),
    ("includes-version-false", 'device.attributes["gpu.example.com"].fws.includes(semver("3.0.0"))', False),
    ("includes-scalar", 'device.attributes["gpu.example.com"].model.includes("H100")', True),
    ("list-size", 'device.attributes["gpu.example.com"].roots.size() == 2', True),
    ("list-macro", 'device.attributes["gpu.example.com"].fws.all(v, v.major() >= 1)', True),
    ("list-max", 'device.attributes["gpu.example.com"].numa.max() == 1', True),
]


@pytest.mark.parametrize(
    ("expression", "expected"), [c[1:] for c in LIST_ATTRIBUTES], ids=[c[0] for c in LIST_ATTRIBUTES]
)
def test_list_attributes_with_the_feature_on(device: DeviceFactory, expression: str, expected: bool) -> None:
    spec = {
        "name": "gpu-0",
        "attributes": {
            "model": {"string": "H100"},
            "numa": {"ints": [0, 1]},
            "roots": {"strings": ["pci0000:44", "pci0000:55"]},
            "flags": {"bools": [True, False]},
            "fws": {"versions": ["1.0.0", "2.0.0+build"]},
        },
    }
    selector = SelectorCompiler(list_type_attributes=True).compile(expression)
    assert selector.matches(device(spec, lists=True)) is expected


def test_list_attribute_with_the_feature_off_fails_even_when_unused(device: DeviceFactory) -> None:
    spec = {"name": "d", "attributes": {"model": {"string": "H100"}, "numa": {"ints": [0]}}}
    selector = SelectorCompiler().compile('device.attributes["gpu.example.com"].model == "H100"')
    with pytest.raises(CelRuntimeError, match=r"unsupported attribute value.*DRAListTypeAttributes"):
        selector.matches(device(spec))


def test_device_and_selector_must_agree_on_list_type_attributes(device: DeviceFactory) -> None:
    with pytest.raises(ValueError, match="list_type_attributes"):
        SelectorCompiler(list_type_attributes=True).compile("true").matches(device())


def test_key_is_the_content_not_the_name(device: DeviceFactory, gpu_attributes: dict[str, Any]) -> None:
    assert device(name="gpu-0").key == device(name="gpu-7").key
    assert hash(device(name="gpu-0").key) == hash(device(name="gpu-7").key)
    assert device().key != device(driver="other.example.com").key
    assert device().key != device(allowMultipleAllocations=True).key
    assert device().key != device(lists=True).key
    assert device().key != device(capacity={"memory": {"value": "40Gi"}}).key
    changed = {**gpu_attributes, "index": {"int": 4}}
    assert device().key != device(attributes=changed).key
    # An int and a bool with equal Python values are different content.
    assert device(attributes={"x": {"int": 1}}).key != device(attributes={"x": {"bool": True}}).key


def test_key_keeps_attribute_order_which_decides_collisions(device: DeviceFactory) -> None:
    first_plain = {"model": {"string": "A"}, f"{DRIVER}/model": {"string": "B"}}
    first_qualified = dict(reversed(list(first_plain.items())))
    assert device(attributes=first_plain).key != device(attributes=first_qualified).key

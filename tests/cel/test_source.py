"""The token-level facts that drive domain pre-population, projection and hidden-map renaming."""

from __future__ import annotations

import pytest

from dratwin.cel.source import (
    ATTRIBUTE,
    ATTRIBUTE_DOMAIN,
    CAPACITY,
    CAPACITY_DOMAIN,
    Path,
    analyze,
    tokenize,
)


def test_tokens_skip_strings_and_comments() -> None:
    text = "device.driver == \"device.attributes\" // device.capacity\n && r\"a\\\" == '''x'''"
    kinds = [(t.kind, t.text) for t in tokenize(text)]
    assert ("string", '"device.attributes"') in kinds
    assert all("capacity" not in text for _, text in kinds)  # inside the comment
    assert ("string", 'r"a\\"') in kinds  # a raw string: the backslash does not escape the quote


@pytest.mark.parametrize(
    ("literal", "value"),
    [('"a.b"', "a.b"), ("'a'", "a"), ('"q\\"z"', 'q"z'), ('r"a\\n"', "a\\n"), ('"""t"""', "t"), ('"\\x41"', None)],
    ids=["double", "single", "escaped-quote", "raw", "triple", "hex-escape-undecoded"],
)
def test_string_values(literal: str, value: str | None) -> None:
    (token,) = tokenize(literal)
    assert token.value == value


def test_lookups_become_paths_and_domains() -> None:
    facts = analyze(
        'device.attributes["gpu.example.com"].model == "x" && '
        'device.capacity["gpu.example.com"]["memory"].isInteger() && '
        "has(device.attributes.other.x) && "
        "device.attributes['third.example.com'].?y.orValue(1) == 1"
    )
    assert facts.paths == (
        (ATTRIBUTE, "gpu.example.com", "model"),
        (CAPACITY, "gpu.example.com", "memory"),
        (ATTRIBUTE, "other", "x"),
        (ATTRIBUTE, "third.example.com", "y"),
    )
    assert {"gpu.example.com", "other", "third.example.com", "x"} <= facts.domains
    assert facts.text.count("device.attributes") == 3  # no renaming needed


@pytest.mark.parametrize(
    "expression",
    [
        "device.attributes.size() > 1",
        "device.capacity.exists(d, d == 'x')",
        "cel.bind(a, device.attributes, a.size() == 1)",
    ],
)
def test_whole_map_uses_are_renamed_to_same_length_hidden_names(expression: str) -> None:
    facts = analyze(expression)
    assert facts.paths is None
    assert len(facts.text) == len(expression)
    assert "_ttributes" in facts.text or "_apacity" in facts.text
    assert "device.attributes" not in facts.text and "device.capacity" not in facts.text


def test_mixed_uses_rename_only_the_whole_map() -> None:
    expression = 'device.attributes.size() == 1 && device.attributes["d"].x == 1'
    facts = analyze(expression)
    assert facts.text == 'device._ttributes.size() == 1 && device.attributes["d"].x == 1'
    assert facts.paths is None


@pytest.mark.parametrize(
    ("expression", "paths"),
    [
        ('"d" in device.attributes', ((ATTRIBUTE_DOMAIN, "d", ""),)),
        ('("d" in device.capacity)', ((CAPACITY_DOMAIN, "d", ""),)),
        ('"x" in device.attributes["d"] && true', ((ATTRIBUTE, "d", "x"),)),
        (
            '"d" in device.attributes && device.attributes["d"].x == 1',
            ((ATTRIBUTE_DOMAIN, "d", ""), (ATTRIBUTE, "d", "x")),
        ),
        ('true == "d" in device.attributes', None),  # (true == "d") in ...: the string is not the member
        ('"d" in device.attributes.map(k, k)', None),
    ],
    ids=["domain", "capacity-domain", "id", "domain-and-lookup", "not-the-member", "not-the-operand"],
)
def test_membership_tests_are_paths(expression: str, paths: tuple[Path, ...] | None) -> None:
    facts = analyze(expression)
    assert facts.paths == paths
    assert "device.attributes[" in facts.text or "device.attributes" not in facts.text


@pytest.mark.parametrize(
    "expression",
    ['device.attributes["d"].exists(k, k == "x")', "device.attributes[d].x == 1", 'device.attributes[?"d"].hasValue()'],
    ids=["domain-iterated", "computed-domain", "optional-domain"],
)
def test_not_projectable(expression: str) -> None:
    assert analyze(expression).paths is None


def test_constant_regexes_are_found() -> None:
    facts = analyze('device.driver.matches("^a") && "x".find("[0-9]") == "" && s.findAll(p, 2) == []')
    assert [(function, pattern) for _, function, pattern in facts.regexes] == [("matches", "^a"), ("find", "[0-9]")]


def test_untokenizable_text_gives_no_facts() -> None:
    facts = analyze('device.driver == "unterminated')
    assert facts.paths is None and facts.text == 'device.driver == "unterminated'

"""Semantic versions: strict parsing, Kubernetes' normalizing parse, precedence, canonical text."""

from __future__ import annotations

import itertools

import pytest

from dratwin.cel.semver import Semver, SemverError, is_valid, parse, parse_normalized

VALID = [
    ("1.2.3", Semver(1, 2, 3)),
    ("0.0.0", Semver(0, 0, 0)),
    ("580.126.9", Semver(580, 126, 9)),
    ("1.0.0-alpha.1", Semver(1, 0, 0, ("alpha", 1))),
    ("1.0.0-0.3.7", Semver(1, 0, 0, (0, 3, 7))),
    ("1.0.0-x-y.z--", Semver(1, 0, 0, ("x-y", "z--"))),
    ("1.0.0+build.01", Semver(1, 0, 0, (), ("build", "01"))),
    ("1.0.0-rc.1+b-2", Semver(1, 0, 0, ("rc", 1), ("b-2",))),
]


@pytest.mark.parametrize(("text", "expected"), VALID, ids=[v[0] for v in VALID])
def test_parse_valid(text: str, expected: Semver) -> None:
    assert parse(text) == expected
    assert str(parse(text)) == text


INVALID = [
    ("short", "1.2", "expected MAJOR.MINOR.PATCH"),
    ("long", "1.2.3.4", "expected MAJOR.MINOR.PATCH"),
    ("v-prefix", "v1.2.3", "must be a number"),
    ("leading-zero", "01.2.3", "leading zero"),
    ("leading-zero-patch", "1.2.03", "leading zero"),
    ("prerelease-leading-zero", "1.2.3-01", "leading zero"),
    ("empty-prerelease-part", "1.2.3-a..b", "empty prerelease identifier"),
    ("empty-prerelease", "1.2.3-", "empty prerelease identifier"),
    ("bad-prerelease-char", "1.2.3-a_b", "invalid character"),
    ("empty-build", "1.2.3+", "invalid build metadata"),
    ("space", "1.2.3 ", "must be a number"),
    ("empty", "", "expected MAJOR.MINOR.PATCH"),
    ("huge", "18446744073709551616.0.0", "too large"),
]


@pytest.mark.parametrize(("text", "fragment"), [i[1:] for i in INVALID], ids=[i[0] for i in INVALID])
def test_parse_invalid(text: str, fragment: str) -> None:
    with pytest.raises(SemverError, match=fragment):
        parse(text)
    assert not is_valid(text)


NORMALIZED = [
    ("v1.2.3", "1.2.3"),
    ("1", "1.0.0"),
    ("v2", "2.0.0"),
    ("1.2", "1.2.0"),
    ("01.02.03", "1.2.3"),
    ("1.0.00", "1.0.0"),
    ("1.2.3-rc.1", "1.2.3-rc.1"),
    ("1.2.03-rc", "1.2.3-rc"),
]


@pytest.mark.parametrize(("text", "canonical"), NORMALIZED, ids=[n[0] for n in NORMALIZED])
def test_parse_normalized(text: str, canonical: str) -> None:
    assert parse_normalized(text).canonical == canonical
    assert is_valid(text, normalize=True)


@pytest.mark.parametrize("text", ["1.2-rc", "1+b", "vv1.0.0", "x"])
def test_parse_normalized_invalid(text: str) -> None:
    with pytest.raises(SemverError):
        parse_normalized(text)


# Each version is lower than the next (the SemVer 2.0 specification's own example, and more).
ORDER = [
    "1.0.0-0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "1.10.0",
    "2.0.0",
]


@pytest.mark.parametrize("index", range(len(ORDER) - 1), ids=[f"{a}<{b}" for a, b in itertools.pairwise(ORDER)])
def test_precedence(index: int) -> None:
    lower, higher = parse(ORDER[index]), parse(ORDER[index + 1])
    assert lower.compare(higher) == -1
    assert higher.compare(lower) == 1
    assert lower.compare(lower) == 0


def test_build_metadata_is_ignored_by_precedence_and_canonical() -> None:
    a, b = parse("1.0.0+a"), parse("1.0.0+b")
    assert a.compare(b) == 0
    assert a.canonical == b.canonical == "1.0.0"
    assert a != b  # the parsed values keep their build metadata

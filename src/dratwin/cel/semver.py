"""Semantic versions as Kubernetes' CEL semver library and DRA version attributes see them.

Parsing is strict SemVer 2.0 (``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``, no leading zeros, no
``v`` prefix), which is what the Go library behind Kubernetes accepts. ``parse_normalized`` adds the
tolerance of ``semver(s, true)``: one leading ``v`` is dropped, leading zeros of the first three
dot-separated parts are removed and missing minor/patch parts become 0.

Ordering is SemVer precedence; build metadata is ignored for both ordering and equality, so
:attr:`Semver.canonical` (the text without build metadata) is equal exactly when two versions are.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

_DIGITS = frozenset("0123456789")
_IDENTIFIER_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    """Text that is not a semantic version."""


@dataclass(frozen=True, slots=True)
class Semver:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str | int, ...] = ()
    build: tuple[str, ...] = ()

    @property
    def canonical(self) -> str:
        """The version without build metadata: equal texts mean equal versions."""
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{'.'.join(map(str, self.prerelease))}" if self.prerelease else core

    def __str__(self) -> str:
        return f"{self.canonical}+{'.'.join(self.build)}" if self.build else self.canonical

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by SemVer 2.0 precedence."""
        mine = (self.major, self.minor, self.patch)
        theirs = (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _compare_prerelease(self.prerelease, other.prerelease)


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Semver:
    """Strict SemVer 2.0; raises :class:`SemverError` saying what is wrong."""
    rest, plus, build_text = text.partition("+")
    build: tuple[str, ...] = ()
    if plus:
        build = tuple(build_text.split("."))
        for part in build:
            if not part or not set(part) <= _IDENTIFIER_CHARS:
                raise SemverError(f"{text!r}: invalid build metadata {build_text!r}")
    core, dash, pre_text = rest.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        raise SemverError(f"{text!r}: expected MAJOR.MINOR.PATCH")
    numbers = [_number(part, name, text) for part, name in zip(parts, ("major", "minor", "patch"), strict=True)]
    prerelease: tuple[str | int, ...] = ()
    if dash:
        prerelease = tuple(_prerelease_identifier(part, text) for part in pre_text.split("."))
    return Semver(numbers[0], numbers[1], numbers[2], prerelease, build)


@functools.lru_cache(maxsize=4096)
def parse_normalized(text: str) -> Semver:
    """Kubernetes' tolerant form (``semver(s, true)``): ``v1``, ``1.2``, ``01.02.03`` are accepted."""
    body = text[1:] if text.startswith("v") else text
    parts = body.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            # A part that was all zeros, or whose zeros preceded a non-digit, keeps one zero.
            parts[index] = stripped if stripped and stripped[0] in _DIGITS else "0" + stripped
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError(f"{text!r}: a shortened version cannot carry a prerelease or build metadata")
        parts.extend("0" * (3 - len(parts)))
    return parse(".".join(parts))


def is_valid(text: str, *, normalize: bool = False) -> bool:
    try:
        (parse_normalized if normalize else parse)(text)
    except SemverError:
        return False
    return True


def _number(part: str, name: str, text: str) -> int:
    if not part or not set(part) <= _DIGITS:
        raise SemverError(f"{text!r}: the {name} version must be a number, not {part!r}")
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f"{text!r}: the {name} version {part!r} has a leading zero")
    value = int(part)
    if value > _UINT64_MAX:
        raise SemverError(f"{text!r}: the {name} version is too large")
    return value


def _prerelease_identifier(part: str, text: str) -> str | int:
    if not part:
        raise SemverError(f"{text!r}: empty prerelease identifier")
    if not set(part) <= _IDENTIFIER_CHARS:
        raise SemverError(f"{text!r}: invalid character in prerelease identifier {part!r}")
    if set(part) <= _DIGITS:
        if len(part) > 1 and part[0] == "0":
            raise SemverError(f"{text!r}: numeric prerelease identifier {part!r} has a leading zero")
        return int(part)
    return part


def _compare_prerelease(mine: tuple[str | int, ...], theirs: tuple[str | int, ...]) -> int:
    # A version without a prerelease ranks above any prerelease of the same MAJOR.MINOR.PATCH.
    if not mine or not theirs:
        return (not mine) - (not theirs)
    for a, b in zip(mine, theirs, strict=False):
        if a == b:
            continue
        a_num, b_num = isinstance(a, int), isinstance(b, int)
        if a_num and b_num:
            return -1 if a < b else 1  # type: ignore[operator]
        if a_num != b_num:
            # Numeric identifiers rank below alphanumeric ones.
            return -1 if a_num else 1
        return -1 if str(a) < str(b) else 1
    return (len(mine) > len(theirs)) - (len(mine) < len(theirs))
